//! What the relay carries itself, line by line (pure: a line in, its rewritten form out):
//! a plain `tools/call` of the front client goes behind under an id of the relay's own
//! (`"taskwire-relay-N"`, a string: the proxy's own requests there have numeric ids), and
//! the answer comes back under the front's id. With it go the call's progress (its token
//! renamed the same way), a front cancel of it, and the questions the server behind asks
//! while such a call runs (ids `"taskwire-relay-qN"`, which the front's own numeric ids
//! never collide with). A plain call of a tool that requires a task behind is the drivers'
//! (the proxy's client runs it as a task), and then task calls are too: the proxy's client
//! makes tasks behind, whose notices and questions are its own. Every other line is the
//! drivers' (the relay returns `false`).

use std::borrow::Cow;
use std::collections::HashMap;

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use taskwire_driver::engine::era::v2025_11_25::RELATED_TASK;
use taskwire_driver::LogLevel;

use crate::required::RequiredTools;

/// The start of the relay's own ids and progress tokens, as JSON text.
const CALL: &str = "\"taskwire-relay-";
/// The start of the ids of the questions it relays, as JSON text.
const QUESTION: &str = "\"taskwire-relay-q";

/// The relay's state: whether it relays, and what it relayed that awaits an answer.
#[derive(Default)]
pub(crate) struct Table {
    /// The front client opened a 2025-11-25 session (`notifications/initialized` came).
    pub front_ready: bool,
    /// The server behind speaks 2025-11-25 and its connection is open.
    pub behind_ready: bool,
    /// Task calls and the `tasks/*` requests are relayed too, and the task notices and
    /// questions of the server behind: the front holds no tasks of its own, they all live
    /// behind. Turned off when the front opens its session if a tool behind requires a task.
    pub tasks: bool,
    /// The tools behind that require a task: their plain calls are the drivers'.
    pub required: RequiredTools,
    /// The least severe log level the front client asked for (`logging/setLevel`; every
    /// level until then): the relayed tasks' log messages are filtered by it.
    level: Option<LogLevel>,
    next: u64,
    /// Relayed calls awaiting their answer, by the relay's number.
    calls: HashMap<u64, Call>,
    /// Relayed questions awaiting the front's answer: the id the server behind gave.
    questions: HashMap<u64, Box<RawValue>>,
}

/// A relayed call: the front's id, and the progress token it named.
struct Call {
    id: Box<RawValue>,
    token: Option<Value>,
}

/// The parts of a JSON-RPC message the relay reads (borrowed; an escaped method or version
/// fails to parse, and the drivers take the line).
#[derive(Deserialize)]
struct Message<'a> {
    jsonrpc: Option<&'a str>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// The parts of `tools/call` params that decide whether the relay carries it (`null` reads
/// as absent).
#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    task: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
}

impl Table {
    /// Whether plain calls are relayed now.
    pub fn relaying(&self) -> bool {
        self.front_ready && self.behind_ready
    }

    /// A line of the front client: its relayed form appended to `behind` (true), or the
    /// front's driver takes it (false).
    pub fn front_line(&mut self, line: &[u8], behind: &mut Vec<u8>) -> bool {
        // Most lines name none of these: those are not parsed here.
        let maybe = |word| mentions(line, word);
        let tasks = self.tasks && (maybe(Word::Tasks) || maybe(Word::Logging));
        if !(tasks || maybe(Word::ToolsCall) || maybe(Word::Notifications) || maybe(Word::Question))
        {
            return false;
        }
        let Ok(message) = serde_json::from_slice::<Message>(line) else {
            return false;
        };
        if message.jsonrpc != Some("2.0") {
            return false;
        }
        match (message.method, message.id) {
            (Some("notifications/initialized"), None) => {
                self.front_ready = true;
                // The front's tools are listed by now.
                if self.tasks && !self.required.is_empty() {
                    self.tasks = false;
                    tracing::info!(
                        "task calls are not relayed: tools behind require tasks, which the \
                         proxy's client makes for their plain calls"
                    );
                }
                false
            }
            (Some("logging/setLevel"), Some(_)) => {
                #[derive(Deserialize)]
                struct SetLevel {
                    level: LogLevel,
                }
                if let Some(Ok(set)) = message
                    .params
                    .map(|p| serde_json::from_str::<SetLevel>(p.get()))
                {
                    self.level = Some(set.level);
                }
                // The proxy's server answers it, and filters the other log messages by it.
                false
            }
            (Some("tools/call"), Some(id)) if self.relaying() => {
                self.relay_call(id, message.params, behind)
            }
            (
                Some(method @ ("tasks/get" | "tasks/result" | "tasks/cancel" | "tasks/list")),
                Some(id),
            ) if self.tasks && self.relaying() => {
                self.relay_request(id, method, message.params, behind)
            }
            (Some("notifications/cancelled"), None) => self.relay_cancel(message.params, behind),
            (None, Some(id)) if id.get().starts_with(QUESTION) => {
                self.relay_answer(id, &message, behind)
            }
            _ => false,
        }
    }

    fn relay_call(&mut self, id: &RawValue, params: Option<&RawValue>, out: &mut Vec<u8>) -> bool {
        let Some(params) = params else { return false };
        let Ok(call) = serde_json::from_str::<CallParams>(params.get()) else {
            return false;
        };
        let Some(name) = call.name else { return false };
        if call.task.is_some() {
            // A task's progress outlives its call: the token goes as it came (the proxy's
            // client calls no tools while tasks are relayed).
            return self.tasks && self.relay_request(id, "tools/call", Some(params), out);
        }
        // (While tasks are relayed, such a call goes as it came, to be refused behind: the
        // proxy's client makes no tasks then. Only a tool listed again can be one.)
        if !self.tasks && self.required.contains(&name) {
            return false;
        }
        let mut meta = match call
            .meta
            .map(|m| serde_json::from_str::<Map<String, Value>>(m.get()))
        {
            Some(Ok(meta)) if meta.contains_key("progressToken") => meta,
            Some(Err(_)) => return false,
            _ => return self.relay_request(id, "tools/call", Some(params), out),
        };
        let Ok(Value::Object(mut whole)) = serde_json::from_str(params.get()) else {
            return false;
        };
        // The number `relay_request` gives this call next.
        let n = self.next + 1;
        let token = meta.insert("progressToken".into(), relay_id("", n).into());
        whole.insert("_meta".into(), Value::Object(meta));
        let renamed = RawValue::from_string(Value::Object(whole).to_string());
        let Ok(renamed) = renamed else { return false };
        self.relay_request(id, "tools/call", Some(&renamed), out);
        if let Some(call) = self.calls.get_mut(&n) {
            call.token = token;
        }
        true
    }

    /// Sends the front's request `method` behind under the next id of the relay's own.
    fn relay_request(
        &mut self,
        id: &RawValue,
        method: &str,
        params: Option<&RawValue>,
        out: &mut Vec<u8>,
    ) -> bool {
        self.next += 1;
        let n = self.next;
        let id = id.to_owned();
        tracing::trace!(front = %id, relayed = n, method, "a request relayed behind");
        self.calls.insert(n, Call { id, token: None });
        write_message(
            out,
            Some(&relay_id("", n)),
            method,
            params.map(RawValue::get),
        );
        true
    }

    fn relay_cancel(&mut self, params: Option<&RawValue>, out: &mut Vec<u8>) -> bool {
        #[derive(Deserialize)]
        struct Cancelled<'a> {
            #[serde(rename = "requestId", borrow)]
            request: &'a RawValue,
            #[serde(borrow)]
            reason: Option<&'a RawValue>,
        }
        let Some(Ok(cancelled)) = params.map(|p| serde_json::from_str::<Cancelled>(p.get())) else {
            return false;
        };
        let Some(n) = self.call_of(cancelled.request.get()) else {
            return false;
        };
        self.calls.remove(&n);
        let mut params = format!("{{\"requestId\":{}", json_string(&relay_id("", n)));
        if let Some(reason) = cancelled.reason {
            params.push_str(&format!(",\"reason\":{}", reason.get()));
        }
        params.push('}');
        write_message(out, None, "notifications/cancelled", Some(&params));
        true
    }

    /// The relay's number of the waiting call the front gave the id `id` (JSON text).
    fn call_of(&self, id: &str) -> Option<u64> {
        let n = self.calls.iter().find(|(_, call)| call.id.get() == id)?;
        Some(*n.0)
    }

    fn relay_answer(&mut self, id: &RawValue, message: &Message, out: &mut Vec<u8>) -> bool {
        let Some(n) = number_in(id.get(), QUESTION) else {
            return false;
        };
        let Some(asked) = self.questions.remove(&n) else {
            tracing::debug!(id = %id, "an answer to a question no longer waiting, dropped");
            return true;
        };
        write_answer(out, asked.get(), message);
        true
    }

    /// A line of the server behind: its relayed form appended to `front` (true), or the
    /// proxy's client takes it (false). `client_waits`: whether a call through the proxy's
    /// client runs without a task behind (a question naming no task is then routed there).
    pub fn behind_line(
        &mut self,
        line: &[u8],
        front: &mut Vec<u8>,
        client_waits: impl Fn() -> bool,
    ) -> bool {
        let maybe = |word| mentions(line, word);
        // Questions are relayed while relayed calls run, and any of a task when tasks are.
        let questions = !self.calls.is_empty() || self.tasks && self.relaying();
        let tasks = self.tasks && self.relaying() && maybe(Word::Notifications);
        if !(tasks
            || maybe(Word::Call)
            || questions && (maybe(Word::Elicitation) || maybe(Word::Sampling)))
        {
            return false;
        }
        let Ok(message) = serde_json::from_slice::<Message>(line) else {
            return false;
        };
        match (message.method, message.id) {
            (None, Some(id)) if id.get().starts_with(CALL) => {
                let Some(n) = number_in(id.get(), CALL) else {
                    return false;
                };
                match self.calls.remove(&n) {
                    Some(call) => write_answer(front, call.id.get(), &message),
                    None => tracing::debug!(relayed = n, "an answer to a cancelled call, dropped"),
                }
                true
            }
            (Some("notifications/progress"), None) => {
                self.relay_progress(line, message.params, front)
            }
            (Some("notifications/message"), None) if tasks => {
                self.relay_log(line, message.params, front)
            }
            (Some("notifications/tasks/status"), None) if tasks => {
                front.extend_from_slice(line);
                front.push(b'\n');
                true
            }
            (Some(method @ ("elicitation/create" | "sampling/createMessage")), Some(id))
                if questions
                    && !client_waits()
                    && (self.tasks || !names_a_task(message.params)) =>
            {
                self.next += 1;
                self.questions.insert(self.next, id.to_owned());
                let params = message.params.map_or("{}", RawValue::get);
                write_message(front, Some(&relay_id("q", self.next)), method, Some(params));
                true
            }
            _ => false,
        }
    }

    /// A log message of a relayed task, at a level the front client wants (one about no
    /// task is the proxy's client's).
    fn relay_log(&self, line: &[u8], params: Option<&RawValue>, out: &mut Vec<u8>) -> bool {
        #[derive(Deserialize)]
        struct Log {
            level: LogLevel,
            #[serde(rename = "_meta")]
            meta: Option<Map<String, Value>>,
        }
        let Some(Ok(log)) = params.map(|p| serde_json::from_str::<Log>(p.get())) else {
            return false;
        };
        if !log.meta.is_some_and(|m| m.contains_key(RELATED_TASK)) {
            return false;
        }
        if self.level.is_none_or(|least| log.level >= least) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        true
    }

    /// Progress of a relayed call (its token renamed back), or of a relayed task (as it
    /// came, `line`).
    fn relay_progress(
        &mut self,
        line: &[u8],
        params: Option<&RawValue>,
        out: &mut Vec<u8>,
    ) -> bool {
        let Some(Ok(Value::Object(mut params))) = params.map(|p| serde_json::from_str(p.get()))
        else {
            return false;
        };
        let Some(token) = params.get("progressToken").map(Value::to_string) else {
            return false;
        };
        let Some(n) = number_in(&token, CALL) else {
            let task = self.tasks && self.relaying();
            if task {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
            return task;
        };
        let Some(front) = self.calls.get(&n).and_then(|c| c.token.clone()) else {
            return true;
        };
        params.insert("progressToken".into(), front);
        let params = Value::Object(params).to_string();
        write_message(out, None, "notifications/progress", Some(&params));
        true
    }

    /// The server behind is gone: each relayed call gets an error (in `front`), and nothing
    /// more is relayed.
    pub fn behind_gone(&mut self, front: &mut Vec<u8>) {
        self.behind_ready = false;
        self.questions.clear();
        for (_, call) in self.calls.drain() {
            let error = r#"{"code":-32603,"message":"The server behind the proxy closed its connection (it exited or crashed) before answering"}"#;
            front.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            front.extend_from_slice(call.id.get().as_bytes());
            front.extend_from_slice(b",\"error\":");
            front.extend_from_slice(error.as_bytes());
            front.extend_from_slice(b"}\n");
        }
    }
}

/// The words that make a line worth parsing for the relay (most lines have none).
#[derive(Clone, Copy)]
enum Word {
    Tasks,
    Logging,
    ToolsCall,
    Notifications,
    Question,
    Call,
    Elicitation,
    Sampling,
}

/// Whether `line` holds `word` (each searcher built once).
fn mentions(line: &[u8], word: Word) -> bool {
    static FINDERS: LazyLock<[Finder<'static>; 8]> = LazyLock::new(|| {
        [
            "tasks/",
            "logging/",
            "tools/call",
            "notifications/",
            &QUESTION[1..],
            &CALL[1..],
            "elicitation/",
            "sampling/",
        ]
        .map(Finder::new)
    });
    FINDERS[word as usize].find(line).is_some()
}

/// The relay's id (or progress token) number `n`, of kind `kind` ("" calls, "q" questions).
fn relay_id(kind: &str, n: u64) -> String {
    format!("taskwire-relay-{kind}{n}")
}

/// The number in a relay id given as JSON text (`"taskwire-relay-q7"` with `prefix`
/// `"taskwire-relay-q`).
fn number_in(id: &str, prefix: &str) -> Option<u64> {
    id.strip_prefix(prefix)?.strip_suffix('"')?.parse().ok()
}

/// Whether question params name a task (the related-task `_meta`): the proxy's client
/// routes those.
fn names_a_task(params: Option<&RawValue>) -> bool {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Map<String, Value>>,
    }
    match params.map(|p| serde_json::from_str::<Params>(p.get())) {
        Some(Ok(Params { meta: Some(meta) })) => meta.contains_key(RELATED_TASK),
        Some(Ok(_)) | None => false,
        // Not params the relay can read: the proxy's client answers them.
        Some(Err(_)) => true,
    }
}

fn json_string(text: &str) -> String {
    Value::from(text).to_string()
}

/// A request (with `id`, a string) or a notification.
fn write_message(out: &mut Vec<u8>, id: Option<&str>, method: &str, params: Option<&str>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\"");
    if let Some(id) = id {
        out.extend_from_slice(b",\"id\":");
        out.extend_from_slice(json_string(id).as_bytes());
    }
    out.extend_from_slice(b",\"method\":");
    out.extend_from_slice(json_string(method).as_bytes());
    if let Some(params) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(params.as_bytes());
    }
    out.extend_from_slice(b"}\n");
}

/// `message`'s result or error under the id `id` (JSON text); a message with neither (or
/// both) becomes an error saying so.
fn write_answer(out: &mut Vec<u8>, id: &str, message: &Message) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    match (message.result, message.error) {
        (Some(result), None) => {
            out.extend_from_slice(b",\"result\":");
            out.extend_from_slice(result.get().as_bytes());
        }
        (None, Some(error)) => {
            out.extend_from_slice(b",\"error\":");
            out.extend_from_slice(error.get().as_bytes());
        }
        _ => out.extend_from_slice(
            br#","error":{"code":-32603,"message":"The answer relayed through the proxy had neither a result nor an error"}"#,
        ),
    }
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A table relaying (both sides opened in 2025-11-25).
    fn relaying() -> Table {
        let mut table = Table::default();
        let mut out = Vec::new();
        let opened = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(!table.front_line(opened.to_string().as_bytes(), &mut out));
        table.behind_ready = true;
        assert!(table.relaying());
        table
    }

    fn front(table: &mut Table, message: Value) -> Option<Value> {
        let mut out = Vec::new();
        table
            .front_line(message.to_string().as_bytes(), &mut out)
            .then(|| one(&out))
    }

    fn behind(table: &mut Table, message: Value, client_waits: bool) -> Option<Value> {
        let mut out = Vec::new();
        table
            .behind_line(message.to_string().as_bytes(), &mut out, || client_waits)
            .then(|| {
                if out.is_empty() {
                    Value::Null
                } else {
                    one(&out)
                }
            })
    }

    /// The one line in `out`, parsed.
    fn one(out: &[u8]) -> Value {
        let text = std::str::from_utf8(out).unwrap();
        assert_eq!(text.matches('\n').count(), 1, "{text}");
        serde_json::from_str(text).unwrap()
    }

    fn call(id: Value, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    }

    #[test]
    fn a_plain_call_goes_behind_under_the_relays_id_and_its_answer_comes_back_under_the_fronts() {
        let mut table = relaying();
        let params = json!({"name": "echo", "arguments": {"text": "hi"}});
        let sent = front(&mut table, call(json!("a-1"), params.clone())).unwrap();
        assert_eq!(sent, call(json!("taskwire-relay-1"), params));

        let result = json!({"content": [{"type": "text", "text": "hi"}]});
        let answer = json!({"jsonrpc": "2.0", "id": "taskwire-relay-1", "result": result});
        let back = behind(&mut table, answer.clone(), false).unwrap();
        assert_eq!(
            back,
            json!({"jsonrpc": "2.0", "id": "a-1", "result": result})
        );
        assert_eq!(
            behind(&mut table, answer, false),
            Some(Value::Null),
            "answered once"
        );

        let error = json!({"code": -32602, "message": "Unknown tool: nope"});
        front(&mut table, call(json!(7), json!({"name": "nope"}))).unwrap();
        let answer = json!({"jsonrpc": "2.0", "id": "taskwire-relay-2", "error": error});
        let back = behind(&mut table, answer, false).unwrap();
        assert_eq!(back, json!({"jsonrpc": "2.0", "id": 7, "error": error}));
    }

    #[test]
    fn task_calls_other_requests_and_calls_before_both_sides_opened_are_the_drivers() {
        let mut table = Table::default();
        let plain = call(json!(1), json!({"name": "echo"}));
        assert_eq!(front(&mut table, plain.clone()), None, "no session yet");
        table.behind_ready = true;
        assert_eq!(
            front(&mut table, plain.clone()),
            None,
            "the front has not opened"
        );

        let mut table = relaying();
        let task = call(json!(2), json!({"name": "echo", "task": {"ttl": 1000}}));
        assert_eq!(front(&mut table, task), None);
        let get =
            json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "t"}});
        assert_eq!(front(&mut table, get), None);
        assert_eq!(
            front(&mut table, call(json!(4), json!({}))),
            None,
            "no name"
        );
        assert_eq!(
            front(&mut table, call(Value::Null, json!({"name": "echo"}))),
            None
        );
        let bad = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}"#;
        assert!(!table.front_line(bad, &mut Vec::new()), "not JSON");
        let status =
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {}});
        assert_eq!(behind(&mut table, status, false), None);
    }

    #[test]
    fn progress_of_a_relayed_call_comes_back_under_the_fronts_token() {
        let mut table = relaying();
        let params = json!({"name": "slow", "_meta": {"progressToken": 5, "x": 1}});
        let sent = front(&mut table, call(json!(1), params)).unwrap();
        let renamed =
            json!({"name": "slow", "_meta": {"progressToken": "taskwire-relay-1", "x": 1}});
        assert_eq!(sent["params"], renamed);

        let progress = |token: &str| {
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token, "progress": 1, "total": 2}})
        };
        let back = behind(&mut table, progress("taskwire-relay-1"), false).unwrap();
        assert_eq!(
            back["params"],
            json!({"progressToken": 5, "progress": 1, "total": 2})
        );
        assert_eq!(
            behind(&mut table, progress("2"), false),
            None,
            "the client's own"
        );
    }

    #[test]
    fn a_front_cancel_of_a_relayed_call_goes_behind_and_its_late_answer_is_dropped() {
        let mut table = relaying();
        front(&mut table, call(json!(9), json!({"name": "slow"}))).unwrap();
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 9, "reason": "enough"}});
        let sent = front(&mut table, cancel.clone()).unwrap();
        assert_eq!(
            sent["params"],
            json!({"requestId": "taskwire-relay-1", "reason": "enough"})
        );
        assert_eq!(
            front(&mut table, cancel),
            None,
            "no longer relayed: the driver's"
        );
        let late = json!({"jsonrpc": "2.0", "id": "taskwire-relay-1", "result": {}});
        assert_eq!(behind(&mut table, late, false), Some(Value::Null));
    }

    #[test]
    fn a_question_during_a_relayed_call_is_put_to_the_front_and_answered_behind() {
        let mut table = relaying();
        let ask = json!({"jsonrpc": "2.0", "id": 12, "method": "elicitation/create",
                         "params": {"message": "Sure?", "requestedSchema": {"type": "object"}}});
        assert_eq!(
            behind(&mut table, ask.clone(), false),
            None,
            "no relayed call"
        );
        front(&mut table, call(json!(1), json!({"name": "confirm"}))).unwrap();
        assert_eq!(
            behind(&mut table, ask.clone(), true),
            None,
            "a client call waits too"
        );

        let asked = behind(&mut table, ask.clone(), false).unwrap();
        assert_eq!(asked["id"], "taskwire-relay-q2");
        assert_eq!(asked["params"], ask["params"]);
        let about_task = json!({"jsonrpc": "2.0", "id": 13, "method": "elicitation/create",
            "params": {"message": "?", "_meta": {RELATED_TASK: {"taskId": "t"}}}});
        assert_eq!(
            behind(&mut table, about_task, false),
            None,
            "a task's: the client's"
        );

        let answer = json!({"jsonrpc": "2.0", "id": "taskwire-relay-q2",
                            "result": {"action": "accept", "content": {}}});
        let sent = front(&mut table, answer.clone()).unwrap();
        assert_eq!(sent["id"], 12);
        assert_eq!(sent["result"], answer["result"]);
    }

    #[test]
    fn when_the_server_behind_goes_each_relayed_call_fails_and_relaying_stops() {
        let mut table = relaying();
        front(&mut table, call(json!(1), json!({"name": "slow"}))).unwrap();
        let mut out = Vec::new();
        table.behind_gone(&mut out);
        let failed = one(&out);
        assert_eq!(failed["id"], 1);
        assert_eq!(failed["error"]["code"], -32603);
        assert!(failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("closed its connection"));
        assert!(!table.relaying());
        assert_eq!(
            front(&mut table, call(json!(2), json!({"name": "slow"}))),
            None
        );
    }

    #[test]
    fn a_plain_call_of_a_tool_that_requires_a_task_is_the_drivers_and_tasks_are_not_relayed() {
        use taskwire_driver::engine::TaskSupport;
        use taskwire_driver::Tool;
        let mut table = Table {
            tasks: true,
            ..Table::default()
        };
        table.required.listed(&[
            Tool::new("slow", TaskSupport::Required),
            Tool::new("echo", TaskSupport::Optional),
        ]);
        let opened = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(!table.front_line(opened.to_string().as_bytes(), &mut Vec::new()));
        table.behind_ready = true;
        assert!(!table.tasks, "the proxy's client makes tasks behind");

        assert_eq!(
            front(&mut table, call(json!(1), json!({"name": "slow"}))),
            None
        );
        let escaped =
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sl\u006fw"}}"#;
        assert!(
            !table.front_line(escaped, &mut Vec::new()),
            "the name read unescaped"
        );
        let task = call(json!(3), json!({"name": "echo", "task": {}}));
        assert_eq!(front(&mut table, task), None, "task calls: the front's own");
        let sent = front(&mut table, call(json!(4), json!({"name": "echo"}))).unwrap();
        assert_eq!(
            sent["id"], "taskwire-relay-1",
            "other plain calls are relayed"
        );

        let about_task = json!({"jsonrpc": "2.0", "id": 13, "method": "elicitation/create",
            "params": {"message": "?", "_meta": {RELATED_TASK: {"taskId": "t"}}}});
        assert_eq!(
            behind(&mut table, about_task, false),
            None,
            "a task's question: the client's"
        );
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": 3, "progress": 1}});
        assert_eq!(behind(&mut table, progress, false), None, "the client's");
    }

    #[test]
    fn with_tasks_relayed_task_calls_requests_notices_and_questions_cross_as_they_came() {
        let mut table = relaying();
        table.tasks = true;
        let params = json!({"name": "slow", "task": {"ttl": 60000}, "_meta": {"progressToken": 3}});
        let sent = front(&mut table, call(json!(1), params.clone())).unwrap();
        assert_eq!(
            sent,
            call(json!("taskwire-relay-1"), params),
            "the token as it came"
        );
        let created = json!({"task": {"taskId": "t-1", "status": "working"}});
        let answer = json!({"jsonrpc": "2.0", "id": "taskwire-relay-1", "result": created});
        assert_eq!(behind(&mut table, answer, false).unwrap()["id"], 1);

        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let asked = json!({"jsonrpc": "2.0", "id": 5, "method": method,
                               "params": {"taskId": "t-1"}});
            let sent = front(&mut table, asked.clone()).unwrap();
            assert_eq!(sent["params"], asked["params"], "{method}");
            assert!(sent["id"].as_str().unwrap().starts_with("taskwire-relay-"));
        }
        let list = json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/list"});
        let sent = front(&mut table, list).unwrap();
        assert_eq!(sent.get("params"), None, "no params, as it came");

        let status = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                            "params": {"taskId": "t-1", "status": "completed"}});
        assert_eq!(behind(&mut table, status.clone(), false), Some(status));
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": 3, "progress": 1}});
        assert_eq!(behind(&mut table, progress.clone(), false), Some(progress));
        let ask = json!({"jsonrpc": "2.0", "id": 8, "method": "elicitation/create",
            "params": {"message": "?", "_meta": {RELATED_TASK: {"taskId": "t-1"}}}});
        let asked = behind(&mut table, ask.clone(), false).unwrap();
        assert_eq!(
            asked["params"], ask["params"],
            "naming the task as the front knows it"
        );

        let log = |level: &str| {
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                "level": level, "data": "x", "_meta": {RELATED_TASK: {"taskId": "t-1"}}}})
        };
        assert_eq!(behind(&mut table, log("debug"), false), Some(log("debug")));
        let set = json!({"jsonrpc": "2.0", "id": 10, "method": "logging/setLevel",
                         "params": {"level": "warning"}});
        assert_eq!(
            front(&mut table, set),
            None,
            "the proxy's server answers it"
        );
        assert_eq!(
            behind(&mut table, log("info"), false),
            Some(Value::Null),
            "filtered"
        );
        assert_eq!(behind(&mut table, log("error"), false), Some(log("error")));
        let untasked = json!({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "error", "data": "x"}});
        assert_eq!(behind(&mut table, untasked, false), None, "the client's");

        let mut plain = relaying();
        let get = json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": {}});
        assert_eq!(
            front(&mut plain, get),
            None,
            "without tasks relayed: the driver's"
        );
    }
}

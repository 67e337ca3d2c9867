//! Fronts and workers sharing one store: a front hands a task's work off (`Host::hand_off`:
//! stored as queued, attempt 0, the call over here), a worker claims it (`Host::adopt`: its
//! first run, `Event::Claimed`), the front's followers hear the worker's end; a host whose
//! claim ran out lets the work go (`Host::release`: stopped, `StopReason::Moved`) and takes
//! the task as the store holds it, forgetting an end the store refused; a change the store
//! refused for keeping another version of the task (`Host::refuse_journal` with it) is
//! answered from that version: a cancel that lost the race to the work's end elsewhere.

use serde_json::json;
use taskwire_engine::{
    Change, Config, Durability, Event, JournalEntry, RpcError, StopReason, TaskSupport, UsageError,
};
use taskwire_harness::msg::response;
use taskwire_harness::setup::{counter_ids, server_config, text_result, tool, T0};
use taskwire_harness::Probe;

use crate::common::stored;

fn host(durability: Durability) -> Probe {
    let mut config: Config = server_config();
    config.durability = durability;
    Probe::ready_server(config, |h| h.add_tool(tool("job", TaskSupport::Optional)))
}

fn start(d: &mut Probe) -> String {
    let reply = d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {"n": 7}, "task": { "ttl": 60_000 } }),
    );
    reply["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_front_hands_a_tasks_work_off_and_a_worker_runs_it_first_and_ends_it() {
    let (mut front, mut worker) = (host(Durability::Journal), host(Durability::Journal));
    let task = start(&mut front);
    let call = front.work(&task);
    let now = front.now;
    let handed = front.host.hand_off(now, call, Some("queued".into()));
    assert_eq!(handed.map(|t| t.to_string()), Ok(task.clone()));
    front.drain();
    let queued = stored(&front.journal, &task);
    assert_eq!(
        queued.request.as_ref().map(|r| r.attempt),
        Some(0),
        "queued"
    );
    assert_eq!(queued.info.status_message.as_deref(), Some("queued"));
    assert!(!front.host.runs_here(&task), "nothing runs on the front");
    let answered = front.host.respond(now, call, Ok(text_result("no")));
    assert_eq!(
        answered,
        Err(UsageError::UnknownCall(call)),
        "the call is over"
    );
    let got = front.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert_eq!(got["result"]["statusMessage"], "queued", "{got}");
    let (wait, _) = front.send("tasks/result", json!({ "taskId": task }));

    // A worker claims it: its first run, with the arguments as called.
    let now = worker.now;
    worker.host.adopt(now, queued).expect("adopted");
    worker.drain();
    let claimed: Vec<_> = worker
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Claimed {
                call,
                task,
                request,
            } => Some((call, task, request)),
            _ => None,
        })
        .collect();
    let [(work, t, request)] = &claimed[..] else {
        panic!("one Claimed event: {claimed:?}");
    };
    assert_eq!(t.as_str(), task);
    assert_eq!((request.tool.as_str(), request.attempt), ("job", 1));
    assert_eq!(
        request.arguments.as_ref().map(|a| a.get()),
        Some(r#"{"n":7}"#)
    );
    assert_eq!(
        stored(&worker.journal, &task).request.map(|r| r.attempt),
        Some(1),
        "the first attempt is stored"
    );
    worker
        .host
        .respond(now, *work, Ok(text_result("on the worker")))
        .unwrap();
    worker.drain();

    // The front hears the end from the store: its parked result is answered.
    let now = front.now;
    front
        .host
        .sync(now, stored(&worker.journal, &task))
        .expect("synced");
    let out = front.drain();
    let result = response(&out, &wait).expect("the parked result is answered");
    assert_eq!(result["result"]["content"][0]["text"], "on the worker");
}

#[test]
fn a_host_that_journals_nothing_cannot_hand_work_off_and_keeps_running_it() {
    let mut d = host(Durability::Volatile);
    let task = start(&mut d);
    let call = d.work(&task);
    let now = d.now;
    let refused = d.host.hand_off(now, call, None);
    assert!(
        matches!(&refused, Err(UsageError::NotJournaled(t)) if t.as_str() == task),
        "{refused:?}"
    );
    assert!(d.host.runs_here(&task));
    d.host.respond(now, call, Ok(text_result("here"))).unwrap();
    let got = d.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "completed", "{got}");
}

#[test]
fn a_released_task_stops_its_work_and_becomes_what_the_store_holds() {
    let mut d = host(Durability::Journal);
    let running = start(&mut d);
    let ended = start(&mut d);
    d.take_events();
    let (call, now) = (d.work(&running), d.now);
    let mut elsewhere = stored(&d.journal, &running);
    elsewhere.info.status_message = Some("run elsewhere".into());
    d.host.release(now, elsewhere).expect("released");
    d.drain();
    let stops: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Stop { call, reason, .. } => Some((call, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(stops, [(call, StopReason::Moved)]);
    assert!(!d.host.runs_here(&running));
    let late = d.host.respond(now, call, Ok(text_result("late")));
    assert_eq!(late, Err(UsageError::UnknownCall(call)));
    let got = d.call("tasks/get", json!({ "taskId": running }));
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert_eq!(got["result"]["statusMessage"], "run elsewhere", "{got}");

    // An end the store refused (another host claimed the task first) is forgotten.
    let before = stored(&d.journal, &ended);
    let (call, now) = (d.work(&ended), d.now);
    d.host
        .respond(now, call, Ok(text_result("refused")))
        .unwrap();
    d.host.release(now, before).expect("released");
    let got = d.call("tasks/get", json!({ "taskId": ended }));
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert!(!d.host.runs_here(&ended));
}

/// A 2026-07-28 host that journals, with `slow` (a task when declared), and a session of
/// `alice`'s.
fn host_2026() -> (taskwire_engine::Host, taskwire_engine::SessionId) {
    use taskwire_engine::{Host, Role, Tool};
    let mut config = Config::new("taskwire-test", "1.0.0");
    config.durability = Durability::Journal;
    let mut host = Host::new(config, counter_ids("task-"), T0);
    host.add_tool(Tool::new("slow", TaskSupport::Optional));
    let session = host.open(T0, Role::Server, "alice").expect("a session");
    (host, session)
}

/// What a host put out: messages, events and journal entries.
#[derive(Default)]
struct Out {
    messages: Vec<serde_json::Value>,
    events: Vec<Event>,
    journal: Vec<JournalEntry>,
}

fn drain(host: &mut taskwire_engine::Host) -> Out {
    use taskwire_engine::Output;
    let mut out = Out::default();
    while let Some(o) = host.poll_output() {
        match o {
            Output::Send(t) => out.messages.push(serde_json::from_str(&t.message).unwrap()),
            Output::Event(e) => out.events.push(e),
            Output::Journal(j) => out.journal.push(j),
            _ => {}
        }
    }
    out
}

/// A 2026-07-28 request declaring the tasks extension and elicitation.
fn request_2026(
    host: &mut taskwire_engine::Host,
    session: taskwire_engine::SessionId,
    id: u64,
    method: &str,
    mut params: serde_json::Value,
) -> Out {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            { "elicitation": { "form": {} }, "extensions": { "io.modelcontextprotocol/tasks": {} } },
    });
    let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    host.handle_message(T0, session, line.to_string().as_bytes())
        .expect("taken");
    drain(host)
}

#[test]
fn a_question_asked_where_the_work_runs_is_shown_and_answered_on_another_host() {
    let (mut worker, on_worker) = host_2026();
    let (mut front, on_front) = host_2026();
    let made = request_2026(
        &mut worker,
        on_worker,
        1,
        "tools/call",
        json!({ "name": "slow" }),
    );
    let call = made
        .events
        .iter()
        .find_map(|e| match e {
            Event::ToolCall(c) => Some(c.call),
            _ => None,
        })
        .expect("the tool runs");
    let params = json!({ "mode": "form", "message": "Ship it?", "requestedSchema": {
        "type": "object", "properties": { "ok": { "type": "boolean" } } } });
    let input = worker
        .request_input(T0, call, "elicitation/create", params)
        .expect("asked");
    let asked = stored(&drain(&mut worker).journal, "task-1");
    assert_eq!(asked.inputs.len(), 1, "the question is stored: {asked:?}");
    let key = asked.inputs[0].key.clone();

    // Another host shows it as the worker asked it.
    front.sync(T0, asked).expect("synced");
    let got = request_2026(
        &mut front,
        on_front,
        2,
        "tasks/get",
        json!({ "taskId": "task-1" }),
    );
    let result = &got.messages[0]["result"];
    assert_eq!(result["status"], "input_required", "{result}");
    assert_eq!(
        result["inputRequests"][&key]["params"]["message"], "Ship it?",
        "{result}"
    );

    // Answered there: journaled for the store to relay; the worker's work hears it.
    let answer = json!({ "action": "accept", "content": { "ok": true } });
    let update = json!({ "taskId": "task-1", "inputResponses": { key.clone(): answer.clone() } });
    let acked = request_2026(&mut front, on_front, 3, "tasks/update", update);
    assert!(acked.messages[0]["error"].is_null(), "{:?}", acked.messages);
    let relayed: Vec<_> = acked
        .journal
        .iter()
        .filter_map(|e| match &e.change {
            Change::Answers { task, responses } => Some((task.to_string(), responses.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(relayed.len(), 1, "{:?}", acked.journal);
    assert_eq!(relayed[0].0, "task-1");
    assert!(
        !acked
            .journal
            .iter()
            .any(|e| matches!(e.change, Change::Put(_))),
        "the task changes where its work runs"
    );
    worker
        .answer_inputs(T0, "task-1", relayed[0].1.clone())
        .expect("answered");
    let heard = drain(&mut worker);
    let responses: Vec<_> = heard
        .events
        .iter()
        .filter_map(|e| match e {
            Event::InputResponse {
                input: i, outcome, ..
            } => Some((*i, outcome.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(responses, [(input, Ok(answer))]);
    let working = stored(&heard.journal, "task-1");
    assert_eq!(working.info.status.to_string(), "working");
    assert!(
        working.inputs.is_empty(),
        "nothing outstanding: {working:?}"
    );
    // A host not running the task's work takes no relayed answers.
    let refused = front.answer_inputs(T0, "task-1", serde_json::Map::new());
    assert!(
        matches!(refused, Err(UsageError::UnknownTask(_))),
        "{refused:?}"
    );
}

#[test]
fn a_host_sharing_its_store_holds_only_the_newest_finished_tasks_once_stored() {
    let mut d = host(Durability::Journal);
    let now = d.now;
    d.host.set_keep_finished(now, Some(2)).expect("set");
    let tasks: Vec<String> = (0..4).map(|_| start(&mut d)).collect();
    let live = start(&mut d);
    // From here on the host holds what reveals a change until the store confirms it.
    d.host
        .set_durability(now, Durability::Confirmed)
        .expect("set");
    for task in &tasks {
        let (call, now) = (d.work(task), d.now);
        d.host.respond(now, call, Ok(text_result("done"))).unwrap();
    }
    d.drain();
    // Not stored yet: every finished task is held.
    let now = d.now;
    d.host.handle_timeout(now).unwrap();
    assert!(
        tasks.iter().all(|t| d.host.has_task(t)),
        "unconfirmed ones are held"
    );
    let last = d.journal.last().map(|e| e.seq).expect("journaled");
    d.host.confirm(now, last);
    d.host.handle_timeout(now).unwrap();
    let held: Vec<bool> = tasks.iter().map(|t| d.host.has_task(t)).collect();
    assert_eq!(
        held,
        [false, false, true, true],
        "the newest two finished are held"
    );
    assert!(d.host.has_task(&live), "a live task is always held");
    assert!(
        !d.journal
            .iter()
            .any(|e| matches!(e.change, Change::Delete { .. })),
        "letting a task go deletes nothing from the store"
    );
    // One read back (as the driver does when a request names it) is held again, then let
    // go in its turn.
    let stored_first = stored(&d.journal, &tasks[0]);
    d.host.sync(now, stored_first).expect("synced");
    assert!(d.host.has_task(&tasks[0]));
    d.host.handle_timeout(now).unwrap();
    let held: Vec<bool> = tasks.iter().map(|t| d.host.has_task(t)).collect();
    assert_eq!(
        held,
        [true, false, false, true],
        "the oldest finished go first"
    );
}

/// The newest entry a probe journaled.
fn last_seq(d: &Probe) -> u64 {
    d.journal.last().expect("something journaled").seq
}

#[test]
fn a_cancel_that_lost_the_race_to_the_works_end_is_answered_from_the_end_the_store_keeps() {
    let (mut worker, mut front) = (host(Durability::Journal), host(Durability::Confirmed));
    let task = start(&mut worker);
    let now = front.now;
    front
        .host
        .sync(now, stored(&worker.journal, &task))
        .expect("synced");
    let (wait, _) = front.send("tasks/result", json!({ "taskId": task }));
    // The work ends on the worker and is stored; the front has not heard of it yet.
    let call = worker.work(&task);
    let now = worker.now;
    worker
        .host
        .respond(now, call, Ok(text_result("done first")))
        .unwrap();
    worker.drain();
    let completed = stored(&worker.journal, &task);

    // The front takes a cancel: journaled, its answers held until the store has it.
    let (cancel, out) = front.send("tasks/cancel", json!({ "taskId": task }));
    assert!(response(&out, &cancel).is_none(), "held: {out:?}");
    let seq = last_seq(&front);
    let refused = RpcError::internal("refused by the store");
    let now = front.now;
    front
        .host
        .refuse_journal(now, seq, &[(seq, refused)], vec![completed]);
    let out = front.drain();
    let answer = response(&out, &cancel).expect("the cancel is answered");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "Cannot cancel task: already in terminal status 'completed'"
    );
    let result = response(&out, &wait).expect("the parked result is answered");
    assert_eq!(
        result["result"]["content"][0]["text"], "done first",
        "{result}"
    );
    assert!(
        !out.iter()
            .any(|m| m["method"] == "notifications/tasks/status"
                && m["params"]["status"] == "cancelled"),
        "no one is told of the cancel the store refused: {out:?}"
    );
    let got = front.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "completed", "{got}");

    // A refusal without the stored version (the change itself was refused) fails the
    // reply, as before.
    let other = start(&mut worker);
    let now = front.now;
    front
        .host
        .sync(now, stored(&worker.journal, &other))
        .expect("synced");
    let (cancel, _) = front.send("tasks/cancel", json!({ "taskId": other }));
    let seq = last_seq(&front);
    let now = front.now;
    front.host.refuse_journal(
        now,
        seq,
        &[(seq, RpcError::internal("no room"))],
        Vec::new(),
    );
    let out = front.drain();
    let answer = response(&out, &cancel).expect("the cancel is answered");
    assert_eq!(answer["error"]["message"], "no room", "{answer}");
}

#[test]
fn a_2026_cancel_that_lost_the_race_is_acknowledged_and_the_task_reads_as_stored() {
    let (mut worker, on_worker) = host_2026();
    let (mut front, on_front) = host_2026();
    let now = front.now();
    front
        .set_durability(now, Durability::Confirmed)
        .expect("set");
    let made = request_2026(
        &mut worker,
        on_worker,
        1,
        "tools/call",
        json!({ "name": "slow" }),
    );
    let call = made
        .events
        .iter()
        .find_map(|e| match e {
            Event::ToolCall(c) => Some(c.call),
            _ => None,
        })
        .expect("the tool runs");
    front
        .sync(T0, stored(&made.journal, "task-1"))
        .expect("synced");
    worker
        .respond(T0, call, Ok(text_result("done first")))
        .unwrap();
    let completed = stored(&drain(&mut worker).journal, "task-1");

    let cancelled = request_2026(
        &mut front,
        on_front,
        2,
        "tasks/cancel",
        json!({ "taskId": "task-1" }),
    );
    assert!(
        cancelled.messages.is_empty(),
        "held: {:?}",
        cancelled.messages
    );
    let seq = cancelled.journal.last().expect("journaled").seq;
    front.refuse_journal(
        T0,
        seq,
        &[(seq, RpcError::internal("refused by the store"))],
        vec![completed],
    );
    let out = drain(&mut front);
    assert_eq!(out.messages.len(), 1, "{:?}", out.messages);
    assert_eq!(out.messages[0]["id"], 2);
    assert!(
        out.messages[0]["error"].is_null(),
        "acknowledged: {:?}",
        out.messages
    );
    let got = request_2026(
        &mut front,
        on_front,
        3,
        "tasks/get",
        json!({ "taskId": "task-1" }),
    );
    let result = &got.messages[0]["result"];
    assert_eq!(result["status"], "completed", "{result}");
}

#[test]
fn a_2025_question_asked_on_a_worker_goes_to_the_requestor_through_the_front_and_back() {
    let (mut front, mut worker) = (host(Durability::Journal), host(Durability::Journal));
    let task = start(&mut front);
    let call = front.work(&task);
    let now = front.now;
    front.host.hand_off(now, call, None).expect("handed off");
    front.drain();
    let now = worker.now;
    worker
        .host
        .adopt(now, stored(&front.journal, &task))
        .expect("claimed");
    worker.drain();
    let work = worker.work(&task);

    // Asked on the worker, which holds no session of the requestor's: stored with the task.
    let params = json!({ "mode": "form", "message": "Ship it?", "requestedSchema": {
        "type": "object", "properties": { "ok": { "type": "boolean" } } } });
    let now = worker.now;
    let input = worker
        .host
        .request_input(now, work, "elicitation/create", params)
        .expect("asked, to be relayed");
    worker.drain();
    let asked = stored(&worker.journal, &task);
    assert_eq!(asked.info.status.to_string(), "input_required");
    assert_eq!(asked.inputs.len(), 1, "{asked:?}");

    // The front hears it and sends it on the requestor's session, which follows the task;
    // a parked tasks/result is the stream it goes on.
    let (wait, _) = front.send("tasks/result", json!({ "taskId": task }));
    let now = front.now;
    front.host.sync(now, asked.clone()).expect("synced");
    let out = front.drain();
    let question = out
        .iter()
        .find(|m| m["method"] == "elicitation/create")
        .unwrap_or_else(|| panic!("the question goes out: {out:?}"));
    assert_eq!(question["params"]["message"], "Ship it?");
    assert_eq!(
        question["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task.as_str()
    );
    // Heard again (another change of the task): not sent twice.
    front.host.sync(now, asked).expect("synced");
    assert!(
        !front
            .drain()
            .iter()
            .any(|m| m["method"] == "elicitation/create"),
        "sent once"
    );

    // The requestor answers: journaled for the store to relay, the answer as given.
    let answer = json!({ "action": "accept", "content": { "ok": true } });
    front.reply(&question["id"], answer.clone());
    let relayed: Vec<_> = front
        .journal
        .iter()
        .filter_map(|e| match &e.change {
            Change::Answers { task, responses } => Some((task.to_string(), responses.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(relayed.len(), 1, "{:?}", front.journal);
    assert_eq!(relayed[0].0, task);

    // The worker's work hears it; the task works again.
    let now = worker.now;
    worker
        .host
        .answer_inputs(now, &task, relayed[0].1.clone())
        .expect("answered");
    worker.drain();
    let heard: Vec<_> = worker
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::InputResponse {
                input: i, outcome, ..
            } => Some((i, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(heard, [(input, Ok(answer))]);
    let working = stored(&worker.journal, &task);
    assert_eq!(working.info.status.to_string(), "working");
    assert!(working.inputs.is_empty(), "{working:?}");
    let now = worker.now;
    worker
        .host
        .respond(now, work, Ok(text_result("shipped")))
        .unwrap();
    worker.drain();
    let now = front.now;
    front
        .host
        .sync(now, stored(&worker.journal, &task))
        .expect("synced");
    let out = front.drain();
    let result = response(&out, &wait).expect("the parked result is answered");
    assert_eq!(result["result"]["content"][0]["text"], "shipped");
}

#[test]
fn progress_of_work_on_a_worker_reaches_the_2025_session_that_made_the_task() {
    let (mut front, mut worker) = (host(Durability::Journal), host(Durability::Journal));
    let reply = front.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": { "ttl": 60_000 },
                "_meta": { "progressToken": "p-7" } }),
    );
    let task = reply["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let call = front.work(&task);
    let now = front.now;
    front.host.hand_off(now, call, None).expect("handed off");
    front.drain();
    let now = worker.now;
    worker
        .host
        .adopt(now, stored(&front.journal, &task))
        .expect("claimed");
    worker.drain();
    let work = worker.work(&task);
    let now = worker.now;
    worker
        .host
        .notify_progress(now, work, 2.0, Some(5.0), Some("two of five".into()))
        .expect("reported");
    worker.drain();
    let reported = stored(&worker.journal, &task);
    let progress = reported.progress.clone().expect("stored with the task");
    assert_eq!((progress.progress, progress.total), (2.0, Some(5.0)));

    let now = front.now;
    front.host.sync(now, reported.clone()).expect("synced");
    let out = front.drain();
    let told: Vec<_> = out
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(told.len(), 1, "{out:?}");
    let params = &told[0]["params"];
    assert_eq!(params["progressToken"], "p-7");
    assert_eq!(
        (params["progress"].as_f64(), params["total"].as_f64()),
        (Some(2.0), Some(5.0))
    );
    assert_eq!(params["message"], "two of five");
    assert_eq!(
        params["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task.as_str()
    );
    // The same progress heard again (another change of the task) is not told again.
    front.host.sync(now, reported).expect("synced");
    assert!(
        !front
            .drain()
            .iter()
            .any(|m| m["method"] == "notifications/progress"),
        "told once"
    );
}

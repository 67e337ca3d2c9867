//! `conformance-server` over real stdio, driven the way the conformance suite 0.1.16 drives a
//! server in its core scenarios (`tests/fixtures/conformance-core-0.1.16.md` §2–§4): the same
//! `initialize` (ids from 0, sampling and elicitation declared), a fresh server per scenario,
//! the same requests, the suite's answers to the server's requests, and the scenarios'
//! assertions, often tighter (exact values where the suite only asks for truthy ones). The
//! transport scenarios (`server-sse-*`, `dns-rebinding-protection`) need HTTP. Every message
//! the server writes is checked against the 2025-11-25 schema by its definition.

use serde_json::{json, Value};
use taskwire_harness::schema::{self, assert_valid, assert_valid_in, CORE_2026};
use taskwire_tests::peers::demo::binary;
use taskwire_tests::procs::{self, Raw};

use crate::common::HANG;

const IMAGE: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// One scenario's client: a fresh server, initialized as the suite's SDK client does.
struct Scenario {
    raw: Raw,
    id: u64,
    /// Notifications the server wrote, in order, with the id of the last answer before each.
    notifications: Vec<Value>,
    /// Requests the server wrote to us, in order.
    asked: Vec<Value>,
}

impl Scenario {
    fn start() -> (Scenario, Value) {
        let raw = Raw::spawn(&binary("conformance-server"), &[], None);
        let mut s = Scenario {
            raw,
            id: 0,
            notifications: Vec::new(),
            asked: Vec::new(),
        };
        let init = s.request(
            "initialize",
            Some(json!({ "protocolVersion": "2025-11-25",
                "capabilities": { "sampling": {}, "elicitation": {} },
                "clientInfo": { "name": "conformance-test-client", "version": "1.0.0" } })),
            |_| panic!("no request before initialize is answered"),
        );
        s.raw
            .send(&json!({ "method": "notifications/initialized", "jsonrpc": "2.0" }))
            .expect("the server reads");
        (s, init)
    }

    fn ready() -> Scenario {
        Scenario::start().0
    }

    /// Sends a request (ids from 0, as the SDK numbers them) and reads until its answer,
    /// answering each request the server makes meanwhile with `answer`; every line is
    /// checked against the schema by its definition.
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
        answer: impl Fn(&Value) -> Value,
    ) -> Value {
        let id = self.id;
        self.id += 1;
        let mut message = json!({ "method": method, "jsonrpc": "2.0", "id": id });
        if let Some(params) = params {
            message["params"] = params;
        }
        self.raw.send(&message).expect("the server reads");
        loop {
            let line = self.raw.expect(HANG, method, |_| true);
            assert_valid("JSONRPCMessage", &line);
            match (line.get("method").and_then(Value::as_str), line.get("id")) {
                (Some(asked), Some(their_id)) => {
                    assert_valid(
                        schema::request_definition(asked).expect("a known request"),
                        &line,
                    );
                    self.asked.push(line.clone());
                    let reply =
                        json!({ "jsonrpc": "2.0", "id": their_id, "result": answer(&line) });
                    self.raw.send(&reply).expect("the server reads");
                }
                (Some(notified), None) => {
                    assert_valid(
                        schema::notification_definition(notified).expect("a known notification"),
                        &line,
                    );
                    self.notifications.push(line);
                }
                _ if line["id"] == id => {
                    let definition = schema::result_definition(method)
                        .or_else(|| schema::app_result_definition(method));
                    match (line.get("result"), definition) {
                        (Some(result), Some(definition)) => assert_valid(definition, result),
                        (None, _) => assert_valid("JSONRPCErrorResponse", &line),
                        _ => {}
                    }
                    return line;
                }
                _ => panic!("an answer to a request never sent: {line}"),
            }
        }
    }

    /// The result of a request the server does not ask anything for.
    fn result(&mut self, method: &str, params: Option<Value>) -> Value {
        let answer = self.request(method, params, |m| panic!("unexpected request {m}"));
        answer
            .get("result")
            .unwrap_or_else(|| panic!("{method} failed: {answer}"))
            .clone()
    }

    fn call(&mut self, tool: &str) -> Value {
        self.result("tools/call", Some(json!({ "name": tool, "arguments": {} })))
    }

    fn read(&mut self, uri: &str) -> Value {
        self.result("resources/read", Some(json!({ "uri": uri })))["contents"][0].clone()
    }

    fn prompt(&mut self, params: Value) -> Vec<Value> {
        let result = self.result("prompts/get", Some(params));
        let messages = result["messages"].as_array().expect("messages").clone();
        assert!(!messages.is_empty());
        for m in &messages {
            assert!(m.get("role").is_some() && m.get("content").is_some(), "{m}");
        }
        messages
    }

    fn notified(&self, method: &str) -> Vec<&Value> {
        self.notifications
            .iter()
            .filter(|n| n["method"] == method)
            .collect()
    }
}

/// The content blocks of a tool result, non-empty.
fn content(result: &Value) -> &Vec<Value> {
    let content = result["content"].as_array().expect("content");
    assert!(!content.is_empty(), "{result}");
    content
}

fn first_of_type<'a>(result: &'a Value, kind: &str) -> &'a Value {
    content(result)
        .iter()
        .find(|c| c["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} block: {result}"))
}

// ---- lifecycle and utilities -----------------------------------------------------------------

#[test]
fn server_initialize_declares_what_the_fixtures_serve() {
    let (_s, init) = Scenario::start();
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    let caps = &result["capabilities"];
    for key in ["tools", "prompts", "logging", "completions"] {
        assert!(caps[key].is_object(), "{key} missing: {caps}");
    }
    assert_eq!(caps["resources"]["subscribe"], true);
    assert_eq!(result["serverInfo"]["name"], "taskwire-conformance");
}

#[test]
fn logging_set_level_and_ping_answer_exactly_empty() {
    let mut s = Scenario::ready();
    assert_eq!(
        s.result("logging/setLevel", Some(json!({ "level": "info" }))),
        json!({})
    );
    assert_eq!(s.result("ping", None), json!({}));
}

#[test]
fn completion_complete_answers_a_values_array() {
    let mut s = Scenario::ready();
    let result = s.result(
        "completion/complete",
        Some(
            json!({ "ref": { "type": "ref/prompt", "name": "test_prompt_with_arguments" },
                     "argument": { "name": "arg1", "value": "test" } }),
        ),
    );
    assert!(result["completion"]["values"].is_array(), "{result}");
}

// ---- tools -----------------------------------------------------------------------------------

#[test]
fn tools_list_describes_every_tool_core_and_tasks_fixtures() {
    let mut s = Scenario::ready();
    let result = s.result("tools/list", None);
    let tools = result["tools"].as_array().expect("tools");
    for tool in tools {
        assert!(
            tool["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{tool}"
        );
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        if let Some(properties) = tool["inputSchema"]["properties"].as_object() {
            assert!(properties.values().all(Value::is_object), "{tool}");
        }
    }
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for wanted in [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "test_sampling",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "greet",
        "slow_compute",
        "test_tool_with_task",
    ] {
        assert!(names.contains(&wanted), "{wanted} not listed: {names:?}");
    }
    assert!(
        result.get("nextCursor").is_none(),
        "the suite reads one page"
    );
    // The pending json-schema-2020-12 scenario: the schema as written.
    let sep1613 = tools
        .iter()
        .find(|t| t["name"] == "json_schema_2020_12_tool")
        .expect("json_schema_2020_12_tool listed");
    let schema = &sep1613["inputSchema"];
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(schema["$defs"]["address"].is_object(), "{schema}");
    assert_eq!(schema["additionalProperties"], false);
}

#[test]
fn tools_call_simple_text_without_arguments() {
    let mut s = Scenario::ready();
    let result = s.result("tools/call", Some(json!({ "name": "test_simple_text" })));
    assert_eq!(
        first_of_type(&result, "text")["text"],
        "This is a simple text response for testing."
    );
}

#[test]
fn tools_call_image_audio_and_embedded_resource() {
    let mut s = Scenario::ready();
    let image = s.call("test_image_content");
    assert_eq!(first_of_type(&image, "image")["data"], IMAGE);
    assert_eq!(first_of_type(&image, "image")["mimeType"], "image/png");
    let audio = s.call("test_audio_content");
    assert_eq!(first_of_type(&audio, "audio")["mimeType"], "audio/wav");
    assert!(first_of_type(&audio, "audio")["data"]
        .as_str()
        .unwrap()
        .starts_with("UklGR"));
    let embedded = s.call("test_embedded_resource");
    assert_eq!(
        first_of_type(&embedded, "resource")["resource"],
        json!({ "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content." })
    );
}

#[test]
fn tools_call_mixed_content() {
    let mut s = Scenario::ready();
    let result = s.call("test_multiple_content_types");
    let kinds: Vec<&str> = content(&result)
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    assert_eq!(
        first_of_type(&result, "resource")["resource"]["mimeType"],
        "application/json"
    );
}

#[test]
fn tools_call_with_logging_sends_three_messages_before_its_result() {
    let mut s = Scenario::ready();
    assert_eq!(
        s.result("logging/setLevel", Some(json!({ "level": "debug" }))),
        json!({})
    );
    let result = s.call("test_tool_with_logging");
    assert_eq!(
        first_of_type(&result, "text")["text"],
        "Tool with logging executed successfully"
    );
    let logs = s.notified("notifications/message");
    let data: Vec<&Value> = logs.iter().map(|n| &n["params"]["data"]).collect();
    assert_eq!(
        data,
        [
            &json!("Tool execution started"),
            &json!("Tool processing data"),
            &json!("Tool execution completed")
        ]
    );
    for log in logs {
        assert!(
            LEVELS.contains(&log["params"]["level"].as_str().unwrap()),
            "{log}"
        );
    }
}

#[test]
fn a_raised_level_filters_the_tools_messages() {
    let mut s = Scenario::ready();
    s.result("logging/setLevel", Some(json!({ "level": "warning" })));
    s.call("test_tool_with_logging");
    assert!(
        s.notified("notifications/message").is_empty(),
        "info is below warning"
    );
}

#[test]
fn tools_call_error_is_a_result_with_is_error() {
    let mut s = Scenario::ready();
    let result = s.call("test_error_handling");
    assert_eq!(result["isError"], true);
    assert_eq!(
        content(&result)[0]["text"],
        "This tool intentionally returns an error for testing"
    );
}

#[test]
fn tools_call_with_progress_echoes_the_numeric_token_before_the_result() {
    let mut s = Scenario::ready();
    let id = s.id;
    let result = s.result(
        "tools/call",
        Some(json!({ "name": "test_tool_with_progress", "arguments": {},
                     "_meta": { "progressToken": id } })),
    );
    content(&result);
    let progress: Vec<&Value> = s.notified("notifications/progress");
    assert_eq!(progress.len(), 3, "{progress:?}");
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(values, [0.0, 50.0, 100.0]);
    for p in progress {
        assert_eq!(
            p["params"]["progressToken"],
            json!(id),
            "the token as sent: {p}"
        );
        assert_eq!(p["params"]["total"], 100.0);
    }
}

#[test]
fn tools_call_sampling_asks_the_client_and_reports_its_text() {
    let mut s = Scenario::ready();
    let answer = s.request(
        "tools/call",
        Some(json!({ "name": "test_sampling", "arguments": { "prompt": "Test prompt for sampling" } })),
        |_| json!({ "role": "assistant", "model": "test-model", "stopReason": "endTurn",
                    "content": { "type": "text", "text": "This is a test response from the client" } }),
    );
    assert_eq!(s.asked.len(), 1);
    assert_eq!(s.asked[0]["method"], "sampling/createMessage");
    assert_eq!(
        s.asked[0]["params"],
        json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "Test prompt for sampling" } }],
                "maxTokens": 100 })
    );
    assert_eq!(
        content(&answer["result"])[0]["text"],
        "LLM response: This is a test response from the client"
    );
}

#[test]
fn tools_call_elicitation_asks_the_client_and_reports_its_answer() {
    let mut s = Scenario::ready();
    let answer = s.request(
        "tools/call",
        Some(json!({ "name": "test_elicitation", "arguments": { "message": "Please provide your information" } })),
        |_| json!({ "action": "accept", "content": { "username": "testuser", "email": "test@example.com" } }),
    );
    assert_eq!(s.asked[0]["method"], "elicitation/create");
    let params = &s.asked[0]["params"];
    assert_eq!(params["message"], "Please provide your information");
    assert_eq!(
        params["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    let text = content(&answer["result"])[0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.starts_with("User response: action=accept, content={"),
        "{text}"
    );
    assert!(
        text.contains("testuser") && text.contains("test@example.com"),
        "{text}"
    );
}

/// The schema of the one `elicitation/create` a tool sends, answered with `content`.
fn elicited_schema(tool: &str, content: Value) -> (Value, String) {
    let mut s = Scenario::ready();
    let answer = s.request(
        "tools/call",
        Some(json!({ "name": tool, "arguments": {} })),
        move |_| json!({ "action": "accept", "content": content.clone() }),
    );
    assert_eq!(s.asked.len(), 1);
    let text = self::content(&answer["result"])[0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    (s.asked[0]["params"]["requestedSchema"].clone(), text)
}

#[test]
fn elicitation_sep1034_defaults() {
    let (schema, text) = elicited_schema(
        "test_elicitation_sep1034_defaults",
        json!({ "name": "Jane Smith", "age": 25, "score": 88.0, "status": "inactive", "verified": false }),
    );
    let p = &schema["properties"];
    assert_eq!(
        (&p["name"]["type"], &p["name"]["default"]),
        (&json!("string"), &json!("John Doe"))
    );
    assert_eq!(
        (&p["age"]["type"], &p["age"]["default"]),
        (&json!("integer"), &json!(30))
    );
    assert_eq!(
        (&p["score"]["type"], &p["score"]["default"]),
        (&json!("number"), &json!(95.5))
    );
    assert_eq!(p["status"]["type"], "string");
    assert!(p["status"]["enum"]
        .as_array()
        .unwrap()
        .contains(&p["status"]["default"]));
    assert_eq!(p["status"]["default"], "active");
    assert_eq!(
        (&p["verified"]["type"], &p["verified"]["default"]),
        (&json!("boolean"), &json!(true))
    );
    assert!(
        text.starts_with("Elicitation completed: action=accept, content="),
        "{text}"
    );
}

#[test]
fn elicitation_sep1330_enums() {
    let (schema, _) = elicited_schema(
        "test_elicitation_sep1330_enums",
        json!({ "untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
                "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"] }),
    );
    let p = &schema["properties"];
    let titled = |options: &Value| {
        options.as_array().is_some_and(|o| {
            o.len() == 3
                && o.iter()
                    .all(|x| x["const"].is_string() && x["title"].is_string())
        })
    };
    let single = &p["untitledSingle"];
    assert!(
        single["enum"].is_array()
            && single.get("oneOf").is_none()
            && single.get("enumNames").is_none()
    );
    assert!(titled(&p["titledSingle"]["oneOf"]) && p["titledSingle"].get("enum").is_none());
    let v2025 = &p["legacyEnum"];
    assert_eq!(
        v2025["enum"].as_array().unwrap().len(),
        v2025["enumNames"].as_array().unwrap().len()
    );
    let multi = &p["untitledMulti"];
    assert_eq!(
        (&multi["type"], &multi["items"]["type"]),
        (&json!("array"), &json!("string"))
    );
    assert!(multi["items"]["enum"].is_array() && multi["items"].get("anyOf").is_none());
    assert!(
        titled(&p["titledMulti"]["items"]["anyOf"])
            && p["titledMulti"]["items"].get("enum").is_none()
    );
}

// ---- resources -------------------------------------------------------------------------------

#[test]
fn resources_list_and_read() {
    let mut s = Scenario::ready();
    let listed = s.result("resources/list", None);
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["name"].as_str().is_some_and(|n| !n.is_empty()), "{r}");
            r["uri"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        uris,
        [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource"
        ]
    );
    assert_eq!(
        s.read("test://static-text"),
        json!({ "uri": "test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource." })
    );
    assert_eq!(
        s.read("test://static-binary"),
        json!({ "uri": "test://static-binary", "mimeType": "image/png", "blob": IMAGE })
    );
    let templated = s.read("test://template/123/data");
    assert_eq!(templated["uri"], "test://template/123/data");
    assert!(
        templated["text"].as_str().unwrap().contains("123"),
        "{templated}"
    );
    let missing = s.request(
        "resources/read",
        Some(json!({ "uri": "test://nothing" })),
        |_| json!({}),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
}

#[test]
fn resources_subscribe_and_unsubscribe_answer_exactly_empty() {
    let mut s = Scenario::ready();
    let uri = json!({ "uri": "test://watched-resource" });
    assert_eq!(
        s.result("resources/subscribe", Some(uri.clone())),
        json!({})
    );
    assert_eq!(s.result("resources/unsubscribe", Some(uri)), json!({}));
    let bad = s.request("resources/subscribe", Some(json!({})), |_| json!({}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

// ---- prompts ---------------------------------------------------------------------------------

#[test]
fn prompts_list_describes_every_prompt() {
    let mut s = Scenario::ready();
    let listed = s.result("prompts/list", None);
    let prompts = listed["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 4);
    for p in prompts {
        assert!(
            p["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{p}"
        );
    }
}

#[test]
fn prompts_get_simple_with_arguments_embedded_and_image() {
    let mut s = Scenario::ready();
    let simple = s.prompt(json!({ "name": "test_simple_prompt" }));
    assert_eq!(
        simple[0]["content"]["text"],
        "This is a simple prompt for testing."
    );
    let args = s.prompt(json!({ "name": "test_prompt_with_arguments",
                                "arguments": { "arg1": "testValue1", "arg2": "testValue2" } }));
    let text = serde_json::to_string(&args).unwrap();
    assert!(
        text.contains("testValue1") && text.contains("testValue2"),
        "{text}"
    );
    let embedded = s.prompt(json!({ "name": "test_prompt_with_embedded_resource",
                                    "arguments": { "resourceUri": "test://example-resource" } }));
    assert_eq!(embedded[0]["content"]["type"], "resource");
    assert_eq!(
        embedded[0]["content"]["resource"]["uri"],
        "test://example-resource"
    );
    let image = s.prompt(json!({ "name": "test_prompt_with_image" }));
    assert_eq!(
        image[0]["content"],
        json!({ "type": "image", "data": IMAGE, "mimeType": "image/png" })
    );
    let missing = s.request(
        "prompts/get",
        Some(json!({ "name": "test_prompt_with_arguments" })),
        |_| json!({}),
    );
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
}

// ---- the same fixtures in 2026-07-28 -----------------------------------------------------------

/// A 2026-07-28 request; `level` is its `logLevel` when given.
fn v2026(id: u64, method: &str, mut params: Value, level: Option<&str>) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let Some(level) = level {
        params["_meta"]["io.modelcontextprotocol/logLevel"] = json!(level);
    }
    procs::request(id, method, params)
}

#[test]
fn a_2026_call_gets_log_messages_only_when_its_request_names_a_level() {
    let raw = Raw::spawn(&binary("conformance-server"), &[], None);
    let mut raw = raw;
    for (id, level, expected) in [(1, Some("info"), 3), (2, None, 0), (3, Some("error"), 0)] {
        let call = json!({ "name": "test_tool_with_logging", "arguments": {} });
        raw.send(&v2026(id, "tools/call", call, level))
            .expect("the server reads");
        let mut logs = 0;
        loop {
            let line = raw.expect(HANG, "the call's messages", |_| true);
            if line["method"] == "notifications/message" {
                assert_valid_in(CORE_2026, "LoggingMessageNotification", &line);
                logs += 1;
                continue;
            }
            assert_eq!(line["id"], id, "{line}");
            assert_valid_in(CORE_2026, "CallToolResult", &line["result"]);
            break;
        }
        assert_eq!(logs, expected, "logLevel {level:?}");
    }
}

//! The client role in 2026-07-28, between two engines with deterministic time: opening with
//! `server/discover`, `tools/call` as a task (flat `CreateTaskResult`, `tasks/get` polls, the
//! listen stream, the inline outcome), input asked by the server's task (each key to the
//! application once, answered by `tasks/update`), MRTR on a plain call, cancel, and the
//! fallback to 2025-11-25. Every message either engine sends is checked against the schema
//! of its era by the pair.

use serde_json::{json, Value};
use taskwire_engine::{
    CallId, ClientEra, Event, LogLevel, Request, RequestId, TaskStatus, TaskSupport, UsageError,
};
use taskwire_harness::setup::{
    client_config, first_text, server_config, text_result, tool, v2026_client_config,
};
use taskwire_harness::{Pair, Probe, Side};

use crate::common::statuses;

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const EXT: &str = "io.modelcontextprotocol/tasks";

fn v2026_pair(support: TaskSupport) -> Pair {
    Pair::connected(v2026_client_config(), server_config(), |s| {
        s.add_tool(tool("job", support))
    })
}

fn form(message: &str) -> Value {
    json!({ "mode": "form", "message": message,
            "requestedSchema": { "type": "object",
                "properties": { "confirm": { "type": "boolean" } }, "required": ["confirm"] } })
}

/// The client's requests, as sent.
fn client_requests(pair: &Pair) -> Vec<Value> {
    pair.sent_by(Side::Client)
        .filter(|s| s.json.get("method").is_some() && s.json.get("id").is_some())
        .map(|s| s.json.clone())
        .collect()
}

/// The application requests (input asked of the client), with their method and task.
fn input_requests(pair: &Pair) -> Vec<(CallId, String, RequestId, Option<String>)> {
    pair.find(Side::Client, |e| match e {
        Event::Request(r) => Some((
            r.call,
            r.method.clone(),
            r.request.clone(),
            r.related_task.as_ref().map(|t| t.to_string()),
        )),
        _ => None,
    })
}

#[test]
fn discover_opens_the_session_and_every_request_carries_the_meta() {
    let mut pair = v2026_pair(TaskSupport::Optional);
    let opened = pair.find(Side::Client, |e| match e {
        Event::Initialized {
            protocol_version,
            peer,
            capabilities,
            ..
        } => Some((
            protocol_version.clone(),
            peer.name.clone(),
            capabilities.clone(),
        )),
        _ => None,
    });
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0].0, "2026-07-28");
    assert_eq!(opened[0].1, "test-server");
    assert_eq!(opened[0].2["extensions"][EXT], json!({}));
    assert!(pair.sent_method(Side::Client, "initialize").is_empty());

    pair.client
        .call_tool(pair.now, pair.cs, "job", json!({ "n": 1 }))
        .unwrap();
    pair.deliver();
    let work = pair.find(Side::Server, |e| match e {
        Event::ToolCall(c) => Some((c.call, c.task.is_some())),
        _ => None,
    });
    assert_eq!(
        work,
        [(work[0].0, false)],
        "a plain call does not declare tasks"
    );
    pair.server
        .respond(pair.now, work[0].0, Ok(text_result("plain")))
        .unwrap();
    pair.deliver();
    let answers = pair.find(Side::Client, |e| match e {
        Event::Response { outcome, .. } => Some(outcome.clone()),
        _ => None,
    });
    assert_eq!(answers.len(), 1);
    let result = answers[0].as_ref().unwrap();
    assert_eq!(first_text(result), Some("plain"));
    assert_eq!(result["resultType"], "complete");

    let requests = client_requests(&pair);
    assert_eq!(requests[0]["method"], "server/discover");
    for request in &requests {
        let meta = &request["params"]["_meta"];
        assert_eq!(meta[VERSION_KEY], "2026-07-28", "{request}");
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "test-client"
        );
        assert_eq!(meta[CAPS_KEY]["elicitation"], json!({ "form": {} }));
        let declares = meta[CAPS_KEY]["extensions"].get(EXT).is_some();
        assert_eq!(declares, request["method"] != "tools/call", "{request}");
    }
}

#[test]
fn a_task_is_polled_heard_on_its_stream_and_its_inline_result_reported() {
    let mut pair = v2026_pair(TaskSupport::Optional);
    let request = pair
        .client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), Some(60_000))
        .unwrap();
    pair.deliver();
    let created = pair.find(Side::Client, |e| match e {
        Event::TaskCreated { request, task, .. } => Some((request.clone(), task.clone())),
        _ => None,
    });
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].0, request);
    assert_eq!(created[0].1.id.as_str(), "task-1");
    assert_eq!(created[0].1.poll_interval_ms, Some(500));
    // The server decides the retention in this era: the requested one is not sent.
    let call = &client_requests(&pair)[1];
    assert_eq!(call["method"], "tools/call");
    assert!(call["params"].get("task").is_none());
    assert_eq!(
        pair.sent_method(Side::Client, "subscriptions/listen").len(),
        1
    );

    let work = pair.work(Side::Server, "task-1");
    pair.advance(100);
    pair.server
        .set_task_message(pair.now, work, Some("step 1".into()))
        .unwrap();
    pair.deliver();
    let messages = pair.find(Side::Client, |e| match e {
        Event::TaskStatus { task, .. } => task.status_message.clone(),
        _ => None,
    });
    assert_eq!(
        messages,
        ["step 1"],
        "pushed on the listen stream, before any poll"
    );
    pair.advance(1_200);
    pair.server
        .respond(pair.now, work, Ok(text_result("done")))
        .unwrap();
    let results = pair.run_until_task_result(5_000);
    assert_eq!(results.len(), 1);
    let result = results[0].as_ref().unwrap();
    assert_eq!(first_text(result), Some("done"));
    assert!(result
        .get("_meta")
        .is_none_or(|m| m.get("io.modelcontextprotocol/related-task").is_none()));
    assert_eq!(
        statuses(&pair),
        [TaskStatus::Working, TaskStatus::Completed]
    );
    assert!(pair.sent_method(Side::Client, "tasks/result").is_empty());
    assert!(!pair.sent_method(Side::Client, "tasks/get").is_empty());
    // Nothing more is asked of a finished task.
    let sent = pair.sent.len();
    pair.advance(10_000);
    let later: Vec<_> = pair.sent[sent..]
        .iter()
        .filter(|s| s.from == Side::Client && s.json["method"] == "tasks/get")
        .collect();
    assert!(later.is_empty(), "{later:?}");
}

#[test]
fn a_tasks_input_goes_to_the_app_once_and_back_by_tasks_update() {
    let mut pair = v2026_pair(TaskSupport::Required);
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    let asked = pair
        .server
        .request_input(pair.now, work, "elicitation/create", form("Delete it?"))
        .unwrap();
    pair.deliver();
    // Several polls repeat the request; the application sees it once.
    pair.advance(2_000);
    assert!(pair.sent_method(Side::Client, "tasks/get").len() >= 2);
    let asks = input_requests(&pair);
    assert_eq!(asks.len(), 1, "{asks:?}");
    let (call, method, key, task) = asks[0].clone();
    assert_eq!(method, "elicitation/create");
    assert_eq!(task.as_deref(), Some("task-1"));
    assert_eq!(statuses(&pair), [TaskStatus::InputRequired]);

    let answer = json!({ "action": "accept", "content": { "confirm": true } });
    pair.client
        .respond(pair.now, call, Ok(answer.clone()))
        .unwrap();
    pair.deliver();
    let updates = pair.sent_method(Side::Client, "tasks/update");
    assert_eq!(updates.len(), 1);
    let RequestId::String(key) = key else {
        panic!("the key is a string: {key:?}")
    };
    assert_eq!(updates[0].json["params"]["taskId"], "task-1");
    assert_eq!(updates[0].json["params"]["inputResponses"][&key], answer);
    let got = pair.find(Side::Server, |e| match e {
        Event::InputResponse { input, outcome, .. } => Some((*input, outcome.clone())),
        _ => None,
    });
    assert_eq!(got, [(asked, Ok(answer))]);

    pair.server
        .respond(pair.now, work, Ok(text_result("deleted")))
        .unwrap();
    let results = pair.run_until_task_result(5_000);
    assert_eq!(first_text(results[0].as_ref().unwrap()), Some("deleted"));
    assert_eq!(
        statuses(&pair),
        [
            TaskStatus::InputRequired,
            TaskStatus::Working,
            TaskStatus::Completed
        ]
    );
    assert_eq!(input_requests(&pair).len(), 1);
}

#[test]
fn an_app_that_cannot_answer_ends_the_task_and_cancels_it() {
    let mut pair = v2026_pair(TaskSupport::Required);
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    pair.server
        .request_input(pair.now, work, "elicitation/create", form("Delete it?"))
        .unwrap();
    pair.deliver();
    pair.advance(600);
    let (call, ..) = input_requests(&pair)[0].clone();
    let refusal = taskwire_engine::RpcError::internal("no user at the keyboard");
    pair.client
        .respond(pair.now, call, Err(refusal.clone()))
        .unwrap();
    pair.deliver();
    let results = pair.run_until_task_result(1_000);
    assert_eq!(results, [Err(refusal)]);
    assert_eq!(pair.sent_method(Side::Client, "tasks/cancel").len(), 1);
    assert!(pair.sent_method(Side::Client, "tasks/update").is_empty());
}

#[test]
fn a_plain_call_answers_mrtr_rounds_with_the_apps_input() {
    let mut pair = v2026_pair(TaskSupport::Forbidden);
    let request = pair
        .client
        .call_tool(pair.now, pair.cs, "job", json!({ "file": "a.txt" }))
        .unwrap();
    pair.deliver();
    // Round 1: the tool asks; the server answers with an InputRequiredResult.
    let calls = |pair: &Pair| {
        pair.find(Side::Server, |e| match e {
            Event::ToolCall(c) => Some(c.call),
            _ => None,
        })
    };
    let first = calls(&pair)[0];
    pair.server
        .request_input(pair.now, first, "elicitation/create", form("Sure?"))
        .unwrap();
    pair.deliver();
    let asks = input_requests(&pair);
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].3, None, "no task: an MRTR round");
    let answer = json!({ "action": "accept", "content": { "confirm": true } });
    pair.client
        .respond(pair.now, asks[0].0, Ok(answer.clone()))
        .unwrap();
    pair.deliver();
    // Round 2: the retry has a new id, the same name and arguments, and the answer.
    let retries = pair.sent_method(Side::Client, "tools/call");
    assert_eq!(retries.len(), 2);
    assert_ne!(retries[0].json["id"], retries[1].json["id"]);
    assert_eq!(
        retries[1].json["params"]["arguments"],
        json!({ "file": "a.txt" })
    );
    assert_eq!(
        retries[1].json["params"]["inputResponses"]["input-1"],
        answer
    );
    let second = calls(&pair)[1];
    let input = pair
        .server
        .request_input(pair.now, second, "elicitation/create", form("Sure?"))
        .unwrap();
    pair.deliver();
    let given = pair.find(Side::Server, |e| match e {
        Event::InputResponse { input, outcome, .. } => Some((*input, outcome.clone())),
        _ => None,
    });
    assert_eq!(given, [(input, Ok(answer))], "answered from the retry");
    pair.server
        .respond(pair.now, second, Ok(text_result("sure")))
        .unwrap();
    pair.deliver();
    let answers = pair.find(Side::Client, |e| match e {
        Event::Response {
            request, outcome, ..
        } => Some((request.clone(), outcome.clone())),
        _ => None,
    });
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].0, request, "answered as the first request");
    assert_eq!(first_text(answers[0].1.as_ref().unwrap()), Some("sure"));
}

#[test]
fn cancel_is_answered_by_the_task_after_the_ack_and_the_outcome_follows() {
    let mut pair = v2026_pair(TaskSupport::Optional);
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    pair.deliver();
    let cancel = pair
        .client
        .cancel_task(pair.now, pair.cs, "task-1")
        .unwrap();
    pair.deliver();
    let answered = pair.find(Side::Client, |e| match e {
        Event::TaskAnswer {
            request, outcome, ..
        } if *request == cancel => Some(outcome.clone()),
        _ => None,
    });
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].as_ref().unwrap().status, TaskStatus::Cancelled);
    let results = pair.run_until_task_result(1_000);
    let error = results[0].as_ref().unwrap_err();
    assert_eq!(error.message, "Task was cancelled");
    assert!(pair
        .client
        .task_result(pair.now, pair.cs, "task-1")
        .is_err_and(|e| e.to_string().contains("tasks/get carries the outcome")));
}

#[test]
fn auto_falls_back_to_initialize_for_a_server_without_discover() {
    // A 2025-11-25-only server: what it answers `server/discover` before `initialize`.
    let mut config = client_config();
    config.client_era = ClientEra::Auto;
    let mut pair = Pair::new(config, server_config());
    pair.client.initialize(pair.now, pair.cs).unwrap();
    pair.drain();
    let (_, line) = pair.in_flight.pop_front().expect("the discover request");
    let discover: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(discover["method"], "server/discover");
    let refusal = json!({"jsonrpc":"2.0","id":discover["id"],
        "error":{"code":-32601,"message":"Method not found"}});
    pair.client
        .handle_message(pair.now, pair.cs, refusal.to_string().as_bytes())
        .expect("the host takes input");
    pair.deliver();
    let opened = pair.find(Side::Client, |e| match e {
        Event::Initialized {
            protocol_version, ..
        } => Some(protocol_version.clone()),
        _ => None,
    });
    assert_eq!(opened, ["2025-11-25"]);
    assert_eq!(pair.sent_method(Side::Client, "initialize").len(), 1);
}

#[test]
fn auto_falls_back_when_discover_goes_unanswered_and_v2026_fails() {
    for (era, opened) in [
        (ClientEra::Auto, true),
        (ClientEra::Only(taskwire_engine::Era::V2026_07_28), false),
    ] {
        let mut config = client_config();
        config.client_era = era;
        let mut pair = Pair::new(config, server_config());
        pair.client.initialize(pair.now, pair.cs).unwrap();
        pair.drain();
        pair.in_flight.clear(); // the server never hears it
        pair.advance(5_000);
        let initialize = pair.sent_method(Side::Client, "initialize");
        assert_eq!(initialize.is_empty(), !opened, "{era:?}");
        let failed = pair.find(Side::Client, |e| match e {
            Event::InitializeFailed { error, .. } => Some(error.message.clone()),
            _ => None,
        });
        match opened {
            true => assert!(failed.is_empty()),
            false => assert_eq!(failed, ["server/discover was not answered within 5000 ms"]),
        }
    }
}

#[test]
fn a_v2026_error_to_discover_is_not_a_v2025_server() {
    let mut config = client_config();
    config.client_era = ClientEra::Auto;
    let mut pair = Pair::new(config, server_config());
    pair.client.initialize(pair.now, pair.cs).unwrap();
    pair.drain();
    let (_, line) = pair.in_flight.pop_front().unwrap();
    let discover: Value = serde_json::from_str(&line).unwrap();
    let refusal = json!({"jsonrpc":"2.0","id":discover["id"],"error":{"code":-32022,
        "message":"Unsupported protocol version",
        "data":{"supported":["2027-01-01"],"requested":"2026-07-28"}}});
    pair.client
        .handle_message(pair.now, pair.cs, refusal.to_string().as_bytes())
        .expect("the host takes input");
    pair.drain();
    let failed = pair.find(Side::Client, |e| match e {
        Event::InitializeFailed { error, .. } => Some(error.code),
        _ => None,
    });
    assert_eq!(failed, [-32022]);
    assert!(pair.sent_method(Side::Client, "initialize").is_empty());
}

/// A -32022 whose `supported` lists 2026-07-28 (a server that refused our first request for
/// its own reasons) is retried once with that version; a second one fails the opening.
#[test]
fn a_v2026_error_listing_our_version_is_retried_once() {
    let mut config = client_config();
    config.client_era = ClientEra::Auto;
    let mut pair = Pair::new(config, server_config());
    pair.client.initialize(pair.now, pair.cs).unwrap();
    pair.drain();
    let refuse = |pair: &mut Pair| {
        let (_, line) = pair.in_flight.pop_front().expect("a discover request");
        let discover: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(discover["method"], "server/discover");
        let refusal = json!({"jsonrpc":"2.0","id":discover["id"],"error":{"code":-32022,
            "message":"Unsupported protocol version",
            "data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}});
        pair.client
            .handle_message(pair.now, pair.cs, refusal.to_string().as_bytes())
            .expect("the host takes input");
        pair.drain();
    };
    refuse(&mut pair);
    assert_eq!(pair.sent_method(Side::Client, "server/discover").len(), 2);
    refuse(&mut pair);
    assert_eq!(pair.sent_method(Side::Client, "server/discover").len(), 2);
    let failed = pair.find(Side::Client, |e| match e {
        Event::InitializeFailed { error, .. } => Some(error.code),
        _ => None,
    });
    assert_eq!(failed, [-32022]);
    assert!(pair.sent_method(Side::Client, "initialize").is_empty());
}

/// What 2026-07-28 does not have is refused at once, saying what to use instead, and
/// nothing is sent; a request from the server (which that era never sends) is -32601.
#[test]
fn what_the_era_lacks_is_refused_before_anything_is_sent() {
    let mut pair = v2026_pair(TaskSupport::Optional);
    let sent = pair.sent_by(Side::Client).count();
    let (host, session) = pair.session(Side::Client);
    let now = host.now();
    for refused in [
        host.task_result(now, session, "task-1"),
        host.list_tasks(now, session, None),
        host.request_as_task(now, session, "sampling/createMessage", json!({}), None),
        host.send(
            now,
            session,
            Request::SetLogLevel {
                level: LogLevel::Info,
            },
        ),
    ] {
        match refused {
            Err(UsageError::NotInEra { instead, .. }) => assert!(instead.contains("2026-07-28")),
            other => panic!("expected NotInEra, got {other:?}"),
        }
    }
    pair.deliver();
    assert_eq!(pair.sent_by(Side::Client).count(), sent, "nothing was sent");
}

/// A server of 2026-07-28 sends no request of its own: one that does gets -32601.
#[test]
fn a_request_from_a_v2026_server_is_not_a_method_the_client_has() {
    let mut d = Probe::client(v2026_client_config());
    d.host.initialize(d.now, d.session).expect("initialize");
    let discover = d.drain();
    d.feed_json(
        json!({ "jsonrpc": "2.0", "id": discover[0]["id"], "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": { "tools": {} } } }),
    );
    assert_eq!(d.host.protocol_version(d.session), Some("2026-07-28"));
    let (id, out) = d.send("elicitation/create", json!({ "message": "?" }));
    let answer = out.iter().find(|m| m["id"] == id).expect("answered");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

#[test]
fn the_client_listens_for_the_list_changes_the_server_declares_and_hears_them() {
    let mut config = server_config();
    config.tools_list_changed = true;
    let mut pair = Pair::connected(v2026_client_config(), config, |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    let asked = pair
        .client
        .listen_for_notices(pair.now, pair.cs, &[])
        .unwrap();
    assert!(asked.is_some());
    pair.deliver();
    let requests = client_requests(&pair);
    let listen = requests
        .iter()
        .find(|r| r["method"] == "subscriptions/listen");
    let listen = listen.expect("a listen stream asked");
    assert_eq!(
        listen["params"]["notifications"],
        json!({ "toolsListChanged": true })
    );

    let server_session = pair.ss;
    let notice = taskwire_engine::Notice::ToolsListChanged;
    pair.server
        .notify(pair.now, server_session, &notice)
        .unwrap();
    pair.deliver();
    let heard = pair.find(Side::Client, |e| match e {
        Event::Notification { method, .. } => Some(method.clone()),
        _ => None,
    });
    assert_eq!(heard, ["notifications/tools/list_changed"]);

    // Nothing to ask of a server that declares no list changes, nor in 2025-11-25 (whose
    // servers send them unasked).
    let mut quiet = v2026_pair(TaskSupport::Optional);
    assert_eq!(
        quiet.client.listen_for_notices(quiet.now, quiet.cs, &[]),
        Ok(None)
    );
    let mut old = Pair::connected(client_config(), server_config(), |_| {});
    assert_eq!(
        old.client.listen_for_notices(old.now, old.cs, &[]),
        Ok(None)
    );
}

/// Updates of resources: the client's listen stream names them, the server tells its
/// application which it wants and sends their updates on it; listening again for others
/// ends that stream (the server hears the set shrink) and opens one for them.
#[test]
fn the_client_listens_for_updates_of_the_resources_it_names() {
    let mut config = server_config();
    config
        .app_capabilities
        .insert("resources".into(), json!({ "subscribe": true }));
    let mut pair = Pair::connected(v2026_client_config(), config, |_| {});
    let wanted = |pair: &Pair| {
        pair.find(Side::Server, |e| match e {
            Event::ResourceSubscriptions { uris, .. } => Some(uris.clone()),
            _ => None,
        })
    };
    let (a, b) = ("file:///a".to_owned(), "file:///b".to_owned());
    let first = pair
        .client
        .listen_for_notices(pair.now, pair.cs, std::slice::from_ref(&a));
    let first = first.unwrap().expect("a listen stream asked");
    pair.deliver();
    let listens: Vec<Value> = client_requests(&pair)
        .into_iter()
        .filter(|r| r["method"] == "subscriptions/listen")
        .collect();
    assert_eq!(
        listens[0]["params"]["notifications"],
        json!({ "resourceSubscriptions": [a] })
    );
    assert_eq!(wanted(&pair), [vec![a.clone()]]);
    let update = |uri: &str| taskwire_engine::Notice::ResourceUpdated { uri: uri.into() };
    pair.server.notify(pair.now, pair.ss, &update(&a)).unwrap();
    pair.deliver();

    let second = pair
        .client
        .listen_for_notices(pair.now, pair.cs, std::slice::from_ref(&b));
    assert_ne!(second.unwrap(), Some(first.clone()));
    pair.deliver();
    let cancelled = pair.sent_by(Side::Client).find(|s| {
        s.json["method"] == "notifications/cancelled"
            && s.json["params"]["requestId"] == json!(first)
    });
    assert!(cancelled.is_some(), "the first stream is ended");
    assert_eq!(wanted(&pair), [vec![a.clone()], vec![], vec![b.clone()]]);
    for uri in [&a, &b] {
        pair.server.notify(pair.now, pair.ss, &update(uri)).unwrap();
    }
    pair.deliver();
    let heard = pair.find(Side::Client, |e| match e {
        Event::Notification { method, params, .. } => {
            assert_eq!(method, "notifications/resources/updated");
            let params: Value = serde_json::from_str(params.as_ref()?.get()).unwrap();
            Some(params["uri"].as_str()?.to_owned())
        }
        _ => None,
    });
    assert_eq!(
        heard,
        [a.clone(), b],
        "a's update after the switch is not sent"
    );
}

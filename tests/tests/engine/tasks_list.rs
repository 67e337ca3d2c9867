//! `tasks/list` (spec §2.9, §5.16): every live task in every status, ordered by creation
//! time then id, paged with opaque cursors; bad cursors are -32602.

use std::collections::HashSet;

use serde_json::{json, Value};
use taskwire_engine::{CallId, Config, Millis, Owner, RpcError};
use taskwire_harness::msg::error_code;
use taskwire_harness::probe::OWNER;
use taskwire_harness::setup::{server_config, text_result};
use taskwire_harness::Probe;

fn listing(d: &mut Probe, cursor: Option<Value>) -> (Vec<String>, Option<Value>) {
    let params = match cursor {
        Some(c) => json!({ "cursor": c }),
        None => Value::Null,
    };
    let reply = d.call("tasks/list", params);
    let result = &reply["result"];
    let ids = result["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("{reply}"))
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_owned())
        .collect();
    (ids, result.get("nextCursor").cloned())
}

fn all_pages(d: &mut Probe) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let (ids, next) = listing(d, cursor);
        pages.push(ids);
        match next {
            Some(next) => cursor = Some(next),
            None => return pages,
        }
    }
}

/// An app-created task of the probe's owner; returns its work.
fn create(d: &mut Probe, now: Millis, id: &str, ttl_ms: Option<u64>) -> CallId {
    d.host
        .create_task(now, &Owner::from(OWNER), id, ttl_ms)
        .unwrap()
}

fn server(page_size: usize) -> Probe {
    let mut config: Config = server_config();
    config.tasks.page_size = page_size;
    Probe::ready_server(config, |_| {})
}

#[test]
fn lists_by_creation_time_then_id_in_every_status() {
    let mut d = server(50);
    let t = d.now;
    create(&mut d, t, "b", None);
    let a = create(&mut d, t, "a", None);
    let zero = create(&mut d, t.plus(10), "0", None);
    create(&mut d, t.plus(20), "c", None);
    create(&mut d, t.plus(30), "d", None);
    d.host.respond(t.plus(40), a, Ok(text_result("x"))).unwrap();
    d.host
        .respond(t.plus(40), zero, Err(RpcError::new(-32603, "no")))
        .unwrap();
    d.drain();
    d.call("tasks/cancel", json!({ "taskId": "c" }));
    d.now = t.plus(50);
    let reply = d.call("tasks/list", json!({}));
    let tasks = reply["result"]["tasks"].as_array().unwrap().clone();
    let seen: Vec<(&str, &str)> = tasks
        .iter()
        .map(|t| (t["taskId"].as_str().unwrap(), t["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        seen,
        [
            ("a", "completed"),
            ("b", "working"),
            ("0", "failed"),
            ("c", "cancelled"),
            ("d", "working")
        ]
    );
    assert!(reply["result"].get("nextCursor").is_none());
}

#[test]
fn pages_cover_every_task_once_and_the_last_has_no_cursor() {
    let mut d = server(2);
    for i in 0..5 {
        let now = d.now.plus(i);
        create(&mut d, now, &format!("t{i}"), None);
    }
    let pages = all_pages(&mut d);
    assert_eq!(pages, [vec!["t0", "t1"], vec!["t2", "t3"], vec!["t4"]]);

    // Exactly one full page: no cursor promising more.
    let mut d = server(5);
    for i in 0..5 {
        let now = d.now;
        create(&mut d, now, &format!("t{i}"), None);
    }
    let (ids, next) = listing(&mut d, None);
    assert_eq!((ids.len(), next), (5, None));
}

#[test]
fn a_cursor_survives_changes_without_repeating_or_skipping_older_tasks() {
    let mut d = server(2);
    for i in 0..4 {
        let now = d.now.plus(i);
        create(&mut d, now, &format!("t{i}"), None);
    }
    let (first, cursor) = listing(&mut d, None);
    assert_eq!(first, ["t0", "t1"]);
    d.call("tasks/cancel", json!({ "taskId": "t1" }));
    let later = d.now.plus(100);
    create(&mut d, later, "t9", None);
    let mut rest = Vec::new();
    let mut cursor = cursor;
    while let Some(c) = cursor {
        let (ids, next) = listing(&mut d, Some(c));
        rest.extend(ids);
        cursor = next;
    }
    assert_eq!(rest, ["t2", "t3", "t9"]);
    let unique: HashSet<_> = first.iter().chain(&rest).collect();
    assert_eq!(unique.len(), 5);
}

#[test]
fn bad_cursors_are_invalid_params() {
    let mut d = server(2);
    let now = d.now;
    create(&mut d, now, "t0", None);
    for bad in [
        json!("garbage"),
        json!(""),
        json!("x:y"),
        json!(17),
        json!({}),
    ] {
        let reply = d.call("tasks/list", json!({ "cursor": bad }));
        assert_eq!(error_code(&reply), Some(-32602), "{bad}: {reply}");
    }
    d.assert_alive();
}

#[test]
fn expired_tasks_leave_the_list() {
    let mut d = server(50);
    let now = d.now;
    create(&mut d, now, "short", Some(1000));
    create(&mut d, now, "long", None);
    assert_eq!(listing(&mut d, None).0, ["long", "short"]);
    d.advance(1000);
    assert_eq!(listing(&mut d, None).0, ["long"]);
}

#[test]
fn without_the_list_capability_it_is_method_not_found() {
    let mut config = server_config();
    config.tasks.list = false;
    let mut d = Probe::ready_server(config, |_| {});
    let reply = d.call("tasks/list", Value::Null);
    assert_eq!(error_code(&reply), Some(-32601));
}

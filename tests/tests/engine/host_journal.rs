//! The journal for durable stores (issue 11): every change of a hosted task is reported in
//! order; a store that applies the entries and restores a fresh host from them gets the
//! same answers; with `Durability::Confirmed`, messages about a change wait for the store.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use taskwire_engine::{
    Change, Config, Durability, Event, Host, JournalEntry, Output, Owner, RpcError, StopReason,
    TaskSnapshot, TaskSupport,
};
use taskwire_harness::msg::response;
use taskwire_harness::setup::{counter_ids, error_result, server_config, text_result, tool};
use taskwire_harness::Probe;

/// A store that keeps the latest snapshot of every task, as a database table would.
#[derive(Default)]
struct Store {
    tasks: BTreeMap<String, TaskSnapshot>,
    last_seq: u64,
}

impl Store {
    fn apply(&mut self, entries: &[JournalEntry]) {
        for entry in entries {
            assert_eq!(
                entry.seq,
                self.last_seq + 1,
                "entries come in order, one by one"
            );
            self.last_seq = entry.seq;
            match &entry.change {
                Change::Put(snapshot) => {
                    self.tasks
                        .insert(snapshot.info.id.to_string(), snapshot.clone());
                }
                Change::Delete { task, .. } => {
                    self.tasks.remove(task.as_str());
                }
                Change::Message { task, message, at } => {
                    let stored = self
                        .tasks
                        .get_mut(task.as_str())
                        .expect("a message about a stored task");
                    stored.info.status_message = message.clone();
                    stored.info.last_updated_at = *at;
                }
                other => panic!("unknown change {other:?}"),
            }
        }
    }
}

/// The entries as a store keeps them: each written as JSON and read back (the same JSON
/// again).
fn through_json(entries: &[JournalEntry]) -> Vec<JournalEntry> {
    entries
        .iter()
        .map(|entry| {
            let text = serde_json::to_string(entry).expect("an entry serializes");
            let back: JournalEntry = serde_json::from_str(&text).expect("and reads back");
            assert_eq!(serde_json::to_string(&back).unwrap(), text);
            back
        })
        .collect()
}

fn journaled(durability: Durability) -> Probe {
    let mut config: Config = server_config();
    config.durability = durability;
    Probe::ready_server(config, |h| h.add_tool(tool("job", TaskSupport::Optional)))
}

fn start(d: &mut Probe, ttl: u64) -> String {
    let reply = d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": { "ttl": ttl } }),
    );
    reply["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// What `tasks/get` and (for finished tasks) `tasks/result` answer, minus the ids.
fn answers(d: &mut Probe, task: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for method in ["tasks/get", "tasks/result"] {
        let (id, sent) = d.send(method, json!({ "taskId": task }));
        if let Some(answer) = response(&sent, &id) {
            let mut answer = answer.clone();
            answer["id"] = Value::Null;
            out.push(answer);
        }
    }
    out
}

#[test]
fn a_restored_host_answers_exactly_like_the_one_that_journaled() {
    let mut d = journaled(Durability::Journal);
    let done = start(&mut d, 60_000);
    let tool_error = start(&mut d, 60_000);
    let failed = start(&mut d, 60_000);
    let cancelled = start(&mut d, 60_000);
    let running = start(&mut d, 60_000);
    let expired = start(&mut d, 1_000);
    d.advance(500);
    let now = d.now;
    let work = |d: &Probe, t: &str| d.work(t);
    d.host
        .set_task_message(now, work(&d, &running), Some("step 2 of 3".into()))
        .unwrap();
    d.host
        .respond(now, work(&d, &done), Ok(text_result("all done")))
        .unwrap();
    d.host
        .respond(now, work(&d, &tool_error), Ok(error_result("no such file")))
        .unwrap();
    d.host
        .respond(
            now,
            work(&d, &failed),
            Err(RpcError::internal("disk on fire")),
        )
        .unwrap();
    d.call("tasks/cancel", json!({ "taskId": cancelled }));
    let peer = Owner::from(taskwire_harness::probe::OWNER);
    let app = d.host.create_task(now, &peer, "app-made", None).unwrap();
    d.host
        .respond(now, app, Ok(text_result("made by the app")))
        .unwrap();
    d.advance(1_000); // `expired` goes
    d.drain();

    // Kept as JSON: what the host restores from is only what the serialized entries hold.
    let mut store = Store::default();
    store.apply(&through_json(&d.journal));
    assert!(
        !store.tasks.contains_key(&expired),
        "an expiry deletes the task"
    );
    assert_eq!(store.tasks.len(), 6);
    let deletes: Vec<_> = d
        .journal
        .iter()
        .filter_map(|e| match &e.change {
            Change::Delete { task, reason } => Some((task.to_string(), *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(deletes, [(expired.clone(), StopReason::Expired)]);

    // A new process: a fresh host restored from the store, at the same time.
    let mut fresh = Probe::ready_server(server_config(), |h| {
        h.add_tool(tool("job", TaskSupport::Optional))
    });
    fresh.now = d.now;
    let loaded = fresh
        .host
        .restore(d.now, store.tasks.values().cloned())
        .unwrap();
    assert_eq!(loaded, 6);
    for task in [
        &done,
        &tool_error,
        &failed,
        &cancelled,
        &running,
        &"app-made".to_owned(),
    ] {
        assert_eq!(
            answers(&mut d, task),
            answers(&mut fresh, task),
            "task {task}"
        );
    }
    assert_eq!(
        fresh.call("tasks/list", json!({}))["result"],
        d.call("tasks/list", json!({}))["result"]
    );
    // The running task's work did not survive the restart: the application hears of it.
    let restored: Vec<_> = fresh
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Restored { call, task, .. } => Some((call, task)),
            _ => None,
        })
        .collect();
    assert_eq!(restored.len(), 1);
    assert_eq!(restored[0].1, running.as_str());
    let now = fresh.now;
    fresh
        .host
        .respond(now, restored[0].0, Ok(text_result("resumed")))
        .unwrap();
    let reply = fresh.call("tasks/result", json!({ "taskId": running }));
    assert_eq!(reply["result"]["content"][0]["text"], "resumed");
    // Deadlines come from the records: the restored tasks expire when the originals would.
    let expiries: Vec<_> = store
        .tasks
        .values()
        .filter_map(|t| t.info.ttl_ms.map(|ttl| t.info.created_at.plus(ttl)))
        .collect();
    assert_eq!(fresh.host.poll_timeout(), expiries.iter().min().copied());
}

#[test]
fn restore_skips_expired_records_and_refuses_duplicates_whole() {
    let mut d = journaled(Durability::Journal);
    let task = start(&mut d, 2_000);
    let mut store = Store::default();
    store.apply(&d.journal);
    let snapshots: Vec<TaskSnapshot> = store.tasks.values().cloned().collect();
    let mut late = Host::new(server_config(), counter_ids("x-"), d.now.plus(5_000));
    assert_eq!(late.restore(d.now.plus(5_000), snapshots.clone()), Ok(0));
    assert!(late.task(&task).is_none());
    let mut twice = Host::new(server_config(), counter_ids("x-"), d.now);
    let doubled = snapshots.iter().chain(&snapshots).cloned();
    assert!(twice.restore(d.now, doubled).is_err());
    assert_eq!(twice.task_count(), 0, "a refused restore loads nothing");
}

#[test]
fn confirmed_durability_holds_what_reveals_an_unstored_change() {
    let mut d = journaled(Durability::Confirmed);
    let other = d.open("other");
    let (call_id, out) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    assert!(
        out.is_empty(),
        "the CreateTaskResult waits for the store: {out:?}"
    );
    let created = d.journal.last().expect("the creation is journaled").seq;
    // Later messages of that session queue behind it, so the order holds.
    let (ping, out) = d.send("ping", Value::Null);
    assert!(out.is_empty(), "{out:?}");
    // Another session is not held up.
    let pong = d.call_on(other, "ping", Value::Null);
    assert_eq!(pong["result"], json!({}));
    let now = d.now;
    d.host.confirm(now, created);
    let out = d.drain();
    let ids: Vec<&Value> = out.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&call_id, &ping], "released in order once stored");
    let task = out[0]["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();

    // A cancel's answer waits for its own entry.
    let (cancel, out) = d.send("tasks/cancel", json!({ "taskId": task }));
    assert!(out.is_empty(), "{out:?}");
    let now = d.now;
    d.host.confirm(now, d.journal.last().unwrap().seq);
    let out = d.drain();
    let answer = response(&out, &cancel).expect("released");
    assert_eq!(answer["result"]["status"], "cancelled");
}

#[test]
fn a_status_message_is_journaled_as_a_small_change() {
    let mut d = journaled(Durability::Journal);
    let task = start(&mut d, 60_000);
    d.drain();
    let before = d.journal.len();
    d.advance(250);
    let now = d.now;
    let call = d.work(&task);
    d.host
        .set_task_message(now, call, Some("step 2 of 3".into()))
        .unwrap();
    d.drain();
    let added: Vec<Value> = d.journal[before..]
        .iter()
        .map(|e| serde_json::to_value(&e.change).unwrap())
        .collect();
    assert_eq!(
        added,
        [json!({"message": {"task": task, "message": "step 2 of 3", "at": now.0}})]
    );
}

#[test]
fn restore_reports_the_records_past_their_retention_deleted() {
    let mut d = journaled(Durability::Journal);
    let gone = start(&mut d, 2_000);
    let kept = start(&mut d, 60_000);
    let mut store = Store::default();
    store.apply(&d.journal);
    let mut config = server_config();
    config.durability = Durability::Journal;
    let later = d.now.plus(5_000);
    let mut fresh = Host::new(config, counter_ids("x-"), later);
    assert_eq!(fresh.restore(later, store.tasks.values().cloned()), Ok(1));
    let mut entries = Vec::new();
    while let Some(output) = fresh.poll_output() {
        if let Output::Journal(entry) = output {
            entries.push(entry);
        }
    }
    // The new process's journal starts again at 1.
    let mut store = Store {
        tasks: store.tasks,
        last_seq: 0,
    };
    store.apply(&entries);
    assert!(matches!(
        &entries[0],
        JournalEntry { change: Change::Delete { task, reason: StopReason::Expired }, .. }
            if task.as_str() == gone
    ));
    // The task still running starts again: its second attempt is stored.
    let put = serde_json::to_value(&entries[1].change).unwrap();
    assert_eq!(put["put"]["info"]["id"], kept.as_str(), "{put}");
    assert_eq!(put["put"]["request"]["attempt"], 2, "{put}");
    assert_eq!(entries.len(), 2);
    assert_eq!(store.tasks.keys().collect::<Vec<_>>(), [&kept]);
}

#[test]
fn a_store_attached_later_gets_every_task_and_holds_what_it_has_not_stored() {
    let mut d = journaled(Durability::Volatile);
    let task = start(&mut d, 60_000);
    d.drain();
    assert!(d.journal.is_empty(), "nothing is journaled before");
    let now = d.now;
    d.host.set_durability(now, Durability::Confirmed).unwrap();
    d.drain();
    assert!(
        matches!(&d.journal[..], [JournalEntry { change: Change::Put(s), .. }] if s.info.id.as_str() == task),
        "{:?}",
        d.journal
    );
    let (get, out) = d.send("tasks/get", json!({ "taskId": task }));
    assert!(out.is_empty(), "waits for the store: {out:?}");
    // Turning confirmations off releases what waited.
    d.host.set_durability(now, Durability::Journal).unwrap();
    let out = d.drain();
    assert_eq!(out[0]["id"], get);
    assert_eq!(out[0]["result"]["status"], "working");
}

#[test]
fn a_failed_write_fails_the_replies_that_wait_for_it_and_takes_back_an_unseen_task() {
    let mut d = journaled(Durability::Confirmed);
    let (call_id, out) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    assert!(out.is_empty(), "{out:?}");
    let created = d.journal.last().expect("the creation is journaled").clone();
    let Change::Put(snapshot) = &created.change else {
        panic!("a creation is a put: {created:?}");
    };
    let task = snapshot.info.id.to_string();
    let call = d.work(&task);
    let (ping, _) = d.send("ping", Value::Null);
    d.take_events();

    let failed = RpcError::internal("The task store test:mem could not save (disk full)");
    let now = d.now;
    d.host.fail_journal(now, created.seq, &failed);
    let out = d.drain();
    let ids: Vec<&Value> = out.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&call_id, &ping], "released in order");
    assert_eq!(out[0]["error"]["code"], -32603);
    assert_eq!(out[0]["error"]["message"], failed.message);
    assert_eq!(
        out[1]["result"],
        json!({}),
        "what did not wait goes out as it was"
    );
    // Nobody learnt the task's id: it is gone, its work stopped, its deletion journaled.
    assert!(d.host.task(&task).is_none());
    assert!(
        d.take_events().iter().any(|e| matches!(
            e,
            Event::Stop { call: c, reason: StopReason::Removed, .. } if *c == call
        )),
        "the work stops"
    );
    assert!(matches!(
        &d.journal.last().unwrap().change,
        Change::Delete { task: t, reason: StopReason::Removed } if t.as_str() == task
    ));
    // The retried write (the put and the delete) confirms; nothing waits any more.
    let now = d.now;
    d.host.confirm(now, d.journal.last().unwrap().seq);
    assert!(d.drain().is_empty());
    let pong = d.call("ping", Value::Null);
    assert_eq!(pong["result"], json!({}));
}

#[test]
fn a_failed_write_fails_a_cancel_but_the_task_stays_cancelled() {
    let mut d = journaled(Durability::Confirmed);
    let (_, _) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    let now = d.now;
    d.host.confirm(now, d.journal.last().unwrap().seq);
    let created = d.drain();
    let task = created[0]["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (cancel, out) = d.send("tasks/cancel", json!({ "taskId": task }));
    assert!(out.is_empty(), "{out:?}");
    let failed = RpcError::internal("The task store test:mem could not save (disk full)");
    let now = d.now;
    d.host
        .fail_journal(now, d.journal.last().unwrap().seq, &failed);
    let out = d.drain();
    let answer = response(&out, &cancel).expect("answered");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    // The host did cancel it; asking again tells so (nothing waits for the retry).
    let get = d.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(get["result"]["status"], "cancelled");
}

#[test]
fn a_list_page_waits_for_the_newest_unstored_change_on_it() {
    let mut d = journaled(Durability::Confirmed);
    let mut tasks = Vec::new();
    for _ in 0..2 {
        d.send(
            "tools/call",
            json!({ "name": "job", "arguments": {}, "task": {} }),
        );
        let now = d.now;
        d.host.confirm(now, d.journal.last().unwrap().seq);
        let out = d.drain();
        tasks.push(
            out[0]["result"]["task"]["taskId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let listed = d.call("tasks/list", json!({}));
    assert_eq!(
        listed["result"]["tasks"].as_array().unwrap().len(),
        2,
        "all stored: at once"
    );

    // The first task's status message changes: the page showing it waits for the store.
    let now = d.now;
    let call = d.work(&tasks[0]);
    d.host
        .set_task_message(now, call, Some("half way".into()))
        .unwrap();
    d.drain();
    let message = d.journal.last().unwrap().seq;
    let (list, out) = d.send("tasks/list", json!({}));
    assert!(out.is_empty(), "the page waits: {out:?}");
    let now = d.now;
    d.host.confirm(now, message);
    let out = d.drain();
    let page = response(&out, &list).expect("released");
    assert_eq!(page["result"]["tasks"][0]["statusMessage"], "half way");
}

//! Fronts and workers sharing one store: a front hands a task's work off (`Host::hand_off`:
//! stored as queued, attempt 0, the call over here), a worker claims it (`Host::adopt`: its
//! first run, `Event::Claimed`), the front's followers hear the worker's end; a host whose
//! claim ran out lets the work go (`Host::release`: stopped, `StopReason::Moved`) and takes
//! the task as the store holds it, forgetting an end the store refused.

use serde_json::json;
use taskwire_engine::{
    Change, Config, Durability, Event, JournalEntry, StopReason, TaskSnapshot, TaskSupport,
    UsageError,
};
use taskwire_harness::msg::response;
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

fn host(durability: Durability) -> Probe {
    let mut config: Config = server_config();
    config.durability = durability;
    Probe::ready_server(config, |h| h.add_tool(tool("job", TaskSupport::Optional)))
}

/// The newest snapshot of `task` the host journaled.
fn stored(journal: &[JournalEntry], task: &str) -> TaskSnapshot {
    journal
        .iter()
        .rev()
        .find_map(|e| match &e.change {
            Change::Put(s) if s.info.id.as_str() == task => Some(s.clone()),
            _ => None,
        })
        .expect("the task is journaled")
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

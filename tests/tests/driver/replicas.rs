//! Two servers in one process sharing one PostgreSQL database as two replicas (`a`, `b`),
//! their sessions of one owner: a task made on `a` is read on `b` at once, listed there
//! without being asked for, and followed there (status notifications), a `tasks/result`
//! parked on `b` is answered when the work ends on `a`, a cancel taken by `b` stops the work
//! on `a`, and the tasks of a replica that stopped are failed by the other once its lease
//! runs out. Two replicas of one name are refused.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::{
    CallToolResult, Config, MessageSession, Runtime, Server, ServerHandle, TaskSupport, Tool,
};
use taskwire_postgres::{PostgresOptions, PostgresStore};
use taskwire_tests::postgres::fresh_database;

use crate::links::{initialize, reply, send};

/// The lease of the replicas here: short, so a stopped one's tasks fail soon.
const LEASE: Duration = Duration::from_millis(600);

/// What the `gated` tool of every replica shares: it finishes when told, and says when its
/// work was stopped before that.
#[derive(Clone)]
struct Gate {
    open: async_channel::Receiver<()>,
    stopped: async_channel::Sender<String>,
}

/// Says that the work of a `gated` call was stopped, unless it finished.
struct StopWitness {
    replica: String,
    stopped: async_channel::Sender<String>,
    finished: bool,
}

impl Drop for StopWitness {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.stopped.try_send(self.replica.clone());
        }
    }
}

fn store(url: &str, replica: &str) -> PostgresStore {
    let options = PostgresOptions {
        replica: replica.to_owned(),
        lease: LEASE,
    };
    PostgresStore::connect_with(url, options).expect("the store connects")
}

/// Replica `name` on the database at `url`: its tool `gated` answers "finished on NAME"
/// once `gate` opens.
fn replica(url: &str, name: &str, gate: &Gate) -> ServerHandle {
    let (gate, me) = (gate.clone(), name.to_owned());
    let server = Server::new(Config::new("replica", "1.0"))
        .tool(
            Tool::new("gated", TaskSupport::Optional),
            move |_, _: Value| {
                let (gate, me) = (gate.clone(), me.clone());
                async move {
                    let mut witness = StopWitness {
                        replica: me.clone(),
                        stopped: gate.stopped.clone(),
                        finished: false,
                    };
                    let _ = gate.open.recv().await;
                    witness.finished = true;
                    Ok(CallToolResult::text(format!("finished on {me}")))
                }
            },
        )
        .with_store(store(url, name));
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    server.start(runtime)
}

/// A 2025-11-25 session of owner `alice` (the same on both replicas).
async fn session(handle: &ServerHandle) -> MessageSession {
    let session = handle.open("alice", 64).await.expect("open");
    initialize(&session).await;
    session
}

/// Makes a `gated` task through `session` (request `id`); its id.
async fn make_task(session: &MessageSession, id: i64) -> String {
    send(
        session,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "gated", "arguments": {}, "task": {"ttl": 60000}}}),
    );
    let created = reply(session, id).await;
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned()
}

/// `method` about `task` through `session` (request `id`); the reply.
async fn ask(session: &MessageSession, id: i64, method: &str, task: &str) -> Value {
    send(
        session,
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"taskId": task}}),
    );
    reply(session, id).await
}

/// Runs `body` on smol, failing the test after 20 s.
fn within_20s(body: impl std::future::Future<Output = ()>) {
    smol::block_on(async {
        let limit = smol::Timer::after(Duration::from_secs(20));
        futures::pin_mut!(body);
        if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
            panic!("the test body did not finish within 20 s");
        }
    });
}

fn gate() -> (
    Gate,
    async_channel::Sender<()>,
    async_channel::Receiver<String>,
) {
    let (open, gate_open) = async_channel::unbounded();
    let (stopped, stops) = async_channel::unbounded();
    let gate = Gate {
        open: gate_open,
        stopped,
    };
    (gate, open, stops)
}

/// Replicas `a` and `b` on a fresh database, their `gated` tools sharing one gate: what
/// opens it, and where stopped work is reported.
struct Pair {
    a: ServerHandle,
    b: ServerHandle,
    open: async_channel::Sender<()>,
    stops: async_channel::Receiver<String>,
}

impl Pair {
    /// The pair on database `name`; `None` when the PostgreSQL tests are skipped.
    fn start(name: &str) -> Option<Pair> {
        let url = fresh_database(name)?;
        let (gate, open, stops) = gate();
        let (a, b) = (replica(&url, "a", &gate), replica(&url, "b", &gate));
        Some(Pair { a, b, open, stops })
    }

    /// A session of `alice` on each.
    async fn sessions(&self) -> (MessageSession, MessageSession) {
        (session(&self.a).await, session(&self.b).await)
    }
}

#[test]
fn a_result_parked_on_one_replica_is_answered_when_the_work_ends_on_the_other() {
    let Some(pair) = Pair::start("replicas_result") else {
        return;
    };
    within_20s(async {
        let (on_a, on_b) = pair.sessions().await;
        let task = make_task(&on_a, 1).await;
        // (When `b` has not heard of it yet, it reads it from the database first.)
        let got = ask(&on_b, 2, "tasks/get", &task).await;
        assert_eq!(got["result"]["status"], "working", "{got}");
        send(
            &on_b,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": task}}),
        );
        smol::Timer::after(Duration::from_millis(200)).await;
        pair.open.send(()).await.unwrap();
        let result = reply(&on_b, 3).await;
        assert_eq!(
            result["result"]["content"][0]["text"], "finished on a",
            "{result}"
        );
        let got = ask(&on_b, 4, "tasks/get", &task).await;
        assert_eq!(got["result"]["status"], "completed", "{got}");
        let unknown = ask(&on_b, 5, "tasks/get", "no-such-task").await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    });
}

#[test]
fn a_replica_lists_and_follows_the_tasks_another_one_runs() {
    let Some(pair) = Pair::start("replicas_follow") else {
        return;
    };
    within_20s(async {
        let (on_a, on_b) = pair.sessions().await;
        let task = make_task(&on_a, 1).await;
        // `b` hears of it from `a`'s notification, without asking for it.
        for id in 2.. {
            send(
                &on_b,
                json!({"jsonrpc": "2.0", "id": id, "method": "tasks/list"}),
            );
            let listed = reply(&on_b, id).await;
            let tasks = listed["result"]["tasks"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if tasks.iter().any(|t| t["taskId"] == task) {
                break;
            }
            smol::Timer::after(Duration::from_millis(20)).await;
        }
        // Asking about it makes `b`'s session follow it: the end of the work on `a` reaches
        // it as a status notification.
        let got = ask(&on_b, 100, "tasks/get", &task).await;
        assert_eq!(got["result"]["status"], "working", "{got}");
        pair.open.send(()).await.unwrap();
        loop {
            let out = on_b.recv().await.expect("a message");
            let message: Value = serde_json::from_str(&out.message).expect("JSON");
            if message["method"] == "notifications/tasks/status"
                && message["params"]["taskId"] == task
                && message["params"]["status"] == "completed"
            {
                break;
            }
        }
    });
}

#[test]
fn a_cancel_taken_by_one_replica_stops_the_work_on_the_other() {
    let Some(pair) = Pair::start("replicas_cancel") else {
        return;
    };
    within_20s(async {
        let (on_a, on_b) = pair.sessions().await;
        let task = make_task(&on_a, 1).await;
        let cancelled = ask(&on_b, 2, "tasks/cancel", &task).await;
        assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
        assert_eq!(
            pair.stops.recv().await.unwrap(),
            "a",
            "the work stops where it runs"
        );
        let got = ask(&on_a, 3, "tasks/get", &task).await;
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
    });
}

#[test]
fn the_tasks_of_a_stopped_replica_fail_on_another_once_its_lease_runs_out() {
    let Some(url) = fresh_database("replicas_lease") else {
        return;
    };
    let (gate, _open, _stops) = gate();
    let b = replica(&url, "b", &gate);
    within_20s(async {
        let a = replica(&url, "a", &gate);
        let on_a = session(&a).await;
        let task = make_task(&on_a, 1).await;
        let on_b = session(&b).await;
        let got = ask(&on_b, 2, "tasks/get", &task).await;
        assert_eq!(got["result"]["status"], "working", "{got}");
        a.shutdown().await;
        drop(on_a);
        // Its store is gone with it: its lease runs out, and `b` takes the task over.
        let failed = ask(&on_b, 3, "tasks/result", &task).await;
        let message = failed["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("lease"), "{failed}");
        let got = ask(&on_b, 4, "tasks/get", &task).await;
        assert_eq!(got["result"]["status"], "failed", "{got}");
    });
}

#[test]
fn two_live_replicas_of_one_name_are_refused() {
    let Some(url) = fresh_database("replicas_name") else {
        return;
    };
    let _first = store(&url, "same");
    let second = PostgresStore::connect_with(
        &url,
        PostgresOptions {
            replica: "same".to_owned(),
            lease: LEASE,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        second.contains("another live process is replica \"same\""),
        "{second}"
    );
}

//! What replicas sharing one database tell each other, on a connection of its own: every
//! write names the tasks it changed in a notification (`pg_notify`, sent at commit, heard in
//! commit order), and each replica reads those rows back and reports them
//! ([`StoreNews::Changed`]). The same connection renews this replica's lease, says when work
//! waits ([`StoreNews::Queued`]: a front queued some, or a replica's lease ran out) and
//! claims it, finds the claims of this replica that ran out ([`StoreNews::Lost`]), takes the
//! answers other replicas took for the tasks it runs ([`StoreNews::Answered`]), fetches
//! single tasks, and holds a lock on the replica's name so that no two live processes
//! share one.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::value::RawValue;
use taskwire_driver::engine::{Millis, TaskSnapshot};
use taskwire_driver::{Reply, StoreError, StoreNews};
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls, Row};

use crate::claims::{self, Fences, ANSWERS_CHANNEL};
use crate::schema::{snapshot_of, COLUMNS, TERMINAL};

/// The notification channel every replica listens on.
pub(crate) const CHANNEL: &str = "taskwire_tasks";

/// How far back (in task time, ms) a replica that lost its connection reads finished tasks
/// again once connected: changes told while it was away are not told again.
const MISSED_MARGIN_MS: i64 = 60_000;

/// How long a replica's name stays taken after its process ended, at most, before a new
/// process of that name is refused: attempts, and the wait between them (3 s in all).
const NAME_WAIT_ATTEMPTS: u32 = 30;
const NAME_WAIT_STEP: Duration = Duration::from_millis(100);

/// The longest wait between two attempts to connect again.
const RECONNECT_MAX: Duration = Duration::from_secs(5);

/// The most a notification's payload holds, in bytes (PostgreSQL refuses 8000 and more).
const PAYLOAD_MAX: usize = 7_900;

/// The notifications of a write: the writing replica on the first line, then one changed
/// task per line, either its row inline (a JSON array `[id, message, updated_at, snapshot]`,
/// so that the others need not read it back) or, when that does not fit, its id alone. The
/// lines are numbered into payloads of at most [`PAYLOAD_MAX`] bytes; the write's statement
/// joins and sends, per payload, the lines of the tasks it stored.
#[derive(Default)]
pub(crate) struct Payloads<'a> {
    /// The bytes of the writing replica's name, the first line of each payload.
    prefix: usize,
    /// The bytes of the last payload so far.
    filled: usize,
    /// Each line's task.
    pub ids: Vec<&'a str>,
    /// Each line.
    pub lines: Vec<String>,
    /// Each line's payload, by number.
    pub payloads: Vec<i32>,
}

impl<'a> Payloads<'a> {
    pub fn new(replica: &str) -> Payloads<'a> {
        Payloads {
            prefix: replica.len(),
            filled: replica.len(),
            ..Payloads::default()
        }
    }

    /// A changed task whose row is `(id, message, at, snapshot)` (`snapshot`: its JSON).
    pub fn row(&mut self, id: &'a str, message: Option<&str>, at: i64, snapshot: &str) {
        let line = format!(
            "[{},{},{at},{snapshot}]",
            serde_json::Value::from(id),
            message.map_or(serde_json::Value::Null, serde_json::Value::from)
        );
        if self.prefix + 1 + line.len() > PAYLOAD_MAX {
            self.id(id);
        } else {
            self.line(id, line);
        }
    }

    /// A changed task the others read back.
    pub fn id(&mut self, id: &'a str) {
        self.line(id, id.to_owned());
    }

    fn line(&mut self, id: &'a str, line: String) {
        let mut payload = self.payloads.last().copied().unwrap_or(0);
        if self.filled + 1 + line.len() > PAYLOAD_MAX {
            payload += 1;
            self.filled = self.prefix;
        }
        self.filled += 1 + line.len();
        self.ids.push(id);
        self.lines.push(line);
        self.payloads.push(payload);
    }
}

/// What a notification says: the writing replica, the rows inline, and the ids to read.
fn parse(payload: &str) -> (&str, Vec<&str>, Vec<&str>) {
    let mut lines = payload.split('\n');
    let replica = lines.next().unwrap_or("");
    let (rows, ids) = lines.partition(|line| line.starts_with('['));
    (replica, rows, ids)
}

/// A task from a row inline in a notification.
fn inline_task(line: &str) -> Result<TaskSnapshot, String> {
    let (id, message, at, snapshot): (String, Option<String>, i64, Box<RawValue>) =
        serde_json::from_str(line).map_err(|e| format!("an unreadable notification row ({e})"))?;
    let mut task: TaskSnapshot = serde_json::from_str(snapshot.get())
        .map_err(|e| format!("task {id} is notified unreadably ({e})"))?;
    task.info.status_message = message;
    task.info.last_updated_at = Millis(u64::try_from(at).unwrap_or(0));
    Ok(task)
}

/// A read of stored tasks the driver asked for.
pub(crate) enum Fetch {
    /// One task as stored now.
    One(String, Reply<Option<TaskSnapshot>>),
    /// A page of an owner's tasks of an era, in listing order after a key, at most so many.
    Page {
        owner: String,
        era: String,
        after: Option<(i64, String)>,
        limit: i64,
        reply: Reply<Vec<TaskSnapshot>>,
    },
}

impl Fetch {
    /// Fails it with `error`.
    fn refuse(self, error: StoreError) {
        match self {
            Fetch::One(_, reply) => drop(reply.send(Err(error))),
            Fetch::Page { reply, .. } => drop(reply.send(Err(error))),
        }
    }

    /// Reads it on `client`; `failed` names the store in an error.
    async fn answer(self, client: &Client, failed: impl Fn(&str) -> StoreError) {
        match self {
            Fetch::One(id, reply) => {
                let found = fetch_task(client, &id).await;
                let _ = reply.send(found.map_err(|e| failed(&e)));
            }
            Fetch::Page {
                owner,
                era,
                after,
                limit,
                reply,
            } => {
                let (at, id) = after.unwrap_or((i64::MIN, String::new()));
                let rows = client
                    .query(
                        &format!(
                            "SELECT {COLUMNS} FROM taskwire_tasks
                             WHERE owner = $1 AND era = $2 AND (created_at, id) > ($3, $4)
                             ORDER BY created_at, id LIMIT $5"
                        ),
                        &[&owner, &era, &at, &id, &limit],
                    )
                    .await
                    .map_err(|e| e.to_string());
                let found = rows.and_then(|rows| rows.iter().map(snapshot_of).collect());
                let _ = reply.send(found.map_err(|e| failed(&e)));
            }
        }
    }
}
/// A request about the work this process runs.
pub(crate) enum Claim {
    /// Claim up to this many tasks' work ([`claims::claim`]).
    Take(usize, Reply<Vec<TaskSnapshot>>),
    /// This process stops: give its work back ([`Watch::hand_back`]).
    HandBack(Reply<()>),
}

/// What the watch connection needs to run.
pub(crate) struct Watch {
    pub config: Config,
    pub replica: Arc<str>,
    pub lease: Duration,
    pub news: async_channel::Sender<StoreNews>,
    pub fetches: mpsc::UnboundedReceiver<Fetch>,
    pub claims: mpsc::UnboundedReceiver<Claim>,
    pub fences: Fences,
    pub name: Arc<str>,
    /// The process gave its work back as it stops: its lease is not renewed any more.
    pub handed_back: bool,
}

/// A connection listening for the other replicas' notifications.
pub(crate) struct Live {
    client: Client,
    /// Each notification's channel and payload.
    notes: mpsc::UnboundedReceiver<(String, String)>,
}

impl Watch {
    fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// Connects: takes the replica name's lock, renews the lease, listens.
    pub async fn connect(&self) -> Result<Live, String> {
        let (client, mut connection) = self
            .config
            .connect(NoTls)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let (tell, notes) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(note)) => {
                        let note = (note.channel().to_owned(), note.payload().to_owned());
                        if tell.send(note).is_err() {
                            break;
                        }
                    }
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(%error, "the PostgreSQL connection hearing other replicas broke; connecting again");
                        break;
                    }
                }
            }
        });
        // A process of this name that just ended may hold the lock a moment longer (its
        // connection is still closing).
        let mut locked = false;
        for attempt in 0..=NAME_WAIT_ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(NAME_WAIT_STEP).await;
            }
            locked = client
                .query_one(
                    "SELECT pg_try_advisory_lock(hashtext('taskwire'), hashtext($1))",
                    &[&&*self.replica],
                )
                .await
                .map_err(|e| e.to_string())?
                .get(0);
            if locked {
                break;
            }
        }
        if !locked {
            return Err(format!(
                "another live process is replica {:?} of this database; give each replica \
                 a name of its own (PostgresOptions::replica)",
                self.replica
            ));
        }
        self.renew(&client).await?;
        client
            .batch_execute(&format!("LISTEN {CHANNEL}; LISTEN {ANSWERS_CHANNEL}"))
            .await
            .map_err(|e| e.to_string())?;
        Ok(Live { client, notes })
    }

    /// Renews this replica's lease, by the database's clock (not once it gave its work back).
    async fn renew(&self, client: &Client) -> Result<(), String> {
        if self.handed_back {
            return Ok(());
        }
        client
            .execute(
                "INSERT INTO taskwire_replicas (id, expires_at) VALUES ($1, taskwire_now_ms() + $2)
                 ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at",
                &[&&*self.replica, &self.lease_ms()],
            )
            .await
            .map(drop)
            .map_err(|e| format!("cannot renew the lease: {e}"))
    }

    /// Serves the watch until the store is dropped: `live` is the connection made at start.
    pub async fn run(mut self, live: Live) {
        let mut live = Some(live);
        // At start, every task another replica runs; after a reconnect, those and the ones
        // finished since a little before the connection broke.
        let mut rescan = Some(i64::MAX);
        let mut tick = tokio::time::interval(self.lease / 3);
        let mut away = Duration::from_millis(100);
        loop {
            let Some(connection) = live.as_mut() else {
                tokio::select! {
                    () = tokio::time::sleep(away) => {}
                    fetch = self.fetches.recv() => match fetch {
                        Some(fetch) => fetch.refuse(self.failed("not connected; connecting again")),
                        None => return,
                    },
                    claim = self.claims.recv() => match claim {
                        Some(Claim::Take(_, reply)) => {
                            let _ = reply.send(Err(self.failed("not connected; connecting again")));
                        }
                        Some(Claim::HandBack(reply)) => {
                            let _ = reply.send(Err(self.failed("not connected")));
                        }
                        None => return,
                    },
                }
                match self.connect().await {
                    Ok(connection) => {
                        tracing::info!(store = %self.name, "connected again; reading what changed meanwhile");
                        live = Some(connection);
                        away = Duration::from_millis(100);
                    }
                    Err(error) => {
                        tracing::warn!(store = %self.name, %error, retry_in = ?away, "cannot connect to hear other replicas");
                        away = (away * 2).min(RECONNECT_MAX);
                    }
                }
                continue;
            };
            if let Some(since) = rescan.take() {
                match self.scan(&connection.client, since).await {
                    // Work may have waited meanwhile.
                    Ok(()) => self.tell(StoreNews::Queued).await,
                    Err(error) => {
                        tracing::warn!(store = %self.name, %error, "cannot read the tasks other replicas run; trying again");
                        rescan = Some(since);
                    }
                }
            }
            let mut result = Ok(());
            let mut broken = false;
            tokio::select! {
                note = connection.notes.recv() => match note {
                    Some((channel, _)) if channel == ANSWERS_CHANNEL => result = self.take_answers(&connection.client).await,
                    Some((_, payload)) => result = self.changed(&connection.client, &payload).await,
                    None => broken = true,
                },
                claim = self.claims.recv() => match claim {
                    Some(Claim::Take(max, reply)) => {
                        let claimed = claims::claim(&connection.client, &self.replica, max, &self.fences).await;
                        let _ = reply.send(claimed.map_err(|e| self.failed(&e)));
                    }
                    Some(Claim::HandBack(reply)) => {
                        let given = self.hand_back(&connection.client).await;
                        let _ = reply.send(given.map_err(|e| self.failed(&e)));
                    }
                    None => return,
                },
                _ = tick.tick() => result = self.sweep(&connection.client).await,
                fetch = self.fetches.recv() => match fetch {
                    Some(fetch) => fetch.answer(&connection.client, |e| self.failed(e)).await,
                    None => return,
                },
            }
            if let Err(error) = result {
                tracing::warn!(store = %self.name, %error, "reading what other replicas changed failed");
            }
            if broken || connection.client.is_closed() {
                tracing::warn!(store = %self.name, "lost the connection hearing other replicas; connecting again");
                live = None;
                let now_ms = i64::try_from(taskwire_driver::now().0).unwrap_or(i64::MAX);
                rescan = Some(now_ms - MISSED_MARGIN_MS);
            }
        }
    }

    fn failed(&self, error: &str) -> StoreError {
        StoreError::new(format!("{}: {error}", self.name))
    }

    /// Reports the unfinished tasks other replicas run, and those changed since `since`.
    async fn scan(&self, client: &Client, since: i64) -> Result<(), String> {
        let rows = client
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM taskwire_tasks
                     WHERE (status NOT IN {TERMINAL} AND runner IS DISTINCT FROM $1)
                        OR updated_at >= $2"
                ),
                &[&&*self.replica, &since],
            )
            .await
            .map_err(|e| e.to_string())?;
        self.report(&rows, StoreNews::Changed).await;
        Ok(())
    }

    /// This process stops and runs no more work: its lease ends now (not renewed again), and
    /// the others are told that work waits (a notification naming no task), so that they
    /// claim its unfinished tasks at once.
    async fn hand_back(&mut self, client: &Client) -> Result<(), String> {
        self.handed_back = true;
        self.fences.clear();
        client
            .execute(
                "UPDATE taskwire_replicas SET expires_at = 0 WHERE id = $1",
                &[&&*self.replica],
            )
            .await
            .map_err(|e| format!("cannot end the lease: {e}"))?;
        client
            .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &&*self.replica])
            .await
            .map(drop)
            .map_err(|e| format!("cannot tell the others: {e}"))
    }

    /// Reports the tasks another replica's write changed: the rows inline in its
    /// notification, and the others read back. Work a front queued is told as such, and so
    /// is a notification naming no task (a process gave its work back as it stopped).
    async fn changed(&self, client: &Client, payload: &str) -> Result<(), String> {
        let (writer, rows, ids) = parse(payload);
        if writer == &*self.replica {
            return Ok(());
        }
        if rows.is_empty() && ids.is_empty() {
            self.tell(StoreNews::Queued).await;
            return Ok(());
        }
        let mut tasks: Vec<Result<TaskSnapshot, String>> =
            rows.into_iter().map(inline_task).collect();
        if !ids.is_empty() {
            let rows = client
                .query(
                    &format!("SELECT {COLUMNS} FROM taskwire_tasks WHERE id = ANY($1)"),
                    &[&ids],
                )
                .await
                .map_err(|e| e.to_string())?;
            tasks.extend(rows.iter().map(snapshot_of));
        }
        let mut queued = false;
        for task in tasks {
            match task {
                Ok(task) => {
                    queued |= !task.info.status.is_terminal()
                        && task.request.as_ref().is_some_and(|r| r.attempt == 0);
                    self.tell_task(task, StoreNews::Changed).await;
                }
                Err(error) => {
                    tracing::error!(store = %self.name, %error, "a changed task cannot be read")
                }
            }
        }
        if queued {
            self.tell(StoreNews::Queued).await;
        }
        Ok(())
    }

    /// Renews the lease, then reports the claims of this replica that ran out meanwhile
    /// (it was paused or cut off past its lease), and whether work waits for a process.
    async fn sweep(&self, client: &Client) -> Result<(), String> {
        self.renew(client).await?;
        let lost = claims::lost(client, &self.replica, &self.fences).await?;
        if !lost.is_empty() {
            tracing::warn!(store = %self.name, tasks = lost.len(), "this replica's claims on tasks ran out, and other processes run them now");
        }
        self.report(&lost, StoreNews::Lost).await;
        let unclaimed = claims::unclaimed(client, &self.replica).await?;
        self.tell(StoreNews::Unclaimed(unclaimed)).await;
        self.take_answers(client).await
    }

    /// Takes the answers waiting for the tasks this replica runs, and reports them.
    async fn take_answers(&self, client: &Client) -> Result<(), String> {
        for (task, responses) in claims::answers(client, &self.replica).await? {
            self.tell(StoreNews::Answered { task, responses }).await;
        }
        Ok(())
    }

    async fn tell(&self, news: StoreNews) {
        let _ = self.news.send(news).await;
    }

    /// Sends `task` to the driver as `kind`; a finished one no longer runs here.
    async fn tell_task(&self, task: TaskSnapshot, kind: fn(TaskSnapshot) -> StoreNews) {
        if task.info.status.is_terminal() {
            self.fences.drop_task(&task.info.id);
        }
        self.tell(kind(task)).await;
    }

    /// Sends each row's task to the driver as `kind` (an unreadable row is logged, not sent).
    async fn report(&self, rows: &[Row], kind: fn(TaskSnapshot) -> StoreNews) {
        for row in rows {
            match snapshot_of(row) {
                Ok(task) => self.tell_task(task, kind).await,
                Err(error) => {
                    tracing::error!(store = %self.name, %error, "a task row cannot be read")
                }
            }
        }
    }
}

/// One task as stored now.
async fn fetch_task(client: &Client, id: &str) -> Result<Option<TaskSnapshot>, String> {
    let row = client
        .query_opt(
            &format!("SELECT {COLUMNS} FROM taskwire_tasks WHERE id = $1"),
            &[&id],
        )
        .await
        .map_err(|e| e.to_string())?;
    row.as_ref().map(snapshot_of).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The payloads the write's statement sends when it stores the tasks `stored`.
    fn sent(replica: &str, payloads: &Payloads, stored: &[&str]) -> Vec<String> {
        let mut texts: std::collections::BTreeMap<i32, String> = Default::default();
        for (i, id) in payloads.ids.iter().enumerate() {
            if stored.contains(id) {
                let text = texts
                    .entry(payloads.payloads[i])
                    .or_insert_with(|| replica.to_owned());
                text.push('\n');
                text.push_str(&payloads.lines[i]);
            }
        }
        texts.into_values().collect()
    }

    #[test]
    fn a_payload_names_the_writer_and_its_tasks_inline_when_they_fit() {
        let mut payloads = Payloads::new("replica-a");
        payloads.id("t1");
        let snapshot = r#"{"info":{"id":"t2","status":"working","created_at":1,"last_updated_at":1,"ttl_ms":null,"poll_interval_ms":null},"owner":"o","era":"2026-07-28","input_kinds":{"elicitation":false,"sampling":false,"roots":false},"outcome":null}"#;
        payloads.row("t2", Some("line\nbreak"), 7, snapshot);
        let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(PAYLOAD_MAX));
        payloads.row("t3", None, 8, &big);
        let texts = sent("replica-a", &payloads, &["t1", "t2", "t3"]);
        assert_eq!(texts.len(), 1, "{texts:?}");
        let (replica, rows, ids) = parse(&texts[0]);
        assert_eq!((replica, ids), ("replica-a", vec!["t1", "t3"]));
        let task = inline_task(rows[0]).expect("a row");
        assert_eq!(task.info.id.as_str(), "t2");
        assert_eq!(task.info.status_message.as_deref(), Some("line\nbreak"));
        assert_eq!(task.info.last_updated_at, Millis(7));
        assert!(sent("replica-a", &payloads, &[]).is_empty());
        let t2 = sent("replica-a", &payloads, &["t2"]);
        assert_eq!(parse(&t2[0]).1.len(), 1, "only the stored task: {t2:?}");
    }

    #[test]
    fn payloads_stay_under_postgres_limit() {
        let ids: Vec<String> = (0..1_000).map(|n| format!("{n:036}")).collect();
        let mut payloads = Payloads::new("r");
        for id in &ids {
            payloads.id(id);
        }
        let all: Vec<&str> = ids.iter().map(String::as_str).collect();
        let texts = sent("r", &payloads, &all);
        assert!(texts.len() > 1);
        assert!(texts
            .iter()
            .all(|t| t.len() <= PAYLOAD_MAX && t.starts_with("r\n")));
        let ids: usize = texts.iter().map(|t| parse(t).2.len()).sum();
        assert_eq!(ids, 1_000);
    }
}

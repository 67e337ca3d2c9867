//! The seam between the era-neutral host and a protocol era: what every era provides.
//!
//! The host owns tasks, calls, sessions, deadlines and the output queue, and knows no wire
//! shape. An era reads and writes its messages and keeps its own state on sessions, calls and
//! our requests ([`Kept`]: types the era layer names). The host reaches an era only through
//! this trait, by
//! the [`Era`] a session, a call, a follower or one of our requests carries; `era/mod.rs`
//! maps each [`Era`] to its implementation. A new era implements this trait in its own module.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::output::TaskVerb;
use super::{Answer, Kept, State};
use crate::error::UsageError;
use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::{Reject, RequestId, RpcError};
use crate::log_level::LogLevel;
use crate::model::{Request, StoredInput, TaskProgress};

/// One protocol era's rules, in both roles.
pub(crate) trait Protocol<K: Kept>: Sync {
    // ---- serving the peer's requests --------------------------------------------------

    /// Serves a peer request if this era reads it (`None` leaves it to an older era). `ping`
    /// is answered before any era sees it.
    fn serve(
        &self,
        st: &mut State<K>,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Result<(), Reject>>;

    /// Reads a notification, if it is one of this era's; `false` leaves it to the
    /// application. `notifications/cancelled` and `notifications/progress` never get here.
    fn notify(
        &self,
        st: &mut State<K>,
        session: SessionId,
        method: &str,
        params: Option<&RawValue>,
    ) -> bool;

    /// The peer withdrew a request this era holds open (a parked result, a stream).
    fn drop_held(&self, st: &mut State<K>, session: SessionId, request: &RequestId);

    /// Tells a session that follows a hosted task in this era about the task's change.
    fn tell(&self, st: &mut State<K>, session: SessionId, task: &TaskId);

    /// Answers what a following session waits for on a task now terminal, or `gone` (an era
    /// whose followers wait for nothing, polling instead, does nothing).
    fn release(&self, _st: &mut State<K>, _session: SessionId, _task: &TaskId, _gone: bool) {}

    /// The reply to request `id` (`verb` on `task`) given again from the task as it is now,
    /// the store having kept another version of it than the reply first told: the JSON text
    /// and its error code, if any; `None` when the request cannot be answered from it (the
    /// reply is then the store's refusal).
    fn answer_again(
        &self,
        st: &State<K>,
        id: &RequestId,
        verb: TaskVerb,
        task: &TaskId,
    ) -> Option<(String, Option<i64>)>;

    // ---- the application's work on calls of this era ----------------------------------

    /// The application answered a call that is not a task (its reply goes out).
    fn answer(&self, st: &mut State<K>, call: CallId, outcome: Answer);

    /// Progress of a call (for a task, `task` names it).
    fn progress(
        &self,
        st: &mut State<K>,
        call: CallId,
        task: Option<&TaskId>,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    );

    /// Asks the requestor for input on behalf of a call.
    fn request_input(
        &self,
        st: &mut State<K>,
        call: CallId,
        method: &str,
        capability: &'static str,
        params: Map<String, Value>,
    ) -> Result<InputId, UsageError>;

    /// The input requests a call's task waits for, as a snapshot stores them (an era whose
    /// input requests are sent, not read from the task, stores none).
    fn stored_inputs(&self, _st: &State<K>, _call: CallId) -> Vec<StoredInput> {
        Vec::new()
    }

    /// A task whose work runs on another host waits for `inputs` there: `call` (its
    /// stand-in here) shows them, and takes their answers to relay them.
    fn sync_inputs(&self, _st: &mut State<K>, _call: CallId, _inputs: Vec<StoredInput>) {}

    /// The newest progress of a call's task that the store relays to the host holding its
    /// requestor's session (an era that shows progress in the task stores none).
    fn stored_progress(&self, _st: &State<K>, _call: CallId) -> Option<TaskProgress> {
        None
    }

    /// A task whose work runs on another host reported `progress` there: `call` (its
    /// stand-in here) tells its requestor, when its session is here.
    fn sync_progress(&self, _st: &mut State<K>, _call: CallId, _progress: Option<TaskProgress>) {}

    /// Answers, relayed from another host, to input requests of a task whose work runs
    /// here; keys that name nothing outstanding are ignored.
    fn answer_relayed(&self, _st: &mut State<K>, _task: &TaskId, _responses: Map<String, Value>) {}

    /// Withdraws a call's open input requests: its task is finished or gone (an era whose
    /// input requests are read from the task, not sent, has none to withdraw).
    fn withdraw_inputs(&self, _st: &mut State<K>, _call: CallId) {}

    /// Sends a log message about a call to its requestor, if it wants it.
    fn log(
        &self,
        st: &mut State<K>,
        call: CallId,
        level: LogLevel,
        logger: Option<&str>,
        data: &Value,
    );

    /// Creates the task a call was offered (with the requested `ttl`) and answers its
    /// request (`request` on `session`) with the task; the task's work is the returned call.
    fn begin_offered_task(
        &self,
        st: &mut State<K>,
        call: CallId,
        session: SessionId,
        request: &RequestId,
        ttl: Option<u64>,
    ) -> Result<(TaskId, CallId), Reject>;

    // ---- the requestor: our requests on a session that speaks this era -----------------

    /// Opens a client session (`fallback`: another era may follow if the server does not
    /// speak this one).
    fn open(&self, st: &mut State<K>, session: SessionId, fallback: bool) -> Option<RequestId>;

    /// Sends a request of ours; a verb this era lacks is [`UsageError::NotInEra`].
    fn send(
        &self,
        st: &mut State<K>,
        session: SessionId,
        request: Request,
    ) -> Result<RequestId, UsageError>;

    /// Asks for the notices the server sends only when asked (2026-07-28: on a listen
    /// stream, with updates of `resources`); the request, when one was sent. An era whose
    /// servers send every notice unasked asks for nothing.
    fn listen_for_notices(
        &self,
        _st: &mut State<K>,
        _session: SessionId,
        _resources: &[String],
    ) -> Option<RequestId> {
        None
    }

    /// The application gives up its request `request` (the id it was given): the peer is
    /// told to stop; `false` when nothing of it is pending.
    fn cancel_request(&self, st: &mut State<K>, session: SessionId, request: &RequestId) -> bool;

    /// The peer answered a request this era sent for `purpose`.
    fn answered(
        &self,
        st: &mut State<K>,
        session: SessionId,
        id: RequestId,
        purpose: K::Purpose,
        outcome: Result<Value, RpcError>,
    );

    /// A request this era sent for `purpose` was not answered in time (it is no longer
    /// pending).
    fn timed_out(&self, st: &mut State<K>, session: SessionId, id: RequestId, purpose: K::Purpose);

    /// The session closed before the peer answered a request sent for `purpose`.
    fn closed_pending(
        &self,
        st: &mut State<K>,
        session: SessionId,
        id: RequestId,
        purpose: K::Purpose,
        error: &RpcError,
    );

    /// The session is closing (it still exists, but nothing more is sent on it): what this
    /// era keeps on it ends (an era that keeps nothing there does nothing).
    fn closed(&self, _st: &mut State<K>, _session: SessionId, _error: &RpcError) {}

    /// A peer task of ours changed: fetch its outcome when it has one.
    fn follow_up(&self, st: &mut State<K>, session: SessionId, task: &TaskId);

    /// Time to poll a peer task of ours.
    fn poll(&self, st: &mut State<K>, session: SessionId, task: &TaskId);

    /// We stop following a peer task: what this era keeps for it ends (an era that keeps
    /// nothing for it does nothing).
    fn let_go(&self, _st: &mut State<K>, _session: SessionId, _task: &TaskId) {}
}

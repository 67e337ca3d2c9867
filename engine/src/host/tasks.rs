//! Hosted tasks as the application sees them: tasks of its own making, removal, restoring
//! a durable store's tasks after a restart, and the store's confirmations.

use super::Host;
use crate::config::Durability;
use crate::era;
use crate::era::Call;
use crate::error::UsageError;
use crate::event::StopReason;
use crate::ids::{CallId, Owner, TaskId};
use crate::jsonrpc::RpcError;
use crate::model::{InputKinds, TaskSnapshot};
use crate::state::{CreateError, NewTask};
use crate::time::Millis;

impl Host {
    /// Creates a `working` task of `owner` with an id of the application's choosing (e.g. a
    /// demo task), read in 2025-11-25 (its `tasks/list` shows it). `ttl_ms: None` keeps it
    /// until removed. Its work is the returned call.
    pub fn create_task(
        &mut self,
        now: Millis,
        owner: &Owner,
        task: &str,
        ttl_ms: Option<u64>,
    ) -> Result<CallId, UsageError> {
        self.enter(now)?;
        let st = &mut self.state;
        let id = TaskId::from(task);
        let new = NewTask {
            id: id.clone(),
            owner: st.tasks.owner(owner),
            now: st.now,
            ttl_ms,
            poll_interval_ms: st.config.tasks.poll_interval_ms,
            era: era::APP_TASKS,
            input_kinds: InputKinds::default(),
            request: None,
        };
        match st.tasks.create(new) {
            Ok(_) => {}
            Err(CreateError::Duplicate) => return Err(UsageError::DuplicateTask(id)),
            Err(CreateError::Quota(q)) => return Err(UsageError::QuotaExceeded(q)),
        }
        let call = st.add_call(Call::task(era::APP_TASKS, None, id.clone(), None));
        st.work.insert(id.clone(), call);
        st.journal_put(&id);
        Ok(call)
    }

    /// Removes a task whatever its status: running work is stopped
    /// ([`StopReason::Removed`]), parked `tasks/result` calls get "Task not found".
    pub fn remove_task(&mut self, now: Millis, task: &str) -> Result<(), UsageError> {
        self.enter(now)?;
        let record = self
            .state
            .tasks
            .remove(task)
            .ok_or_else(|| UsageError::UnknownTask(TaskId::from(task)))?;
        self.state.task_gone(record, StopReason::Removed);
        Ok(())
    }

    /// Loads tasks stored before a restart, before serving: deadlines are recomputed from
    /// the records, tasks already past their retention are skipped (and, when journaling,
    /// reported deleted, so the store lets them go too), and `tasks/list` orders them by
    /// creation time (then id). A task that was still running gets a call, one more attempt
    /// (journaled) and [`Event::Restored`](crate::Event::Restored). Fails, loading nothing,
    /// when an id exists already.
    pub fn restore(
        &mut self,
        now: Millis,
        tasks: impl IntoIterator<Item = TaskSnapshot>,
    ) -> Result<usize, UsageError> {
        self.enter(now)?;
        let st = &mut self.state;
        let (mut live, expired): (Vec<TaskSnapshot>, Vec<TaskSnapshot>) =
            tasks.into_iter().partition(|t| match t.info.ttl_ms {
                Some(ttl) => t.info.created_at.plus(ttl) > st.now,
                None => true,
            });
        // Listing order is creation order; a store may hand records back in any order.
        live.sort_by(|a, b| (a.info.created_at, &a.info.id).cmp(&(b.info.created_at, &b.info.id)));
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = live
            .iter()
            .find(|t| st.tasks.contains(t.info.id.as_str()) || !seen.insert(t.info.id.clone()))
        {
            return Err(UsageError::DuplicateTask(dup.info.id.clone()));
        }
        for gone in expired {
            st.journal_delete(&gone.info.id, StopReason::Expired);
        }
        let count = live.len();
        for snapshot in live {
            let Ok(record) = st.tasks.restore(snapshot) else {
                continue;
            };
            if !record.status.is_terminal() {
                let (task, era) = (record.id.clone(), record.era);
                let call = st.add_call(Call::task(era, None, task.clone(), None));
                st.work.insert(task.clone(), call);
                st.run_again(task, call, None);
            }
        }
        Ok(count)
    }

    /// Changes what the host reports to a store, e.g. when a store is attached to a host
    /// already set up. Turning the journal on reports every task held now (a `Put` each, in
    /// creation order), so the store starts complete; turning confirmations off releases
    /// every message waiting for one.
    pub fn set_durability(
        &mut self,
        now: Millis,
        durability: Durability,
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        let st = &mut self.state;
        let was_journaling = st.journal_enabled();
        st.set_journal_mode(durability);
        if durability != Durability::Confirmed {
            st.confirm(u64::MAX);
        }
        if !was_journaling {
            for task in st.tasks.ids_by_creation() {
                st.journal_put(&task);
            }
        }
        Ok(())
    }

    /// Holds at most `keep` finished tasks from now on, letting the oldest go (see
    /// [`TaskConfig::keep_finished`](crate::TaskConfig): for a host sharing its store with
    /// others, which keeps them all); `None` holds them all.
    pub fn set_keep_finished(
        &mut self,
        now: Millis,
        keep: Option<usize>,
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        self.state.keep_finished(keep);
        Ok(())
    }

    /// Applies a change that another host sharing the store made to a task (replicas on one
    /// database; the store reports it): a task this host does not hold is added (its work
    /// runs elsewhere; its sessions may read it, wait for its result and cancel it), one it
    /// holds moves along the transition table and its followers hear of it, parked
    /// `tasks/result` calls are answered when it ends, and, when its work runs here, the work
    /// stops ([`StopReason::Cancelled`] when another host cancelled it). A task terminal here
    /// stays as it is; an expired one is not added. Nothing is journaled: the change is
    /// stored already.
    pub fn sync(&mut self, now: Millis, snapshot: TaskSnapshot) -> Result<(), UsageError> {
        self.enter(now)?;
        self.state.sync_task(snapshot);
        Ok(())
    }

    /// Takes over a task whose work runs on no host now: one handed off by a front
    /// ([`Host::hand_off`]) and claimed here from the store's queue, or one whose host
    /// stopped (its lease ran out, and the store chose this host to take its tasks). The
    /// task is applied as with [`Host::sync`], then its work runs here under the task's
    /// call, one more attempt (journaled): the first
    /// ([`Event::Claimed`](crate::Event::Claimed)) for queued work, else again as after a
    /// restart ([`Event::Restored`](crate::Event::Restored)). A task that finished
    /// meanwhile, expired, or already runs here is only applied.
    pub fn adopt(&mut self, now: Millis, snapshot: TaskSnapshot) -> Result<(), UsageError> {
        self.enter(now)?;
        let task = snapshot.info.id.clone();
        // The request as stored: another host may have run the work again since this one
        // last heard of the task (its attempt counts up from there).
        let stored = snapshot.request.clone();
        let st = &mut self.state;
        st.sync_task(snapshot);
        let Some(&call) = st.work.get(&task) else {
            return Ok(());
        };
        match st.call_mut(call) {
            Some(c) if c.shadow => c.shadow = false,
            _ => return Ok(()),
        }
        st.run_again(task, call, stored);
        Ok(())
    }

    /// Hands the work of `call`'s task to another host sharing the store (a worker; this
    /// host is a front that runs no work): the task stays `working` with `message` as its
    /// status message, its request is stored as queued (attempt 0) for a worker to take with
    /// [`Host::adopt`], and `call` is over here (commands on it are refused as
    /// [`UsageError::UnknownCall`]). Its followers here hear of it as the store reports its
    /// changes ([`Host::sync`]). Needs a journaling host (a store keeps the request the
    /// worker runs): [`UsageError::NotJournaled`] otherwise; [`UsageError::NotATask`] for a
    /// plain call.
    pub fn hand_off(
        &mut self,
        now: Millis,
        call: CallId,
        message: Option<String>,
    ) -> Result<TaskId, UsageError> {
        self.enter(now)?;
        self.state.hand_off(call, message)
    }

    /// This host's hold on a task's work ran out, and another host sharing the store runs it
    /// now (the store refused a change of it as no longer this host's, or reports another
    /// host running it): its work here stops ([`StopReason::Moved`]), and the task becomes
    /// `snapshot`, as the store holds it. A change of it the store refused is forgotten, an
    /// end included (with [`Durability::Confirmed`], no peer was told of it).
    pub fn release(&mut self, now: Millis, snapshot: TaskSnapshot) -> Result<(), UsageError> {
        self.enter(now)?;
        self.state.release(snapshot);
        Ok(())
    }

    /// Answers to input requests of task `task`, whose work runs here, that a requestor gave
    /// another host sharing the store (a front; it journaled them as
    /// [`Change::Answers`](crate::Change::Answers) and the store relayed them): each key that
    /// names an outstanding request answers it, as if the requestor had answered here (the
    /// work hears [`Event::InputResponse`](crate::Event::InputResponse)); other keys are
    /// ignored. [`UsageError::UnknownTask`] when the task's work does not run here.
    pub fn answer_inputs(
        &mut self,
        now: Millis,
        task: &str,
        responses: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        let st = &mut self.state;
        let era = st
            .tasks
            .get(task)
            .filter(|_| {
                st.work
                    .get(task)
                    .and_then(|&c| st.call(c))
                    .is_some_and(|c| !c.shadow)
            })
            .map(|r| (r.era, r.id.clone()));
        let Some((era, task)) = era else {
            return Err(UsageError::UnknownTask(TaskId::from(task)));
        };
        st.protocol(era).answer_relayed(st, &task, responses);
        Ok(())
    }

    /// The store holds every journal entry up to `seq`: messages waiting for them go out.
    pub fn confirm(&mut self, now: Millis, seq: u64) {
        self.state.confirm(seq);
        self.state.advance(now);
    }

    /// The store could not write the journal entries up to `seq` (and will not be waited
    /// for): every reply waiting for one of them is sent as `error` instead (say which store
    /// failed and why, e.g. with [`RpcError::internal`]); other messages waiting go out as
    /// they are. A task whose `CreateTaskResult` failed so is removed, its work stopped
    /// ([`StopReason::Removed`]): its requestor never learnt
    /// its id. Only with [`Durability::Confirmed`].
    pub fn fail_journal(&mut self, now: Millis, seq: u64, error: &RpcError) {
        self.state.fail_journal(seq, error);
        self.state.advance(now);
    }

    /// The store wrote the journal entries up to `seq`, except those in `refused` (in
    /// journal order), which it refused for good (a constraint, a finished task changed
    /// elsewhere) and will never hold: each reply waiting for a refused entry is sent as the
    /// error given with it (say which store refused what, e.g. with [`RpcError::internal`]),
    /// as with [`Host::fail_journal`]; every other message waiting goes out as it is.
    ///
    /// `stored` holds the tasks whose changes the store refused because it keeps another
    /// version of them (another host sharing it finished the task first, or claimed its
    /// work), as it keeps them: each becomes that version (as with [`Host::release`]), a
    /// notification that told of its refused change is dropped, and a reply about it
    /// (`tasks/get`, `tasks/result`, `tasks/cancel`) is given again from it: a client whose
    /// cancel lost the race to the work's end is told the task is already finished, and
    /// reads the outcome the store keeps. Only with [`Durability::Confirmed`].
    pub fn refuse_journal(
        &mut self,
        now: Millis,
        seq: u64,
        refused: &[(u64, RpcError)],
        stored: Vec<TaskSnapshot>,
    ) {
        self.state.refuse_journal(seq, refused, stored);
        self.state.advance(now);
    }
}

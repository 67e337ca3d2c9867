//! Changes another host made to a task both share through one store (replicas on one
//! database): applied here as the store reports them, without journaling them again.

use super::calls::Call;
use super::lifecycle::error_outcome;
use super::tasks::{NewOutcome, OutcomeKind};
use super::{Kept, State};
use crate::error::UsageError;
use crate::event::StopReason;
use crate::ids::{CallId, TaskId};
use crate::model::{Outcome, TaskSnapshot};
use crate::status::TaskStatus;

impl<K: Kept> State<K> {
    /// Applies `snapshot`, a task as another host stored it. A task this host does not hold
    /// is added, with a call that does no work here (its followers and parked results work
    /// as for any task); a task it holds moves along the transition table, and its
    /// followers hear of it. A terminal task here stays as it is. When another host ended a
    /// task whose work runs here, the work stops ([`StopReason::Cancelled`] for a cancel,
    /// else [`StopReason::Removed`]).
    pub fn sync_task(&mut self, mut snapshot: TaskSnapshot) {
        let id = snapshot.info.id.clone();
        let inputs = std::mem::take(&mut snapshot.inputs);
        let progress = snapshot.progress.take();
        let Some(record) = self.tasks.get(&id) else {
            let expired = snapshot
                .info
                .ttl_ms
                .is_some_and(|ttl| snapshot.info.created_at.plus(ttl) <= self.now);
            if expired {
                return;
            }
            let Ok(record) = self.tasks.restore(snapshot) else {
                return;
            };
            if !record.status.is_terminal() {
                let era = record.era;
                let call = self.add_call(Call::shadow(era, id.clone()));
                self.work.insert(id, call);
                self.protocol(era).sync_inputs(self, call, inputs);
                self.protocol(era).sync_progress(self, call, progress);
            }
            return;
        };
        if record.status.is_terminal() {
            return;
        }
        let (era, from) = (record.era, record.status);
        let (to, message, at) = (
            snapshot.info.status,
            snapshot.info.status_message,
            snapshot.info.last_updated_at,
        );
        let shadow = self
            .work
            .get(&id)
            .copied()
            .filter(|&c| self.call(c).is_some_and(|c| c.shadow));
        // Progress comes before the change it came with (the last step's before the end).
        if let Some(call) = shadow {
            self.protocol(era).sync_progress(self, call, progress);
        }
        if !to.is_terminal() {
            let moved = to != from && self.tasks.transition(&id, at, to, None, None);
            let told = self.tasks.set_message(&id, at, message);
            if let Some(call) = shadow {
                self.protocol(era).sync_inputs(self, call, inputs);
            }
            if moved || told {
                self.tell_followers(&id);
            }
            return;
        }
        let outcome = match snapshot.outcome {
            Some(Outcome::Result { value, is_error }) => NewOutcome {
                raw: value,
                kind: if is_error {
                    OutcomeKind::ErrorResult
                } else {
                    OutcomeKind::Result
                },
            },
            Some(Outcome::Error(error)) => error_outcome(&error),
            // A terminal snapshot always carries its outcome; one without is not applied.
            None => return,
        };
        if !self.tasks.transition(&id, at, to, message, Some(outcome)) {
            return;
        }
        let stop = if to == TaskStatus::Cancelled {
            StopReason::Cancelled
        } else {
            StopReason::Removed
        };
        self.after_settle(&id, Some(stop));
    }

    /// Hands the work of `call`'s task to another host: its request is stored as queued,
    /// `message` becomes its status message, and the call is over here.
    pub fn hand_off(
        &mut self,
        call: CallId,
        message: Option<String>,
    ) -> Result<TaskId, UsageError> {
        let state = self
            .call(call)
            .filter(|c| !c.shadow)
            .ok_or(UsageError::UnknownCall(call))?;
        let task = state.task.clone().ok_or(UsageError::NotATask(call))?;
        let record = self
            .tasks
            .get(&task)
            .ok_or_else(|| UsageError::UnknownTask(task.clone()))?;
        if record.status.is_terminal() {
            let status = record.status;
            return Err(UsageError::TaskFinished { task, status });
        }
        if !self.journal_enabled() || !self.tasks.queue(&task) {
            return Err(UsageError::NotJournaled(task));
        }
        let now = self.now;
        self.tasks.set_message(&task, now, message);
        self.move_work_away(&task, call);
        self.journal_put(&task);
        self.tell_followers(&task);
        Ok(task)
    }

    /// Another host runs the work of `snapshot`'s task now: the work here stops
    /// ([`StopReason::Moved`]), and the task becomes what the store holds. A change of it
    /// the store refused is forgotten, an end included (no peer was told of it).
    pub fn release(&mut self, snapshot: TaskSnapshot) {
        let id = snapshot.info.id.clone();
        let ended_here = self.tasks.get(&id).is_some_and(|r| r.status.is_terminal());
        if let Some(&call) = self.work.get(&id) {
            if self.call(call).is_some_and(|c| !c.shadow) {
                // Work whose task ended here (a cancel) was told to stop then.
                if !ended_here {
                    self.stop(call, StopReason::Moved, None);
                }
                self.move_work_away(&id, call);
            }
        }
        if ended_here {
            self.tasks.remove(&id);
        }
        self.sync_task(snapshot);
        // A task that ended in the store keeps no stand-in: its followers hear the end.
        let ended = self.tasks.get(&id).is_none_or(|r| r.status.is_terminal());
        if ended && self.work.contains_key(&id) {
            self.after_settle(&id, None);
        }
    }
}

//! Changes another host made to a task both share through one store (replicas on one
//! database): applied here as the store reports them, without journaling them again.

use super::calls::Call;
use super::lifecycle::error_outcome;
use super::tasks::{NewOutcome, OutcomeKind};
use super::{Kept, State};
use crate::event::StopReason;
use crate::model::{Outcome, TaskSnapshot};
use crate::status::TaskStatus;

impl<K: Kept> State<K> {
    /// Applies `snapshot`, a task as another host stored it. A task this host does not hold
    /// is added, with a call that does no work here (its followers and parked results work
    /// as for any task); a task it holds moves along the transition table, and its
    /// followers hear of it. A terminal task here stays as it is. When another host ended a
    /// task whose work runs here, the work stops ([`StopReason::Cancelled`] for a cancel,
    /// else [`StopReason::Removed`]).
    pub fn sync_task(&mut self, snapshot: TaskSnapshot) {
        let id = snapshot.info.id.clone();
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
            }
            return;
        };
        if record.status.is_terminal() {
            return;
        }
        let (to, message, at) = (
            snapshot.info.status,
            snapshot.info.status_message,
            snapshot.info.last_updated_at,
        );
        if !to.is_terminal() {
            let moved = to != record.status && self.tasks.transition(&id, at, to, None, None);
            let told = self.tasks.set_message(&id, at, message);
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
}

//! Helpers several modules of the client suite share.

use taskwire_engine::{Event, TaskStatus};
use taskwire_harness::{Pair, Side};

/// Every task status the client application heard, in order.
pub fn statuses(pair: &Pair) -> Vec<TaskStatus> {
    pair.find(Side::Client, |e| match e {
        Event::TaskStatus { task, .. } => Some(task.status),
        _ => None,
    })
}

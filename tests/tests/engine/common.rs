//! Helpers several modules of the engine suite share.

use taskwire_engine::{Change, Event, JournalEntry, TaskSnapshot, TaskSupport, ToolCall};
use taskwire_harness::setup::{server_config, tool};
use taskwire_harness::Probe;

/// A ready server (handshake done) with one tool, `job`, that may run as a task.
pub fn job_server() -> Probe {
    Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    })
}

/// The last tool call the application was handed (the events are taken).
pub fn last_call(d: &mut Probe) -> ToolCall {
    d.take_events()
        .into_iter()
        .rev()
        .find_map(|e| match e {
            Event::ToolCall(c) => Some(c),
            _ => None,
        })
        .expect("a tool call")
}

/// The newest snapshot of `task` a host journaled.
pub fn stored(journal: &[JournalEntry], task: &str) -> TaskSnapshot {
    journal
        .iter()
        .rev()
        .find_map(|e| match &e.change {
            Change::Put(s) if s.info.id.as_str() == task => Some(s.clone()),
            _ => None,
        })
        .expect("the task is journaled")
}

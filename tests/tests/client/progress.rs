//! Progress for a task between two engines (spec §2.16.3): the token of the original request
//! keeps working after `CreateTaskResult` and goes quiet once the task is terminal.

use serde_json::json;
use taskwire_engine::{Event, TaskSupport, UsageError};
use taskwire_harness::setup::{client_config, server_config, text_result, tool};
use taskwire_harness::{Pair, Side};

#[test]
fn task_progress_reaches_the_client_until_terminal() {
    let mut pair = Pair::connected(client_config(), server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    pair.client
        .request_as_task(
            pair.now,
            pair.cs,
            "tools/call",
            json!({ "name": "job", "arguments": {}, "_meta": { "progressToken": "p-1" } }),
            None,
        )
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    for step in 1..=3 {
        pair.advance(300);
        pair.server
            .notify_progress(pair.now, work, f64::from(step), Some(3.0), None)
            .unwrap();
    }
    pair.server
        .respond(pair.now, work, Ok(text_result("ok")))
        .unwrap();
    // Intended change: the answered call's handle is used up, so later progress on it is
    // refused (it used to be dropped silently); either way nothing reaches the client.
    assert_eq!(
        pair.server
            .notify_progress(pair.now, work, 4.0, Some(3.0), None),
        Err(UsageError::UnknownCall(work))
    );
    pair.run_until_task_result(5_000);
    let progress = pair.find(Side::Client, |e| match e {
        Event::Progress { params: p, .. } => Some((p.progress_token.clone(), p.progress)),
        _ => None,
    });
    assert_eq!(
        progress,
        [
            (json!("p-1"), 1.0),
            (json!("p-1"), 2.0),
            (json!("p-1"), 3.0)
        ]
    );
}

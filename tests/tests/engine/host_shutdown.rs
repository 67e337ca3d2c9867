//! `Host::shutdown` is final: every session closes, every running call stops once, nothing
//! is scheduled, and afterwards opening a session, input and commands that change the
//! host are refused with `UsageError::ShutDown` (a second shutdown does nothing).

use serde_json::json;
use taskwire_engine::{Event, Owner, Role, StopReason, TaskSupport, UsageError};
use taskwire_harness::setup::{server_config, tool, T0};
use taskwire_harness::Probe;

#[test]
fn a_shut_down_host_refuses_sessions_input_and_commands() {
    let mut d = Probe::ready_server(server_config(), |h| {
        h.add_tool(tool("slow", TaskSupport::Optional))
    });
    d.send(
        "tools/call",
        json!({ "name": "slow", "task": { "ttl": 60_000 } }),
    );
    let work = d.work("task-1");
    d.take_events();
    let later = T0.plus(1_000);
    d.host.shutdown(later);
    let stops: Vec<_> = d
        .host
        .poll_output()
        .into_iter()
        .chain(std::iter::from_fn(|| d.host.poll_output()))
        .filter_map(|o| match o {
            taskwire_engine::Output::Event(Event::Stop { call, reason, .. }) => {
                Some((call, reason))
            }
            _ => None,
        })
        .collect();
    assert_eq!(stops, [(work, StopReason::Closed)]);
    assert_eq!(d.host.poll_timeout(), None, "nothing is scheduled");
    assert!(d.host.is_closed(d.session));

    let shut = Err(UsageError::ShutDown);
    assert_eq!(d.host.open(later, Role::Server, "peer").map(|_| ()), shut);
    let ping = br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    assert_eq!(d.host.handle_message(later, d.session, ping), shut);
    assert_eq!(d.host.handle_bytes(later, d.session, b"{}\n"), shut);
    assert_eq!(d.host.handle_eof(later, d.session), shut);
    assert_eq!(d.host.handle_timeout(later.plus(600_000)), shut);
    let owner = Owner::from("peer");
    assert_eq!(
        d.host.create_task(later, &owner, "app-1", None).map(|_| ()),
        shut
    );
    assert_eq!(d.host.restore(later, Vec::new()).map(|_| ()), shut);
    assert_eq!(d.host.respond(later, work, Ok(json!({}))), shut);
    // The task stays as it was when the host stopped, and the error says what to do.
    assert!(d.host.task("task-1").is_some());
    assert!(UsageError::ShutDown.to_string().contains("make a new Host"));
    d.host.shutdown(later);
    d.host.close(later, d.session);
    assert!(
        d.host.poll_output().is_none(),
        "a shut-down host stays silent"
    );
}

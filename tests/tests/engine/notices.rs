//! `Host::notify`: a server's notices about its resources and prompts. In 2025-11-25 each
//! goes as it is (validated against the schema); a 2026-07-28 session, which has them only
//! on listen streams that asked for them, never completes the handshake they need, so the
//! engine refuses there and sends nothing; a client session cannot send them.

use serde_json::json;
use taskwire_engine::{Notice, UsageError};
use taskwire_harness::schema::assert_valid;
use taskwire_harness::setup::server_config;
use taskwire_harness::Probe;

#[test]
fn a_v2025_session_gets_each_notice_as_the_schema_has_it() {
    let mut d = Probe::ready_server(server_config(), |_| {});
    let uri = "file:///notes.txt".to_owned();
    for (notice, definition, params) in [
        (
            Notice::ResourceUpdated { uri: uri.clone() },
            "ResourceUpdatedNotification",
            Some(json!({ "uri": uri })),
        ),
        (
            Notice::ResourcesListChanged,
            "ResourceListChangedNotification",
            None,
        ),
        (
            Notice::PromptsListChanged,
            "PromptListChangedNotification",
            None,
        ),
    ] {
        d.host.notify(d.now, d.session, &notice).unwrap();
        let out = d.drain();
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0]["method"], notice.method());
        assert_eq!(out[0].get("params").cloned(), params);
        assert_valid(definition, &out[0]);
        let read = Notice::from_notification(notice.method(), out[0].get("params"));
        assert_eq!(read, Some(notice), "read back as sent");
    }
}

#[test]
fn a_v2026_session_and_a_client_session_are_refused_and_nothing_is_sent() {
    let mut d = Probe::server(server_config());
    let discover = json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": { "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                               "io.modelcontextprotocol/clientCapabilities": {} } } });
    d.feed_json(discover);
    d.clear();
    let refused = d.host.notify(d.now, d.session, &Notice::PromptsListChanged);
    assert!(
        matches!(refused, Err(UsageError::NotInitialized(_))),
        "{refused:?}"
    );
    assert!(d.drain().is_empty());

    let mut c = Probe::ready_client(
        taskwire_harness::setup::client_config(),
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": { "name": "s", "version": "1" } }),
    );
    let refused = c
        .host
        .notify(c.now, c.session, &Notice::ResourcesListChanged);
    assert!(
        matches!(
            refused,
            Err(UsageError::WrongRole { .. }) | Err(UsageError::NotInitialized(_))
        ),
        "{refused:?}"
    );
}

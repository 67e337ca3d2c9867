//! What the tests over message links share: sending a message, waiting for the reply to a
//! request, the 2025-11-25 handshake, and a time limit on a test body.

use serde_json::{json, Value};
use taskwire_driver::engine::{MessageKind, RequestId};
use taskwire_driver::{MessageSession, ServerHandle};

/// Hands `message` to the server.
pub fn send(session: &MessageSession, message: Value) {
    session.send(message.to_string()).expect("the server runs");
}

/// The reply to request `id`, skipping what comes before it.
pub async fn reply(session: &MessageSession, id: i64) -> Value {
    loop {
        let out = session.recv().await.expect("a message");
        if matches!(&out.kind, MessageKind::Reply { to: Some(to), .. } if *to == RequestId::Number(id))
        {
            return serde_json::from_str(&out.message).expect("JSON");
        }
    }
}

/// `initialize` (id 0) in 2025-11-25, then `notifications/initialized`.
pub async fn initialize(session: &MessageSession) {
    send(
        session,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
    );
    reply(session, 0).await;
    send(
        session,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
}

/// Runs `body` against `handle` on smol, failing the test if it takes more than 20 s.
pub fn within_20s(handle: ServerHandle, body: impl AsyncFnOnce(ServerHandle)) {
    smol::block_on(async {
        let limit = smol::Timer::after(std::time::Duration::from_secs(20));
        let body = body(handle);
        futures::pin_mut!(body);
        if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
            panic!("the test body did not finish within 20 s");
        }
    });
}

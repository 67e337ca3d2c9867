//! A server's own methods beside its tools (`Server::handle`, `Server::capability`): exact
//! names and prefix patterns, declared capabilities in both eras' openings, errors passed
//! through, the engine's methods kept, and unknown ones -32601. Over a Unix socket pair, with
//! clients opening in 2025-11-25 and in 2026-07-28.

use crate::in_process;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::engine::{jsonrpc::code, ClientEra, UsageError};
use taskwire_driver::{Client, ClientBuilder, Config, RpcError, Runtime, Server};

fn server() -> Server {
    Server::new(Config::new("requests", "1.0"))
        .capability("resources", json!({ "subscribe": false }))
        .capability("prompts", json!({}))
        .handle("resources/read", |params: Value| async move {
            let uri = params["uri"].as_str().unwrap_or_default().to_owned();
            if uri != "test://static-text" {
                return Err(RpcError::invalid_params(format!(
                    "Resource not found: {uri}"
                )));
            }
            Ok(json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": "hello" }] }))
        })
        .handle("prompts/*", |params: Value| async move {
            Ok(json!({ "messages": [], "description": params["name"].clone() }))
        })
        // Listed, but the engine keeps what it owns.
        .handle("tools/list", |_| async {
            Ok(json!({ "tools": ["not this"] }))
        })
}

fn client(runtime: &Arc<dyn Runtime>, era: ClientEra) -> Client {
    in_process::connect(runtime, server(), era, ClientBuilder::new)
}

fn in_each_era(body: impl AsyncFn(Client, ClientEra)) {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    for era in [
        ClientEra::Only(taskwire_engine::Era::V2025_11_25),
        ClientEra::Only(taskwire_engine::Era::V2026_07_28),
    ] {
        let c = client(&runtime, era);
        smol::block_on(async {
            let limit = smol::Timer::after(Duration::from_secs(20));
            let body = body(c, era);
            futures::pin_mut!(body);
            if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
                panic!("the test body did not finish within 20 s ({era:?})");
            }
        });
    }
}

#[test]
fn handled_methods_answer_in_both_eras_and_capabilities_are_declared() {
    in_each_era(async |c, era| {
        let opened = c.initialize().await.expect("opens");
        assert_eq!(
            opened.capabilities["resources"],
            json!({ "subscribe": false }),
            "{era:?}"
        );
        assert_eq!(opened.capabilities["prompts"], json!({}), "{era:?}");
        let read = c
            .request(
                "resources/read",
                Some(json!({ "uri": "test://static-text" })),
            )
            .await
            .expect("resources/read");
        assert_eq!(read["contents"][0]["text"], "hello");
        if era == ClientEra::Only(taskwire_engine::Era::V2026_07_28) {
            assert_eq!(read["resultType"], "complete");
        }
        let prompt = c
            .request("prompts/get", Some(json!({ "name": "greeting" })))
            .await
            .expect("a prefix pattern");
        assert_eq!(prompt["description"], "greeting");
        let missing = c
            .request("resources/read", Some(json!({ "uri": "test://nope" })))
            .await
            .map_err(RpcError::from)
            .expect_err("the handler's error");
        assert_eq!(
            (missing.code, missing.message.as_str()),
            (code::INVALID_PARAMS, "Resource not found: test://nope")
        );
        let unknown = c
            .request("resources/list", None)
            .await
            .map_err(RpcError::from)
            .expect_err("no handler");
        assert_eq!(unknown.code, code::METHOD_NOT_FOUND);
        let tools = c.request("tools/list", None).await.expect("the engine's");
        assert_eq!(tools["tools"], json!([]), "{era:?}");
        c.close().await;
    });
}

/// The engine's refusals reach the caller as the engine's own error, to match on.
#[test]
fn what_the_engine_refuses_keeps_its_usage_error() {
    in_each_era(async |c, era| {
        c.initialize().await.expect("opens");
        let refused = c.task_result("task-1").await;
        match era {
            ClientEra::Only(taskwire_engine::Era::V2026_07_28) => assert!(
                matches!(
                    refused,
                    Err(taskwire_driver::Error::Usage(UsageError::NotInEra {
                        method: "tasks/result",
                        ..
                    }))
                ),
                "{refused:?}"
            ),
            _ => assert!(
                matches!(&refused, Err(taskwire_driver::Error::Rpc(e)) if e.code == code::INVALID_PARAMS),
                "a 2025-11-25 server answers: {refused:?}"
            ),
        }
    });
}

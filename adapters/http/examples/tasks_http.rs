//! A task server as one would deploy it: the MCP endpoint mounted in an axum app at
//! `http://ADDR/mcp` (beside `/health`), its tasks kept in a SQLite file (a task finished
//! before a restart or a crash can still be read after it), and bearer-token
//! authentication: a request to `/mcp` without `Authorization: Bearer $MCP_TOKEN` gets `401`.
//! The token's holder owns the tasks, so they are theirs on any connection, before and after
//! a restart. Its tool, `brew`, runs as a task when asked, with a status message each step.
//!
//! `MCP_TOKEN=s3cret cargo run -p taskwire-http --example tasks_http -- 127.0.0.1:3000 tasks.db`,
//! then call it with the `http_client` example (same `MCP_TOKEN`):
//! `cargo run -p taskwire-http --example http_client -- http://127.0.0.1:3000/mcp brew '{"drink": "tea"}'`

use std::sync::Arc;
use std::time::Duration;

use axum::http::header::AUTHORIZATION;
use serde::Deserialize;
use serde_json::json;
use taskwire_driver::{CallToolResult, Config, Server, TaskSupport, Tool};
use taskwire_http::HttpConfig;
use taskwire_sqlite::SqliteStore;

#[derive(Deserialize)]
struct Brew {
    drink: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(address), Some(database)) = (args.next(), args.next()) else {
        return Err("usage: tasks_http ADDR DATABASE (and MCP_TOKEN in the environment)".into());
    };
    let token = std::env::var("MCP_TOKEN").map_err(|_| "MCP_TOKEN: the token clients send")?;
    let brew = Tool::new("brew", TaskSupport::Optional).with_input_schema(json!({
        "type": "object",
        "properties": { "drink": { "type": "string" } },
        "required": ["drink"]
    }));
    let server = Server::new(Config::new("tasks-http", "1.0"))
        .tool(brew, |ctx, args: Brew| async move {
            for step in ["boiling water", "steeping", "pouring"] {
                ctx.set_status(step).await;
                ctx.sleep(Duration::from_millis(200)).await;
            }
            Ok(CallToolResult::text(format!(
                "your {} is ready",
                args.drink
            )))
        })
        .with_store(SqliteStore::open(&database)?);
    let expected = format!("Bearer {token}");
    let config = HttpConfig {
        // Names the owner of the request's tasks, or refuses it (401). A real server would
        // verify a token it did not make itself (a JWT, OAuth introspection) and name its
        // subject.
        authenticate: Some(Arc::new(move |headers| {
            let sent = headers.get(AUTHORIZATION)?.to_str().ok()?;
            (sent == expected).then(|| "token-holder".to_owned())
        })),
        ..HttpConfig::default()
    };
    let handle = server.start(Arc::new(taskwire_tokio::Tokio));
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(taskwire_http::router("/mcp", handle, config.clone()));
    let listener = tokio::net::TcpListener::bind(&address).await?;
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    taskwire_http::serve_router(listener, app, &config, stop).await?;
    Ok(())
}

//! A stdio task server on tokio whose tool asks the user mid-task: `release` checks its
//! version, then asks (elicitation, a form typed by `Approval`) whether to release it and
//! who approves; its task shows `input_required` until the client answers, and its result
//! says what the answer was.
//!
//! Try it: `cargo run -p taskwire-tokio --example tokio_client -- target/debug/examples/tokio_server`.

use std::time::Duration;

use serde::Deserialize;
use taskwire_driver::serde_json::json;
use taskwire_driver::{CallToolResult, Config, Elicited, Server, TaskSupport, Tool};

#[derive(Deserialize)]
struct Release {
    version: String,
}

/// The form the user fills in.
#[derive(Deserialize, schemars::JsonSchema)]
struct Approval {
    /// Release it now?
    confirm: bool,
    /// Who approves the release.
    approver: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let release = Tool::new("release", TaskSupport::Optional).with_input_schema(json!({
        "type": "object",
        "properties": { "version": { "type": "string" } },
        "required": ["version"]
    }));
    let server = Server::new(Config::new("tokio-example", "1.0")).tool(
        release,
        |ctx, args: Release| async move {
            ctx.set_status(format!("checking {}", args.version)).await;
            ctx.sleep(Duration::from_millis(50)).await;
            let question = format!("Release {}?", args.version);
            let text = match ctx.elicit_form::<Approval>(question).await? {
                Elicited::Accepted(yes) if yes.confirm => {
                    format!("released {}, approved by {}", args.version, yes.approver)
                }
                Elicited::Accepted(_) | Elicited::Declined => format!("{} held", args.version),
                Elicited::Cancelled => format!("{} not decided", args.version),
            };
            Ok(CallToolResult::text(text))
        },
    );
    taskwire_tokio::serve_stdio(server).await
}

//! `Server::tool_with_schema` (feature `schemars`): a tool without an input schema of its
//! own is listed with its argument type's schema, in both eras; a tool with one keeps it.

use std::os::unix::net::UnixStream;
use std::sync::Arc;

use futures::AsyncReadExt;
use serde::Deserialize;
use serde_json::json;
use smol::Async;
use taskwire_driver::engine::{ClientEra, Era};
use taskwire_driver::{
    CallToolResult, ClientBuilder, Config, Runtime, Server, TaskSupport, Tool, ToolContext,
};

/// The arguments the tool reads.
#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Resize {
    /// Width in pixels.
    width: u32,
    /// Keep the aspect ratio.
    #[serde(default)]
    keep_ratio: bool,
}

async fn resize(_: ToolContext, args: Resize) -> taskwire_driver::ToolOutcome {
    Ok(CallToolResult::text(format!("{}", args.width)))
}

#[test]
fn a_tool_without_a_schema_is_listed_with_its_argument_types() {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let server = Server::new(Config::new("schemas", "1.0"))
            .tool_with_schema(Tool::new("resize", TaskSupport::Optional), resize)
            .tool_with_schema(
                Tool::new("given", TaskSupport::Forbidden)
                    .with_input_schema(json!({ "type": "object", "properties": { "x": {} } })),
                resize,
            );
        let (ours, theirs) = UnixStream::pair().expect("a socket pair");
        let (server_in, server_out) = Async::new(theirs).expect("non-blocking").split();
        let handle = server.start(runtime.clone());
        runtime.spawn(Box::pin(async move {
            handle
                .connect("client", Box::pin(server_in), Box::pin(server_out))
                .await;
        }));
        let (client_in, client_out) = Async::new(ours).expect("non-blocking").split();
        let config = Config {
            client_era: ClientEra::Only(era),
            ..Config::new("client", "0")
        };
        let client = ClientBuilder::new(config).connect(
            runtime.clone(),
            Box::pin(client_in),
            Box::pin(client_out),
        );
        let tools = smol::block_on(async {
            client.initialize().await.expect("opens");
            client.list_tools().await.expect("lists")
        });
        let schema = &tools[0].input_schema;
        assert_eq!(schema["type"], "object", "{era:?}: {schema}");
        assert_eq!(schema["properties"]["width"]["type"], "integer", "{schema}");
        assert_eq!(
            schema["properties"]["keep_ratio"]["type"], "boolean",
            "{schema}"
        );
        assert_eq!(schema["required"], json!(["width"]), "{schema}");
        assert_eq!(
            tools[1].input_schema,
            json!({ "type": "object", "properties": { "x": {} } }),
            "a tool's own schema stays"
        );
        smol::block_on(client.close());
    }
}

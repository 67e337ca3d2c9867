//! `Server::tool_with_schema` (feature `schemars`): a tool without an input schema of its
//! own is listed with its argument type's schema, in both eras; a tool with one keeps it.

use crate::in_process;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;
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
        let client =
            in_process::connect(&runtime, server, ClientEra::Only(era), ClientBuilder::new);
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

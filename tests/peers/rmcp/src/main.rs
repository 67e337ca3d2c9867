//! `rmcp-echo-server`: a stdio MCP server on rmcp 3.11 with one tool, `echo` (taskSupport
//! absent, i.e. forbidden), which returns its `text` argument as one text content block.
//!
//! It is the rmcp peer of taskwire's end-to-end benchmark (`tests/src/bin/bench.rs`). rmcp's
//! tasks follow a later protocol era (the 2026 tasks extension), so only `echo` is offered. A
//! client asking for protocol 2025-11-25 in `initialize` gets that version back. The server
//! stops at the end of stdin.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

/// The server: its one tool definition, built once.
struct EchoServer {
    echo: Tool,
}

impl EchoServer {
    fn new() -> Self {
        let schema = json!({
            "type": "object",
            "properties": { "text": { "type": "string" } },
            "required": ["text"]
        });
        let Value::Object(schema) = schema else {
            unreachable!("the schema literal is an object")
        };
        let echo = Tool::new("echo", "Returns its `text` argument.", Arc::new(schema));
        EchoServer { echo }
    }
}

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp-echo-server", "3.11.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.echo.clone()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "echo" {
            let message = format!("unknown tool: {}", request.name);
            return Err(ErrorData::invalid_params(message, None));
        }
        let text = request
            .arguments
            .as_ref()
            .and_then(|arguments: &Map<String, Value>| arguments.get("text"))
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("echo needs a string `text`", None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `stdio_pipes` is what rmcp's documentation recommends when both streams are pipes (as
    // under an MCP client): reads and writes go through the IO reactor, not blocking threads.
    let service = EchoServer::new()
        .serve(rmcp::transport::stdio_pipes())
        .await?;
    service.waiting().await?;
    Ok(())
}

//! `rmcp-echo-server`: an MCP server on rmcp 3.11 with one tool, `echo` (taskSupport absent,
//! i.e. forbidden), which returns its `text` argument as one text content block.
//!
//! ```text
//! rmcp-echo-server                              (stdio)
//! rmcp-echo-server --http ADDR [--json-response] (Streamable HTTP at http://ADDR/mcp)
//! ```
//!
//! It is the rmcp peer of taskwire's benchmarks: the stdio one (`tests/src/bin/bench.rs`) and,
//! with `--http`, the Streamable HTTP one (`tests/src/bin/http-bench.rs`; see
//! `serve_http.rs` for what rmcp's HTTP server is configured with). rmcp's tasks follow a
//! later protocol era (the 2026 tasks extension), so only `echo` is offered. A client asking
//! for protocol 2025-11-25 in `initialize` gets that version back; over HTTP a request with
//! the 2026-07-28 per-request `_meta` is served statelessly. On stdio the server stops at the
//! end of stdin; over HTTP it runs until killed.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

mod serve_http;

/// The server: its one tool definition, built once (cloned per HTTP session or request).
#[derive(Clone)]
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

const USAGE: &str = "usage: rmcp-echo-server [--http ADDR [--json-response]]";

/// `--http ADDR [--json-response]`, or nothing (stdio).
fn parse_args() -> Result<Option<serve_http::HttpOptions>, String> {
    let mut address = None;
    let mut json_response = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => address = Some(args.next().ok_or("--http needs an address")?),
            "--json-response" => json_response = true,
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    match address {
        Some(address) => Ok(Some(serve_http::HttpOptions {
            address,
            json_response,
        })),
        None if json_response => Err("--json-response needs --http".into()),
        None => Ok(None),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let http = parse_args().unwrap_or_else(|message| {
        eprintln!("rmcp-echo-server: {message}\n{USAGE}");
        std::process::exit(2)
    });
    if let Some(options) = http {
        serve_http::serve(EchoServer::new(), options).await?;
        return Ok(());
    }
    // `stdio_pipes` is what rmcp's documentation recommends when both streams are pipes (as
    // under an MCP client): reads and writes go through the IO reactor, not blocking threads.
    let service = EchoServer::new()
        .serve(rmcp::transport::stdio_pipes())
        .await?;
    service.waiting().await?;
    Ok(())
}

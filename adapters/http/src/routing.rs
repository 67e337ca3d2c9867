//! The 2026-07-28 routing headers against the body of a request, as the engine reads it:
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` (decoded from its `=?base64?…?=`
//! form first), and a tool's `Mcp-Param-*` headers against the marks of its input schema.
//! One that is missing or says something else is refused with `-32020`: an intermediary may
//! have routed on it. One leniency: `tasks/get`, `tasks/update` and `tasks/cancel` without
//! `Mcp-Name` are served (the body names the task; FastMCP's client sends none), a wrong one
//! is not.

use axum::http::HeaderMap;
use taskwire_driver::engine::{Envelope, Routed, RpcError};

use crate::guard::header_str;
use crate::header_value::decode;
use crate::tool_params;

/// `HeaderMismatch` (HTTP only).
pub(crate) const HEADER_MISMATCH: i64 = -32020;

/// The headers of a request against the request as the engine read it: `Err` is the
/// `-32020` it is answered with (notifications and responses are not checked).
pub(crate) fn admit(headers: &HeaderMap, routed: &Routed<'_>) -> Result<(), RpcError> {
    check(headers, routed)
        .and_then(|()| check_params(headers, routed))
        .map_err(|why| {
            tracing::debug!(%why, "refused a request whose routing headers do not match");
            RpcError::new(HEADER_MISMATCH, format!("Header mismatch: {why}"))
        })
}

/// A tool's `Mcp-Param-*` headers against the marks of its input schema (a tool with
/// invalid marks is left out by clients: none of its headers is checked).
fn check_params(headers: &HeaderMap, routed: &Routed<'_>) -> Result<(), String> {
    let Some(tool) = routed.tool else {
        return Ok(());
    };
    let marks = tool_params::marks(&tool.input_schema).unwrap_or_default();
    if marks.is_empty() {
        return Ok(());
    }
    let arguments = (routed.arguments)
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or_default();
    tool_params::check(headers, &marks, &arguments)
}

/// The routing headers of a request against its body; `Err` says the first that does not
/// agree.
fn check(headers: &HeaderMap, routed: &Routed<'_>) -> Result<(), String> {
    let method = routed.method;
    match (
        header_str(headers, "mcp-protocol-version"),
        routed.protocol_version,
    ) {
        (Some(header), Some(body)) if header != body => {
            return Err(format!(
                "MCP-Protocol-Version is {header:?} but _meta[{:?}] is {body:?}",
                Envelope::VERSION_KEY
            ))
        }
        (None, _) => return Err("the MCP-Protocol-Version header is missing".into()),
        _ => {}
    }
    match header_str(headers, "mcp-method") {
        None => return Err("the Mcp-Method header is missing".into()),
        Some(header) if header != method => {
            return Err(format!(
                "Mcp-Method is {header:?} but the method is {method:?}"
            ))
        }
        Some(_) => {}
    }
    if !routed.names_something() {
        return Ok(());
    }
    let Some(header) = headers.get("mcp-name") else {
        if routed.names_a_task() {
            tracing::debug!(
                method,
                "served without the Mcp-Name header: the body names the task"
            );
            return Ok(());
        }
        return Err(format!("the Mcp-Name header is missing for {method}"));
    };
    let header = decode(header).map_err(|why| format!("Mcp-Name is refused: {why}"))?;
    match routed.name {
        Some(name) if *header != *name => Err(format!(
            "Mcp-Name is {header:?} but the body names {name:?}"
        )),
        _ => Ok(()),
    }
}

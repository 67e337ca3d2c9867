//! The 2026-07-28 routing headers against the body of a request: `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` (decoded from its `=?base64?…?=` form first). One that is
//! missing or says something else is refused with `-32020`: an intermediary may have routed
//! on it. One leniency: `tasks/get`, `tasks/update` and `tasks/cancel` without `Mcp-Name`
//! are served (the body names the task; FastMCP's client sends none), a wrong one is not.

use axum::http::HeaderMap;
use taskwire_driver::engine::Envelope;

use crate::guard::header_str;
use crate::header_value::decode;

/// `HeaderMismatch` (HTTP only).
pub(crate) const HEADER_MISMATCH: i64 = -32020;

/// The routing headers of a request against its body; `Err` says the first that does not
/// agree. Notifications and responses are not checked.
pub(crate) fn check(headers: &HeaderMap, envelope: &Envelope) -> Result<(), String> {
    let (Some(method), Some(_)) = (envelope.method.as_deref(), envelope.request_id()) else {
        return Ok(());
    };
    match (
        header_str(headers, "mcp-protocol-version"),
        envelope.protocol_version.as_deref(),
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
    if !envelope.names_something() {
        return Ok(());
    }
    let Some(header) = headers.get("mcp-name") else {
        if envelope.names_a_task() {
            tracing::debug!(
                method,
                "served without the Mcp-Name header: the body names the task"
            );
            return Ok(());
        }
        return Err(format!("the Mcp-Name header is missing for {method}"));
    };
    let header = decode(header).map_err(|why| format!("Mcp-Name is refused: {why}"))?;
    match envelope.name.as_deref() {
        Some(name) if *header != *name => Err(format!(
            "Mcp-Name is {header:?} but the body names {name:?}"
        )),
        _ => Ok(()),
    }
}

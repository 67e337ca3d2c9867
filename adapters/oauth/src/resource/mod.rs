//! The server side of OAuth for MCP: see the crate documentation.

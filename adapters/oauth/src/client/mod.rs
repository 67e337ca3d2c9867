//! The client side of OAuth for MCP: see the crate documentation.

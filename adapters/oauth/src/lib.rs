//! OAuth 2.1 for MCP over HTTP, as the MCP authorization spec (2025-11-25) says.
//!
//! - [`resource`]: the server side. A [`ResourceServer`](resource::ResourceServer) publishes
//!   its Protected Resource Metadata (RFC 9728), validates bearer tokens (JWTs against the
//!   issuer's JWKS, or introspection, RFC 7662) and names the owner of a request's tasks.
//! - [`client`]: the client side. Discovery of the resource's authorization server,
//!   registration, the authorization code flow with PKCE, refresh and client credentials.
//!
//! Nothing here reads a clock for the engine or touches its state: the HTTP crate asks this
//! one who is calling, and gives the engine the owner.

pub mod client;
pub mod resource;

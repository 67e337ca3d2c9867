//! # taskwire-http
//!
//! MCP over Streamable HTTP for a [`taskwire_driver::Server`], in both protocol eras at once
//! over one task host:
//!
//! - **2025-11-25**: `initialize` opens a session (`Mcp-Session-Id`); each `POST` is answered
//!   with the reply as `application/json`, or, when anything comes before it (progress, log
//!   messages, the server's requests for input), as an SSE stream ending with the reply; a
//!   `GET` stream carries the session's own messages (task status notifications, input
//!   requests of tasks no `tasks/result` waits for); `DELETE` ends the session.
//! - **2026-07-28**: every `POST` is one stateless request (its routing headers checked
//!   against the body, `-32020`), served by a short-lived engine session; JSON-RPC errors map
//!   to the spec's HTTP statuses; `subscriptions/listen` is a long-lived SSE response.
//!
//! Tasks belong to their owner (the authenticated principal, else the 2025-11-25 session, or
//! one anonymous owner for stateless requests) and outlive sessions. Every request is
//! admitted first: `Host` and `Origin` are checked (DNS-rebinding protection), bodies are
//! limited, and [`HttpConfig::authenticate`] may name the owner.
//!
//! Mount [`router`] in your own axum app (and serve it with [`serve_router`] for the
//! connection limits), or run [`serve`]. [`HttpClient`] connects a
//! [`taskwire_driver::Client`] to any Streamable HTTP endpoint, in either era. Beside it,
//! [`dashboard`] shows operators the server's tasks live, behind the same authentication.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod config;
mod cors;
mod counted;
mod dashboard;
mod guard;
mod header_value;
mod listen;
mod metrics;
mod owners;
mod response;
mod routing;
mod service;
mod sessions;
mod shared;
mod stateless;
mod tool_params;

pub use client::HttpClient;
pub use config::{AllowedHosts, Authenticate, HttpConfig};
pub use cors::{AllowedOrigins, Cors};
pub use counted::HttpMetrics;
pub use dashboard::{dashboard, DASHBOARD_CANCEL, DASHBOARD_HEADER, DASHBOARD_METHOD};
pub use listen::serve_router;
pub use metrics::Metrics;
pub use service::{router, serve};
/// OAuth on both sides (the `taskwire-oauth` crate): [`oauth::resource::ResourceServer`]
/// for [`HttpConfig::oauth`].
pub use taskwire_oauth as oauth;

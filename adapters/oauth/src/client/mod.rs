//! The client side of MCP authorization (2025-11-25): [`OAuthClient`] reads a server's
//! `WWW-Authenticate` [`Challenge`], discovers its authorization server (Protected Resource
//! Metadata, RFC 9728; authorization server metadata, RFC 8414 / OpenID Connect), registers
//! (a given client, a Client ID Metadata Document, or RFC 7591), signs in with the
//! authorization code flow and PKCE through a [`UserAgent`] ([`Headless`] or [`Loopback`]) or
//! with client credentials, and keeps and refreshes the tokens in a [`TokenStore`].
//!
//! Every request names the resource (RFC 8707), and every OAuth request goes through an HTTP
//! client that follows no redirect.

mod challenge;
mod discovery;
mod error;
mod file_store;
mod flow;
mod http;
mod loopback;
mod metadata;
mod oauth_client;
mod registration;
mod scopes;
mod token_requests;
mod tokens;
mod user_agent;

pub use challenge::Challenge;
pub use discovery::{resource_matches, resource_metadata_urls, server_metadata_urls};
pub use error::OAuthError;
pub use file_store::FileStore;
pub use loopback::{Loopback, Opener};
pub use metadata::{ResourceMetadata, ServerMetadata};
pub use oauth_client::OAuthClient;
pub use registration::{AuthMethod, ClientRegistration};
pub use tokens::{MemoryStore, TokenStore, Tokens};
pub use user_agent::{AuthorizationResponse, BoxFuture, Headless, UserAgent};

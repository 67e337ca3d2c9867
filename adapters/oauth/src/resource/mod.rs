//! The server side: an MCP server as an OAuth 2.1 resource server. A [`ResourceServer`]
//! publishes its Protected Resource Metadata (RFC 9728), validates each request's bearer
//! token (a JWT against the issuer's JWKS, or by introspection), names the [`Caller`]
//! (whose [`Caller::owner`] owns its tasks), checks the scopes a method needs, and words
//! each refusal as the `401`/`403` challenge clients act on.
//!
//! ```no_run
//! use taskwire_oauth::resource::{ResourceConfig, ResourceServer};
//!
//! # async fn run() -> Result<(), String> {
//! let mut config = ResourceConfig::new("https://mcp.example.com/mcp", "https://auth.example.com");
//! config.method_scopes.insert("tasks/cancel".into(), vec!["tasks:write".into()]);
//! let server = ResourceServer::new(config)?;
//! match server.authorize(["Bearer eyJhbGciOi".as_bytes()]).await {
//!     Ok(caller) => println!("tasks of {}", caller.owner()),
//!     Err(denial) => println!("{}: {}", denial.status(), server.challenge(&denial)),
//! }
//! # Ok(())
//! # }
//! ```

mod bearer;
mod caller;
mod config;
mod denial;
mod fetch;
mod introspection;
mod issuer;
mod jwks;
mod jwt;
mod metadata;

use std::sync::Arc;

use serde_json::Value;

pub use caller::Caller;
pub use config::{ResourceConfig, TokenCheck};
pub use denial::Denial;

use denial::quotable;
use fetch::Fetcher;
use introspection::Introspector;
use jwks::KeySet;

/// An MCP server as an OAuth resource server: shared by all its requests (it keeps the
/// issuer's keys, or introspection answers, for them).
pub struct ResourceServer {
    config: ResourceConfig,
    resource: url::Url,
    check: Check,
}

/// How tokens are checked, with what it keeps.
enum Check {
    Jwt(Arc<KeySet>),
    Introspection(Box<Introspector>),
}

impl ResourceServer {
    /// A resource server as `config` says. `Err` when its `resource` or `issuer` is no
    /// absolute `http(s)` URL.
    pub fn new(config: ResourceConfig) -> Result<Self, String> {
        let resource = absolute(&config.resource, "ResourceConfig::resource")?;
        absolute(&config.issuer, "ResourceConfig::issuer")?;
        let fetcher = Fetcher::new(config.fetch_timeout, config.max_document_bytes);
        let check = match &config.tokens {
            TokenCheck::Jwt => Check::Jwt(Arc::new(KeySet::new(
                fetcher,
                config.issuer.clone(),
                config.jwks_refetch_interval,
                config.jwks_max_age,
            ))),
            TokenCheck::Introspection {
                client_id,
                client_secret,
            } => Check::Introspection(Box::new(Introspector::new(
                fetcher,
                client_id.clone(),
                client_secret.clone(),
            ))),
        };
        Ok(ResourceServer {
            config,
            resource,
            check,
        })
    }

    /// Its settings.
    pub fn config(&self) -> &ResourceConfig {
        &self.config
    }

    /// Reads the issuer's keys now (JWT validation; nothing for introspection), so the
    /// first request does not wait for them. A failure is logged; the keys are read again
    /// when a token needs them.
    pub async fn prefetch(&self) {
        if let Check::Jwt(keys) = &self.check {
            keys.prefetch().await;
        }
    }

    /// Who the request with these `Authorization` header values speaks for, or why it is
    /// refused. Only the first scopes check is here ([`ResourceConfig::scopes_required`]);
    /// a method's own are [`ResourceServer::permits`]'s.
    pub async fn authorize<'a>(
        &self,
        authorization: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Caller, Denial> {
        let token = bearer::token(authorization, self.config.max_token_bytes)
            .inspect_err(|denial| tracing::debug!(%denial, "refused a request's credentials"))?;
        let caller = match &self.check {
            Check::Jwt(keys) => jwt::verify(token, keys, &self.config).await,
            Check::Introspection(introspector) => introspector.verify(token, &self.config).await,
        };
        let caller = caller.inspect_err(|denial| {
            tracing::debug!(%denial, "refused an access token");
        })?;
        tracing::debug!(
            subject = %caller.subject,
            client = caller.client_id.as_deref().unwrap_or(""),
            "admitted an access token"
        );
        let lacking = caller.lacks(&self.config.scopes_required);
        if !lacking.is_empty() {
            return Err(Denial::InsufficientScope(
                self.config.scopes_required.clone(),
            ));
        }
        Ok(caller)
    }

    /// Whether `caller` may call `method`: `Err` names every scope the method needs when the
    /// token lacks one of them.
    pub fn permits(&self, caller: &Caller, method: &str) -> Result<(), Denial> {
        let Some(needed) = self.config.method_scopes.get(method) else {
            return Ok(());
        };
        if caller.lacks(needed).is_empty() {
            return Ok(());
        }
        let mut scopes = self.config.scopes_required.clone();
        scopes.extend(needed.iter().cloned());
        tracing::debug!(
            method,
            ?scopes,
            "refused a method the token has no scope for"
        );
        Err(Denial::InsufficientScope(scopes))
    }

    /// The `WWW-Authenticate` value of a refusal: `Bearer` with the metadata's URL, the
    /// scopes to ask for, and the error with its description.
    pub fn challenge(&self, denial: &Denial) -> String {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}\"",
            metadata::url(&self.resource)
        );
        let scopes = match denial {
            Denial::InsufficientScope(scopes) => scopes.clone(),
            _ => self.config.scopes_required.clone(),
        };
        if !scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", quotable(&scopes.join(" "))));
        }
        if let Some(code) = denial.error_code() {
            challenge.push_str(&format!(", error=\"{code}\""));
            let description = match denial {
                Denial::Malformed(why) | Denial::Invalid(why) => why.clone(),
                _ => denial.to_string(),
            };
            challenge.push_str(&format!(
                ", error_description=\"{}\"",
                quotable(&description)
            ));
        }
        challenge
    }

    /// The Protected Resource Metadata document (RFC 9728).
    pub fn metadata(&self) -> Value {
        metadata::document(&self.config)
    }

    /// The paths the metadata is served at: the well-known path with the resource's path
    /// appended (the one challenges name), and the bare well-known path.
    pub fn metadata_paths(&self) -> Vec<String> {
        let mut paths = vec![metadata::path(&self.resource)];
        if paths[0] != metadata::root_path() {
            paths.push(metadata::root_path().to_owned());
        }
        paths
    }
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// `text` as an absolute `http(s)` URL, or why it is not one.
fn absolute(text: &str, field: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| format!("{field} {text:?} is no URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!("{field} {text:?} is no http(s) URL"));
    }
    Ok(url)
}

//! `--http ADDR` for the demo servers: the same server over Streamable HTTP at
//! `http://ADDR/mcp`, on a multi-threaded tokio runtime, reporting sessions on stderr
//! (`RUST_LOG`, default `info`); `--auth-*` makes it an OAuth resource server, `--cors-origin`
//! lets web pages of other origins call it.

use std::io;
use std::sync::Arc;

use taskwire_driver::Server;
use taskwire_http::oauth::resource::ResourceServer;
use taskwire_http::{AllowedHosts, Cors, HttpConfig};

/// The demo's HTTP settings: the defaults, as an OAuth resource server when `oauth` is set
/// (then the host of its resource URL is allowed besides the loopback names).
pub fn config(oauth: Option<ResourceServer>) -> HttpConfig {
    let Some(oauth) = oauth else {
        return HttpConfig::default();
    };
    let host = url::Url::parse(&oauth.config().resource)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned));
    let allowed_hosts = match host {
        Some(host) if !matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]") => {
            AllowedHosts::Only(vec![
                host,
                "localhost".into(),
                "127.0.0.1".into(),
                "[::1]".into(),
            ])
        }
        _ => AllowedHosts::Localhost,
    };
    HttpConfig {
        allowed_hosts,
        oauth: Some(Arc::new(oauth)),
        ..HttpConfig::default()
    }
}

/// Serves `server` at `http://{address}/mcp` with `config` until Ctrl-C or SIGTERM.
pub fn serve(server: Server, address: &str, config: HttpConfig) -> io::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let listener = tokio::net::TcpListener::bind(address).await?;
            taskwire_http::serve(listener, server, config).await
        })
}

/// `--auth-*`: the HTTP server as an OAuth resource server (`task-server --http`).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct Auth {
    /// Wants an OAuth access token from this authorization server (its issuer URL) on every
    /// request: a JWT checked against its JWKS, or with `--auth-introspection` an opaque
    /// token it introspects. Needs `--auth-audience`.
    #[arg(long, value_name = "URL", requires = "auth_audience")]
    pub auth_issuer: Option<String>,
    /// This server's canonical URL (e.g. http://127.0.0.1:3000/mcp): tokens must name it as
    /// their audience, and clients ask for tokens for it.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub auth_audience: Option<String>,
    /// Scopes tokens need: `SCOPE` for every request, `METHOD=SCOPE` for one JSON-RPC
    /// method (e.g. `tasks/cancel=tasks:write`); several, space- or comma-separated.
    #[arg(long, value_name = "SCOPE", num_args = 1.., value_delimiter = ',', requires = "auth_issuer")]
    pub auth_scopes: Vec<String>,
    /// How far this server's clock and the issuer's may disagree when a token's expiry is
    /// checked, in seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 60,
        requires = "auth_issuer"
    )]
    pub auth_clock_skew: u64,
    /// Introspects opaque tokens (RFC 7662) as this client id; its secret is read from
    /// TASKWIRE_AUTH_CLIENT_SECRET.
    #[arg(long, value_name = "CLIENT_ID", requires = "auth_issuer")]
    pub auth_introspection: Option<String>,
}

impl Auth {
    /// The resource server these flags describe (`None` without `--auth-issuer`), or what is
    /// wrong with them.
    pub fn resource_server(
        &self,
    ) -> Result<Option<taskwire_http::oauth::resource::ResourceServer>, String> {
        use taskwire_http::oauth::resource::{ResourceConfig, ResourceServer, TokenCheck};
        let (Some(issuer), Some(audience)) = (&self.auth_issuer, &self.auth_audience) else {
            return Ok(None);
        };
        let mut config = ResourceConfig::new(audience, issuer);
        config.clock_skew = std::time::Duration::from_secs(self.auth_clock_skew);
        for entry in self.auth_scopes.iter().flat_map(|s| s.split_whitespace()) {
            match entry.split_once('=') {
                Some((method, scope)) if !method.is_empty() && !scope.is_empty() => config
                    .method_scopes
                    .entry(method.to_owned())
                    .or_default()
                    .push(scope.to_owned()),
                Some(_) => return Err(format!("--auth-scopes {entry:?}: write METHOD=SCOPE")),
                None => config.scopes_required.push(entry.to_owned()),
            }
        }
        if let Some(client_id) = &self.auth_introspection {
            let client_secret = std::env::var("TASKWIRE_AUTH_CLIENT_SECRET").map_err(|_| {
                "--auth-introspection: set TASKWIRE_AUTH_CLIENT_SECRET to the client's secret"
                    .to_owned()
            })?;
            config.tokens = TokenCheck::Introspection {
                client_id: client_id.clone(),
                client_secret,
            };
        }
        ResourceServer::new(config).map(Some)
    }
}

/// `--cors-origin`: the HTTP server's CORS policy (`task-server --http`).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct CorsOrigins {
    /// Lets web pages of this origin (e.g. http://127.0.0.1:5173) call the server from a
    /// browser (CORS); repeat it for several, or give `*` for any. Without it the server sends
    /// no CORS headers.
    #[arg(long = "cors-origin", value_name = "ORIGIN", requires = "http")]
    pub cors_origins: Vec<String>,
}

impl CorsOrigins {
    /// The policy these flags describe (`None` without `--cors-origin`), or which origin is
    /// no web origin.
    pub fn policy(&self) -> Result<Option<Cors>, String> {
        if self.cors_origins.is_empty() {
            return Ok(None);
        }
        if self.cors_origins.iter().any(|origin| origin == "*") {
            return Ok(Some(Cors::any()));
        }
        let mut origins = Vec::new();
        for origin in &self.cors_origins {
            let parsed = url::Url::parse(origin)
                .map(|url| url.origin())
                .ok()
                .filter(url::Origin::is_tuple)
                .ok_or_else(|| {
                    format!("--cors-origin {origin:?}: write SCHEME://HOST[:PORT], or '*'")
                })?;
            origins.push(parsed.ascii_serialization());
        }
        Ok(Some(Cors::origins(origins)))
    }
}

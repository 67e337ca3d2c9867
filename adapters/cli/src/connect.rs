//! Reaching the server a command names: a stdio server started from `-- CMD ARGS…`, or a
//! Streamable HTTP endpoint (`--url`, `--header`), in the era asked for; the handshake.

use std::os::unix::process::CommandExt;
use std::sync::Arc;

use serde_json::json;
use taskwire_driver::engine::{ClientEra, Config, Era};
use taskwire_driver::{Child, ChildProcess, Client, ClientBuilder, Error, Initialized, Runtime};
use taskwire_http::HttpClient;
use taskwire_tokio::Tokio;

use crate::args::ServerArgs;
use crate::display::Display;
use crate::sign_in::SetUp;

/// A client connected to the server, initialized.
pub struct Connected {
    pub client: Client,
    /// The handshake's outcome.
    pub server: Initialized,
    _child: ChildGuard,
}

/// The server's process when this started it: killed when the command ends.
struct ChildGuard(Option<Box<dyn ChildProcess>>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            let _ = child.kill();
        }
    }
}

/// Why a command could not reach its server.
pub enum Unreached {
    /// The command line does not name one (or names it wrongly): a usage error.
    Usage(String),
    /// The server's program could not be started.
    Start(String),
    /// The server did not answer, or did not agree.
    Failed(Error),
}

/// The client configuration for `server`.
pub fn config(server: &ServerArgs) -> Config {
    let mut config = Config::new("taskwire", env!("CARGO_PKG_VERSION"));
    config.client_era = match server.era.as_str() {
        "2025-11-25" => ClientEra::Only(Era::V2025_11_25),
        "2026-07-28" => ClientEra::Only(Era::V2026_07_28),
        _ => ClientEra::Auto,
    };
    config.request_timeout_ms = Some(server.request_timeout_ms);
    config
}

/// Connects `builder` to the server `server` names, opens the session, and says so.
pub async fn connect(
    server: &ServerArgs,
    builder: ClientBuilder,
    display: &Display,
) -> Result<Connected, Unreached> {
    let connected = open(server, builder).await?;
    let opened = &connected.server;
    display.event(
        json!({ "event": "connected", "server": opened.server, "protocol": opened.protocol_version }),
        || {
            format!(
                "connected to {} {} (protocol {})",
                opened.server.name, opened.server.version, opened.protocol_version
            )
        },
    );
    Ok(connected)
}

/// Connects `builder` to the server `server` names, and opens the session.
pub async fn open(server: &ServerArgs, builder: ClientBuilder) -> Result<Connected, Unreached> {
    let (client, child) = match (&server.url, server.command.split_first()) {
        (Some(_), Some(_)) => {
            return Err(Unreached::Usage(
                "name the server once: --url URL or -- CMD ARGS…, not both".into(),
            ))
        }
        (None, None) => {
            return Err(Unreached::Usage(
                "name the server: -- CMD ARGS… (a stdio server) or --url URL".into(),
            ))
        }
        (Some(url), None) => {
            let mut http = HttpClient::new(url.clone());
            for header in &server.headers {
                let (name, value) = header.split_once(':').ok_or_else(|| {
                    Unreached::Usage(format!("--header {header:?} is not NAME: VALUE"))
                })?;
                http = http
                    .header(name.trim(), value.trim())
                    .map_err(Unreached::Usage)?;
            }
            let oauth = crate::sign_in::oauth(server).map_err(|set_up| match set_up {
                SetUp::NoSecret(why) => Unreached::Usage(why),
                SetUp::NoListener(e) => {
                    Unreached::Start(format!("cannot listen for the sign-in's redirect: {e}"))
                }
            })?;
            if let Some(oauth) = oauth {
                http = http.oauth(oauth);
            }
            (http.connect(builder), None)
        }
        (None, Some((program, args))) => {
            let child = start(program, args)?;
            let client = builder.connect(Arc::new(Tokio), child.stdout, child.stdin);
            (client, Some(child.process))
        }
    };
    handshake(client, child).await
}

/// Starts the stdio server `program` with `args`, in a process group of its own (Ctrl-C in
/// the terminal is for us, who cancel the task, not for the server).
pub fn start(program: &str, args: &[String]) -> Result<Child, Unreached> {
    let mut command = std::process::Command::new(program);
    command.args(args).process_group(0);
    Tokio
        .spawn_child(command)
        .map_err(|e| Unreached::Start(format!("cannot start {program:?}: {e}")))
}

/// Opens the session of `client` (connected to the server `child` is the process of, when
/// this started it).
pub async fn handshake(
    client: Client,
    child: Option<Box<dyn ChildProcess>>,
) -> Result<Connected, Unreached> {
    let child = ChildGuard(child);
    let opened = client.initialize().await.map_err(Unreached::Failed)?;
    Ok(Connected {
        client,
        server: opened,
        _child: child,
    })
}

//! Signing in to a server that wants OAuth (`--url`): the browser opens on the authorization
//! server's page (the URL is printed too, for a machine without one), the redirect comes back
//! to a loopback port, and the tokens are kept per server in a file only the user reads, so
//! the next command needs no sign-in (an expired token is refreshed). `--client-credentials`
//! signs in as a machine instead. `taskwire logout URL` forgets a server's tokens.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use taskwire_http::oauth::client::{FileStore, Loopback, OAuthClient};

use crate::args::ServerArgs;

/// Why the command cannot sign in as asked.
pub enum SetUp {
    /// `--client-credentials` without its secret: a usage error.
    NoSecret(String),
    /// The loopback port for the redirect could not be had.
    NoListener(io::Error),
}

/// Where the secret of `--client-credentials` is read from.
pub const CLIENT_SECRET_ENV: &str = "TASKWIRE_CLIENT_SECRET";
/// Where the token file is, when set.
pub const TOKENS_ENV: &str = "TASKWIRE_TOKENS";

/// The OAuth client for the server `server` names, or `None` when the command sends an
/// `Authorization` header of its own.
pub fn oauth(server: &ServerArgs) -> Result<Option<OAuthClient>, SetUp> {
    let own_header = server.headers.iter().any(|h| {
        h.split_once(':')
            .is_some_and(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"))
    });
    if own_header {
        return Ok(None);
    }
    if let Some(client_id) = &server.client_credentials {
        let secret = std::env::var(CLIENT_SECRET_ENV).map_err(|_| {
            SetUp::NoSecret(format!(
                "--client-credentials {client_id}: set {CLIENT_SECRET_ENV} to the client's secret"
            ))
        })?;
        return Ok(Some(OAuthClient::client_credentials(
            client_id.clone(),
            secret,
        )));
    }
    let agent = Loopback::bind(open).map_err(SetUp::NoListener)?;
    Ok(Some(
        OAuthClient::new(agent)
            .name("taskwire")
            .store(FileStore::new(token_file())),
    ))
}

/// `taskwire logout URL`: forgets the server's tokens.
pub fn logout(url: &str) -> io::Result<bool> {
    FileStore::new(token_file()).forget(url)
}

/// The token file: `$TASKWIRE_TOKENS`, else `$XDG_CONFIG_HOME/taskwire/tokens.json`, else
/// `~/.config/taskwire/tokens.json` (`./.taskwire-tokens.json` without a home).
pub fn token_file() -> PathBuf {
    if let Some(path) = std::env::var_os(TOKENS_ENV) {
        return PathBuf::from(path);
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")));
    match config {
        Some(dir) => dir.join("taskwire").join("tokens.json"),
        None => PathBuf::from(".taskwire-tokens.json"),
    }
}

/// Shows the user the authorization URL: printed on stderr, and opened in the browser
/// (`$BROWSER`, else the desktop's) when there is one.
fn open(url: &url::Url) -> io::Result<()> {
    let mut stderr = io::stderr();
    writeln!(stderr, "taskwire: sign in at {url}")?;
    let mut options = webbrowser::BrowserOptions::new();
    options.with_suppress_output(true);
    let browser = webbrowser::Browser::Default;
    if let Err(e) = webbrowser::open_browser_with_options(browser, url.as_str(), &options) {
        let hint = match stderr.is_terminal() {
            true => "open the URL above in a browser",
            false => "open the URL above in a browser on this machine",
        };
        writeln!(stderr, "taskwire: no browser opened ({e}): {hint}")?;
    }
    Ok(())
}

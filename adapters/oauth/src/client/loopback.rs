//! A user agent for people: the redirect comes back to a port of 127.0.0.1 this process
//! listens on (RFC 8252 §7.3), the authorization URL is opened by the caller's opener (a
//! browser, or a printed line), and the browser gets a page saying it can be closed.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

use super::error::OAuthError;
use super::user_agent::{AuthorizationResponse, BoxFuture, UserAgent};

/// How long to wait for the user by default.
const TIMEOUT: Duration = Duration::from_secs(300);
/// The most of a browser's request read (its request line and headers).
const REQUEST_LIMIT: usize = 16 * 1024;
/// The path of the redirect URI.
const CALLBACK: &str = "/callback";
/// What the browser shows once the redirect came.
const DONE: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Signed in</title>\
    </head><body><p>Signed in. You can close this page.</p></body></html>";

/// What opens the authorization URL for the user.
pub type Opener = Arc<dyn Fn(&Url) -> io::Result<()> + Send + Sync>;

/// A user agent that receives the redirect on `http://127.0.0.1:PORT/callback`.
pub struct Loopback {
    listener: StdListener,
    port: u16,
    opener: Opener,
    timeout: Duration,
}

impl std::fmt::Debug for Loopback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loopback")
            .field("port", &self.port)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Loopback {
    /// Listens on a free port of 127.0.0.1 (kept for the life of the value, so the redirect
    /// URI stays the one registered); `opener` shows the user each authorization URL.
    pub fn bind(
        opener: impl Fn(&Url) -> io::Result<()> + Send + Sync + 'static,
    ) -> io::Result<Self> {
        Loopback::bind_port(0, opener)
    }

    /// As [`Loopback::bind`], on `port` (for an authorization server that wants the
    /// registered redirect URI's port exactly).
    pub fn bind_port(
        port: u16,
        opener: impl Fn(&Url) -> io::Result<()> + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let listener = StdListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        Ok(Loopback {
            listener,
            port,
            opener: Arc::new(opener),
            timeout: TIMEOUT,
        })
    }

    /// How long to wait for the user to come back (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Waits for the browser's request to the callback path; answers others `404`.
    async fn callback(&self, listener: &TcpListener) -> io::Result<AuthorizationResponse> {
        loop {
            let (mut stream, _) = listener.accept().await?;
            let Some(target) = request_target(&mut stream).await else {
                continue;
            };
            let Ok(url) = Url::parse(&format!("http://127.0.0.1{target}")) else {
                continue;
            };
            if url.path() != CALLBACK {
                let _ = respond(&mut stream, "404 Not Found", "not here").await;
                continue;
            }
            let _ = respond(&mut stream, "200 OK", DONE).await;
            return Ok(AuthorizationResponse::from_redirect(&url));
        }
    }
}

impl UserAgent for Loopback {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK}", self.port)
    }

    fn authorize<'a>(
        &'a self,
        url: &'a Url,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(async move {
            let failed = |e: io::Error| {
                OAuthError::Authorization(format!("the loopback listener failed: {e}"))
            };
            let listener = TcpListener::from_std(self.listener.try_clone().map_err(failed)?)
                .map_err(failed)?;
            (self.opener)(url).map_err(|e| {
                OAuthError::Authorization(format!("cannot open the authorization URL {url}: {e}"))
            })?;
            match tokio::time::timeout(self.timeout, self.callback(&listener)).await {
                Ok(response) => response.map_err(failed),
                Err(_) => Err(OAuthError::Authorization(format!(
                    "nobody came back to {} within {} s: open the authorization URL in a \
                     browser, or give more time (Loopback::timeout)",
                    self.redirect_uri(),
                    self.timeout.as_secs()
                ))),
            }
        })
    }
}

/// The target of one HTTP request (`/callback?code=…`), read up to the end of its headers.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut read = Vec::new();
    let mut buffer = [0u8; 2048];
    while !read.windows(4).any(|w| w == b"\r\n\r\n") && read.len() < REQUEST_LIMIT {
        let n = stream.read(&mut buffer).await.ok()?;
        if n == 0 {
            break;
        }
        read.extend_from_slice(&buffer[..n]);
    }
    let text = String::from_utf8_lossy(&read);
    let mut line = text.lines().next()?.split(' ');
    match (line.next(), line.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    }
}

/// Answers the browser with a small HTML page.
async fn respond(stream: &mut TcpStream, status: &str, body: &str) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_redirect_to_the_loopback_port_comes_back_and_the_browser_is_answered() {
        let agent = Loopback::bind(|_| Ok(())).unwrap();
        let redirect = agent.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
        let port = agent.port;
        let browser = tokio::spawn(async move {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let request = "GET /callback?code=c1&state=s1&iss=https%3A%2F%2Fas HTTP/1.1\r\n\r\n";
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut page = String::new();
            stream.read_to_string(&mut page).await.unwrap();
            page
        });
        let url = Url::parse("https://as.example/authorize").unwrap();
        let response = agent.authorize(&url).await.unwrap();
        assert_eq!(response.code.as_deref(), Some("c1"));
        assert_eq!(response.state.as_deref(), Some("s1"));
        assert_eq!(response.iss.as_deref(), Some("https://as"));
        let page = browser.await.unwrap();
        assert!(page.starts_with("HTTP/1.1 200 OK") && page.contains("close this page"));
    }

    #[tokio::test]
    async fn nobody_coming_back_ends_in_time_with_what_to_do() {
        let agent = Loopback::bind(|_| Ok(()))
            .unwrap()
            .timeout(Duration::from_millis(50));
        let url = Url::parse("https://as.example/authorize").unwrap();
        let error = agent.authorize(&url).await.unwrap_err().to_string();
        assert!(error.contains("Loopback::timeout"), "{error}");
    }
}

//! A user agent for people: the redirect comes back to a port of 127.0.0.1 this process
//! listens on (RFC 8252 §7.3), the authorization URL is opened by the caller's opener (a
//! browser, or a printed line), and the browser gets a page saying it can be closed.

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use url::Url;

use super::error::OAuthError;
use super::user_agent::{AuthorizationResponse, BoxFuture, UserAgent};

/// How long to wait for the user by default.
const TIMEOUT: Duration = Duration::from_secs(300);
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

    /// Waits for the browser's request to the callback path; answers others `404`. Each
    /// connection is served on its own (one that sends nothing holds up no other).
    async fn callback(&self, listener: &TcpListener) -> io::Result<AuthorizationResponse> {
        let (came, mut received) = mpsc::channel(1);
        let accepting = async {
            loop {
                let (stream, _) = listener.accept().await?;
                let came = came.clone();
                let service = service_fn(move |request| {
                    let answer = answer(&request, &came);
                    async move { Ok::<_, Infallible>(answer) }
                });
                tokio::spawn(async move {
                    let connection = http1::Builder::new()
                        .keep_alive(false)
                        .serve_connection(TokioIo::new(stream), service);
                    if let Err(e) = connection.await {
                        tracing::debug!(error = %e, "a connection to the loopback redirect failed");
                    }
                });
            }
        };
        tokio::select! {
            failed = accepting => failed,
            Some(response) = received.recv() => Ok(response),
        }
    }
}

/// The answer to one request to the loopback port: the redirect's query handed on, and a page
/// saying the browser can be closed; anything else `404`.
fn answer(
    request: &Request<Incoming>,
    came: &mpsc::Sender<AuthorizationResponse>,
) -> Response<Full<Bytes>> {
    let redirect = (request.method() == Method::GET && request.uri().path() == CALLBACK)
        .then(|| Url::parse(&format!("http://127.0.0.1{}", request.uri())).ok())
        .flatten();
    let Some(redirect) = redirect else {
        return page(StatusCode::NOT_FOUND, "not here");
    };
    let _ = came.try_send(AuthorizationResponse::from_redirect(&redirect));
    page(StatusCode::OK, DONE)
}

fn page(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    #[tokio::test]
    async fn the_redirect_to_the_loopback_port_comes_back_and_the_browser_is_answered() {
        let agent = Loopback::bind(|_| Ok(())).unwrap();
        let redirect = agent.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
        let port = agent.port;
        // A connection that never sends a request holds up nobody.
        let _idle = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let browser = tokio::spawn(async move {
            let mut stray = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            stray
                .write_all(b"GET /favicon.ico HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .unwrap();
            let mut refused = String::new();
            stray.read_to_string(&mut refused).await.unwrap();
            assert!(refused.starts_with("HTTP/1.1 404"), "{refused}");
            let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let request =
                "GET /callback?code=c1&state=s1&iss=https%3A%2F%2Fas HTTP/1.1\r\nhost: x\r\n\r\n";
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

//! The interactive step of the authorization code flow: someone (a browser, a test) opens the
//! authorization URL, the user signs in, and the authorization server redirects back with the
//! code. [`UserAgent`] is that step; [`Headless`] follows a server that redirects at once.

use std::future::Future;
use std::pin::Pin;

use url::Url;

use super::error::OAuthError;

/// A boxed future, as [`UserAgent`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What came back on the redirect URI (RFC 6749 §4.1.2, RFC 9207).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// The authorization code.
    pub code: Option<String>,
    /// The `state` the request carried.
    pub state: Option<String>,
    /// The issuer of the response (RFC 9207).
    pub iss: Option<String>,
    /// An error code instead of a code (e.g. `access_denied`).
    pub error: Option<String>,
    /// The server's words about the error.
    pub error_description: Option<String>,
}

impl AuthorizationResponse {
    /// The response a redirect to `url` carries in its query.
    pub fn from_redirect(url: &Url) -> Self {
        let mut response = AuthorizationResponse::default();
        for (name, value) in url.query_pairs() {
            let slot = match name.as_ref() {
                "code" => &mut response.code,
                "state" => &mut response.state,
                "iss" => &mut response.iss,
                "error" => &mut response.error,
                "error_description" => &mut response.error_description,
                _ => continue,
            };
            *slot = Some(value.into_owned());
        }
        response
    }
}

/// Takes the user through the authorization URL and brings back the redirect.
pub trait UserAgent: Send + Sync + 'static {
    /// Where the authorization server sends the user back (registered with the client).
    fn redirect_uri(&self) -> String;

    /// Opens `url` for the user and waits for the redirect to [`Self::redirect_uri`].
    fn authorize<'a>(
        &'a self,
        url: &'a Url,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>>;
}

/// A user agent without a user: it GETs the authorization URL and reads the redirect's
/// `Location`. For authorization servers that redirect at once (test servers, an already
/// granted consent); one that shows a login page fails with a message saying so.
#[derive(Clone, Debug)]
pub struct Headless {
    redirect_uri: String,
    http: reqwest::Client,
}

impl Headless {
    /// A headless user agent whose redirect URI is `redirect_uri` (nothing listens there:
    /// the redirect is read, not followed).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        Headless {
            redirect_uri: redirect_uri.into(),
            http: super::http::client(),
        }
    }
}

impl Default for Headless {
    /// Redirects to `http://127.0.0.1/callback`.
    fn default() -> Self {
        Headless::new("http://127.0.0.1/callback")
    }
}

impl UserAgent for Headless {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(
        &'a self,
        url: &'a Url,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(async move {
            let response = self.http.get(url.clone()).send().await.map_err(|e| {
                OAuthError::Authorization(format!("cannot GET the authorization URL: {e}"))
            })?;
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .filter(|_| response.status().is_redirection());
            let Some(location) = location else {
                return Err(OAuthError::Authorization(format!(
                    "the authorization server answered {} instead of redirecting: it wants a \
                     user, so sign in with a browser (Loopback) instead of Headless",
                    response.status()
                )));
            };
            let redirect = url.join(location).map_err(|e| {
                OAuthError::Authorization(format!("an unreadable redirect {location:?}: {e}"))
            })?;
            Ok(AuthorizationResponse::from_redirect(&redirect))
        })
    }
}

//! OAuth on the client's requests (`HttpClient::oauth`): each carries the current access
//! token; a `401`, or a `403` with `insufficient_scope`, signs in (or steps up) and sends the
//! request again, a bounded number of times. Without OAuth a request is sent as it is.

use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use taskwire_oauth::client::{Challenge, OAuthError};

use super::Transport;

/// Why a request got no response.
pub(super) enum Unsent {
    /// It could not be sent, or no response came.
    Http(reqwest::Error),
    /// The server wants a sign-in, and it failed.
    SignIn(OAuthError),
}

impl Transport {
    /// Sends the request `build` makes, with the access token when OAuth is on; a Bearer
    /// challenge signs in and sends it again, at most `1 + max_step_ups` times.
    pub(super) async fn send(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, Unsent> {
        let Some(oauth) = &self.endpoint.oauth else {
            return build().send().await.map_err(Unsent::Http);
        };
        let url = &self.endpoint.url;
        let mut token = oauth.access_token(url).await;
        let mut signed_in = 0;
        loop {
            let response = with_token(build(), token.as_deref())
                .send()
                .await
                .map_err(Unsent::Http)?;
            let status = response.status();
            if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
                || signed_in > oauth.max_step_ups()
            {
                return Ok(response);
            }
            let values = response.headers().get_all(WWW_AUTHENTICATE);
            let challenge = Challenge::from_headers(values.iter().filter_map(|v| v.to_str().ok()));
            let challenge = match (status, challenge) {
                (StatusCode::FORBIDDEN, Some(c)) if c.insufficient_scope() => c,
                (StatusCode::UNAUTHORIZED, challenge) => challenge.unwrap_or_default(),
                // A 403 for another reason: more scopes would not help.
                _ => return Ok(response),
            };
            signed_in += 1;
            let fresh = oauth.challenged(url, token.as_deref(), &challenge).await;
            token = Some(fresh.map_err(Unsent::SignIn)?);
        }
    }

    /// The access token to send now, without signing in (for a `DELETE`).
    pub(super) async fn current_token(&self) -> Option<String> {
        let oauth = self.endpoint.oauth.as_ref()?;
        oauth.access_token(&self.endpoint.url).await
    }
}

/// `request` with `Authorization: Bearer token` (replacing one given with `header`).
pub(super) fn with_token(
    request: reqwest::RequestBuilder,
    token: Option<&str>,
) -> reqwest::RequestBuilder {
    let Some(value) = token.and_then(|t| HeaderValue::from_str(&format!("Bearer {t}")).ok()) else {
        return request;
    };
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, value);
    request.headers(headers)
}

impl std::fmt::Display for Unsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsent::Http(e) => write!(f, "{e}"),
            Unsent::SignIn(e) => write!(f, "signing in failed: {e}"),
        }
    }
}

//! The HTTP client of OAuth requests: it follows no redirect (a metadata or token request
//! sent elsewhere by a redirect could be steered at internal addresses) and gives up on a
//! server that does not answer.

use std::time::Duration;

/// How long one OAuth request may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A client for discovery, registration and token requests.
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .build()
        .expect("the TLS backend initializes (as for reqwest::Client::new)")
}

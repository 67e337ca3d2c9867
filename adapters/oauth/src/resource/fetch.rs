//! Documents from the authorization server, bounded in time and size: an endpoint that hangs
//! or sends too much fails the fetch instead of holding the requests that wait for it.

use std::time::Duration;

use serde_json::Value;

/// Reads JSON documents within limits.
#[derive(Clone, Debug)]
pub(crate) struct Fetcher {
    http: reqwest::Client,
    timeout: Duration,
    max_bytes: usize,
}

impl Fetcher {
    /// A fetcher whose requests each take at most `timeout` and `max_bytes`; redirects are
    /// not followed (the documents' URLs are the issuer's own).
    pub fn new(timeout: Duration, max_bytes: usize) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a client without custom TLS settings builds");
        Fetcher {
            http,
            timeout,
            max_bytes,
        }
    }

    /// The JSON document at `url`; `Err` says why there is none.
    pub async fn get(&self, url: &str) -> Result<Value, String> {
        self.send(self.http.get(url), url).await
    }

    /// The JSON answer to a form POST to `url` with HTTP Basic credentials.
    pub async fn post_form(
        &self,
        url: &str,
        user: &str,
        password: &str,
        form: &[(&str, &str)],
    ) -> Result<Value, String> {
        let request = self
            .http
            .post(url)
            .basic_auth(user, Some(password))
            .form(form);
        self.send(request, url).await
    }

    async fn send(&self, request: reqwest::RequestBuilder, url: &str) -> Result<Value, String> {
        let read = async {
            let mut response = request
                .header(reqwest::header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| format!("cannot reach {url}: {e}"))?;
            if !response.status().is_success() {
                return Err(format!("{url} answered HTTP {}", response.status()));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| format!("reading {url}: {e}"))?
            {
                if body.len() + chunk.len() > self.max_bytes {
                    return Err(format!(
                        "{url} sent more than {} bytes (ResourceConfig::max_document_bytes)",
                        self.max_bytes
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            serde_json::from_slice(&body).map_err(|e| format!("{url} sent no JSON document: {e}"))
        };
        match tokio::time::timeout(self.timeout, read).await {
            Ok(read) => read,
            Err(_) => Err(format!(
                "{url} did not answer within {:?} (ResourceConfig::fetch_timeout)",
                self.timeout
            )),
        }
    }
}

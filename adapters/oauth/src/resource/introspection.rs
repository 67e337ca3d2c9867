//! Opaque access tokens, asked about at the issuer's introspection endpoint (RFC 7662); each
//! answer kept a short while, so a client's requests cost one introspection per interval.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::caller::{scopes, Caller};
use super::fetch::Fetcher;
use super::{issuer, Denial, ResourceConfig};

/// The endpoint, this server's credentials there, and the answers kept.
pub(crate) struct Introspector {
    fetcher: Fetcher,
    client_id: String,
    client_secret: String,
    endpoint: tokio::sync::Mutex<Option<String>>,
    answers: Mutex<Answers>,
}

/// Answers by token, oldest first.
#[derive(Default)]
struct Answers {
    by_token: HashMap<String, (Instant, Result<Caller, Denial>)>,
    order: VecDeque<String>,
}

impl Introspector {
    pub fn new(fetcher: Fetcher, client_id: String, client_secret: String) -> Self {
        Introspector {
            fetcher,
            client_id,
            client_secret,
            endpoint: tokio::sync::Mutex::new(None),
            answers: Mutex::default(),
        }
    }

    /// The caller `token` speaks for, as the issuer says (or said within the cache time).
    pub async fn verify(&self, token: &str, config: &ResourceConfig) -> Result<Caller, Denial> {
        if let Some(answer) = self.kept(token) {
            return answer;
        }
        let endpoint = self.endpoint(config).await?;
        let form = [("token", token), ("token_type_hint", "access_token")];
        let answer = match self
            .fetcher
            .post_form(&endpoint, &self.client_id, &self.client_secret, &form)
            .await
        {
            Ok(document) => judge(&document, config),
            Err(why) => {
                tracing::warn!(error = %why, "token introspection failed");
                // Not kept: the next request asks again.
                return Err(Denial::Invalid(format!(
                    "the authorization server could not be asked about it ({why})"
                )));
            }
        };
        self.keep(token, &answer, config);
        answer
    }

    async fn endpoint(&self, config: &ResourceConfig) -> Result<String, Denial> {
        let mut endpoint = self.endpoint.lock().await;
        if let Some(known) = endpoint.as_ref() {
            return Ok(known.clone());
        }
        let metadata = issuer::discover(&self.fetcher, &config.issuer)
            .await
            .map_err(|why| Denial::Invalid(format!("it cannot be introspected: {why}")))?;
        let found = metadata.introspection_endpoint.ok_or_else(|| {
            Denial::Invalid(format!(
                "the issuer {}'s metadata names no introspection_endpoint",
                config.issuer
            ))
        })?;
        *endpoint = Some(found.clone());
        Ok(found)
    }

    fn kept(&self, token: &str) -> Option<Result<Caller, Denial>> {
        let answers = self.answers.lock().expect("not poisoned");
        let (until, answer) = answers.by_token.get(token)?;
        (Instant::now() < *until).then(|| answer.clone())
    }

    fn keep(&self, token: &str, answer: &Result<Caller, Denial>, config: &ResourceConfig) {
        let mut answers = self.answers.lock().expect("not poisoned");
        while answers.by_token.len() >= config.max_cached_tokens.max(1) {
            let Some(oldest) = answers.order.pop_front() else {
                break;
            };
            answers.by_token.remove(&oldest);
        }
        let until = Instant::now() + config.introspection_cache;
        if answers
            .by_token
            .insert(token.to_owned(), (until, answer.clone()))
            .is_none()
        {
            answers.order.push_back(token.to_owned());
        }
    }
}

/// What an introspection answer says of the token: active, from the issuer, for this
/// resource, within its lifetime.
fn judge(answer: &Value, config: &ResourceConfig) -> Result<Caller, Denial> {
    if answer["active"] != Value::Bool(true) {
        return Err(Denial::Invalid("the issuer says it is not active".into()));
    }
    if let Some(issuer) = answer["iss"].as_str() {
        if issuer != config.issuer {
            return Err(Denial::Invalid(format!(
                "it was not issued by {}",
                config.issuer
            )));
        }
    }
    let audiences: Vec<&str> = match &answer["aud"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences.contains(&config.resource.as_str()) {
        return Err(Denial::Invalid(format!(
            "it is not for this resource (its aud does not name {})",
            config.resource
        )));
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let skew = config.clock_skew.as_secs();
    if answer["exp"].as_u64().is_some_and(|exp| exp + skew <= now) {
        return Err(Denial::Invalid("it has expired".into()));
    }
    if answer["nbf"].as_u64().is_some_and(|nbf| nbf > now + skew) {
        return Err(Denial::Invalid("it is not valid yet (nbf)".into()));
    }
    let Some(subject) = answer["sub"].as_str() else {
        return Err(Denial::Invalid(
            "the issuer names no subject (sub) for it".into(),
        ));
    };
    Ok(Caller {
        issuer: config.issuer.clone(),
        subject: subject.to_owned(),
        client_id: answer["client_id"].as_str().map(str::to_owned),
        scopes: scopes(answer.get("scope")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_admits_only_an_active_token_for_this_resource() {
        let config = ResourceConfig::new("https://mcp.example/mcp", "https://as.example");
        let good = json!({"active": true, "sub": "alice", "client_id": "cli",
            "aud": ["https://mcp.example/mcp"], "iss": "https://as.example", "scope": "a b"});
        let caller = judge(&good, &config).expect("admitted");
        assert_eq!(caller.subject, "alice");
        assert_eq!(caller.client_id.as_deref(), Some("cli"));
        assert_eq!(caller.scopes, ["a", "b"]);
        let refused = |change: Value| {
            let mut answer = good.clone();
            for (k, v) in change.as_object().unwrap() {
                answer[k] = v.clone();
            }
            match judge(&answer, &config) {
                Err(Denial::Invalid(why)) => why,
                other => panic!("{answer}: {other:?}"),
            }
        };
        assert!(refused(json!({"active": false})).contains("not active"));
        assert!(refused(json!({"iss": "https://evil"})).contains("not issued by"));
        assert!(refused(json!({"aud": "https://other/mcp"})).contains("not for this resource"));
        assert!(refused(json!({"aud": null})).contains("not for this resource"));
        assert!(refused(json!({"exp": 1000})).contains("expired"));
        assert!(refused(json!({"nbf": 99_999_999_999u64})).contains("not valid yet"));
        assert!(refused(json!({"sub": null})).contains("no subject"));
    }
}

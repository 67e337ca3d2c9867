//! Who a valid token speaks for, and what it allows.

/// The party a valid access token names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The token's issuer (`iss`).
    pub issuer: String,
    /// Its subject (`sub`): the user, or for a client-credentials token the client.
    pub subject: String,
    /// The client the token was issued to (`client_id`, else `azp`), when the token says.
    pub client_id: Option<String>,
    /// The scopes it grants (`scope`, or `scp`).
    pub scopes: Vec<String>,
}

impl Caller {
    /// The owner of this caller's tasks: its issuer, subject and client together, so that
    /// neither another user nor another client of the same user can see them. An opaque
    /// text (a compact JSON array); compare it, do not parse it.
    pub fn owner(&self) -> String {
        serde_json::json!([self.issuer, self.subject, self.client_id]).to_string()
    }

    /// Those of `needed` the token does not grant.
    pub fn lacks(&self, needed: &[String]) -> Vec<String> {
        needed
            .iter()
            .filter(|scope| !self.scopes.contains(scope))
            .cloned()
            .collect()
    }
}

/// A `scope` claim: one space-separated string (RFC 9068, RFC 7662), or an array (`scp`).
pub(crate) fn scopes(claim: Option<&serde_json::Value>) -> Vec<String> {
    match claim {
        Some(serde_json::Value::String(text)) => {
            text.split_whitespace().map(str::to_owned).collect()
        }
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn owners_differ_by_issuer_subject_and_client() {
        let alice = Caller {
            issuer: "https://as".into(),
            subject: "alice".into(),
            client_id: Some("cli".into()),
            scopes: vec![],
        };
        let other_client = Caller {
            client_id: Some("inspector".into()),
            ..alice.clone()
        };
        let bob = Caller {
            subject: "bob".into(),
            ..alice.clone()
        };
        assert_eq!(alice.owner(), r#"["https://as","alice","cli"]"#);
        assert_ne!(alice.owner(), other_client.owner());
        assert_ne!(alice.owner(), bob.owner());
    }

    #[test]
    fn scopes_come_as_a_string_or_an_array() {
        assert_eq!(scopes(Some(&json!("a  b"))), ["a", "b"]);
        assert_eq!(scopes(Some(&json!(["a", 3, "b"]))), ["a", "b"]);
        assert!(scopes(Some(&json!(7))).is_empty());
        assert!(scopes(None).is_empty());
    }
}

//! `elicitation/create` as Rust values: what the server asks the user, and the answer.

use serde::Serialize;
use serde_json::{json, Map, Value};
use taskwire_engine::RpcError;

/// What a server asks the user (`elicitation/create`), the same in both eras: in 2025-11-25
/// the server's request, in 2026-07-28 an entry of its `inputRequests`.
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitationRequest {
    /// The question, for the user to read (empty when the server sent none).
    pub message: String,
    /// A form to fill, or a page to open.
    pub mode: ElicitationMode,
    /// The params as sent, for what this type does not read (`_meta`, `task`, newer fields).
    pub params: Value,
}

/// How the user answers an [`ElicitationRequest`].
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationMode {
    /// Fill a form: `requested_schema` is a JSON Schema of a flat object (`{}` when the
    /// server sent none). A `mode` missing from the request means a form.
    Form {
        /// The schema the answer's content should match.
        requested_schema: Value,
    },
    /// Open `url` outside the client (a sign-in, a payment), then accept, decline or cancel.
    Url {
        /// The page to open.
        url: String,
        /// The id the server gave this elicitation (2025-11-25 only; its
        /// `notifications/elicitation/complete` names it).
        elicitation_id: Option<String>,
    },
}

/// The user's answer to an [`ElicitationRequest`] (`ElicitResult`).
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationAnswer {
    /// Submitted: the form's fields (empty for a URL).
    Accept(Map<String, Value>),
    /// Said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

impl ElicitationRequest {
    /// Reads `elicitation/create` params: lenient (a missing message is empty, a missing
    /// mode is a form, a missing schema is `{}`); a URL without `url`, or a mode this client
    /// does not know, is -32602 for the server.
    pub fn from_params(params: Value) -> Result<Self, RpcError> {
        let text = |field: &str| params.get(field).and_then(Value::as_str).map(str::to_owned);
        let mode = match params.get("mode").and_then(Value::as_str) {
            None | Some("form") => ElicitationMode::Form {
                requested_schema: params
                    .get("requestedSchema")
                    .filter(|schema| !schema.is_null())
                    .cloned()
                    .unwrap_or_else(|| json!({})),
            },
            Some("url") => ElicitationMode::Url {
                url: text("url").ok_or_else(|| {
                    RpcError::invalid_params("elicitation/create in URL mode needs a \"url\"")
                })?,
                elicitation_id: text("elicitationId"),
            },
            Some(other) => {
                return Err(RpcError::invalid_params(format!(
                    "elicitation/create mode {other:?} is not one this client knows \
                     (\"form\" or \"url\")"
                )))
            }
        };
        Ok(ElicitationRequest {
            message: text("message").unwrap_or_default(),
            mode,
            params,
        })
    }

    /// Accepts with `content` (a struct or a map of the form's fields), checked against the
    /// requested schema: every required field given, no field the form lacks, each of its
    /// type, within its options and bounds (an error says which field is wrong). A URL
    /// elicitation is accepted with no content.
    pub fn accept<T: Serialize>(&self, content: &T) -> Result<ElicitationAnswer, RpcError> {
        let answer = ElicitationAnswer::accept(content)?;
        self.check(&answer)?;
        Ok(answer)
    }

    /// Whether `answer` fits this request (what [`ElicitationRequest::accept`] checks); the
    /// client checks every answer before it goes to the server.
    pub fn check(&self, answer: &ElicitationAnswer) -> Result<(), RpcError> {
        let ElicitationAnswer::Accept(fields) = answer else {
            return Ok(());
        };
        let unfit = |why: String| {
            RpcError::internal(format!(
                "the client's answer to {:?} does not fit the requested form: {why}",
                self.message
            ))
        };
        match &self.mode {
            ElicitationMode::Form { requested_schema } => {
                crate::form::check(requested_schema, fields).map_err(unfit)
            }
            ElicitationMode::Url { .. } if fields.is_empty() => Ok(()),
            ElicitationMode::Url { .. } => Err(unfit(
                "a URL elicitation is accepted with no content".into(),
            )),
        }
    }
}

impl ElicitationAnswer {
    /// Accepts with `content`, a value whose fields are the form's (a struct, or a map):
    /// anything that does not serialize to a JSON object is an error naming what it was.
    pub fn accept<T: Serialize>(content: &T) -> Result<Self, RpcError> {
        match serde_json::to_value(content) {
            Ok(Value::Object(fields)) => Ok(ElicitationAnswer::Accept(fields)),
            Ok(other) => Err(RpcError::internal(format!(
                "an elicitation answer's content must be an object of the form's fields, \
                 not {other}"
            ))),
            Err(e) => Err(RpcError::internal(format!(
                "an elicitation answer's content does not serialize: {e}"
            ))),
        }
    }

    /// The `action` sent: `"accept"`, `"decline"` or `"cancel"`.
    pub fn action(&self) -> &'static str {
        match self {
            ElicitationAnswer::Accept(_) => "accept",
            ElicitationAnswer::Decline => "decline",
            ElicitationAnswer::Cancel => "cancel",
        }
    }

    /// The `ElicitResult` sent back.
    pub fn into_result(self) -> Value {
        let action = self.action();
        match self {
            ElicitationAnswer::Accept(fields) if !fields.is_empty() => {
                json!({"action": action, "content": fields})
            }
            _ => json!({"action": action}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_request_is_read_leniently() {
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        let asked = json!({"mode": "form", "message": "Sure?", "requestedSchema": schema});
        let request = ElicitationRequest::from_params(asked.clone()).unwrap();
        assert_eq!(request.message, "Sure?");
        assert_eq!(
            request.mode,
            ElicitationMode::Form {
                requested_schema: schema
            }
        );
        assert_eq!(request.params, asked);
        let bare = ElicitationRequest::from_params(json!({"requestedSchema": null})).unwrap();
        assert_eq!(bare.message, "");
        assert_eq!(
            bare.mode,
            ElicitationMode::Form {
                requested_schema: json!({})
            }
        );
    }

    #[test]
    fn a_url_request_needs_its_url_and_an_unknown_mode_is_refused() {
        let request = ElicitationRequest::from_params(json!({
            "mode": "url", "message": "Sign in", "url": "https://example.com/a",
            "elicitationId": "e-1"
        }))
        .unwrap();
        assert_eq!(
            request.mode,
            ElicitationMode::Url {
                url: "https://example.com/a".into(),
                elicitation_id: Some("e-1".into())
            }
        );
        let missing = ElicitationRequest::from_params(json!({"mode": "url"})).unwrap_err();
        assert_eq!(missing.code, -32602);
        assert!(missing.message.contains("\"url\""), "{}", missing.message);
        let unknown = ElicitationRequest::from_params(json!({"mode": "voice"})).unwrap_err();
        assert_eq!(unknown.code, -32602);
        assert!(unknown.message.contains("voice"), "{}", unknown.message);
    }

    #[test]
    fn answers_are_elicit_results_and_content_comes_from_a_struct() {
        #[derive(Serialize)]
        struct Form {
            ok: bool,
        }
        let accepted = ElicitationAnswer::accept(&Form { ok: true }).unwrap();
        assert_eq!(
            accepted.into_result(),
            json!({"action": "accept", "content": {"ok": true}})
        );
        assert_eq!(
            ElicitationAnswer::Accept(Map::new()).into_result(),
            json!({"action": "accept"})
        );
        assert_eq!(
            ElicitationAnswer::Decline.into_result(),
            json!({"action": "decline"})
        );
        assert_eq!(
            ElicitationAnswer::Cancel.into_result(),
            json!({"action": "cancel"})
        );
        let refused = ElicitationAnswer::accept(&true).unwrap_err();
        assert!(refused.message.contains("not true"), "{}", refused.message);
    }
}

//! `sampling/createMessage` as Rust values: the conversation a server asks the client's model
//! to continue, and the model's message.

use serde_json::{json, Value};
use taskwire_engine::RpcError;

use crate::content::Content;

/// What a server asks the client's model (`sampling/createMessage`), the same in both eras.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingRequest {
    /// The conversation so far, oldest first.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens the answer may take (`maxTokens`; 0 when the server sent none).
    pub max_tokens: u64,
    /// The system prompt the server asks for, if any.
    pub system_prompt: Option<String>,
    /// The params as sent, for what this type does not read (`modelPreferences`,
    /// `temperature`, `tools`, `_meta`, …).
    pub params: Value,
}

/// One message of a [`SamplingRequest`].
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingMessage {
    /// Who said it.
    pub role: MessageRole,
    /// Its content as sent: one block (`{"type": "text", …}`) or an array of them.
    pub content: Value,
}

/// Who said a sampling message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageRole {
    /// The user (`"user"`; any role this client does not know reads as this).
    User,
    /// The model (`"assistant"`).
    Assistant,
}

/// The model's message (`CreateMessageResult`).
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingAnswer {
    /// Who says it: the model, normally.
    pub role: MessageRole,
    /// What it says: text, an image or audio.
    pub content: Content,
    /// The model that wrote it.
    pub model: String,
    /// Why it stopped (`"endTurn"`, `"stopSequence"`, `"maxTokens"`, or another string).
    pub stop_reason: Option<String>,
}

impl SamplingRequest {
    /// Reads `sampling/createMessage` params leniently (missing fields are empty); a
    /// `messages` that is not an array is -32602 for the server.
    pub fn from_params(params: Value) -> Result<Self, RpcError> {
        let messages = match params.get("messages") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(messages)) => messages.iter().map(SamplingMessage::read).collect(),
            Some(other) => {
                return Err(RpcError::invalid_params(format!(
                    "sampling/createMessage \"messages\" must be an array, not {other}"
                )))
            }
        };
        Ok(SamplingRequest {
            messages,
            max_tokens: params.get("maxTokens").and_then(Value::as_u64).unwrap_or(0),
            system_prompt: params
                .get("systemPrompt")
                .and_then(Value::as_str)
                .map(str::to_owned),
            params,
        })
    }
}

impl SamplingMessage {
    fn read(message: &Value) -> Self {
        SamplingMessage {
            role: match message.get("role").and_then(Value::as_str) {
                Some("assistant") => MessageRole::Assistant,
                _ => MessageRole::User,
            },
            content: message.get("content").cloned().unwrap_or(Value::Null),
        }
    }

    /// The message's text: its text blocks joined by newlines (empty when it has none).
    pub fn text(&self) -> String {
        let blocks = match &self.content {
            Value::Array(blocks) => blocks.iter().collect(),
            block => vec![block],
        };
        blocks
            .into_iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl SamplingAnswer {
    /// The model (`model`) answering `text`, having ended its turn.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        SamplingAnswer {
            role: MessageRole::Assistant,
            content: Content::text(text),
            model: model.into(),
            stop_reason: Some("endTurn".into()),
        }
    }

    /// The `CreateMessageResult` sent back; content other than text, an image or audio
    /// (which sampling does not carry) is an error naming it.
    pub fn into_result(self) -> Result<Value, RpcError> {
        if !matches!(
            self.content,
            Content::Text { .. } | Content::Image { .. } | Content::Audio { .. }
        ) {
            return Err(RpcError::internal(format!(
                "a sampling answer carries text, an image or audio, not {:?}",
                self.content
            )));
        }
        let role = match self.role {
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
        };
        let mut result = json!({"role": role, "content": self.content, "model": self.model});
        if let Some(reason) = self.stop_reason {
            result["stopReason"] = reason.into();
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_read_leniently_with_its_messages_text() {
        let asked = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Hi"}},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Hello"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                    {"type": "text", "text": "there"}
                ]},
                {"content": {"type": "audio", "data": "AA==", "mimeType": "audio/wav"}}
            ],
            "maxTokens": 16, "systemPrompt": "Be brief", "temperature": 0.5
        });
        let request = SamplingRequest::from_params(asked.clone()).unwrap();
        assert_eq!(
            (request.max_tokens, request.system_prompt.as_deref()),
            (16, Some("Be brief"))
        );
        let roles: Vec<MessageRole> = request.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [MessageRole::User, MessageRole::Assistant, MessageRole::User]
        );
        let texts: Vec<String> = request.messages.iter().map(SamplingMessage::text).collect();
        assert_eq!(texts, ["Hi", "Hello\nthere", ""]);
        assert_eq!(request.params, asked);
        let bare = SamplingRequest::from_params(json!({})).unwrap();
        assert_eq!(
            (bare.messages.len(), bare.max_tokens, bare.system_prompt),
            (0, 0, None)
        );
        let wrong = SamplingRequest::from_params(json!({"messages": "hi"})).unwrap_err();
        assert_eq!(wrong.code, -32602);
    }

    #[test]
    fn an_answer_is_a_create_message_result_of_sampling_content_only() {
        assert_eq!(
            SamplingAnswer::text("m-1", "Hi").into_result().unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "Hi"},
                   "model": "m-1", "stopReason": "endTurn"})
        );
        let image = SamplingAnswer {
            role: MessageRole::Assistant,
            content: Content::image("AA==", "image/png"),
            model: "m-2".into(),
            stop_reason: None,
        };
        assert_eq!(
            image.into_result().unwrap(),
            json!({"role": "assistant", "model": "m-2",
                   "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}})
        );
        let link = SamplingAnswer {
            content: Content::ResourceLink {
                uri: "file:///a".into(),
                name: "a".into(),
                mime_type: None,
            },
            ..SamplingAnswer::text("m", "")
        };
        let refused = link.into_result().unwrap_err();
        assert!(
            refused.message.contains("ResourceLink"),
            "{}",
            refused.message
        );
    }
}

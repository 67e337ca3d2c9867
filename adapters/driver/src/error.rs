//! What a request or command of the application's can end with: the peer's JSON-RPC error,
//! the engine's refusal, or what went wrong on our side of the connection (a timeout, a
//! closed connection, an answer that cannot be read, a failed handshake).

use std::fmt;

use serde_json::{json, Value};
use taskwire_engine::era::v2026_07_28::EXTENSION as TASKS_EXTENSION;
use taskwire_engine::jsonrpc::code;
use taskwire_engine::{RpcError, UsageError};

/// `MissingRequiredClientCapability` (2026-07-28): the request needs a client capability it
/// did not declare; `data.requiredCapabilities` names it.
const MISSING_CAPABILITY: i64 = -32021;
/// The client capabilities a tool may ask for mid-call.
const ASKED_CAPABILITIES: [&str; 3] = ["elicitation", "sampling", "roots"];

/// Why a request of the application's, or a command of a tool's, got no result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered with a JSON-RPC error, or its task ended with one.
    Rpc(RpcError),
    /// The engine refused the command and sent nothing: a misuse of the API, or something
    /// the session did not negotiate or its protocol era does not have (the error says what
    /// to do instead).
    Usage(UsageError),
    /// No answer came within the request timeout
    /// ([`Config::request_timeout_ms`](taskwire_engine::Config::request_timeout_ms)); the
    /// request was withdrawn (`notifications/cancelled`). Says what timed out.
    Timeout(String),
    /// The connection closed before the answer came: the peer exited or closed its side,
    /// or this side closed it. Open a new connection to go on.
    Closed,
    /// The peer answered, but not with what was asked for (a result missing what the
    /// protocol requires, or a type that does not fit). Says what was wrong.
    Malformed(String),
    /// A type asked for as an elicitation form (`ToolContext::elicit_form`, feature
    /// `schemars`) cannot be one; nothing was sent. Says which field and why.
    NotAForm(String),
    /// The handshake failed: the server refused it, offered no protocol version we speak,
    /// answered unusably, or did not answer in time. The connection is closed.
    Negotiation(RpcError),
}

impl Error {
    /// The JSON-RPC error, if the peer sent one.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc(e) | Error::Negotiation(e) => Some(e),
            _ => None,
        }
    }

    /// The client capabilities the server said the request needs and this client did not
    /// declare (-32021 `data.requiredCapabilities`): `"elicitation"`, `"sampling"`,
    /// `"roots"`, or an extension's name (`"io.modelcontextprotocol/tasks"`: the tool runs
    /// only as a task). Empty for any other error. The error's text says what to do.
    pub fn required_capabilities(&self) -> Vec<String> {
        let Some(e) = self.rpc().filter(|e| e.code == MISSING_CAPABILITY) else {
            return Vec::new();
        };
        let required = e.data.as_ref().map(|d| &d["requiredCapabilities"]);
        let Some(Value::Object(required)) = required else {
            return Vec::new();
        };
        let mut names = Vec::new();
        for (name, value) in required {
            match (name.as_str(), value) {
                ("extensions", Value::Object(extensions)) => {
                    names.extend(extensions.keys().cloned())
                }
                _ => names.push(name.clone()),
            }
        }
        names
    }

    /// An error outcome as the engine reports it, with the two it makes itself (the
    /// connection closed, a request timed out) told apart from the peer's.
    pub(crate) fn from_outcome(e: RpcError) -> Self {
        match e.code {
            code::CONNECTION_CLOSED if e.message == CLOSED && e.data.is_none() => Error::Closed,
            code::REQUEST_TIMEOUT => Error::Timeout(e.message),
            _ => Error::Rpc(e),
        }
    }

    /// A malformed answer: `what` could not be read.
    pub(crate) fn malformed(what: impl fmt::Display) -> Self {
        Error::Malformed(what.to_string())
    }
}

/// The engine's message when a session closes with requests pending.
const CLOSED: &str = "Connection closed";

impl From<RpcError> for Error {
    fn from(e: RpcError) -> Self {
        Error::Rpc(e)
    }
}

impl From<UsageError> for Error {
    fn from(e: UsageError) -> Self {
        Error::Usage(e)
    }
}

/// For a tool that passes an error on to its client with `?`: a closed connection is
/// -32000, a timeout -32001, a question (elicitation, sampling, roots) the client did not
/// declare it answers -32021 naming the capability in `data.requiredCapabilities` (as
/// 2026-07-28 has it), another refused command or a malformed answer an internal error
/// (-32603) saying what happened.
impl From<Error> for RpcError {
    fn from(e: Error) -> Self {
        match e {
            Error::Rpc(e) | Error::Negotiation(e) => e,
            Error::Timeout(what) => RpcError::new(code::REQUEST_TIMEOUT, what),
            Error::Closed => RpcError::new(code::CONNECTION_CLOSED, CLOSED),
            Error::Usage(UsageError::NotNegotiated(capability))
                if ASKED_CAPABILITIES.contains(&capability) =>
            {
                let message = format!(
                    "Missing required client capability: the tool asks the client for \
                     {capability}, which it did not declare"
                );
                RpcError::new(MISSING_CAPABILITY, message)
                    .with_data(json!({ "requiredCapabilities": { capability: {} } }))
            }
            Error::Usage(_) | Error::Malformed(_) | Error::NotAForm(_) => {
                RpcError::internal(e.to_string())
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc(e) => {
                write!(f, "{e}")?;
                for capability in self.required_capabilities() {
                    write!(f, "; {}", what_to_add(&capability))?;
                }
                Ok(())
            }
            Error::Usage(e) => write!(f, "refused: {e}"),
            Error::Timeout(what) => write!(f, "timed out: {what}"),
            Error::Closed => f.write_str("the connection closed before the answer came"),
            Error::Malformed(what) => write!(f, "malformed answer: {what}"),
            Error::Negotiation(e) => write!(f, "the handshake failed: {e}"),
            Error::NotAForm(why) => write!(f, "not an elicitation form: {why}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Rpc(e) | Error::Negotiation(e) => Some(e),
            Error::Usage(e) => Some(e),
            _ => None,
        }
    }
}

/// `T` out of `input`; an error names the field at fault (`url: invalid type: integer `5`,
/// expected a string`; `items[2].id: …`), without serde_json's line and column.
pub(crate) fn decode<'de, T, D>(input: D) -> Result<T, String>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
    D::Error: fmt::Display,
{
    serde_path_to_error::deserialize(input).map_err(|e| {
        let why = e.inner().to_string();
        let why = why.split(" at line ").next().unwrap_or(&why);
        match e.path().to_string().as_str() {
            "." => why.to_owned(),
            path => format!("{path}: {why}"),
        }
    })
}

/// What a client that lacks `capability` does to have it.
fn what_to_add(capability: &str) -> String {
    let add = match capability {
        TASKS_EXTENSION => "the tool runs only as a task: call it with Client::call_tool_as_task",
        "elicitation" => "answer the server's questions with ClientBuilder::on_elicitation",
        "sampling" => "answer the server's sampling requests with ClientBuilder::on_sampling",
        "roots" => "answer the server's roots/list with ClientBuilder::on_roots",
        other => return format!("the client must declare {other:?}"),
    };
    add.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_capability_says_what_to_add() {
        let tasks = RpcError::new(MISSING_CAPABILITY, "Missing required client capability")
            .with_data(
                json!({ "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } } }),
            );
        let tasks = Error::Rpc(tasks);
        assert_eq!(tasks.required_capabilities(), [TASKS_EXTENSION]);
        assert_eq!(
            tasks.to_string(),
            "Missing required client capability (-32021); the tool runs only as a task: call \
             it with Client::call_tool_as_task"
        );
        for (capability, add) in [
            ("elicitation", "ClientBuilder::on_elicitation"),
            ("sampling", "ClientBuilder::on_sampling"),
            ("roots", "ClientBuilder::on_roots"),
        ] {
            let sent = RpcError::from(Error::Usage(UsageError::NotNegotiated(capability)));
            assert_eq!(sent.code, MISSING_CAPABILITY);
            assert!(sent.message.contains(capability), "{}", sent.message);
            let heard = Error::Rpc(sent);
            assert_eq!(heard.required_capabilities(), [capability]);
            assert!(heard.to_string().contains(add), "{heard}");
        }
        let other = RpcError::from(Error::Usage(UsageError::NotNegotiated("tasks")));
        assert_eq!(other.code, code::INTERNAL_ERROR);
        let plain = Error::Rpc(RpcError::new(MISSING_CAPABILITY, "no data"));
        assert!(plain.required_capabilities().is_empty());
        assert_eq!(plain.to_string(), "no data (-32021)");
    }
}

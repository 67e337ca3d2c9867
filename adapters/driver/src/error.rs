//! What a request or command of the application's can end with: the peer's JSON-RPC error,
//! the engine's refusal, or what went wrong on our side of the connection (a timeout, a
//! closed connection, an answer that cannot be read, a failed handshake).

use std::fmt;

use taskwire_engine::jsonrpc::code;
use taskwire_engine::{RpcError, UsageError};

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
/// -32000, a timeout -32001, a refused command or a malformed answer an internal error
/// (-32603) saying what happened.
impl From<Error> for RpcError {
    fn from(e: Error) -> Self {
        match e {
            Error::Rpc(e) | Error::Negotiation(e) => e,
            Error::Timeout(what) => RpcError::new(code::REQUEST_TIMEOUT, what),
            Error::Closed => RpcError::new(code::CONNECTION_CLOSED, CLOSED),
            Error::Usage(_) | Error::Malformed(_) | Error::NotAForm(_) => {
                RpcError::internal(e.to_string())
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc(e) => write!(f, "{e}"),
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

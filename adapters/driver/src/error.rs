//! What a request or command of the application's can end with, keeping the engine's own
//! error types: the peer's (or the engine's) JSON-RPC error, or the engine's refusal.

use std::fmt;

use taskwire_engine::{RpcError, UsageError};

/// Why a request of the application's, or a command of a tool's, got no result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A JSON-RPC error: the peer's answer, a task that ended with one, or one the engine
    /// reports for the request (code -32000 when the connection closed first, -32001 when
    /// it timed out).
    Rpc(RpcError),
    /// The engine refused the command and sent nothing: a misuse of the API, or something
    /// the session did not negotiate or its protocol era does not have (the error says what
    /// to do instead).
    Usage(UsageError),
}

impl Error {
    /// The JSON-RPC error, if it is one.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc(e) => Some(e),
            Error::Usage(_) => None,
        }
    }
}

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

/// For a tool that passes an error on to its client with `?`: a refused command is an
/// internal error (-32603) there, naming what was refused.
impl From<Error> for RpcError {
    fn from(e: Error) -> Self {
        match e {
            Error::Rpc(e) => e,
            Error::Usage(e) => RpcError::internal(e.to_string()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc(e) => write!(f, "{e}"),
            Error::Usage(e) => write!(f, "refused: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Rpc(e) => Some(e),
            Error::Usage(e) => Some(e),
        }
    }
}

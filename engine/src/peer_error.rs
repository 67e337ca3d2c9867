//! What a peer got wrong. Peer misbehaviour is never an `Err`: it becomes a JSON-RPC error
//! reply and an [`Event::PeerError`](crate::Event::PeerError) carrying a [`PeerErrorKind`].

/// What a peer got wrong; carried by [`Event::PeerError`](crate::Event::PeerError) next to
/// the human-readable message. The JSON-RPC reply, when one is due, is already queued.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeerErrorKind {
    /// Not JSON, or not UTF-8 (-32700).
    Parse,
    /// JSON, but not a JSON-RPC message we accept (-32600).
    InvalidRequest,
    /// A JSON-RPC batch (not part of MCP; -32600).
    Batch,
    /// A line longer than [`Limits::max_line_bytes`](crate::Limits::max_line_bytes) (-32600).
    TooLong,
    /// JSON nested deeper than [`Limits::max_depth`](crate::Limits::max_depth) (-32600).
    TooDeep,
    /// A request id already used by a request in progress (-32600).
    DuplicateId,
    /// A request other than `initialize` or `ping` before the handshake (-32600).
    BeforeInitialize,
    /// A method this session does not serve (-32601).
    UnknownMethod(String),
    /// Parameters that do not fit the method (-32602); `field` names the member when known.
    InvalidParams {
        /// The offending member, when the decoder named one.
        field: Option<String>,
    },
    /// More requests awaiting our answer than
    /// [`Limits::max_pending_requests`](crate::Limits::max_pending_requests) (-32603).
    TooManyPending,
    /// A response to no request of ours (nothing is sent back).
    UnknownResponse,
    /// A response or notification we could not read (nothing is sent back).
    Malformed,
    /// A 2026-07-28 request naming a protocol version we do not serve (-32022).
    UnsupportedVersion(String),
    /// A 2026-07-28 request that needs a client capability it did not declare (-32021).
    MissingCapability,
}

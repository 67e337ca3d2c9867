//! The operator's view of a server ([`Server::observe`](crate::Server::observe)), from
//! what the driver already sees: the host's journal (this process's task changes), the
//! store's news (other processes'), the work's progress and questions, the requests and
//! their answers, the store's writes. Nothing of it is in the engine.

mod board;
mod feed;
pub(crate) mod metrics;
mod requests;

pub use feed::{TaskChange, TaskFeed, TaskRow};

/// What the driver keeps for its operators.
#[derive(Default)]
pub(crate) struct Observer {
    /// The tasks held, and who watches them.
    pub board: board::Board,
    /// The requests in flight, for their latency.
    pub requests: requests::Requests,
}

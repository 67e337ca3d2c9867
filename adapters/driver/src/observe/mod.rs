//! The operator's view of a server ([`Server::observe`](crate::Server::observe),
//! [`Server::metrics`](crate::Server::metrics)), from what the driver already sees: the
//! host's journal (this process's task changes; without a store, what the driver does and
//! sees instead), the store's news (other processes'), the
//! work's progress and questions, the requests and their answers, the store's writes.
//! Nothing of it is in the engine.

pub(crate) mod board;
mod feed;
mod histogram;
pub(crate) mod metrics;
mod recent;
mod requests;
pub(crate) mod trace;

pub use feed::{TaskChange, TaskFeed, TaskRow};

use metrics::{Families, RequestMetrics, TaskMetrics};

/// What the driver keeps for its operators.
pub(crate) struct Observer {
    /// The tasks held, and who watches them.
    pub board: board::Board,
    /// The requests in flight, for their latency (with metrics).
    pub requests: Option<requests::Requests>,
    /// The metric families (with metrics).
    pub families: Option<Families>,
}

impl Observer {
    /// An observer, counting in `families` if given; its board loads first from the
    /// host's journal, or (`driven`: a host that does not journal) is fed by the driver.
    pub fn new(families: Option<Families>, driven: bool) -> Self {
        Observer {
            board: board::Board::new(families.clone().map(TaskMetrics::new), driven),
            requests: (families.clone()).map(|f| requests::Requests::new(RequestMetrics::new(f))),
            families,
        }
    }
}

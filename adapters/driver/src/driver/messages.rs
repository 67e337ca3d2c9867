//! Connections whose transport frames messages itself (Streamable HTTP): the transport
//! hands the driver each message the peer sent, and takes the session's messages from a
//! channel that holds a bounded number (allocated as they come, not up front), each with its
//! [`MessageKind`] (which names the stream it belongs to,
//! [`MessageKind::stream`]). A transport that falls a whole channel behind loses the
//! session: a slow reader is disconnected, never buffered without bound.

use async_channel::{Receiver, Sender};
use futures::channel::oneshot;
use taskwire_engine::{Check, MessageKind, Owner, SessionId};

use crate::error::Error;

/// One message for the peer of a message session.
#[derive(Clone, Debug)]
pub struct Outgoing {
    /// What it is, and which stream it belongs to.
    pub kind: MessageKind,
    /// One compact JSON text.
    pub message: String,
}

/// Where the driver puts a message session's outgoing messages.
pub(crate) struct MessageOut {
    pub outgoing: Sender<Box<Outgoing>>,
    /// How many may wait for the transport.
    pub capacity: usize,
    /// A session opened for one request: it closes with its first reply (its transport
    /// sees the channel end, and has nothing to tell the driver when it drops its handle).
    pub one_request: bool,
}

/// A message from the peer, with the transport's check of its requests (see
/// [`Host::handle_checked`](taskwire_engine::Host::handle_checked)).
pub(crate) struct Inbound {
    pub message: Vec<u8>,
    pub check: Option<Check>,
}

impl From<Vec<u8>> for Inbound {
    fn from(message: Vec<u8>) -> Self {
        Inbound {
            message,
            check: None,
        }
    }
}

/// What a message session's handle tells the driver.
pub(crate) enum LinkInput {
    Open {
        owner: Owner,
        outgoing: Sender<Box<Outgoing>>,
        capacity: usize,
        /// A message to serve as the session opens.
        first: Option<Inbound>,
        reply: oneshot::Sender<Option<SessionId>>,
    },
    Message {
        session: SessionId,
        message: Vec<u8>,
    },
    Close {
        session: SessionId,
    },
}

/// Opens message sessions on a running driver; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct MessageLinks {
    pub inputs: Sender<LinkInput>,
}

impl MessageLinks {
    /// Opens a session for `owner` whose outgoing messages queue up to `capacity` deep, and
    /// serves `first` in it at once.
    pub async fn open(
        &self,
        owner: Owner,
        capacity: usize,
        first: Option<Inbound>,
    ) -> Result<MessageSession, Error> {
        let (tx, outgoing) = async_channel::unbounded();
        let (reply, opened) = oneshot::channel();
        let open = LinkInput::Open {
            owner,
            outgoing: tx,
            capacity: capacity.max(1),
            first,
            reply,
        };
        self.inputs.send(open).await.map_err(|_| Error::Closed)?;
        let id = opened.await.ok().flatten().ok_or(Error::Closed)?;
        Ok(MessageSession::new(id, self.inputs.clone(), outgoing))
    }
}

/// One session served over messages: [`MessageSession::send`] what the peer sent, read what
/// goes back with [`MessageSession::recv`]. Dropping it closes the session (its tasks live
/// on, for another session of the same owner).
#[derive(Debug)]
pub struct MessageSession {
    id: SessionId,
    inputs: Sender<LinkInput>,
    /// Boxed, so that the queue's blocks stay small for an idle session.
    outgoing: Receiver<Box<Outgoing>>,
}

impl MessageSession {
    pub(super) fn new(
        id: SessionId,
        inputs: Sender<LinkInput>,
        outgoing: Receiver<Box<Outgoing>>,
    ) -> Self {
        MessageSession {
            id,
            inputs,
            outgoing,
        }
    }

    /// The engine's session.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// Hands the engine one whole JSON-RPC message from the peer (bad input gets its
    /// JSON-RPC error back like any reply). Errors once the server has stopped.
    ///
    /// The driver takes input as fast as it comes (the channel is unbounded): bound what a
    /// peer may send with the transport's limits (body size, requests in flight).
    pub fn send(&self, message: impl Into<Vec<u8>>) -> Result<(), Error> {
        let message = LinkInput::Message {
            session: self.id,
            message: message.into(),
        };
        self.inputs.try_send(message).map_err(|_| Error::Closed)
    }

    /// The next message for the peer; `None` once the session has closed (ended by
    /// [`MessageSession::close`], the server's shutdown, or a reader too slow to keep up)
    /// and everything before was read.
    pub async fn recv(&self) -> Option<Outgoing> {
        self.outgoing.recv().await.ok().map(|message| *message)
    }

    /// What [`MessageSession::recv`] reads, as a stream (it ends with the session).
    pub fn messages(&self) -> impl futures::Stream<Item = Outgoing> + Send + 'static {
        use futures::StreamExt;
        self.outgoing.clone().map(|message| *message)
    }

    /// Whether the session has closed (its remaining messages may still be read).
    pub fn is_closed(&self) -> bool {
        self.outgoing.is_closed()
    }

    /// Closes the session now (dropping the handle does too).
    pub fn close(&self) {
        let _ = self.inputs.try_send(LinkInput::Close { session: self.id });
    }
}

impl Drop for MessageSession {
    fn drop(&mut self) {
        // A session the driver closed already (one request, answered) needs no word.
        if !self.outgoing.is_closed() {
            self.close();
        }
    }
}

//! Where one session's messages go. Each request of the client's has a response stream,
//! numbered; each of its events gets an id `STREAM.SEQ`, and the stream keeps its last events
//! so that a client whose connection dropped resumes it (`GET` with `Last-Event-ID`). Messages
//! that belong to no request go to the session's own stream (`GET`), held back, boundedly,
//! while none is open.

use std::collections::{HashMap, VecDeque};

use async_channel::{Receiver, Sender, TrySendError};
use taskwire_driver::engine::jsonrpc::RequestId;
use taskwire_driver::engine::MessageKind;
use taskwire_driver::Outgoing;

use crate::response::Frame;

/// The number of the session's own stream in event ids.
const SESSION_STREAM: u64 = 0;

/// Why a request's stream was not registered.
pub(super) enum Refusal {
    /// As many requests as allowed are in flight.
    TooMany,
    /// A request with this id is in flight.
    Duplicate,
}

/// One request's response stream.
struct RequestStream {
    number: u64,
    /// The HTTP response reading it now, if any.
    live: Option<Sender<Frame>>,
    /// Its last events (up to the capacity), for resumption, by sequence number.
    sent: VecDeque<(u64, Frame)>,
    /// Its reply was sent, but no response was reading it: it waits to be resumed.
    done: bool,
}

pub(super) struct Routes {
    requests: HashMap<RequestId, RequestStream>,
    by_number: HashMap<u64, RequestId>,
    /// Streams whose reply waits for a resumption, oldest first.
    finished: VecDeque<RequestId>,
    /// The open `GET` stream.
    standalone: Option<Sender<Frame>>,
    /// The session's messages while no `GET` stream is open.
    backlog: VecDeque<Frame>,
    next_stream: u64,
    next_event: u64,
    /// Events a stream keeps and a reader may fall behind by.
    capacity: usize,
    /// Requests in flight at once (and finished streams kept for resumption).
    max_requests: usize,
}

impl Routes {
    pub fn new(capacity: usize, max_requests: usize) -> Self {
        Routes {
            requests: HashMap::new(),
            by_number: HashMap::new(),
            finished: VecDeque::new(),
            standalone: None,
            backlog: VecDeque::new(),
            next_stream: SESSION_STREAM,
            next_event: 0,
            capacity: capacity.max(1),
            max_requests,
        }
    }

    /// Registers request `id`'s response stream: the frames for it, and the id of the
    /// stream's priming event.
    pub fn register(&mut self, id: &RequestId) -> Result<(Receiver<Frame>, String), Refusal> {
        if let Some(stream) = self.requests.get(id) {
            if !stream.done {
                return Err(Refusal::Duplicate);
            }
            // The client reuses the id of a request whose answer it never resumed.
            self.forget(id);
        }
        if self.requests.values().filter(|s| !s.done).count() >= self.max_requests {
            return Err(Refusal::TooMany);
        }
        self.next_stream += 1;
        let number = self.next_stream;
        let (tx, frames) = async_channel::unbounded();
        self.requests.insert(
            id.clone(),
            RequestStream {
                number,
                live: Some(tx),
                sent: VecDeque::new(),
                done: false,
            },
        );
        self.by_number.insert(number, id.clone());
        Ok((frames, self.event_id(number).1))
    }

    /// Hands one message of the engine's to its stream.
    pub fn route(&mut self, out: Outgoing, session: &str) {
        let Some(id) = out.kind.stream().cloned() else {
            return self.hold_or_send(out, session);
        };
        let is_reply = matches!(out.kind, MessageKind::Reply { .. });
        let Some(number) = self.requests.get(&id).map(|s| s.number) else {
            if is_reply {
                tracing::debug!(session, %id, "a reply for a stream already gone was dropped");
            } else {
                self.hold_or_send(out, session);
            }
            return;
        };
        let (seq, event) = self.event_id(number);
        let frame = Frame {
            id: Some(event),
            out,
        };
        let capacity = self.capacity;
        let delivered = {
            let stream = self.requests.get_mut(&id).expect("looked up above");
            stream.sent.push_back((seq, frame.clone()));
            if stream.sent.len() > capacity {
                stream.sent.pop_front();
            }
            let delivered = match stream.live.as_ref().map(|tx| offer(tx, frame, capacity)) {
                Some(Ok(())) => true,
                Some(Err(TrySendError::Full(_))) => {
                    tracing::warn!(
                        session,
                        %id,
                        "a response stream's reader fell behind; the stream ends (resumable)"
                    );
                    false
                }
                Some(Err(TrySendError::Closed(_))) | None => false,
            };
            if !delivered {
                // Ending the channel ends the HTTP response after what it holds.
                stream.live = None;
                stream.done = is_reply;
            }
            delivered
        };
        if is_reply {
            if delivered {
                self.forget(&id);
            } else {
                self.finished.push_back(id);
                while self.finished.len() > self.max_requests {
                    if let Some(oldest) = self.finished.pop_front() {
                        self.forget(&oldest);
                    }
                }
            }
        }
    }

    /// A message for the session's own stream: to the `GET` stream, or held back until one
    /// opens. When the backlog is full, its oldest notification makes room (requests are
    /// kept); a backlog of requests only that overflows loses its oldest.
    pub fn hold_or_send(&mut self, out: Outgoing, session: &str) {
        let frame = Frame {
            id: Some(self.event_id(SESSION_STREAM).1),
            out,
        };
        if let Some(tx) = &self.standalone {
            match offer(tx, frame, self.capacity) {
                Ok(()) => return,
                Err(TrySendError::Full(frame) | TrySendError::Closed(frame)) => {
                    self.standalone = None;
                    self.backlog.push_back(frame);
                }
            }
        } else {
            self.backlog.push_back(frame);
        }
        if self.backlog.len() > self.capacity {
            let oldest_note = self
                .backlog
                .iter()
                .position(|f| matches!(f.out.kind, MessageKind::Notification { .. }))
                .unwrap_or(0);
            self.backlog.remove(oldest_note);
            tracing::warn!(
                session,
                "the session's stream is not read; a message was dropped"
            );
        }
    }

    /// Resumes the stream an event id of which the client saw last: the events after it,
    /// then the rest live. `None` when the id names no stream kept here.
    pub fn resume(&mut self, last_event: &str) -> Option<(RequestId, Receiver<Frame>)> {
        let (number, seq) = last_event.split_once('.')?;
        let (number, seq): (u64, u64) = (number.parse().ok()?, seq.parse().ok()?);
        let id = self.by_number.get(&number)?.clone();
        let stream = self.requests.get_mut(&id)?;
        let (tx, frames) = async_channel::unbounded();
        for (_, frame) in stream.sent.iter().filter(|(s, _)| *s > seq) {
            let _ = tx.try_send(frame.clone());
        }
        if stream.done {
            self.forget(&id);
        } else {
            stream.live = Some(tx);
        }
        Some((id, frames))
    }

    /// Opens the session's own stream, starting with what waited for it; `None` when one
    /// is open already.
    pub fn open_standalone(&mut self) -> Option<Receiver<Frame>> {
        if self.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return None;
        }
        let (tx, frames) = async_channel::unbounded();
        // The backlog holds at most the capacity: all of it fits.
        for frame in self.backlog.drain(..) {
            let _ = tx.try_send(frame);
        }
        self.standalone = Some(tx);
        Some(frames)
    }

    /// No request in flight and no stream open.
    pub fn is_idle(&self) -> bool {
        self.requests.values().all(|s| s.done)
            && self.standalone.as_ref().is_none_or(Sender::is_closed)
    }

    /// Ends every stream (the session closed).
    pub fn clear(&mut self) {
        self.requests.clear();
        self.by_number.clear();
        self.finished.clear();
        self.standalone = None;
    }

    fn forget(&mut self, id: &RequestId) {
        if let Some(stream) = self.requests.remove(id) {
            self.by_number.remove(&stream.number);
        }
        self.finished.retain(|f| f != id);
    }

    /// The next event of stream `number`: its sequence number and id.
    fn event_id(&mut self, number: u64) -> (u64, String) {
        self.next_event += 1;
        (self.next_event, format!("{number}.{}", self.next_event))
    }
}

/// Sends `frame` unless `tx` already holds `capacity` frames (a reader that far behind loses
/// the stream). The channels themselves are unbounded, so that an idle stream costs no
/// buffer: they allocate as frames come.
fn offer(tx: &Sender<Frame>, frame: Frame, capacity: usize) -> Result<(), TrySendError<Frame>> {
    if tx.len() >= capacity {
        return Err(TrySendError::Full(frame));
    }
    tx.try_send(frame)
}

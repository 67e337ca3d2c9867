//! 2025-11-25 over HTTP: a session per `Mcp-Session-Id`, issued at `initialize`. A router
//! per session takes everything the engine sends and hands each message to the stream it
//! names: the response of the request it belongs to, or the session's own stream (the `GET`
//! stream; held back, boundedly, while none is open).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_channel::{Receiver, Sender, TrySendError};
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use taskwire_driver::engine::jsonrpc::RequestId;
use taskwire_driver::engine::MessageKind;
use taskwire_driver::{random_task_id, MessageSession, Outgoing};

use crate::envelope::Envelope;
use crate::response::{accepts_sse, error, error_for, sse_until_closed, Answer};
use crate::service::Shared;

/// The session header.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The sessions open now, by id.
#[derive(Default)]
pub(crate) struct Sessions {
    table: Mutex<HashMap<String, Arc<Session>>>,
}

/// One 2025-11-25 session.
pub(crate) struct Session {
    id: String,
    /// The authenticated owner that opened it; only they may use it.
    principal: Option<String>,
    link: MessageSession,
    routes: Mutex<Routes>,
    last_used: Mutex<Instant>,
}

/// Where the session's messages go.
struct Routes {
    /// The response streams of requests awaiting their reply.
    requests: HashMap<RequestId, Sender<Outgoing>>,
    /// The open `GET` stream.
    standalone: Option<Sender<Outgoing>>,
    /// The session's messages while no `GET` stream is open.
    backlog: VecDeque<Outgoing>,
    capacity: usize,
}

impl Sessions {
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.table.lock().expect("not poisoned").get(id).cloned()
    }

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.table.lock().expect("not poisoned").remove(id)
    }

    pub fn len(&self) -> usize {
        self.table.lock().expect("not poisoned").len()
    }

    /// Closes the sessions unused for `idle` (no request waiting, no stream open).
    pub fn close_idle(&self, idle: std::time::Duration) {
        let now = Instant::now();
        let idle: Vec<Arc<Session>> = self
            .table
            .lock()
            .expect("not poisoned")
            .values()
            .filter(|s| s.is_idle() && now.duration_since(s.last_used()) >= idle)
            .cloned()
            .collect();
        for session in idle {
            tracing::info!(session = %session.id, "closing an idle session");
            self.close(&session.id);
        }
    }

    /// Ends a session; `false` when there is none by that id.
    pub fn close(&self, id: &str) -> bool {
        match self.remove(id) {
            Some(session) => {
                session.link.close();
                true
            }
            None => false,
        }
    }
}

impl Session {
    /// Whether `principal` (who the request authenticated as) may use this session.
    pub fn admits(&self, principal: &Option<String>) -> bool {
        self.principal == *principal
    }

    fn touch(&self) {
        *self.last_used.lock().expect("not poisoned") = Instant::now();
    }

    fn last_used(&self) -> Instant {
        *self.last_used.lock().expect("not poisoned")
    }

    fn is_idle(&self) -> bool {
        let routes = self.routes.lock().expect("not poisoned");
        routes.requests.is_empty() && routes.standalone.as_ref().is_none_or(Sender::is_closed)
    }

    /// Hands one message of the engine's to its stream.
    fn route(&self, out: Outgoing) {
        let mut routes = self.routes.lock().expect("not poisoned");
        let Some(id) = out.kind.stream().cloned() else {
            return routes.hold_or_send(out, &self.id);
        };
        let is_reply = matches!(out.kind, MessageKind::Reply { .. });
        let Some(tx) = routes.requests.get(&id) else {
            if is_reply {
                tracing::debug!(session = %self.id, %id, "a reply whose response stream is gone was dropped");
            } else {
                routes.hold_or_send(out, &self.id);
            }
            return;
        };
        match tx.try_send(out) {
            Ok(()) if is_reply => {
                routes.requests.remove(&id);
            }
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                tracing::warn!(session = %self.id, %id, "a response stream's reader fell behind; the stream was ended");
                routes.requests.remove(&id);
            }
            Err(TrySendError::Closed(out)) => {
                // The client left the response: what is not the reply still reaches it.
                routes.requests.remove(&id);
                if !is_reply {
                    routes.hold_or_send(out, &self.id);
                }
            }
        }
    }
}

impl Routes {
    /// A message for the session's own stream: to the `GET` stream, or held back until one
    /// opens. When the backlog is full, its oldest notification makes room (requests are
    /// kept); a backlog of requests only that overflows loses the message.
    fn hold_or_send(&mut self, out: Outgoing, session: &str) {
        if let Some(tx) = &self.standalone {
            match tx.try_send(out) {
                Ok(()) => return,
                Err(TrySendError::Full(out) | TrySendError::Closed(out)) => {
                    self.standalone = None;
                    self.backlog.push_back(out);
                }
            }
        } else {
            self.backlog.push_back(out);
        }
        if self.backlog.len() > self.capacity {
            let oldest_note = self
                .backlog
                .iter()
                .position(|m| matches!(m.kind, MessageKind::Notification { .. }))
                .unwrap_or(0);
            self.backlog.remove(oldest_note);
            tracing::warn!(
                session,
                "the session's stream is not read; a message was dropped"
            );
        }
    }
}

/// Serves a POST of a session (or `initialize`, which makes one).
pub(crate) async fn post(
    shared: &Arc<Shared>,
    owner: Option<String>,
    headers: &HeaderMap,
    body: Bytes,
    envelope: Option<Envelope>,
    session: Option<Arc<Session>>,
) -> Response {
    let (session, created) = match session {
        Some(session) => (session, false),
        None => match open(shared, owner).await {
            Ok(session) => (session, true),
            Err(refused) => return refused,
        },
    };
    session.touch();
    let Some(envelope) = envelope else {
        return crate::service::unreadable(shared, body).await;
    };
    let Some(id) = envelope.request_id().cloned() else {
        return match session.link.send(body.to_vec()) {
            Ok(()) => StatusCode::ACCEPTED.into_response(),
            Err(_) => gone(),
        };
    };
    let (tx, messages) = async_channel::bounded(shared.config.stream_capacity.max(1));
    {
        let mut routes = session.routes.lock().expect("not poisoned");
        if routes.requests.len() >= shared.config.max_requests_per_session {
            return error_for(
                StatusCode::TOO_MANY_REQUESTS,
                Some(&id),
                -32600,
                "Too many requests in flight on this session (HttpConfig::max_requests_per_session)",
            );
        }
        if routes.requests.contains_key(&id) {
            return error_for(
                StatusCode::BAD_REQUEST,
                Some(&id),
                -32600,
                &format!("Invalid Request: request id {id} is already in flight on this session"),
            );
        }
        routes.requests.insert(id.clone(), tx);
    }
    if session.link.send(body.to_vec()).is_err() {
        return gone();
    }
    let answer = Answer {
        id,
        messages,
        sse: accepts_sse(headers),
        status: |_: &MessageKind| StatusCode::OK,
    };
    let related = {
        let session = session.clone();
        move |out: Outgoing| {
            session
                .routes
                .lock()
                .expect("not poisoned")
                .hold_or_send(out, &session.id)
        }
    };
    let Some(mut response) = answer.respond((), related).await else {
        return gone();
    };
    if created {
        let value = HeaderValue::from_str(&session.id).expect("a UUID is a header value");
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// Opens a session for an `initialize`.
async fn open(shared: &Arc<Shared>, owner: Option<String>) -> Result<Arc<Session>, Response> {
    if shared.sessions.len() >= shared.config.max_sessions {
        tracing::warn!("refused a session: HttpConfig::max_sessions are open");
        return Err(error(
            StatusCode::SERVICE_UNAVAILABLE,
            -32603,
            "Service unavailable: too many sessions (HttpConfig::max_sessions)",
        ));
    }
    let id = random_task_id();
    let capacity = shared.config.stream_capacity.max(1);
    // Without authentication the session is the owner: its tasks are its own.
    let link = shared
        .handle
        .open(
            owner.clone().unwrap_or_else(|| format!("session:{id}")),
            capacity,
        )
        .await
        .map_err(|_| gone())?;
    let session = Arc::new(Session {
        id: id.clone(),
        principal: owner.clone(),
        link,
        routes: Mutex::new(Routes {
            requests: HashMap::new(),
            standalone: None,
            backlog: VecDeque::new(),
            capacity,
        }),
        last_used: Mutex::new(Instant::now()),
    });
    shared
        .sessions
        .table
        .lock()
        .expect("not poisoned")
        .insert(id.clone(), session.clone());
    tracing::info!(session = %id, "session opened");
    let router = session.clone();
    let shared = shared.clone();
    tokio::spawn(async move {
        while let Some(out) = router.link.recv().await {
            router.route(out);
        }
        // Every stream of the session ends with it.
        {
            let mut routes = router.routes.lock().expect("not poisoned");
            routes.requests.clear();
            routes.standalone = None;
        }
        // Closed: by DELETE, idle expiry, a reader too slow, or the server's shutdown.
        shared.sessions.remove(&router.id);
        tracing::info!(session = %router.id, "session closed");
    });
    Ok(session)
}

/// Serves a `GET`: the session's own stream, starting with what waited for it.
pub(crate) fn get(shared: &Shared, session: &Session) -> Response {
    session.touch();
    let (tx, messages): (Sender<Outgoing>, Receiver<Outgoing>) =
        async_channel::bounded(shared.config.stream_capacity.max(1));
    {
        let mut routes = session.routes.lock().expect("not poisoned");
        if routes.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return error(
                StatusCode::CONFLICT,
                -32600,
                "Conflict: this session's GET stream is already open",
            );
        }
        while let Some(out) = routes.backlog.pop_front() {
            if let Err(e) = tx.try_send(out) {
                routes.backlog.push_front(e.into_inner());
                break;
            }
        }
        routes.standalone = Some(tx);
    }
    sse_until_closed(messages)
}

/// The answer for a session that ended while the request was served.
fn gone() -> Response {
    error(
        StatusCode::NOT_FOUND,
        -32600,
        "Session not found: it was closed (send initialize again)",
    )
}

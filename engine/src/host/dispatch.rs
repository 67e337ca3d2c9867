//! Routing one inbound message: malformed input, requests, notifications, responses.
//! What is the same in every era happens here; the rest goes to the era that reads it.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::Value;

use super::Host;
use crate::error::PeerErrorKind;
use crate::event::Event;
use crate::framing::Frame;
use crate::ids::SessionId;
use crate::jsonrpc::{self, Inbound, Malformed, Reject, RequestId, RpcError};

impl Host {
    pub(super) fn handle_frame(&mut self, session: SessionId, frame: Frame<'_>) {
        if self.session(session).is_none() {
            return;
        }
        match frame {
            Frame::Line(line) => self.handle_line(session, line),
            Frame::TooLong => {
                let error = RpcError::invalid_request(format!(
                    "Invalid Request: message exceeds {} bytes",
                    self.config.limits.max_line_bytes
                ));
                self.reply_error(session, None, &error);
                self.peer_error(session, PeerErrorKind::TooLong, error.message);
            }
        }
    }

    fn handle_line(&mut self, session: SessionId, line: &[u8]) {
        match jsonrpc::parse(line, self.config.limits.max_depth) {
            Ok(Inbound::Request { id, method, params }) => {
                self.on_request(session, id, method, params)
            }
            Ok(Inbound::Notification { method, params }) => {
                self.route_notification(session, &method, params)
            }
            Ok(Inbound::Response { id, outcome }) => self.on_response(session, id, outcome),
            Err(malformed) => {
                let Malformed {
                    kind,
                    reply,
                    message,
                } = *malformed;
                if let Some((id, error)) = reply {
                    self.reply_error(session, id.as_ref(), &error);
                }
                self.peer_error(session, kind, message);
            }
        }
    }

    fn on_request(
        &mut self,
        session: SessionId,
        id: RequestId,
        method: Cow<'_, str>,
        params: Option<&RawValue>,
    ) {
        let Some(s) = self.session(session) else {
            return;
        };
        if s.inbound.contains_key(&id) {
            let error = RpcError::invalid_request(format!(
                "Invalid Request: id {id} is already used by a request in progress"
            ));
            return self.refuse(
                session,
                &id,
                Reject::peer(PeerErrorKind::DuplicateId, error),
            );
        }
        let pending = s.inbound.len();
        if pending >= self.config.limits.max_pending_requests && may_wait(&method) {
            let error = RpcError::internal(format!(
                "Too many requests in progress ({pending}); retry later"
            ));
            return self.refuse(
                session,
                &id,
                Reject::peer(PeerErrorKind::TooManyPending, error),
            );
        }
        if method == "ping" {
            let line = jsonrpc::reply_with(&id, 48, |buf| buf.extend_from_slice(b"{}"));
            return self.reply(session, &id, None, line);
        }
        if let Err(reject) = self.route_request(session, &id, &method, params) {
            self.refuse(session, &id, reject);
        }
    }

    /// Answers a refused request with its error, and reports the peer's mistake.
    pub(crate) fn refuse(&mut self, session: SessionId, id: &RequestId, reject: Reject) {
        self.reply_error(session, Some(id), &reject.error);
        if let Some(kind) = reject.kind {
            self.peer_error(session, kind, reject.error.message);
        }
    }

    pub(crate) fn peer_error(&mut self, session: SessionId, kind: PeerErrorKind, message: String) {
        self.event(Event::PeerError {
            session,
            kind,
            message,
        });
    }

    /// A request the application answers itself ([`Config::app_methods`](crate::Config)),
    /// with the log level its 2026-07-28 request named.
    pub(crate) fn app_request(
        &mut self,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
        era: crate::task::Era,
        log_level: Option<crate::LogLevel>,
    ) {
        let token = progress_token(params);
        let mut state = super::Call::plain(session, id.clone(), token);
        state.era = era;
        state.log_level = log_level;
        let call = self.add_call(state);
        if let Some(s) = self.session_mut(session) {
            s.inbound
                .insert(id.clone(), crate::session::Inbound::App(call));
        }
        self.event(Event::Request(crate::event::AppRequest {
            call,
            session,
            request: id.clone(),
            method: method.to_owned(),
            params: params.map(ToOwned::to_owned),
            task: None,
            related_task: None,
        }));
    }

    fn on_response(
        &mut self,
        session: SessionId,
        id: RequestId,
        outcome: Result<&RawValue, RpcError>,
    ) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let Some(purpose) = s.outbound.take(&id) else {
            if !s.outbound.was_abandoned(&id) {
                self.peer_error(
                    session,
                    PeerErrorKind::UnknownResponse,
                    format!("response to unknown request id {id}"),
                );
            }
            return;
        };
        self.timers
            .clear(&super::Timer::Request(session, id.clone()));
        let outcome = outcome.and_then(|raw| {
            serde_json::from_str::<Value>(raw.get())
                .map_err(|e| RpcError::internal(format!("unreadable result: {e}")))
        });
        self.route_answer(session, id, purpose, outcome);
    }
}

/// Requests that can wait for an answer (and so count against the pending limit).
fn may_wait(method: &str) -> bool {
    !matches!(
        method,
        "ping" | "initialize" | "tools/list" | "tasks/get" | "tasks/list" | "tasks/cancel"
    )
}

/// `params._meta.progressToken`, if any.
pub(crate) fn progress_token(params: Option<&RawValue>) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct P {
        #[serde(default, rename = "_meta")]
        meta: Option<M>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct M {
        #[serde(default)]
        progress_token: Option<Value>,
    }
    let p: P = serde_json::from_str(params?.get()).ok()?;
    p.meta?.progress_token
}

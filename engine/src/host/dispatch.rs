//! Routing one inbound message: malformed input, requests, notifications, responses. What
//! every era does alike happens here (limits, duplicate ids, `ping`, cancellation, progress,
//! matching answers to our requests); the rest goes to the era that reads it.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::Host;
use crate::era;
use crate::era::{Eras, Sent, State};
use crate::event::{Event, RequestRead, StopReason};
use crate::framing::Frame;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{self, Malformed, Message, Params, Reject, RequestId, RpcError};
use crate::method::Method;
use crate::model::{LogMessage, ProgressParams};
use crate::peer_error::PeerErrorKind;
use crate::state::{CancelledParams, Kept, PeerRequest, Timer};

/// `params` of `notifications/message`, with the task it is about.
#[derive(Deserialize)]
struct LogNotice {
    #[serde(flatten)]
    message: LogMessage,
    #[serde(default, rename = "_meta")]
    meta: Option<NoticeMeta>,
}

#[derive(Deserialize)]
struct NoticeMeta {
    #[serde(default, rename = "io.modelcontextprotocol/related-task")]
    related_task: Option<RelatedTask>,
}

#[derive(Deserialize)]
struct RelatedTask {
    #[serde(rename = "taskId")]
    task_id: TaskId,
}

/// A request whose unchecked params are no single JSON value: the fast path misread its line.
struct Misread;

/// A notification the engine does not act on, as sent, for the application.
fn pass_on(st: &mut State, session: SessionId, method: &str, params: Option<&RawValue>) {
    st.event(Event::Notification {
        session,
        method: method.to_owned(),
        params: params.map(ToOwned::to_owned),
    });
}

impl Host {
    pub(super) fn handle_frame(&mut self, session: SessionId, frame: Frame<'_>) {
        if self.state.session(session).is_none() {
            return;
        }
        match frame {
            Frame::Line(line) => self.handle_line(session, line),
            Frame::TooLong => {
                let st = &mut self.state;
                let error = RpcError::invalid_request(format!(
                    "Invalid Request: message exceeds {} bytes",
                    st.config.limits.max_line_bytes
                ));
                st.reply_error(session, None, &error);
                st.peer_error(session, PeerErrorKind::TooLong, error.message);
            }
        }
    }

    fn handle_line(&mut self, session: SessionId, line: &[u8]) {
        let parsed = jsonrpc::parse(line, self.state.config.limits.max_depth);
        self.handle_parsed(session, line, parsed);
    }

    fn handle_parsed(
        &mut self,
        session: SessionId,
        line: &[u8],
        parsed: Result<Message<'_>, Box<Malformed>>,
    ) {
        match parsed {
            Ok(Message::Request { id, method, params }) => {
                match self.on_request(session, &id, &method, params) {
                    Ok(()) if self.report_requests => self.reads.push(RequestRead {
                        session,
                        id,
                        method: Method::from_name(&method),
                    }),
                    Ok(()) => {}
                    Err(Misread) => {
                        let limit = self.state.config.limits.max_depth;
                        let parsed = jsonrpc::parse_general(line, limit);
                        self.handle_parsed(session, line, parsed);
                    }
                }
            }
            Ok(Message::Notification { method, params }) => {
                self.on_notification(session, &method, params)
            }
            Ok(Message::Response { id, outcome }) => self.on_response(session, id, outcome),
            Err(malformed) => {
                let Malformed {
                    kind,
                    reply,
                    message,
                } = *malformed;
                if let Some((id, error)) = reply {
                    self.state.reply_error(session, id.as_ref(), &error);
                }
                self.state.peer_error(session, kind, message);
            }
        }
    }

    /// Serves a request; [`Misread`] (nothing answered) when its params, unchecked, are no
    /// single JSON value.
    fn on_request(
        &mut self,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Params<'_>,
    ) -> Result<(), Misread> {
        let st = &mut self.state;
        if st.check.is_some() && !era::per_request(method, params.text()) {
            // A line that is no JSON is shown to no check: it gets -32700.
            params.check().ok_or(Misread)?;
            if let Err(reject) = st.check_method(method) {
                st.refuse(session, id, reject);
                return Ok(());
            }
        }
        let Some(s) = st.session(session) else {
            return Ok(());
        };
        let refusal = if s.requests.contains_key(id) {
            let error = RpcError::invalid_request(format!(
                "Invalid Request: id {id} is already used by a request in progress"
            ));
            Some(Reject::peer(PeerErrorKind::DuplicateId, error))
        } else {
            let pending = s.requests.len();
            (pending >= st.config.limits.max_pending_requests && may_wait(method)).then(|| {
                let error = RpcError::internal(format!(
                    "Too many requests in progress ({pending}); retry later"
                ));
                Reject::peer(PeerErrorKind::TooManyPending, error)
            })
        };
        if let Some(reject) = refusal {
            params.check().ok_or(Misread)?;
            st.refuse(session, id, reject);
            return Ok(());
        }
        if method == "ping" && era::answers_ping(params.text()) {
            params.check().ok_or(Misread)?;
            let line = jsonrpc::reply_with(id, 48, |buf| buf.push_str("{}"));
            st.reply(session, id, None, line);
            return Ok(());
        }
        if let Err(reject) = era::route_request(st, session, id, method, params).ok_or(Misread)? {
            st.refuse(session, id, reject);
        }
        Ok(())
    }

    fn on_notification(&mut self, session: SessionId, method: &str, params: Option<&RawValue>) {
        let st = &mut self.state;
        let read = match method {
            "notifications/cancelled" => jsonrpc::params(params).map(|p| cancel(st, session, p)),
            "notifications/progress" => jsonrpc::params(params)
                .map(|params: ProgressParams| st.event(Event::Progress { session, params })),
            "notifications/message" => {
                match jsonrpc::params::<LogNotice>(params) {
                    Ok(notice) => st.event(Event::Log {
                        session,
                        message: notice.message,
                        task: notice.meta.and_then(|m| m.related_task).map(|r| r.task_id),
                    }),
                    Err(_) => pass_on(st, session, method, params),
                }
                Ok(())
            }
            _ => {
                if !era::route_notification(st, session, method, params) {
                    pass_on(st, session, method, params);
                }
                Ok(())
            }
        };
        if let Err(reject) = read {
            self.state.peer_error(
                session,
                PeerErrorKind::Malformed,
                format!("{method}: {}", reject.error.message),
            );
        }
    }

    fn on_response(
        &mut self,
        session: SessionId,
        id: RequestId,
        outcome: Result<&RawValue, RpcError>,
    ) {
        let st = &mut self.state;
        let Some(s) = st.session_mut(session) else {
            return;
        };
        let Some(sent) = s.outbound.take(&id) else {
            if !s.outbound.was_abandoned(&id) {
                st.peer_error(
                    session,
                    PeerErrorKind::UnknownResponse,
                    format!("response to unknown request id {id}"),
                );
            }
            return;
        };
        st.clear_timer(&Timer::Request(session, id.clone()));
        let outcome = outcome.and_then(|raw| {
            serde_json::from_str::<Value>(raw.get())
                .map_err(|e| RpcError::internal(format!("unreadable result: {e}")))
        });
        match sent {
            Sent::App => st.event(Event::Response {
                session,
                request: id,
                outcome,
            }),
            Sent::Era(purpose) => {
                let era = <Eras as Kept>::era_of(&purpose);
                st.protocol(era).answered(st, session, id, purpose, outcome)
            }
        }
    }
}

/// `notifications/cancelled`: stops a plain request (no answer follows) or drops a request
/// an era holds open. Unknown or finished requests are ignored.
fn cancel(st: &mut State, session: SessionId, params: CancelledParams) {
    let Some(request) = params.request_id else {
        return;
    };
    let Some(held) = st
        .session_mut(session)
        .and_then(|s| s.requests.remove(&request))
    else {
        return;
    };
    match held {
        PeerRequest::Call(call) => {
            if st.remove_call(call).is_some() {
                st.stop(call, StopReason::Cancelled, params.reason);
            }
        }
        PeerRequest::Held(era) => st.protocol(era).drop_held(st, session, &request),
    }
}

/// Requests that can wait for an answer (and so count against the pending limit).
fn may_wait(method: &str) -> bool {
    !matches!(
        method,
        "ping" | "initialize" | "tools/list" | "tasks/get" | "tasks/list" | "tasks/cancel"
    )
}

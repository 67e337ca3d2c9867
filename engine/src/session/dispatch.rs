//! Routing one inbound line: malformed input, requests, notifications, responses.

use serde_json::value::RawValue;
use serde_json::Value;

use super::receiver::with_related_task;
use super::{InboundRequest, Phase, Role, Session};
use crate::event::Event;
use crate::jsonrpc::{self, Inbound, Malformed, RequestId, RpcError};
use crate::wire::v2025_11_25::{AugmentableParams, CancelledParams, ProgressParams, Task};

impl Session {
    pub(super) fn handle_line(&mut self, line: &[u8]) {
        match jsonrpc::parse(line) {
            Ok(Inbound::Request { id, method, params }) => self.on_request(id, &method, params),
            Ok(Inbound::Notification { method, params }) => self.on_notification(&method, params),
            Ok(Inbound::Response { id, outcome }) => self.on_response(id, outcome),
            Err(Malformed::Reply(id, error)) => {
                self.send(jsonrpc::error_line(id.as_ref(), &error));
                self.event(Event::PeerError {
                    message: error.message,
                });
            }
            Err(Malformed::Ignore(message)) => self.event(Event::PeerError { message }),
        }
    }

    fn on_request(&mut self, id: RequestId, method: &str, params: Option<&RawValue>) {
        if self.inbound.contains_key(&id) {
            let error = RpcError::invalid_request(format!(
                "Invalid Request: id {id} is already used by a request in progress"
            ));
            self.reply_error(&id, &error);
            self.event(Event::PeerError {
                message: error.message,
            });
            return;
        }
        let may_wait = matches!(
            method,
            "tools/call"
                | "tasks/result"
                | "sampling/createMessage"
                | "elicitation/create"
                | "roots/list"
        );
        if may_wait && self.inbound.len() >= self.config.max_pending_requests {
            let error = RpcError::new(
                jsonrpc::code::INTERNAL_ERROR,
                format!(
                    "Too many requests in progress ({}); retry later",
                    self.inbound.len()
                ),
            );
            return self.reply_error(&id, &error);
        }
        let ready = matches!(self.phase, Phase::Ready { .. });
        let features = self.config.client;
        let outcome = match (self.role, method) {
            (_, "ping") => {
                self.reply(&id, &serde_json::json!({}));
                Ok(())
            }
            (Role::Server, "initialize") => self.on_initialize(&id, params),
            _ if !ready => Err(RpcError::invalid_request(format!(
                "Invalid Request: {method} before initialization completed"
            ))),
            (Role::Server, "tools/list") => self.on_tools_list(&id, params),
            (Role::Server, "tools/call") => self.on_tools_call(&id, params),
            (_, "tasks/get") if self.hosts_tasks() => self.on_tasks_get(&id, params),
            (_, "tasks/result") if self.hosts_tasks() => self.on_tasks_result(&id, params),
            (_, "tasks/list") if self.hosts_tasks() => self.on_tasks_list(&id, params),
            (_, "tasks/cancel") if self.hosts_tasks() => self.on_tasks_cancel(&id, params),
            (Role::Client, "sampling/createMessage") if features.sampling => {
                self.on_peer_request(&id, method, params, true)
            }
            (Role::Client, "elicitation/create") if features.elicitation => {
                self.on_peer_request(&id, method, params, true)
            }
            (Role::Client, "roots/list") if features.roots => {
                self.on_peer_request(&id, method, params, false)
            }
            _ => Err(RpcError::method_not_found(method)),
        };
        if let Err(error) = outcome {
            self.reply_error(&id, &error);
        }
    }

    /// A server-to-client request for the application, possibly task-augmented.
    fn on_peer_request(
        &mut self,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
        augmentable: bool,
    ) -> Result<(), RpcError> {
        let common: AugmentableParams = jsonrpc::params(params)?;
        let progress_token = common.meta.as_ref().and_then(|m| m.progress_token.clone());
        let metadata = common.task_metadata(augmentable && self.hosts_tasks())?;
        let related_task = common.meta.and_then(|m| m.related_task).map(|t| t.task_id);
        let task = match metadata {
            Some(metadata) => Some(self.begin_task(id, metadata, progress_token, None)?),
            None => {
                let related_task = related_task.clone();
                let pending = InboundRequest::App {
                    progress_token,
                    related_task,
                };
                self.inbound.insert(id.clone(), pending);
                None
            }
        };
        self.event(Event::Request {
            request: id.clone(),
            method: method.to_owned(),
            params: params.map(ToOwned::to_owned),
            task,
            related_task,
        });
        Ok(())
    }

    fn on_notification(&mut self, method: &str, params: Option<&RawValue>) {
        let handled = match method {
            "notifications/cancelled" => jsonrpc::params(params).map(|p| self.on_cancelled(p)),
            "notifications/tasks/status" => {
                jsonrpc::params(params).map(|task: Task| self.observe_remote_task(task))
            }
            "notifications/progress" => {
                jsonrpc::params(params).map(|p: ProgressParams| self.event(Event::Progress(p)))
            }
            _ => Ok(()),
        };
        if let Err(error) = handled {
            self.event(Event::PeerError {
                message: format!("{method}: {}", error.message),
            });
        }
    }

    /// `notifications/cancelled`: stop a plain request (no answer follows) or drop a
    /// parked `tasks/result`. Unknown or finished requests are ignored.
    fn on_cancelled(&mut self, params: CancelledParams) {
        let Some(request) = params.request_id else {
            return;
        };
        match self.inbound.remove(&request) {
            Some(InboundRequest::App { .. }) => {
                self.event(Event::RequestCancelled {
                    request,
                    reason: params.reason,
                });
            }
            Some(InboundRequest::Parked { task }) => self.unpark(&task, &request),
            None => {}
        }
    }

    /// Answers one of our pending inbound requests (plain `tools/call` or peer request).
    pub fn respond(
        &mut self,
        now: crate::Millis,
        request: &RequestId,
        outcome: Result<Value, RpcError>,
    ) -> Result<(), crate::UsageError> {
        self.check_open()?;
        self.advance(now);
        let Some(InboundRequest::App { related_task, .. }) = self.inbound.get(request) else {
            return Err(crate::UsageError::UnknownRequest(request.clone()));
        };
        let outcome = match (outcome, related_task) {
            (Ok(Value::Object(result)), Some(task)) => {
                Ok(Value::Object(with_related_task(result, task)))
            }
            (Ok(result), _) if !result.is_object() => {
                return Err(crate::UsageError::Invalid(
                    "a result must be a JSON object".into(),
                ));
            }
            (outcome, _) => outcome,
        };
        self.inbound.remove(request);
        match outcome {
            Ok(result) => self.reply(request, &result),
            Err(error) => self.reply_error(request, &error),
        }
        Ok(())
    }
}

//! The dashboard's data routes: the live feed, a task's detail, and cancel. Each request is
//! admitted as the MCP endpoint admits its own (`Host` and `Origin`, then OAuth or the
//! `authenticate` hook), and under OAuth needs the scopes of the pseudo-method
//! [`METHOD`]; a cancel needs [`CSRF_HEADER`] too.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use taskwire_driver::{Error, ServerHandle, UsageError};

use super::hub::{Hub, NotObserved};
use super::{json, stream, CSRF_HEADER, CSRF_VALUE, METHOD};
use crate::config::HttpConfig;
use crate::guard::{admit, header_str};
use crate::response::{error, json_message, stopped};
use crate::shared::ANONYMOUS;

/// What every route of one dashboard shares.
pub(crate) struct Dashboard {
    pub handle: ServerHandle,
    pub config: HttpConfig,
    pub hub: Arc<Hub>,
}

impl Dashboard {
    /// Who the request comes from (the owner its authentication names, else
    /// `anonymous`), once admitted and reading the feed; else the refusal.
    async fn admit(&self, headers: &HeaderMap) -> Result<String, Response> {
        let admitted = admit(headers, &self.config)
            .await
            .map_err(IntoResponse::into_response)?;
        admitted
            .permits_method(METHOD, &self.config)
            .map_err(IntoResponse::into_response)?;
        self.hub.ensure().await.map_err(not_observed)?;
        Ok(admitted.owner.unwrap_or_else(|| ANONYMOUS.to_owned()))
    }
}

fn not_observed(_: NotObserved) -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        -32603,
        "Service Unavailable: the dashboard needs the server's operator view; start the \
         server with Server::observe() (or it has stopped)",
    )
}

/// `GET {path}/events`: the live feed (SSE).
pub(crate) async fn events(State(dash): State<Arc<Dashboard>>, headers: HeaderMap) -> Response {
    let viewer = match dash.admit(&headers).await {
        Ok(viewer) => viewer,
        Err(refused) => return refused,
    };
    let Some(slot) = dash.hub.hold_stream() else {
        tracing::warn!(
            limit = super::hub::MAX_STREAMS,
            "dashboard: refused a stream, too many are open"
        );
        return error(
            StatusCode::TOO_MANY_REQUESTS,
            -32600,
            "Too Many Requests: too many dashboard streams are open",
        );
    };
    let Some((snapshot, news)) = dash.hub.subscribe() else {
        return stopped();
    };
    tracing::info!(viewer, "dashboard: a browser opened the live feed");
    stream::respond(slot, snapshot, news)
}

/// `GET {path}/tasks/{id}`: the task's snapshot (with its outcome) and its history.
pub(crate) async fn detail(
    State(dash): State<Arc<Dashboard>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(refused) = dash.admit(&headers).await {
        return refused;
    }
    let Some(task) = dash.handle.task(&id).await else {
        return no_task(&id);
    };
    let (row, history) = dash.hub.task(&id).unzip();
    json_message(StatusCode::OK, json::detail(&task, row.as_ref(), history))
}

/// `POST {path}/tasks/{id}/cancel` with [`CSRF_HEADER`]: cancels the task as its tool would,
/// in the name of the caller.
pub(crate) async fn cancel(
    State(dash): State<Arc<Dashboard>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let operator = match dash.admit(&headers).await {
        Ok(operator) => operator,
        Err(refused) => return refused,
    };
    if header_str(&headers, CSRF_HEADER) != Some(CSRF_VALUE) {
        tracing::warn!(task = %id, operator, "dashboard: refused a cancel without its header");
        return error(
            StatusCode::FORBIDDEN,
            -32600,
            &format!("Forbidden: a dashboard cancel needs the header {CSRF_HEADER}: {CSRF_VALUE}"),
        );
    }
    match dash.handle.cancel(&id, &operator).await {
        Ok(()) => {
            tracing::info!(task = %id, operator, "dashboard: task cancelled");
            let body = serde_json::json!({ "task": id, "cancelledBy": operator });
            json_message(StatusCode::OK, body.to_string())
        }
        Err(Error::Usage(UsageError::UnknownTask(_))) => no_task(&id),
        Err(Error::Usage(finished @ UsageError::TaskFinished { .. })) => {
            tracing::info!(task = %id, operator, "dashboard: cancel of a finished task");
            error(
                StatusCode::CONFLICT,
                -32600,
                &format!("Conflict: {finished}"),
            )
        }
        Err(Error::Closed) => stopped(),
        Err(e) => {
            tracing::warn!(task = %id, operator, error = %e, "dashboard: cancel failed");
            error(StatusCode::INTERNAL_SERVER_ERROR, -32603, &e.to_string())
        }
    }
}

fn no_task(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        -32600,
        &format!("Not Found: this server holds no task {id:?}"),
    )
}

//! A live task dashboard for operators ([`dashboard`]): a page, the server's tasks as a live
//! feed, a task's detail, and cancel.

mod assets;
mod hub;
mod json;
mod routes;
mod stream;
mod table;

use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;
use taskwire_driver::ServerHandle;

use crate::config::HttpConfig;
use hub::Hub;
use routes::Dashboard;

/// The pseudo-method whose scopes guard the dashboard under OAuth: give it some in
/// [`ResourceConfig::method_scopes`] (`task-server --auth-scopes taskwire/dashboard=admin`)
/// to keep the dashboard to the tokens that carry them.
///
/// [`ResourceConfig::method_scopes`]: crate::oauth::resource::ResourceConfig::method_scopes
pub const DASHBOARD_METHOD: &str = "taskwire/dashboard";

/// The header (with the value [`DASHBOARD_CANCEL`]) a dashboard's cancel needs: a page of
/// another origin cannot send it without a CORS preflight, which the dashboard does not
/// answer (cross-site request forgery).
pub const DASHBOARD_HEADER: &str = "x-taskwire-dashboard";

/// [`DASHBOARD_HEADER`]'s value on a cancel.
pub const DASHBOARD_CANCEL: &str = "cancel";

use DASHBOARD_CANCEL as CSRF_VALUE;
use DASHBOARD_HEADER as CSRF_HEADER;
use DASHBOARD_METHOD as METHOD;

/// A live dashboard of the tasks of the running server `handle`, at `path` (e.g. `/tasks`):
/// mount it in your app beside [`router`](crate::router) (`Router::merge`), with the same
/// `config`. The server must keep an operator's view
/// ([`Server::observe`](taskwire_driver::Server::observe)); without one every data route
/// answers `503` with a JSON-RPC error saying so.
///
/// The page shows every task the server holds, whoever owns it: id, tool, owner, status,
/// status message, progress, age and duration, updated live, filtered by status, tool and
/// owner; the counts by status; the tasks ended per 10 s over the last 5 minutes; a task's
/// detail (its status history, the questions it asked, its outcome) with a Cancel button
/// while it runs. The page, its script and its style are built in (nothing is fetched from
/// elsewhere); the script reads the data routes with `fetch`, so it can send a bearer token.
///
/// Routes (`{path}` without a trailing `/`):
///
/// - `GET {path}`, `{path}/dashboard.js`, `{path}/dashboard.css`: the page, for anyone (it
///   holds no data; it may not be framed).
/// - `GET {path}/events`: the live feed as SSE, JSON events: `snapshot` (`{"rows":[…]}`,
///   every task, oldest first: `id`, `tool`, `owner`, `era`, `status`, `message`,
///   `progress`, `createdAt`, `updatedAt`, `runsHere`), then `row` (a task appeared or
///   changed), `asked`, `answered` (its work asked its requestor, and the answer) and `gone`.
///   A stream that falls 1,024 changes behind, and every stream when the server's feed
///   starts over, gets a fresh `snapshot`. At most 64 streams are open at once (`429`).
/// - `GET {path}/tasks/{id}`: the task's snapshot as the server holds it (with its
///   `outcome`, `request` and pending `inputs`), its row, and its history: its status
///   changes and questions, the newest 32 (`404` for a task not held).
/// - `POST {path}/tasks/{id}/cancel` with the header [`DASHBOARD_HEADER`]`:`
///   [`DASHBOARD_CANCEL`]: cancels the task as its tool would, its status message
///   `Cancelled by <caller>` (the owner the request's authentication names, else
///   `anonymous`); logged. `403` without the header, `409` for a task already finished.
///
/// The server reads its feed ([`ServerHandle::watch`]) once for every browser, from the
/// first request of a data route on; a feed that closes is watched again.
///
/// **Access.** Every data route is admitted as the MCP endpoint admits its requests:
/// `Host` and `Origin` against [`HttpConfig::allowed_hosts`], then
/// [`HttpConfig::oauth`] or [`HttpConfig::authenticate`] (`401` without valid credentials;
/// the page then asks for a bearer token and keeps it in the tab's `sessionStorage`).
/// Without either, anyone who passes the `Host` check (localhost, by default) sees and
/// cancels every task. Under OAuth any valid token for the server sees every owner's tasks
/// unless [`DASHBOARD_METHOD`] has scopes of its own (`403` without them). The CORS policy
/// ([`HttpConfig::cors`]) does not apply: pages of other origins cannot read the data
/// routes.
pub fn dashboard(path: &str, handle: ServerHandle, config: HttpConfig) -> Router {
    let base = path.trim_end_matches('/');
    let page = assets::page(base);
    let dash = Arc::new(Dashboard {
        hub: Hub::new(handle.clone()),
        handle,
        config,
    });
    Router::new()
        .route(path, get(move || async move { assets::html(page) }))
        .route(
            &format!("{base}/dashboard.js"),
            get(|| async { assets::script() }),
        )
        .route(
            &format!("{base}/dashboard.css"),
            get(|| async { assets::style() }),
        )
        .route(&format!("{base}/events"), get(routes::events))
        .route(&format!("{base}/tasks/{{id}}"), get(routes::detail))
        .route(&format!("{base}/tasks/{{id}}/cancel"), post(routes::cancel))
        .with_state(dash)
}

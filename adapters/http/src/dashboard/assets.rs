//! The page, its script and its style, built into the binary (nothing is fetched from
//! elsewhere at run time). The page holds no data: anyone may load it.

use axum::body::Bytes;
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/dashboard.js");
const STYLE: &str = include_str!("assets/dashboard.css");

/// What the page may load and do: only its own script, style and data routes; no frames.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; \
    form-action 'none'";

/// The page for a dashboard whose routes start with `base` (`/tasks`; `` for `/`).
pub(crate) fn page(base: &str) -> Bytes {
    Bytes::from(PAGE.replace("{{base}}", &attribute(base)))
}

/// `text` as the value of a double-quoted HTML attribute.
fn attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The page's response.
pub(crate) fn html(page: Bytes) -> Response {
    let mut response = served(page, "text/html; charset=utf-8");
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// The script's response.
pub(crate) fn script() -> Response {
    served(SCRIPT, "text/javascript; charset=utf-8")
}

/// The style's response.
pub(crate) fn style() -> Response {
    served(STYLE, "text/css; charset=utf-8")
}

fn served(body: impl IntoResponse, kind: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_its_base_escaped() {
        let page = page("/a\"b");
        let page = String::from_utf8_lossy(&page);
        assert!(page.contains("data-base=\"/a&quot;b\""), "{page}");
        assert!(!page.contains("{{base}}"));
    }
}

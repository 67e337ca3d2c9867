//! The core scenarios' resources (`resources-*`): two static ones, one to subscribe to, and
//! a template whose `{id}` the content reflects. Subscriptions are declared (the engine
//! answers them); no resource ever changes, so no update is sent.

use serde::Deserialize;
use serde_json::{json, Value};
use taskwire_driver::engine::RpcError;
use taskwire_driver::Server;

use super::{parse, TEST_IMAGE_BASE64};

/// `-32002`: MCP's code for a resource that does not exist.
const RESOURCE_NOT_FOUND: i64 = -32002;

const TEMPLATE: &str = "test://template/{id}/data";

#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

/// Adds `resources/list`, `resources/templates/list` and `resources/read`, and declares
/// them with subscriptions.
pub(super) fn add(server: Server) -> Server {
    server
        .capability("resources", json!({ "subscribe": true }))
        .handle("resources/list", |_| async {
            Ok(json!({ "resources": listed() }))
        })
        .handle("resources/templates/list", |_| async {
            Ok(json!({ "resourceTemplates": [{
                "uriTemplate": TEMPLATE, "name": "template", "title": "Resource Template",
                "description": "A resource template with parameter substitution",
                "mimeType": "application/json" }] }))
        })
        .handle("resources/read", |params| async move {
            let UriParams { uri } = parse(params)?;
            let contents = read(&uri).ok_or_else(|| {
                RpcError::new(RESOURCE_NOT_FOUND, format!("Resource not found: {uri}"))
                    .with_data(json!({ "uri": uri }))
            })?;
            Ok(json!({ "contents": [contents] }))
        })
}

fn listed() -> Value {
    let entry = |name: &str, title: &str, description: &str, mime: &str| {
        json!({ "uri": format!("test://{name}"), "name": name, "title": title,
                "description": description, "mimeType": mime })
    };
    json!([
        entry(
            "static-text",
            "Static Text Resource",
            "A static text resource for testing",
            "text/plain"
        ),
        entry(
            "static-binary",
            "Static Binary Resource",
            "A static binary resource (image) for testing",
            "image/png"
        ),
        entry(
            "watched-resource",
            "Watched Resource",
            "A resource that auto-updates every 3 seconds",
            "text/plain"
        ),
    ])
}

/// The contents at `uri`, if it names a resource.
fn read(uri: &str) -> Option<Value> {
    let text = |mime: &str, text: &str| json!({ "uri": uri, "mimeType": mime, "text": text });
    match uri {
        "test://static-text" => Some(text(
            "text/plain",
            "This is the content of the static text resource.",
        )),
        "test://static-binary" => {
            Some(json!({ "uri": uri, "mimeType": "image/png", "blob": TEST_IMAGE_BASE64 }))
        }
        "test://watched-resource" => Some(text("text/plain", "Watched resource content")),
        _ => {
            let id = uri
                .strip_prefix("test://template/")?
                .strip_suffix("/data")
                .filter(|id| !id.is_empty() && !id.contains('/'))?;
            let data =
                json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
            Some(text("application/json", &data.to_string()))
        }
    }
}

//! What the proxy serves unchanged from the server behind: the requests of the capabilities
//! it declares (resources, prompts, completion), each forwarded as it came and its answer
//! returned as it went; but subscriptions to its resources, which the front's engine keeps
//! for its clients of either era.

use serde_json::Value;
use taskwire_driver::Server;

use crate::backend::Backend;
use crate::forward::behind;
use crate::front::Front;

/// The methods each capability of the server behind brings.
const METHODS: [(&str, &[&str]); 3] = [
    (
        "resources",
        &[
            "resources/list",
            "resources/templates/list",
            "resources/read",
        ],
    ),
    ("prompts", &["prompts/list", "prompts/get"]),
    ("completions", &["completion/complete"]),
];

/// `server`, declaring each capability of those the server behind declares (`capabilities`
/// as it sent them) and forwarding its methods to `backend`; the resources the front's
/// clients subscribe to (when the server behind takes subscriptions) asked of it by the
/// `front`.
pub(crate) fn serve(
    mut server: Server,
    backend: &Backend,
    front: &Front,
    capabilities: &Value,
) -> Server {
    for (capability, methods) in METHODS {
        let Some(declared) = capabilities.get(capability) else {
            continue;
        };
        server = server.capability(capability, declared.clone());
        for method in methods {
            let backend = backend.clone();
            server = server.handle(method, move |params| {
                let backend = backend.clone();
                async move {
                    let params = (!params.is_null()).then_some(params);
                    let client = backend.client().await?;
                    client.request(method, params).await.map_err(behind)
                }
            });
        }
    }
    if capabilities["resources"]["subscribe"] == true {
        let subscriptions = front.subscriptions.clone();
        server = server.on_resource_subscriptions(move |uris| subscriptions.wanted(uris));
    }
    server
}

//! The core scenarios' prompts (`prompts-*`) and `completion/complete`, which offers no
//! values (as the reference does).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};
use taskwire_driver::engine::RpcError;
use taskwire_driver::Server;

use super::{parse, TEST_IMAGE_BASE64};

#[derive(Deserialize)]
struct GetParams {
    name: String,
    #[serde(default)]
    arguments: Option<HashMap<String, String>>,
}

/// Adds `prompts/list`, `prompts/get` and `completion/complete`, and declares them.
pub(super) fn add(server: Server) -> Server {
    server
        .capability("prompts", json!({}))
        .capability("completions", json!({}))
        .handle("prompts/list", |_| async {
            Ok(json!({ "prompts": listed() }))
        })
        .handle("prompts/get", |params| async move { get(parse(params)?) })
        .handle("completion/complete", |_| async {
            Ok(json!({ "completion": { "values": [], "total": 0, "hasMore": false } }))
        })
}

fn listed() -> Value {
    let argument = |name: &str, description: &str| json!({ "name": name, "description": description, "required": true });
    json!([
        { "name": "test_simple_prompt", "title": "Simple Test Prompt",
          "description": "A simple prompt without arguments" },
        { "name": "test_prompt_with_arguments", "title": "Prompt With Arguments",
          "description": "A prompt with required arguments",
          "arguments": [argument("arg1", "First test argument"),
                        argument("arg2", "Second test argument")] },
        { "name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource",
          "description": "A prompt that includes an embedded resource",
          "arguments": [argument("resourceUri", "URI of the resource to embed")] },
        { "name": "test_prompt_with_image", "title": "Prompt With Image",
          "description": "A prompt that includes image content" },
    ])
}

fn get(params: GetParams) -> Result<Value, RpcError> {
    let arguments = params.arguments.unwrap_or_default();
    let argument = |name: &str| {
        arguments.get(name).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "Invalid params: prompt {} needs the argument {name}",
                params.name
            ))
        })
    };
    let user = |content: Value| json!({ "role": "user", "content": content });
    let text = |text: String| user(json!({ "type": "text", "text": text }));
    let messages = match params.name.as_str() {
        "test_simple_prompt" => vec![text("This is a simple prompt for testing.".into())],
        "test_prompt_with_arguments" => {
            let (arg1, arg2) = (argument("arg1")?, argument("arg2")?);
            vec![text(format!(
                "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
            ))]
        }
        "test_prompt_with_embedded_resource" => vec![
            user(json!({ "type": "resource", "resource": {
                "uri": argument("resourceUri")?, "mimeType": "text/plain",
                "text": "Embedded resource content for testing." } })),
            text("Please process the embedded resource above.".into()),
        ],
        "test_prompt_with_image" => vec![
            user(json!({ "type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png" })),
            text("Please analyze the image above.".into()),
        ],
        other => {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: no prompt named {other}"
            )))
        }
    };
    Ok(json!({ "messages": messages }))
}

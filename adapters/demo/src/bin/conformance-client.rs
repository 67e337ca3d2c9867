//! `conformance-client URL`: our client as the official conformance suite's client scenarios
//! run it (`conformance client --command conformance-client --scenario NAME`). The suite starts
//! a scenario server, runs this program with its URL as the last argument, and names the
//! scenario, its protocol version and its context in the environment
//! (`MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION`, `MCP_CONFORMANCE_CONTEXT`).
//!
//! One flow serves every scenario it runs, as a real application would behave: open the
//! connection over Streamable HTTP in the era the suite names (2025-11-25 when it names none),
//! list the tools, and call each one, with the arguments the context gives for it, or else
//! with a value for each required property of its input schema. Elicitation is accepted with
//! the defaults of the requested schema (SEP-1034); sampling answers one fixed text.
//!
//! Every scenario's server may ask for OAuth (the `auth/*` scenarios): the client signs in with
//! the headless user agent (the suite's authorization server redirects at once), as the
//! pre-registered client the context names (`client_id`, `client_secret`), else with the
//! suite's Client ID Metadata Document URL where the server takes one, else registering
//! itself; the `auth/client-credentials-*` scenarios sign in with client credentials.
//!
//! Exit code 0 when every step succeeded; 1 with the reason on stderr otherwise.

use std::process::ExitCode;

use clap::Parser;
use serde_json::{json, Map, Value};
use taskwire_demo::flow;
use taskwire_driver::engine::{ClientEra, Config, Era, RpcError, Tool};
use taskwire_driver::{
    Client, ClientBuilder, ElicitationAnswer, ElicitationMode, ElicitationRequest, Error,
    SamplingAnswer,
};
use taskwire_http::oauth::client::{Headless, OAuthClient};
use taskwire_http::HttpClient;

/// The client's metadata document URL the suite's `auth/basic-cimd` scenario expects.
const METADATA_DOCUMENT: &str = "https://conformance-test.local/client-metadata.json";

/// Our client as the MCP conformance suite's client scenarios run it: the scenario, its
/// protocol version and context come from MCP_CONFORMANCE_SCENARIO,
/// MCP_CONFORMANCE_PROTOCOL_VERSION and MCP_CONFORMANCE_CONTEXT.
#[derive(Debug, Parser)]
#[command(name = "conformance-client", version)]
struct Args {
    /// The scenario server's Streamable HTTP endpoint (the suite passes it).
    url: String,
}

fn main() -> ExitCode {
    let Args { url } = Args::parse();
    let _telemetry = taskwire_demo::logs::init("warn");
    let era = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok("2026-07-28") => Era::V2026_07_28,
        _ => Era::V2025_11_25,
    };
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("conformance-client: cannot start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let http = HttpClient::new(&url).oauth(oauth(&context));
        let client = http.connect(builder(era));
        let outcome = run(&client, &context).await;
        client.close().await;
        drop(client);
        // Lets the transport end a 2025-11-25 session (DELETE) before the runtime stops.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        outcome
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {url}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How to sign in, from the scenario's context: client credentials for the
/// `auth/client-credentials-*` scenarios, else the code flow as the given client, if any.
fn oauth(context: &Value) -> OAuthClient {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let id = context["client_id"].as_str();
    let secret = context["client_secret"].as_str().map(str::to_owned);
    if let (true, Some(id), Some(secret)) = (
        scenario.starts_with("auth/client-credentials"),
        id,
        secret.clone(),
    ) {
        return OAuthClient::client_credentials(id, secret);
    }
    let oauth = OAuthClient::new(Headless::default())
        .name("taskwire-conformance-client")
        .metadata_document(METADATA_DOCUMENT);
    match id {
        Some(id) => oauth.client(id, secret),
        None => oauth,
    }
}

/// A client of `era` that answers elicitation and sampling.
fn builder(era: Era) -> ClientBuilder {
    let mut config = Config::new("taskwire-conformance-client", env!("CARGO_PKG_VERSION"));
    config.client_era = ClientEra::Only(era);
    ClientBuilder::new(config)
        .on_elicitation(|request| async move { Ok(accept_defaults(&request)) })
        .on_sampling(|_| async {
            Ok::<_, RpcError>(SamplingAnswer::text("none", "taskwire conformance client"))
        })
}

/// Opens the connection, lists the tools and calls each one. A call the server refuses is
/// reported and the flow goes on (the scenario judges what the server saw); a transport
/// failure ends it.
async fn run(client: &Client, context: &Value) -> Result<(), Error> {
    client.initialize().await?;
    let tools = client.list_tools().await?;
    for tool in &tools {
        let arguments = given_arguments(context, &tool.name)
            .or_else(|| schema_echo(tool, &tools))
            .unwrap_or_else(|| arguments_for(&tool.input_schema));
        match client.call_tool(&tool.name, arguments).await {
            Err(Error::Rpc(refused)) => eprintln!("conformance-client: {}: {refused}", tool.name),
            outcome => {
                outcome?;
            }
        }
    }
    Ok(())
}

/// For a tool that asks for the `schema` another tool was listed with (the
/// `json-schema-2020-12-preservation` scenario's echo tool names it in its description):
/// that schema, as this client kept it.
fn schema_echo(tool: &Tool, tools: &[Tool]) -> Option<Value> {
    let wanted = tool.input_schema["properties"]["schema"]["description"].as_str()?;
    let listed = tools
        .iter()
        .find(|other| other.name != tool.name && wanted.contains(other.name.as_str()))?;
    Some(json!({ "schema": listed.input_schema }))
}

/// The arguments the scenario's context gives for `tool` (`toolCalls: [{name, arguments}]`).
fn given_arguments(context: &Value, tool: &str) -> Option<Value> {
    context["toolCalls"]
        .as_array()?
        .iter()
        .find(|call| call["name"] == tool)
        .map(|call| call["arguments"].clone())
}

/// A value for each required property of an input schema: its default, its first enum
/// member, or one of its type.
fn arguments_for(schema: &Value) -> Value {
    let mut arguments = Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        arguments.insert(name.to_owned(), sample(&schema["properties"][name]));
    }
    Value::Object(arguments)
}

/// A value that fits one property's schema.
fn sample(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match property["type"].as_str() {
        Some("number") | Some("integer") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => arguments_for(property),
        _ => json!("taskwire"),
    }
}

/// Accepts an elicitation with every default its requested schema gives (SEP-1034).
fn accept_defaults(request: &ElicitationRequest) -> ElicitationAnswer {
    match &request.mode {
        ElicitationMode::Form { requested_schema } => {
            ElicitationAnswer::Accept(flow::schema_defaults(requested_schema))
        }
        ElicitationMode::Url { .. } => ElicitationAnswer::Accept(Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_get_defaults_enums_or_typed_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": "number" },
                "mode": { "type": "string", "enum": ["fast", "slow"] },
                "name": { "type": "string", "default": "x" },
                "optional": { "type": "string" }
            },
            "required": ["a", "mode", "name"]
        });
        assert_eq!(
            arguments_for(&schema),
            json!({ "a": 1, "mode": "fast", "name": "x" })
        );
    }

    #[test]
    fn elicitation_is_accepted_with_the_schema_defaults() {
        let params = json!({ "requestedSchema": { "properties": {
            "name": { "type": "string", "default": "John Doe" },
            "age": { "type": "integer", "default": 30 },
            "note": { "type": "string" }
        } } });
        let request = ElicitationRequest::from_params(params).unwrap();
        assert_eq!(
            accept_defaults(&request),
            ElicitationAnswer::accept(&json!({ "name": "John Doe", "age": 30 })).unwrap()
        );
    }
}

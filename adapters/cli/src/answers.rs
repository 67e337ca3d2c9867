//! Answering the server's questions: elicitations from an answers file, from a form in the
//! terminal, or declined when neither is there; sampling requests by a program.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use inquire::{Confirm, CustomType, InquireError, MultiSelect, Select, Text};
use serde_json::{json, Map, Value};
use taskwire_driver::{
    ElicitationAnswer, ElicitationMode, ElicitationRequest, RpcError, SamplingAnswer,
    SamplingRequest,
};
use tokio::io::AsyncWriteExt;

use crate::display::Display;

/// Answers read from a file (`--answers`), used in order; the last one repeats.
pub struct AnswersFile(Mutex<VecDeque<Value>>);

impl AnswersFile {
    /// Reads `path`: one answer (`{"action": …}`) or an array of them.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read --answers {}: {e}", path.display()))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("--answers {} is not JSON: {e}", path.display()))?;
        let answers: VecDeque<Value> = match value {
            Value::Array(answers) => answers.into(),
            one => [one].into(),
        };
        for answer in &answers {
            answer_of(answer).map_err(|e| format!("--answers {}: {e}", path.display()))?;
        }
        if answers.is_empty() {
            return Err(format!("--answers {} holds no answer", path.display()));
        }
        Ok(AnswersFile(Mutex::new(answers)))
    }

    fn next(&self) -> ElicitationAnswer {
        let mut answers = self.0.lock().unwrap();
        let answer = match answers.len() {
            1 => answers[0].clone(),
            _ => answers.pop_front().expect("never empty"),
        };
        answer_of(&answer).expect("checked when loaded")
    }
}

/// `{"action": "accept", "content": {…}}`, `{"action": "decline"}` or `{"action": "cancel"}`.
fn answer_of(value: &Value) -> Result<ElicitationAnswer, String> {
    match value["action"].as_str() {
        Some("accept") => match &value["content"] {
            Value::Null => Ok(ElicitationAnswer::Accept(Map::new())),
            Value::Object(fields) => Ok(ElicitationAnswer::Accept(fields.clone())),
            other => Err(format!(
                "an answer's content must be an object, not {other}"
            )),
        },
        Some("decline") => Ok(ElicitationAnswer::Decline),
        Some("cancel") => Ok(ElicitationAnswer::Cancel),
        _ => Err(format!(
            "an answer needs \"action\": \"accept\", \"decline\" or \"cancel\": {value}"
        )),
    }
}

/// How elicitations are answered.
#[derive(Clone)]
pub struct Elicitations {
    /// `--answers`, when given.
    pub file: Option<Arc<AnswersFile>>,
    /// Whether a person is there to fill in forms (a terminal, no `--json`).
    pub interactive: bool,
    pub display: Display,
}

impl Elicitations {
    /// Answers one elicitation, reporting the question and the answer as events.
    pub async fn answer(self, request: ElicitationRequest) -> Result<ElicitationAnswer, RpcError> {
        self.display.event(
            json!({ "event": "input", "method": "elicitation/create", "params": request.params }),
            || format!("input requested: {}", request.message),
        );
        let answer = match (&self.file, self.interactive) {
            (Some(file), _) => file.next(),
            (None, true) => {
                let display = self.display.clone();
                let asked = request.clone();
                tokio::task::spawn_blocking(move || display.suspend(|| ask(&asked)))
                    .await
                    .map_err(|e| RpcError::internal(format!("the form broke: {e}")))?
            }
            (None, false) => ElicitationAnswer::Decline,
        };
        // An answer that does not fit the form is refused before it is sent.
        if let Err(e) = request.check(&answer) {
            self.display
                .event(json!({ "event": "answer", "error": e.message }), || {
                    format!("answer not sent: {}", e.message)
                });
            return Err(e);
        }
        let action = answer.action();
        self.display
            .event(json!({ "event": "answer", "action": action }), || {
                format!("answered: {action}")
            });
        Ok(answer)
    }
}

/// Asks the user in the terminal: fill in the form (or open the page), decline or cancel.
fn ask(request: &ElicitationRequest) -> ElicitationAnswer {
    let first = match &request.mode {
        ElicitationMode::Url { url, .. } => format!("Open {url}, then go on"),
        ElicitationMode::Form { .. } => "Fill in the form".to_owned(),
    };
    let choices = vec![first.clone(), "Decline".to_owned(), "Cancel".to_owned()];
    let chosen = Select::new(&format!("{} —", request.message), choices).prompt();
    match chosen.as_deref() {
        Ok("Decline") => ElicitationAnswer::Decline,
        Ok(choice) if choice == first => match &request.mode {
            ElicitationMode::Form { requested_schema } => match fill_in(requested_schema) {
                Ok(fields) => ElicitationAnswer::Accept(fields),
                Err(_) => ElicitationAnswer::Cancel,
            },
            ElicitationMode::Url { .. } => ElicitationAnswer::Accept(Map::new()),
        },
        _ => ElicitationAnswer::Cancel,
    }
}

/// Prompts for each field of a form; Esc or Ctrl-C stops (the answer is then `cancel`).
fn fill_in(schema: &Value) -> Result<Map<String, Value>, InquireError> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut fields = Map::new();
    // The required fields first (the schema's own order is not kept: JSON objects are read
    // sorted by name).
    let mut properties: Vec<(&String, &Value)> = schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .collect();
    properties.sort_by_key(|(name, _)| !required.contains(&name.as_str()));
    for (name, property) in properties {
        let optional = !required.contains(&name.as_str());
        let label = property["title"].as_str().unwrap_or(name);
        let label = match optional {
            true => format!("{label} (optional)"),
            false => label.to_owned(),
        };
        let help = property["description"].as_str();
        if let Some(value) = prompt_field(&label, help, property, optional)? {
            fields.insert(name.clone(), value);
        }
    }
    Ok(fields)
}

/// One field's prompt, by its type; `None` for an optional field left empty.
fn prompt_field(
    label: &str,
    help: Option<&str>,
    property: &Value,
    optional: bool,
) -> Result<Option<Value>, InquireError> {
    let default = &property["default"];
    if let Some(options) = options(property) {
        let titles: Vec<String> = options.iter().map(|(_, title)| title.clone()).collect();
        let start = options
            .iter()
            .position(|(value, _)| Some(value.as_str()) == default.as_str())
            .unwrap_or(0);
        let chosen = Select::new(label, titles.clone())
            .with_starting_cursor(start)
            .prompt()?;
        let at = titles.iter().position(|t| *t == chosen).unwrap_or(0);
        return Ok(Some(Value::String(options[at].0.clone())));
    }
    match property["type"].as_str() {
        Some("boolean") => {
            let mut prompt = Confirm::new(label).with_default(default.as_bool().unwrap_or(false));
            if let Some(help) = help {
                prompt = prompt.with_help_message(help);
            }
            Ok(Some(Value::Bool(prompt.prompt()?)))
        }
        Some("array") => {
            let items = options(&property["items"]).unwrap_or_default();
            let titles: Vec<String> = items.iter().map(|(_, title)| title.clone()).collect();
            let chosen = MultiSelect::new(label, titles.clone()).prompt()?;
            let values = chosen
                .iter()
                .filter_map(|c| titles.iter().position(|t| t == c))
                .map(|at| Value::String(items[at].0.clone()))
                .collect();
            Ok(Some(Value::Array(values)))
        }
        Some(kind @ ("integer" | "number")) if !optional => {
            let value = match kind {
                "integer" => {
                    let mut prompt = CustomType::<i64>::new(label);
                    if let Some(default) = default.as_i64() {
                        prompt = prompt.with_default(default);
                    }
                    json!(prompt.prompt()?)
                }
                _ => {
                    let mut prompt = CustomType::<f64>::new(label);
                    if let Some(default) = default.as_f64() {
                        prompt = prompt.with_default(default);
                    }
                    json!(prompt.prompt()?)
                }
            };
            Ok(Some(value))
        }
        kind => {
            let mut prompt = Text::new(label);
            let default_text = default
                .as_str()
                .map(str::to_owned)
                .or_else(|| (!default.is_null()).then(|| default.to_string()));
            if let Some(default) = &default_text {
                prompt = prompt.with_default(default);
            }
            if let Some(help) = help {
                prompt = prompt.with_help_message(help);
            }
            let text = prompt.prompt()?;
            if text.is_empty() && optional {
                return Ok(None);
            }
            // An optional number typed as text.
            Ok(Some(match kind {
                Some("integer" | "number") => {
                    serde_json::from_str(&text).unwrap_or(Value::String(text))
                }
                _ => Value::String(text),
            }))
        }
    }
}

/// An enum property's choices as (value, title): `enum`, or `oneOf` / `anyOf` of `const`s
/// with their titles.
fn options(property: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = property["enum"].as_array() {
        let names = property["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let value = v.as_str()?.to_owned();
                    let title = names
                        .and_then(|n| n.get(i)?.as_str())
                        .map_or_else(|| value.clone(), str::to_owned);
                    Some((value, title))
                })
                .collect(),
        );
    }
    let entries = ["oneOf", "anyOf"]
        .iter()
        .find_map(|key| property[key].as_array())?;
    Some(
        entries
            .iter()
            .filter_map(|e| {
                let value = e["const"].as_str()?.to_owned();
                let title = e["title"]
                    .as_str()
                    .map_or_else(|| value.clone(), str::to_owned);
                Some((value, title))
            })
            .collect(),
    )
}

/// Answers a sampling request with `command` (run by `sh -c`): the request's params as JSON
/// on its stdin, its stdout (trimmed) as the answer's text.
pub async fn sample(
    command: String,
    display: Display,
    request: SamplingRequest,
) -> Result<SamplingAnswer, RpcError> {
    display.event(
        json!({ "event": "input", "method": "sampling/createMessage", "params": request.params }),
        || "sampling requested".to_owned(),
    );
    let failed = |what: String| RpcError::internal(format!("--sampling-cmd {command:?} {what}"));
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot start: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped");
    stdin
        .write_all(request.params.to_string().as_bytes())
        .await
        .map_err(|e| failed(format!("did not read its input: {e}")))?;
    drop(stdin);
    let output = child
        .wait_with_output()
        .await
        .map_err(|e| failed(format!("broke: {e}")))?;
    if !output.status.success() {
        return Err(failed(format!("exited with {}", output.status)));
    }
    let text = String::from_utf8_lossy(&output.stdout)
        .trim_end()
        .to_owned();
    display.event(json!({ "event": "answer", "action": "sampled" }), || {
        "answered the sampling request".to_owned()
    });
    Ok(SamplingAnswer::text("taskwire-sampling-cmd", text))
}

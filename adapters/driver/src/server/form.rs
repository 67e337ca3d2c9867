//! A tool asks the user to fill in a Rust type (feature `schemars`): the form made from the
//! type, the answer checked against it and decoded.

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::ToolContext;
use crate::error::Error;
use crate::form;

/// The user's answer to [`ToolContext::elicit_form`].
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited<T> {
    /// Submitted: the form's fields, decoded.
    Accepted(T),
    /// Said no.
    Declined,
    /// Dismissed without choosing.
    Cancelled,
}

impl ToolContext {
    /// Asks the user, with `message`, to fill in a `T` (`elicitation/create` in form mode;
    /// a task shows `input_required` meanwhile): the requested schema is `T`'s (a struct of
    /// strings, numbers, integers, booleans, enums of strings, lists of such enums; an
    /// `Option` field is not required), and an accepted answer is checked against it and
    /// decoded into `T`.
    ///
    /// Errors: [`Error::NotAForm`] when `T` cannot be a form (a nested type, a map…; nothing
    /// is sent), [`Error::Malformed`] when the client's answer does not fit the form, and
    /// those of [`ToolContext::elicit`].
    ///
    /// ```
    /// use taskwire_driver::{CallToolResult, Config, Elicited, NoArgs, Server, TaskSupport, Tool};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Shipping {
    ///     /// Where to send it.
    ///     address: String,
    ///     express: bool,
    /// }
    ///
    /// let server = Server::new(Config::new("shop", "1.0")).tool(
    ///     Tool::new("ship", TaskSupport::Optional),
    ///     |ctx, _: NoArgs| async move {
    ///         Ok(match ctx.elicit_form::<Shipping>("Where to?").await? {
    ///             Elicited::Accepted(to) => CallToolResult::text(format!("to {}", to.address)),
    ///             Elicited::Declined | Elicited::Cancelled => CallToolResult::text("not shipped"),
    ///         })
    ///     },
    /// );
    /// ```
    pub async fn elicit_form<T: DeserializeOwned + schemars::JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, Error> {
        let schema = form::schema_of::<T>().map_err(Error::NotAForm)?;
        let params = json!({ "message": message.into(), "requestedSchema": schema });
        let answer = self.elicit(params).await?;
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let fields = match answer.get("content") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(fields)) => fields.clone(),
                    Some(other) => {
                        return Err(Error::malformed(format!(
                            "an elicitation's content must be an object, not {other}"
                        )))
                    }
                };
                form::check(&schema, &fields).map_err(Error::Malformed)?;
                T::deserialize(Value::Object(fields))
                    .map(Elicited::Accepted)
                    .map_err(|e| Error::malformed(format!("the form's answer: {e}")))
            }
            Some("decline") => Ok(Elicited::Declined),
            Some("cancel") => Ok(Elicited::Cancelled),
            _ => Err(Error::malformed(format!(
                "an elicitation's action must be accept, decline or cancel: {answer}"
            ))),
        }
    }
}

//! The JSON-Schema oracle of one run and its sampling: which messages are validated, and
//! against which definition (the envelope, the request or notification, the result of the
//! method a response answers).

use serde_json::Value;

use super::message::{Class, Msg};

/// Which messages the JSON-Schema oracle validates (see the [module docs](super) for the
/// exact sampling).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    /// Every message: the envelope, the request or notification definition, the result
    /// definition of what it answers. Every input also runs twice.
    Full,
    /// Every message of one input in [`FULL_ONE_IN`] (by the input's hash); otherwise, on
    /// one input in [`KINDS_ONE_IN`], the first [`PER_KIND`] messages of each kind in the
    /// run; otherwise none. The input's hash also decides whether the run checks in depth
    /// (as [`Schema::Full`] does, see [`deep`](crate::fuzz::deep)) or as [`Schema::Lean`].
    Sampled,
    /// Structural JSON-RPC 2.0 checks only (and every other check in depth).
    Structural,
    /// What the runs outside the depth sample of [`Schema::Sampled`] check: no schema, no
    /// second run, and of the per-message and per-operation checks only the cheap ones.
    Lean,
}

/// With [`Schema::Sampled`], one input in this many (by FNV-1a hash) is validated fully.
pub const FULL_ONE_IN: u64 = 64;

/// With [`Schema::Sampled`], one input in this many (by FNV-1a hash) validates the first
/// [`PER_KIND`] messages of each kind; the others get no schema validation.
pub const KINDS_ONE_IN: u64 = 8;

/// With [`Schema::Sampled`], the first this many messages of each kind are validated.
pub const PER_KIND: u8 = 1;

/// The JSON-Schema oracle of one run, with its sample.
#[derive(Debug)]
pub struct Oracle {
    every: bool,
    /// Nothing is validated (structural, or a sampled input outside the sample).
    none: bool,
    seen: Vec<(&'static str, Option<&'static str>, u8)>,
    /// Messages validated so far.
    pub validated: usize,
}

impl Oracle {
    /// The oracle for one run on `input`.
    pub fn new(schema: Schema, input: &[u8]) -> Self {
        Oracle {
            every: match schema {
                Schema::Full => true,
                Schema::Sampled => crate::fuzz::fnv(input) % FULL_ONE_IN == 0,
                Schema::Structural | Schema::Lean => false,
            },
            none: match schema {
                Schema::Full => false,
                Schema::Sampled => crate::fuzz::fnv(input) % KINDS_ONE_IN != 0,
                Schema::Structural | Schema::Lean => true,
            },
            seen: Vec::new(),
            validated: 0,
        }
    }

    /// Whether this run validates every message.
    pub fn validates_everything(&self) -> bool {
        self.every
    }

    fn wants(&mut self, kind: (&'static str, Option<&'static str>)) -> bool {
        if self.none {
            return false;
        }
        if self.every {
            return true;
        }
        match self.seen.iter_mut().find(|(a, b, _)| (*a, *b) == kind) {
            Some((_, _, n)) if *n >= PER_KIND => false,
            Some((_, _, n)) => {
                *n += 1;
                true
            }
            None => {
                self.seen.push((kind.0, kind.1, 1));
                true
            }
        }
    }

    /// Validates one message (when the sample takes it): as a `JSONRPCMessage`, as its
    /// request or notification definition, and a result as what it answers (`answered`:
    /// the method of the request, when known).
    pub fn check(&mut self, msg: &Msg, answered: Option<&str>) -> Result<(), String> {
        if self.none {
            return Ok(());
        }
        let method = msg.method().unwrap_or("");
        let (envelope, specific) = match msg.class {
            Class::Request => ("request", crate::schema::request_definition(method)),
            Class::Notification => (
                "notification",
                crate::schema::notification_definition(method),
            ),
            Class::Result => (
                "result",
                answered.and_then(|m| result_definition(m, msg.result().expect("a result"))),
            ),
            Class::Error { .. } => ("error", None),
        };
        if !self.wants((envelope, specific)) {
            return Ok(());
        }
        self.validated += 1;
        crate::schema::check("JSONRPCMessage", msg.value())?;
        match (msg.result(), specific) {
            (Some(result), Some(definition)) => {
                crate::schema::check(definition, result)
                    .map_err(|e| format!("{} answer: {e}", answered.unwrap_or("?")))?;
            }
            (None, Some(definition)) => crate::schema::check(definition, msg.value())?,
            (_, None) => {}
        }
        Ok(())
    }
}

/// The schema definition of a success result: `CreateTaskResult` for an accepted
/// task-augmented request, otherwise by the method of the request it answers.
pub fn result_definition(method: &str, result: &Value) -> Option<&'static str> {
    let augmentable = matches!(
        method,
        "tools/call" | "elicitation/create" | "sampling/createMessage"
    );
    if augmentable && result.get("task").is_some_and(Value::is_object) {
        return Some("CreateTaskResult");
    }
    crate::schema::result_definition(method)
}

//! Request and response accounting on one session: every request gets exactly one response,
//! notifications none, and nothing answers an id nobody is owed.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::message::{id_key, Class, IdKey, Msg};

/// Exactly-one-response accounting for the requests one session received.
///
/// Requests the harness built itself are *trusted*: each must get exactly one response
/// (or none after the peer cancelled it). Lines that are garbage or whose envelope was
/// mutated are *untrusted*: any id they mention is exempt from the accounting, and they
/// may draw at most one id-less error each.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Trusted requests still owed a response: id → (count, method).
    pending: BTreeMap<IdKey, (usize, String)>,
    /// Ids that untrusted input mentioned.
    exempt: BTreeSet<IdKey>,
    /// Responses seen, by method, for reporting.
    answered: usize,
}

/// What the ledger learned about one inbound line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inbound {
    /// A trusted request with this id and method.
    Request(IdKey, String),
    /// A trusted notification (cancelled: the request it names, if pending).
    Notification(String),
    /// A trusted response to the session's own request.
    Response,
    /// Untrusted input.
    Untrusted,
}

impl Ledger {
    /// Records a line about to be fed to the session.
    pub fn inbound(&mut self, line: &[u8], trusted: bool) -> Inbound {
        match serde_json::from_slice::<Value>(line) {
            Ok(value) => self.inbound_value(&value, trusted),
            Err(_) if !trusted => Inbound::Untrusted,
            Err(_) => panic!("harness bug: trusted line is not JSON"),
        }
    }

    /// Records a message (already parsed) about to be fed to the session.
    pub fn inbound_value(&mut self, value: &Value, trusted: bool) -> Inbound {
        if !trusted {
            if let Value::Object(obj) = value {
                self.exempt_mentions(obj);
            }
            return Inbound::Untrusted;
        }
        let Value::Object(obj) = value else {
            panic!("harness bug: trusted line is not a JSON object");
        };
        let method = obj.get("method").and_then(Value::as_str);
        let id = obj.get("id").and_then(id_key);
        match (method, id) {
            (Some(method), Some(id)) => {
                let entry = self
                    .pending
                    .entry(id.clone())
                    .or_insert((0, method.to_owned()));
                entry.0 += 1;
                if entry.0 == 1 {
                    entry.1 = method.to_owned();
                }
                Inbound::Request(id, method.to_owned())
            }
            (Some(method), None) => {
                if method == "notifications/cancelled" {
                    // Only well-formed params cancel anything (`reason` must be a string).
                    let params = obj.get("params");
                    let reason_ok = params
                        .and_then(|p| p.get("reason"))
                        .is_none_or(|r| r.is_string() || r.is_null());
                    let cancelled = params
                        .filter(|_| reason_ok)
                        .and_then(|p| p.get("requestId"))
                        .and_then(id_key);
                    if let Some(id) = cancelled {
                        // Only a request still in progress can be cancelled; the engine
                        // answers duplicates at once, so at most one is outstanding.
                        self.pending.remove(&id);
                    }
                }
                Inbound::Notification(method.to_owned())
            }
            (None, _) => Inbound::Response,
        }
    }

    /// Records a message another engine emitted (trusted, already checked or taken as
    /// labelled) about to be fed to the session. A request's method is recorded as known
    /// without reading the line ([`Msg::known_method`]; empty otherwise).
    pub fn inbound_msg(&mut self, msg: &Msg) -> Inbound {
        let method = match msg.class {
            Class::Request => Some(msg.known_method().unwrap_or("")),
            Class::Notification => msg.method(),
            Class::Result | Class::Error { .. } => None,
        };
        match (method, msg.id().and_then(id_key)) {
            (Some(method), Some(id)) => {
                let entry = self
                    .pending
                    .entry(id.clone())
                    .or_insert((0, method.to_owned()));
                entry.0 += 1;
                if entry.0 == 1 {
                    entry.1 = method.to_owned();
                }
                Inbound::Request(id, method.to_owned())
            }
            (Some(method), None) => {
                if method == "notifications/cancelled" {
                    let params = msg.params();
                    let reason_ok = params
                        .and_then(|p| p.get("reason"))
                        .is_none_or(|r| r.is_string() || r.is_null());
                    let cancelled = params
                        .filter(|_| reason_ok)
                        .and_then(|p| p.get("requestId"))
                        .and_then(id_key);
                    if let Some(id) = cancelled {
                        self.pending.remove(&id);
                    }
                }
                Inbound::Notification(method.to_owned())
            }
            (None, _) => Inbound::Response,
        }
    }

    fn exempt_mentions(&mut self, obj: &Map<String, Value>) {
        if let Some(id) = obj.get("id").and_then(id_key) {
            self.exempt.insert(id);
        }
        if let Some(id) = obj
            .get("params")
            .and_then(|p| p.get("requestId"))
            .and_then(id_key)
        {
            self.exempt.insert(id);
        }
    }

    /// Records a response the session emitted. Returns the answered request's method when
    /// the accounting knows it. Panics on a response nobody is owed.
    pub fn outbound(&mut self, msg: &Msg) -> Option<String> {
        let id = msg.response_id()?;
        let key = id_key(id).expect("validated id");
        self.answered += 1;
        match self.pending.get_mut(&key) {
            Some(entry) if entry.0 > 1 => {
                entry.0 -= 1;
                Some(entry.1.clone())
            }
            Some(_) => self.pending.remove(&key).map(|(_, method)| method),
            _ if self.exempt.contains(&key) => None,
            _ => panic!("invariant: a response to {key} that no pending request is owed"),
        }
    }

    /// Whether a trusted request with this id still awaits its answer.
    pub fn is_pending(&self, key: &str) -> bool {
        self.pending.get(key).is_some_and(|e| e.0 > 0)
    }

    /// Whether untrusted input mentioned this id (its state is then unknown to the harness).
    pub fn is_exempt(&self, key: &str) -> bool {
        self.exempt.contains(key)
    }

    /// Requests still owed a response, with their methods.
    pub fn outstanding(&self) -> Vec<(IdKey, String)> {
        self.pending
            .iter()
            .filter(|(k, e)| e.0 > 0 && !self.exempt.contains(*k))
            .map(|(k, e)| (k.clone(), e.1.clone()))
            .collect()
    }

    /// Number of requests still owed a response.
    pub fn outstanding_count(&self) -> usize {
        self.pending.values().map(|e| e.0).sum()
    }

    /// Forgets every outstanding request (the connection closed: none will be answered).
    pub fn connection_closed(&mut self) {
        self.pending.clear();
    }

    /// Panics unless every trusted request got exactly one answer.
    pub fn assert_all_answered(&self, context: &str) {
        let owed = self.outstanding();
        assert!(
            owed.is_empty(),
            "invariant: requests never answered ({context}): {owed:?}"
        );
    }

    /// Responses seen so far.
    pub fn answered(&self) -> usize {
        self.answered
    }
}

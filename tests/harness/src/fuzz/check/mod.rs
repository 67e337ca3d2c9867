//! Invariant checkers shared by the fuzz bodies: message validity and labels, the schema
//! oracle and its sampling, request/response accounting, task-status monotonicity, expiry,
//! owner isolation and output bounds.
//!
//! Every checker is written from the spec, not from the engine: the transition table, the
//! 2025-11-25 task shape and the JSON-RPC rules below are independent copies, so an engine
//! bug cannot hide behind its own logic. A violation panics with a message naming the
//! invariant.
//!
//! `oracle`: the schema oracle and its sample; `message`: one message parsed and
//! classified; `ledger`: request and response accounting; `tasks`: task views, expiry and
//! isolation. Everything is re-exported here.

mod ledger;
mod message;
mod oracle;
mod tasks;

pub use ledger::{Inbound, Ledger};
pub use message::{check_kind, id_key, parse_output, request_id_key, Class, IdKey, Msg};
pub use oracle::{result_definition, Oracle, Schema, FULL_ONE_IN, KINDS_ONE_IN, PER_KIND};
pub use tasks::{
    allowed, expired, is_timestamp, mentioned_tasks, named_ids, shown_status, strip_meta, tasks_in,
    terminal, timestamp_ms, wire_info, wire_snapshot, wire_task, TaskWatch,
};

/// A bound on the outputs one input may produce, given how much state it could flush.
pub fn output_bound(state: usize) -> usize {
    16 + 4 * state
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use taskwire_engine::time::MAX_MILLIS;
    use taskwire_engine::Millis;

    #[test]
    fn table_is_the_spec_table() {
        let all = [
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
        ];
        let n = all
            .iter()
            .flat_map(|a| all.iter().map(move |b| (a, b)))
            .filter(|(a, b)| allowed(a, b))
            .count();
        assert_eq!(n, 8);
        assert!(all
            .iter()
            .all(|t| !terminal(t) || all.iter().all(|n| !allowed(t, n))));
    }

    #[test]
    fn classifies_and_rejects() {
        let m = parse_output(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into()).unwrap();
        assert_eq!(m.class, Class::Result);
        let m = parse_output(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#.into())
            .unwrap();
        assert_eq!(
            (m.class, m.response_id()),
            (Class::Error { code: -32700 }, None)
        );
        for bad in [
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"x","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
            "{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}",
            r#"{"id":1,"result":{}}"#,
        ] {
            assert!(parse_output(bad.into()).is_err(), "{bad}");
        }
    }

    #[test]
    fn watch_rejects_leaving_terminal_and_time_going_back() {
        let t = |status: &str, updated: &str| {
            json!({"taskId":"a","status":status,"createdAt":"2026-01-15T09:00:00.000Z",
                   "lastUpdatedAt":updated,"ttl":null})
        };
        let mut w = TaskWatch::requestor();
        w.observe(&t("working", "2026-01-15T09:00:00.000Z"), 0, true)
            .unwrap();
        w.observe(&t("completed", "2026-01-15T09:00:01.000Z"), 0, false)
            .unwrap();
        assert!(w
            .observe(&t("working", "2026-01-15T09:00:02.000Z"), 0, false)
            .is_err());
        let mut w = TaskWatch::requestor();
        w.observe(&t("working", "2026-01-15T09:00:05.000Z"), 0, true)
            .unwrap();
        assert!(w
            .observe(&t("working", "2026-01-15T09:00:04.000Z"), 0, false)
            .is_err());
    }

    #[test]
    fn timestamps_parse() {
        for ms in [0, 951_782_400_000, 1_768_467_600_123, MAX_MILLIS.0] {
            assert_eq!(timestamp_ms(&Millis(ms).to_rfc3339()), Some(ms));
        }
    }

    #[test]
    fn ledger_counts_exactly_one() {
        let mut l = Ledger::default();
        l.inbound(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, true);
        l.inbound(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            true,
        );
        let reply = parse_output(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into()).unwrap();
        assert_eq!(l.outbound(&reply).as_deref(), Some("ping"));
        l.assert_all_answered("test");
        let extra = std::panic::catch_unwind(move || {
            l.outbound(&reply);
        });
        assert!(extra.is_err());
    }
}

//! Wire types, one module per protocol era.
//!
//! Each era's JSON shapes live apart so that the 2026 `io.modelcontextprotocol/tasks`
//! extension can sit beside 2025-11-25 on the same state machine.

pub mod v2025_11_25;

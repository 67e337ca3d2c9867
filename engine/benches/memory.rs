//! Bytes of engine state per retained completed task, measured with a counting allocator.
//!
//! `cargo bench -p taskwire-engine --bench memory`: creates N completed tasks in one host
//! and prints the heap growth divided by N, besides the stored result payload.

#[path = "common.rs"]
mod common;

use std::alloc::System;

use cap::Cap;
use common::{text_result, Server};

#[global_allocator]
static HEAP: Cap<System> = Cap::new(System, usize::MAX);

fn main() {
    println!("| retained completed tasks | engine state per task | result payload per task |");
    println!("| --- | --- | --- |");
    for n in [10_000, 100_000, 1_000_000] {
        let (state, payload) = measure(n);
        println!("| {n} | {state:.0} B | {payload:.0} B |");
    }
}

/// Heap bytes per task besides the payload, and the payload's bytes.
fn measure(n: usize) -> (f64, f64) {
    let mut s = Server::ready(n);
    let payload = text_result().to_string().len() as f64;
    let before = HEAP.allocated();
    for i in 0..n {
        s.completed_task(i as u64 + 1);
    }
    let grown = HEAP.allocated().saturating_sub(before) as f64;
    assert_eq!(s.host.task_count(), n);
    (grown / n as f64 - payload, payload)
}

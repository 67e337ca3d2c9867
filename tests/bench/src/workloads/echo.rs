//! `tools/call echo`: sequential (rate, latency, server CPU and context switches per call) and
//! with [`ECHO_WINDOW`] calls in flight. Every reply must carry its
//! request's id and exactly its text back.

use std::time::Instant;

use super::{rate, Limit, Outcome, ECHO_WINDOW};
use crate::conn::Conn;
use crate::procfs;
use crate::requests;
use crate::stats::percentile;

/// Untimed calls within `warmup`, then timed ones within `timed()`, one at a time.
pub fn sequential(
    conn: &mut Conn,
    warmup: Limit,
    timed: impl FnOnce() -> Limit,
) -> Result<Outcome, String> {
    run_sequential(conn, warmup)?;
    let pid = conn.pid();
    let cpu_before = procfs::cpu_use(pid)?;
    let limit = timed();
    let start = Instant::now();
    let mut latencies = run_sequential(conn, limit)?;
    let elapsed = start.elapsed();
    let used = procfs::cpu_use(pid)?.since(cpu_before);
    latencies.sort_unstable();
    let calls = latencies.len();
    let per_call = |total: f64| total / calls.max(1) as f64;
    Ok(Outcome::measured(vec![
        rate(calls, elapsed),
        percentile(&latencies, 50.0) as f64 / 1e3,
        percentile(&latencies, 99.0) as f64 / 1e3,
        per_call(used.cpu.as_secs_f64() * 1e6),
        per_call(used.context_switches as f64),
    ]))
}

/// Sequential calls within `limit`; the round trip of each, in ns.
fn run_sequential(conn: &mut Conn, limit: Limit) -> Result<Vec<u64>, String> {
    let ids = conn.reserve(limit.count as u64);
    let lines: Vec<(u64, String, String)> = ids
        .map(|id| (id, requests::echo(id), requests::echo_text(id)))
        .collect();
    let mut latencies = Vec::with_capacity(limit.count);
    for (id, line, text) in &lines {
        let sent = Instant::now();
        if sent >= limit.deadline {
            break;
        }
        conn.send(line)?;
        let reply = conn.recv()?;
        latencies.push(sent.elapsed().as_nanos() as u64);
        reply.expect_id(*id)?;
        reply.expect_text(text)?;
    }
    Ok(latencies)
}

/// Untimed calls within `warmup`, then timed ones within `timed()`, [`ECHO_WINDOW`] in flight.
pub fn windowed(
    conn: &mut Conn,
    warmup: Limit,
    timed: impl FnOnce() -> Limit,
) -> Result<Outcome, String> {
    run_windowed(conn, warmup)?;
    let limit = timed();
    let start = Instant::now();
    let calls = run_windowed(conn, limit)?;
    Ok(Outcome::measured(vec![rate(calls, start.elapsed())]))
}

/// Keeps [`ECHO_WINDOW`] calls outstanding: after each batch of replies that can be read
/// without blocking (at least one), the window is refilled with one write. Replies may come
/// in any order. The number of calls made.
fn run_windowed(conn: &mut Conn, limit: Limit) -> Result<usize, String> {
    let ids = conn.reserve(limit.count as u64);
    let first = ids.start;
    let lines: Vec<String> = ids.map(requests::echo).collect();
    let mut answered = vec![false; limit.count];
    let (mut sent, mut done) = (0, 0);
    loop {
        while sent - done < ECHO_WINDOW && limit.more(sent) {
            conn.queue(&lines[sent]);
            sent += 1;
        }
        if done == sent {
            return Ok(done);
        }
        conn.flush()?;
        let mut next = Some(conn.recv()?);
        while let Some(reply) = next {
            let index = reply
                .id
                .checked_sub(first)
                .map(|i| i as usize)
                .filter(|&i| i < sent && !answered[i])
                .ok_or_else(|| {
                    format!(
                        "reply to request {}, which is not outstanding (ids {first}..{})",
                        reply.id,
                        first + sent as u64
                    )
                })?;
            reply.expect_text(&requests::echo_text(reply.id))?;
            answered[index] = true;
            done += 1;
            next = conn.recv_buffered()?;
        }
    }
}

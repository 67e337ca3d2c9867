//! Task lifecycles: `tools/call instant_task` as a task, `tasks/get` until it shows
//! `completed` (at least once), then `tasks/result`, which must be the text "done". Each
//! lifecycle has one request outstanding at a time; `window` of them run at once.

use std::collections::HashMap;
use std::time::Instant;

use super::{rate, Limit, Outcome};
use crate::conn::Conn;
use crate::requests;

/// `tasks/get` requests one task may take before the run fails.
const MAX_POLLS: usize = 10_000;
/// What `instant_task` returns.
const RESULT_TEXT: &str = "done";

/// Untimed lifecycles within `warmup`, then timed ones within `timed()`, `window` in flight.
pub fn run(
    conn: &mut Conn,
    window: usize,
    warmup: Limit,
    timed: impl FnOnce() -> Limit,
) -> Result<Outcome, String> {
    drive(conn, window, warmup)?;
    let limit = timed();
    let start = Instant::now();
    let (lifecycles, gets) = drive(conn, window, limit)?;
    Ok(Outcome::measured(vec![
        rate(lifecycles, start.elapsed()),
        gets as f64 / lifecycles.max(1) as f64,
    ]))
}

/// Where a lifecycle is: the request it waits on.
enum Step {
    Create,
    Get { task: String, polls: usize },
    Result,
}

/// Runs lifecycles within `limit`, `window` at a time; how many, and the `tasks/get` sent.
fn drive(conn: &mut Conn, window: usize, limit: Limit) -> Result<(usize, usize), String> {
    let ids = conn.reserve(limit.count as u64);
    let first = ids.start;
    let creates: Vec<String> = ids.map(requests::instant_task).collect();
    let mut waiting: HashMap<u64, Step> = HashMap::with_capacity(2 * window);
    let (mut started, mut done, mut gets) = (0, 0, 0);
    loop {
        while waiting.len() < window && limit.more(started) {
            conn.queue(&creates[started]);
            waiting.insert(first + started as u64, Step::Create);
            started += 1;
        }
        if waiting.is_empty() {
            return Ok((done, gets));
        }
        conn.flush()?;
        let mut next = Some(conn.recv()?);
        while let Some(reply) = next {
            let step = waiting.remove(&reply.id).ok_or_else(|| {
                format!("reply to request {}, which is not outstanding", reply.id)
            })?;
            match step {
                Step::Create => {
                    let task = reply.created_task()?;
                    task.completed()?;
                    poll(conn, &mut waiting, task.task_id, 1);
                    gets += 1;
                }
                Step::Get { task, polls } => {
                    let state = reply.task()?;
                    if state.task_id != task {
                        return Err(format!(
                            "tasks/get of {task} answered with task {}",
                            state.task_id
                        ));
                    }
                    if state.completed()? {
                        let id = conn.reserve(1).start;
                        conn.queue(&requests::task_result(id, &task));
                        waiting.insert(id, Step::Result);
                    } else if polls >= MAX_POLLS {
                        return Err(format!(
                            "task {task} still {} after {MAX_POLLS} tasks/get",
                            state.status
                        ));
                    } else {
                        poll(conn, &mut waiting, task, polls + 1);
                        gets += 1;
                    }
                }
                Step::Result => {
                    reply.expect_text(RESULT_TEXT)?;
                    done += 1;
                }
            }
            next = conn.recv_buffered()?;
        }
    }
}

/// Queues `tasks/get` of `task`, its `polls`-th.
fn poll(conn: &mut Conn, waiting: &mut HashMap<u64, Step>, task: String, polls: usize) {
    let id = conn.reserve(1).start;
    conn.queue(&requests::get_task(id, &task));
    waiting.insert(id, Step::Get { task, polls });
}

//! N retained tasks: `instant_task` called as a task N times ([`FILL_WINDOW`] in flight, each
//! reply a `CreateTaskResult`), then a full `tasks/list` pagination that must show exactly the
//! created tasks, completed, plus the ones the server pre-creates (our `demo-task`). Memory is
//! the RSS after the fill minus the idle RSS, per created task; for a server with a database
//! of ours (SQLite or PostgreSQL), disk is its size after the fill, per created task (see
//! [`Database::bytes_on_disk`](crate::database::Database::bytes_on_disk)).
//!
//! A server whose creation rate would make the fill take longer than the budget is skipped,
//! and the outcome says so with the rate it had reached; so is the listing of a server whose
//! pages come too slowly for the rest to fit in the budget (creation and memory still count).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::{rate, Outcome, FILL_WINDOW};
use crate::conn::Conn;
use crate::procfs;
use crate::requests;
use crate::servers::ServerId;

/// Completions between two projections of the fill's total time.
const CHECK_EVERY: usize = 1_000;
/// Time between two projections of the listing's total time.
const LIST_CHECK: Duration = Duration::from_secs(2);
/// `tasks/get` requests the last task may take to complete.
const MAX_POLLS: usize = 10_000;

/// Fills the server with `count` tasks and lists them; skipped past `budget`.
pub fn run(
    conn: &mut Conn,
    server: ServerId,
    count: usize,
    budget: Duration,
) -> Result<Outcome, String> {
    if !conn.declares("/capabilities/tasks/list") {
        return Err("the server does not declare tasks/list in its capabilities".into());
    }
    let pid = conn.pid();
    let idle_kib = procfs::rss_kib(pid)?;
    let start = Instant::now();
    let created = match fill(conn, count, budget)? {
        Fill::Done(created) => created,
        Fill::OverBudget(reason) => return Ok(Outcome::skipped(reason)),
    };
    let created_per_second = rate(count, start.elapsed());
    if let Some(last) = created.last() {
        wait_until_completed(conn, last)?;
    }
    let full_kib = procfs::rss_kib(pid)?;
    let bytes_per_task = full_kib.saturating_sub(idle_kib) as f64 * 1024.0 / count.max(1) as f64;
    let disk_per_task = match conn.database() {
        Some(database) => Some(database.bytes_on_disk()? as f64 / count.max(1) as f64),
        None => None,
    };
    let start = Instant::now();
    let (listing, skipped) = match list_all(conn, &created, server.precreated_tasks(), budget)? {
        Listing::Done { pages } => {
            let ms = start.elapsed().as_secs_f64() * 1e3;
            ((Some(ms), Some(pages as f64)), None)
        }
        Listing::OverBudget(reason) => ((None, None), Some(reason)),
    };
    Ok(Outcome {
        values: vec![
            Some(created_per_second),
            listing.0,
            listing.1,
            Some(bytes_per_task),
            disk_per_task,
        ],
        skipped,
    })
}

enum Fill {
    /// The ids of the created tasks, in the order of their requests.
    Done(Vec<String>),
    /// Stopped: the rest would have taken too long.
    OverBudget(String),
}

fn fill(conn: &mut Conn, count: usize, budget: Duration) -> Result<Fill, String> {
    let ids = conn.reserve(count as u64);
    let first = ids.start;
    let lines: Vec<String> = ids.map(requests::instant_task).collect();
    let mut created: Vec<Option<String>> = vec![None; count];
    let start = Instant::now();
    let mut last_check = (0, Instant::now());
    let (mut sent, mut done) = (0, 0);
    while done < count {
        while sent < count && sent - done < FILL_WINDOW {
            conn.queue(&lines[sent]);
            sent += 1;
        }
        conn.flush()?;
        let mut next = Some(conn.recv()?);
        while let Some(reply) = next {
            let slot = reply
                .id
                .checked_sub(first)
                .and_then(|i| created.get_mut(i as usize))
                .filter(|slot| slot.is_none())
                .ok_or_else(|| {
                    format!("reply to request {}, which is not outstanding", reply.id)
                })?;
            let task = reply.created_task()?;
            task.completed()?;
            *slot = Some(task.task_id);
            done += 1;
            next = conn.recv_buffered()?;
        }
        if done - last_check.0 >= CHECK_EVERY && done < count {
            let recent = rate(done - last_check.0, last_check.1.elapsed());
            let projected =
                start.elapsed() + Duration::from_secs_f64((count - done) as f64 / recent);
            if projected > budget {
                return Ok(Fill::OverBudget(over_budget(
                    count,
                    done,
                    start.elapsed(),
                    recent,
                    projected,
                    budget,
                )));
            }
            last_check = (done, Instant::now());
        }
    }
    Ok(Fill::Done(created.into_iter().flatten().collect()))
}

fn over_budget(
    count: usize,
    done: usize,
    elapsed: Duration,
    recent: f64,
    projected: Duration,
    budget: Duration,
) -> String {
    format!(
        "skipped: after {done} tasks in {:.0} s creation ran at {recent:.0}/s, so all {count} \
         would take about {:.0} s, over the {} s budget",
        elapsed.as_secs_f64(),
        projected.as_secs_f64(),
        budget.as_secs()
    )
}

fn wait_until_completed(conn: &mut Conn, task: &str) -> Result<(), String> {
    for _ in 0..MAX_POLLS {
        let id = conn.reserve(1).start;
        conn.send(&requests::get_task(id, task))?;
        let reply = conn.recv()?;
        reply.expect_id(id)?;
        if reply.task()?.completed()? {
            return Ok(());
        }
    }
    Err(format!(
        "task {task} did not complete within {MAX_POLLS} tasks/get"
    ))
}

enum Listing {
    /// Every page read.
    Done { pages: usize },
    /// Stopped: the rest would have taken too long.
    OverBudget(String),
}

/// Follows `nextCursor` to the end, checking every task; stops early past `budget`.
fn list_all(
    conn: &mut Conn,
    created: &[String],
    precreated: usize,
    budget: Duration,
) -> Result<Listing, String> {
    let mut unseen: HashSet<&str> = created.iter().map(String::as_str).collect();
    let (mut others, mut pages) = (0, 0);
    let mut cursor: Option<String> = None;
    let start = Instant::now();
    let mut next_check = LIST_CHECK;
    loop {
        let id = conn.reserve(1).start;
        conn.send(&requests::list_tasks(id, cursor.as_deref()))?;
        let reply = conn.recv()?;
        reply.expect_id(id)?;
        let page = reply.list_page()?;
        pages += 1;
        for task in &page.tasks {
            if !unseen.remove(task.task_id.as_str()) {
                others += 1;
                if others > precreated {
                    return Err(format!(
                        "tasks/list showed {} (page {pages}), which is neither a task we created \
                         nor one of the {precreated} the server pre-creates, or showed it twice",
                        task.task_id
                    ));
                }
            }
            if !task.completed()? {
                return Err(format!(
                    "tasks/list showed {} still {}",
                    task.task_id, task.status
                ));
            }
        }
        match page.next_cursor {
            Some(next) if pages <= created.len() + precreated => cursor = Some(next),
            Some(_) => {
                return Err(format!(
                    "tasks/list still had a nextCursor after {pages} pages"
                ))
            }
            None => break,
        }
        if start.elapsed() >= next_check {
            next_check += LIST_CHECK;
            let listed = created.len() - unseen.len();
            let projected = start
                .elapsed()
                .mul_f64(created.len() as f64 / listed.max(1) as f64);
            if projected > budget {
                return Ok(Listing::OverBudget(format!(
                    "full tasks/list skipped: {pages} pages ({listed} tasks) took {:.1} s, so all \
                     would take about {:.0} s, over the {} s budget",
                    start.elapsed().as_secs_f64(),
                    projected.as_secs_f64(),
                    budget.as_secs()
                )));
            }
        }
    }
    if let Some(missing) = unseen.iter().next() {
        return Err(format!(
            "tasks/list left out {} of the {} created tasks, e.g. {missing}",
            unseen.len(),
            created.len()
        ));
    }
    if others != precreated {
        return Err(format!(
            "tasks/list showed {others} tasks besides ours; the server pre-creates {precreated}"
        ));
    }
    Ok(Listing::Done { pages })
}

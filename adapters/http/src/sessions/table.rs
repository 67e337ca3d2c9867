//! The table of open 2025-11-25 sessions: by id, counted per owner, with room made by
//! closing the one idle longest.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use taskwire_driver::MessageSession;

use super::routes::Routes;
use crate::counted::HttpMetrics;

/// The sessions open now, by id, and how many each authenticated owner has.
pub(crate) struct Sessions {
    table: Mutex<Table>,
    /// Where the number open is shown, if anywhere.
    metrics: Option<HttpMetrics>,
}

#[derive(Default)]
struct Table {
    by_id: HashMap<String, Arc<Session>>,
    /// Each authenticated owner's sessions, those being opened included.
    per_owner: HashMap<String, usize>,
    /// Sessions admitted and being opened, not yet in `by_id`.
    opening: usize,
}

/// Why no session was opened.
pub(crate) enum NoRoom {
    /// The owner has [`HttpConfig::max_sessions_per_owner`](crate::HttpConfig) open.
    OwnerFull,
    /// [`HttpConfig::max_sessions`](crate::HttpConfig) are open, none of them idle.
    AllBusy,
}

/// A place taken for a session being opened: [`Place::fill`] puts it in the table;
/// dropped unfilled, the place is given back.
pub(crate) struct Place<'a> {
    sessions: &'a Sessions,
    owner: Option<String>,
    filled: bool,
}

/// One 2025-11-25 session.
pub(crate) struct Session {
    pub(super) id: String,
    /// The authenticated owner that opened it; only they may use it.
    pub(super) principal: Option<String>,
    pub(super) link: MessageSession,
    pub(super) routes: Mutex<Routes>,
    pub(super) last_used: Mutex<Instant>,
}

impl Sessions {
    /// No session yet; the number open shown in `metrics`, if given.
    pub fn new(metrics: Option<HttpMetrics>) -> Self {
        Sessions {
            table: Mutex::default(),
            metrics,
        }
    }

    /// Shows the number open now.
    fn count(&self, table: &Table) {
        if let Some(metrics) = &self.metrics {
            metrics.sessions_open(table.by_id.len());
        }
    }

    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.table().by_id.get(id).cloned()
    }

    pub(super) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let mut table = self.table();
        let session = table.take(id);
        self.count(&table);
        session
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().expect("not poisoned")
    }

    /// A place for a new session of `owner`, within `max` sessions and `per_owner` of an
    /// authenticated owner's. When all `max` are taken, the session unused longest that has
    /// no request in flight and no stream open is closed to make room.
    pub fn admit(
        &self,
        owner: &Option<String>,
        max: usize,
        per_owner: usize,
    ) -> Result<Place<'_>, NoRoom> {
        let evicted = {
            let mut table = self.table();
            if let Some(owner) = owner {
                if table.per_owner.get(owner).copied().unwrap_or(0) >= per_owner {
                    return Err(NoRoom::OwnerFull);
                }
            }
            let evicted = if table.by_id.len() + table.opening >= max {
                let victim = table.longest_idle().ok_or(NoRoom::AllBusy)?;
                table.take(&victim)
            } else {
                None
            };
            table.opening += 1;
            if let Some(owner) = owner {
                *table.per_owner.entry(owner.clone()).or_default() += 1;
            }
            evicted
        };
        if let Some(evicted) = evicted {
            tracing::info!(
                session = %evicted.id,
                idle = ?evicted.last_used().elapsed(),
                "closing the session unused longest to make room: HttpConfig::max_sessions are open"
            );
            evicted.link.close();
        }
        Ok(Place {
            sessions: self,
            owner: owner.clone(),
            filled: false,
        })
    }

    /// Closes the sessions unused for `idle` (no request waiting, no stream open).
    pub fn close_idle(&self, idle: std::time::Duration) {
        let now = Instant::now();
        let idle: Vec<Arc<Session>> = self
            .table()
            .by_id
            .values()
            .filter(|s| s.is_idle() && now.duration_since(s.last_used()) >= idle)
            .cloned()
            .collect();
        for session in idle {
            tracing::info!(session = %session.id, "closing an idle session");
            self.close(&session.id);
        }
    }

    /// Ends a session; `false` when there is none by that id.
    pub fn close(&self, id: &str) -> bool {
        match self.remove(id) {
            Some(session) => {
                session.link.close();
                true
            }
            None => false,
        }
    }
}

impl Table {
    /// Removes session `id`, counting it out of its owner's.
    fn take(&mut self, id: &str) -> Option<Arc<Session>> {
        let session = self.by_id.remove(id)?;
        if let Some(owner) = &session.principal {
            self.count_out(owner);
        }
        Some(session)
    }

    fn count_out(&mut self, owner: &str) {
        if let Some(count) = self.per_owner.get_mut(owner) {
            *count -= 1;
            if *count == 0 {
                self.per_owner.remove(owner);
            }
        }
    }

    /// The id of the session unused longest among those with no request in flight and no
    /// stream open.
    fn longest_idle(&self) -> Option<String> {
        let mut oldest: Option<(Instant, &Arc<Session>)> = None;
        for session in self.by_id.values() {
            let used = session.last_used();
            // Only an older session is worth locking to see whether it is idle.
            if oldest.is_none_or(|(at, _)| used < at) && session.is_idle() {
                oldest = Some((used, session));
            }
        }
        oldest.map(|(_, session)| session.id.clone())
    }
}

impl Place<'_> {
    /// Puts `session` in the place taken for it.
    pub(super) fn fill(mut self, session: Arc<Session>) {
        let mut table = self.sessions.table();
        table.opening -= 1;
        table.by_id.insert(session.id.clone(), session);
        self.sessions.count(&table);
        self.filled = true;
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if self.filled {
            return;
        }
        let mut table = self.sessions.table();
        table.opening -= 1;
        if let Some(owner) = &self.owner {
            table.count_out(owner);
        }
    }
}

impl Session {
    /// Whether `principal` (who the request authenticated as) may use this session.
    pub fn admits(&self, principal: &Option<String>) -> bool {
        self.principal == *principal
    }

    pub(super) fn touch(&self) {
        *self.last_used.lock().expect("not poisoned") = Instant::now();
    }

    fn last_used(&self) -> Instant {
        *self.last_used.lock().expect("not poisoned")
    }

    fn is_idle(&self) -> bool {
        self.routes().is_idle()
    }

    pub(super) fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().expect("not poisoned")
    }
}

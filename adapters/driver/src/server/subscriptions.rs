//! The resources a server's clients want updates of (as the engine reports them per
//! session), and the application's hook told of them.

use std::collections::{BTreeSet, HashMap};

use taskwire_engine::SessionId;

/// Told every resource wanted, over all sessions, each time that set changes.
pub(crate) type Hook = Box<dyn Fn(Vec<String>) + Send + Sync>;

/// Each session's wanted resources, and the hook.
#[derive(Default)]
pub(crate) struct Subscriptions {
    by_session: HashMap<SessionId, Vec<String>>,
    pub hook: Option<Hook>,
}

impl Subscriptions {
    /// `session` wants `uris` now (nothing once closed); the hook hears of a change of the
    /// whole.
    pub fn set(&mut self, session: SessionId, uris: Vec<String>) {
        let Some(hook) = &self.hook else {
            return;
        };
        let before = self.all();
        match uris.is_empty() {
            true => self.by_session.remove(&session),
            false => self.by_session.insert(session, uris),
        };
        let after = self.all();
        if after != before {
            hook(after);
        }
    }

    fn all(&self) -> Vec<String> {
        let all: BTreeSet<&String> = self.by_session.values().flatten().collect();
        all.into_iter().cloned().collect()
    }
}

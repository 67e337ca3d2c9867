//! A deadline table: O(log n) insert, cancel and "what is due next".

use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;

use crate::time::Millis;

/// Deadlines keyed by `K`; each key has at most one deadline.
#[derive(Debug)]
pub(crate) struct Deadlines<K> {
    by_time: BTreeSet<(Millis, K)>,
    by_key: HashMap<K, Millis>,
}

impl<K: Ord + Hash + Clone> Deadlines<K> {
    pub fn new() -> Self {
        Deadlines {
            by_time: BTreeSet::new(),
            by_key: HashMap::new(),
        }
    }

    /// Sets (or moves) the deadline of `key`.
    pub fn set(&mut self, key: K, at: Millis) {
        if let Some(old) = self.by_key.insert(key.clone(), at) {
            self.by_time.remove(&(old, key.clone()));
        }
        self.by_time.insert((at, key));
    }

    /// Removes the deadline of `key`, if any.
    pub fn clear(&mut self, key: &K) {
        if let Some(at) = self.by_key.remove(key) {
            self.by_time.remove(&(at, key.clone()));
        }
    }

    /// Whether `key` has a deadline.
    pub fn contains(&self, key: &K) -> bool {
        self.by_key.contains_key(key)
    }

    /// The earliest deadline.
    pub fn next(&self) -> Option<Millis> {
        self.by_time.first().map(|(at, _)| *at)
    }

    /// Removes and returns one key whose deadline is at or before `now`.
    pub fn pop_due(&mut self, now: Millis) -> Option<K> {
        if self.next()? > now {
            return None;
        }
        let (_, key) = self.by_time.pop_first()?;
        self.by_key.remove(&key);
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_clears_and_pops_in_order() {
        let mut d = Deadlines::new();
        d.set("a", Millis(30));
        d.set("b", Millis(10));
        d.set("a", Millis(5));
        d.set("c", Millis(20));
        d.clear(&"c");
        assert_eq!(d.next(), Some(Millis(5)));
        assert_eq!(d.pop_due(Millis(4)), None);
        assert_eq!(d.pop_due(Millis(100)), Some("a"));
        assert_eq!(d.pop_due(Millis(100)), Some("b"));
        assert_eq!(d.pop_due(Millis(100)), None);
        assert!(!d.contains(&"a"));
    }
}

//! A map whose newest entry is kept apart from the rest, so that the work on it hashes
//! nothing: a call followed from its start to its end before the next one comes (most are),
//! the requests of the session that sent the last ones (stdio has one session).

use std::hash::Hash;

/// Values by key, the newest apart.
pub(crate) struct Recent<K, V> {
    newest: Option<(K, V)>,
    rest: foldhash::HashMap<K, V>,
}

impl<K, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent {
            newest: None,
            rest: foldhash::HashMap::default(),
        }
    }
}

impl<K: Copy + Eq + Hash, V> Recent<K, V> {
    /// Keeps `value` for `key`, the newest now.
    pub fn insert(&mut self, key: K, value: V) {
        if let Some((older, value)) = self.newest.replace((key, value)) {
            self.rest.insert(older, value);
        }
    }

    /// The value for `key`; a default one, the newest now, if there was none.
    pub fn get_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        let newest = self.newest.as_ref().is_some_and(|(k, _)| *k == key);
        if !newest && self.rest.contains_key(&key) {
            return self.rest.get_mut(&key).expect("just found");
        }
        if !newest {
            self.insert(key, V::default());
        }
        &mut self.newest.as_mut().expect("just kept").1
    }

    pub fn get_mut(&mut self, key: K) -> Option<&mut V> {
        match &mut self.newest {
            Some((newest, value)) if *newest == key => Some(value),
            _ if self.rest.is_empty() => None,
            _ => self.rest.get_mut(&key),
        }
    }

    pub fn remove(&mut self, key: K) -> Option<V> {
        match self.newest.take() {
            Some((newest, value)) if newest == key => Some(value),
            newest => {
                self.newest = newest;
                (!self.rest.is_empty()).then(|| self.rest.remove(&key))?
            }
        }
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.newest
            .iter()
            .map(|(_, value)| value)
            .chain(self.rest.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_and_the_rest_are_one_map() {
        let mut map = Recent::default();
        map.insert(1, "a");
        map.insert(2, "b");
        assert_eq!(map.get_mut(1), Some(&mut "a"), "kept with the rest");
        assert_eq!(map.remove(2), Some("b"), "the newest");
        assert_eq!(map.remove(2), None);
        map.insert(3, "c");
        assert_eq!(map.remove(1), Some("a"), "the rest, the newest staying");
        assert_eq!(map.get_mut(3), Some(&mut "c"));
        assert_eq!(map.values().collect::<Vec<_>>(), [&"c"]);
        assert_eq!(map.remove(3), Some("c"));
        assert_eq!(map.values().count(), 0);
    }

    #[test]
    fn a_default_is_made_once_for_a_key_newest_or_not() {
        let mut map: Recent<u32, Vec<u32>> = Recent::default();
        map.get_or_default(1).push(10);
        map.get_or_default(2).push(20);
        map.get_or_default(1).push(11);
        map.get_or_default(2).push(21);
        assert_eq!(map.remove(1), Some(vec![10, 11]));
        assert_eq!(map.remove(2), Some(vec![20, 21]));
        assert_eq!(map.values().count(), 0);
    }
}

//! Handles and names: task ids, owners, sessions, calls and input requests.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An opaque string, cheap to clone (shared), compared and hashed as its text.
macro_rules! shared_name {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Arc<str>);

        impl $name {
            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                $name(Arc::from(text))
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                $name(Arc::from(text))
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                &*self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                &*self.0 == *other
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
                Ok($name::from(&*text))
            }
        }
    };
}

shared_name!(
    /// A task id, chosen by the receiver (ours come from the [`TaskIdSource`](crate::TaskIdSource)).
    TaskId
);

shared_name!(
    /// The principal a session acts for: tasks belong to it, and only its sessions see them.
    /// The adapter names it (stdio: one per process; HTTP: the authenticated subject).
    Owner
);

/// Generates a slab handle: an index plus a generation, so a stale handle never reaches
/// the slot's next occupant.
macro_rules! slab_handle {
    ($(#[$doc:meta])* $name:ident, $label:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name {
            pub(crate) index: u32,
            pub(crate) generation: u32,
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($label, " {}.{}"), self.index, self.generation)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }
    };
}

slab_handle!(
    /// One session (one connection, or one HTTP session) opened on a [`Host`](crate::Host).
    SessionId,
    "session"
);

slab_handle!(
    /// One piece of work the application answers: a tool call, a peer request, or the
    /// work of an app-created task. The answer goes through [`Host::respond`](crate::Host::respond)
    /// whether or not the call became a task.
    CallId,
    "call"
);

/// One input request (elicitation, sampling) made for a call with
/// [`Host::request_input`](crate::Host::request_input); its answer names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InputId(pub(crate) u64);

impl fmt::Display for InputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "input {}", self.0)
    }
}

/// A slab of values addressed by generation-checked handles; freed slots are reused.
#[derive(Debug)]
pub(crate) struct Slab<T> {
    slots: Vec<(u32, Option<T>)>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value`; returns its (index, generation).
    pub fn insert(&mut self, value: T) -> (u32, u32) {
        self.len += 1;
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.1 = Some(value);
            return (index, slot.0);
        }
        let index = u32::try_from(self.slots.len()).expect("fewer than 2^32 live handles");
        self.slots.push((0, Some(value)));
        (index, 0)
    }

    pub fn get(&self, index: u32, generation: u32) -> Option<&T> {
        match self.slots.get(index as usize)? {
            (g, Some(v)) if *g == generation => Some(v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, index: u32, generation: u32) -> Option<&mut T> {
        match self.slots.get_mut(index as usize)? {
            (g, Some(v)) if *g == generation => Some(v),
            _ => None,
        }
    }

    pub fn remove(&mut self, index: u32, generation: u32) -> Option<T> {
        let slot = self.slots.get_mut(index as usize)?;
        if slot.0 != generation || slot.1.is_none() {
            return None;
        }
        slot.0 = slot.0.wrapping_add(1);
        self.free.push(index);
        self.len -= 1;
        slot.1.take()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Every live value with its (index, generation), in index order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, (g, v))| v.as_ref().map(|v| (i as u32, *g, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_and_hash_as_their_text() {
        use std::collections::HashMap;
        let mut m = HashMap::new();
        m.insert(TaskId::from("a"), 1);
        assert_eq!(m.get("a"), Some(&1));
        assert_eq!(TaskId::from("a"), "a");
        assert_eq!(format!("{:?}", TaskId::from("a")), "\"a\"");
        let json = serde_json::to_string(&TaskId::from("x\"y")).unwrap();
        assert_eq!(json, r#""x\"y""#);
        assert_eq!(serde_json::from_str::<TaskId>(&json).unwrap(), "x\"y");
    }

    #[test]
    fn stale_slab_handles_miss_the_next_occupant() {
        let mut s = Slab::default();
        let (i, g) = s.insert("first");
        assert_eq!(s.remove(i, g), Some("first"));
        let (j, h) = s.insert("second");
        assert_eq!((i, j), (0, 0));
        assert_ne!(g, h);
        assert_eq!(s.get(i, g), None);
        assert_eq!(s.get(j, h), Some(&"second"));
        assert_eq!(s.remove(i, g), None);
        assert_eq!(s.len(), 1);
    }
}

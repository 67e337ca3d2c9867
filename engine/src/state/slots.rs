//! State an era keeps on a session or a call. The era-neutral host never looks inside: each
//! era stores its own types here and reads back only those, so a session that serves two
//! eras holds each era's state side by side without either knowing the other's.

use std::any::Any;
use std::fmt;

/// At most one value of each type.
#[derive(Default)]
pub(crate) struct Slots(Vec<Box<dyn Any + Send>>);

impl Slots {
    /// The value of type `T`, if one is stored.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.iter().find_map(|slot| slot.downcast_ref())
    }

    /// The value of type `T`, to change, if one is stored.
    pub fn get_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.0.iter_mut().find_map(|slot| slot.downcast_mut())
    }

    /// The value of type `T`, stored first as `T::default()` when there is none.
    pub fn get_or_default<T: Any + Send + Default>(&mut self) -> &mut T {
        let at = match self.0.iter().position(|slot| slot.is::<T>()) {
            Some(at) => at,
            None => {
                self.0.push(Box::<T>::default());
                self.0.len() - 1
            }
        };
        self.0[at].downcast_mut().expect("the slot holds a T")
    }

    /// Removes and returns the value of type `T`.
    pub fn take<T: Any>(&mut self) -> Option<T> {
        let at = self.0.iter().position(|slot| slot.is::<T>())?;
        let slot = self.0.swap_remove(at);
        slot.downcast().ok().map(|boxed| *boxed)
    }
}

impl fmt::Debug for Slots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Slots({})", self.0.len())
    }
}

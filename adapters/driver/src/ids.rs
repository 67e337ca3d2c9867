//! Ids made from the OS random number generator: task ids (time-ordered) and session ids.

use std::cell::RefCell;

use crate::runtime::now;

/// Random bytes taken from the OS per refill (sixteen ids' worth: one system call, not one
/// per id).
const POOL: usize = 256;

thread_local! {
    /// OS random bytes not handed out yet, and how many of them are used.
    static RANDOM: RefCell<([u8; POOL], usize)> = const { RefCell::new(([0; POOL], POOL)) };
}

/// A new task id: a UUID version 7 (RFC 9562), the current millisecond followed by 74 bits
/// from the OS random number generator.
///
/// Ids made later sort after earlier ones (to the millisecond), so a store's index on the id
/// takes each new task at its end instead of at a random page (a SQLite commit writes a
/// third as many pages), and the 74 random bits keep ids unguessable; every request naming
/// a task is also checked against the task's owner.
pub fn new_task_id() -> String {
    let mut bytes = random_bytes();
    let millis = now().0.to_be_bytes();
    bytes[..6].copy_from_slice(&millis[2..]);
    uuid(bytes, 7)
}

/// A new random UUID version 4 (122 bits from the OS random number generator): for ids
/// that must not say when they were made (HTTP session ids).
pub fn random_uuid() -> String {
    uuid(random_bytes(), 4)
}

fn random_bytes() -> [u8; 16] {
    RANDOM.with(|pool| {
        let (bytes, used) = &mut *pool.borrow_mut();
        if *used + 16 > POOL {
            getrandom::fill(bytes).expect("the OS random number generator is available");
            *used = 0;
        }
        let mut id = [0; 16];
        id.copy_from_slice(&bytes[*used..*used + 16]);
        *used += 16;
        id
    })
}

/// `bytes` with the version and variant bits set, written `8-4-4-4-12` in lowercase hex.
fn uuid(mut bytes: [u8; 16], version: u8) -> String {
    bytes[6] = (bytes[6] & 0x0f) | (version << 4);
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(36);
    for (at, byte) in bytes.iter().enumerate() {
        if matches!(at, 4 | 6 | 8 | 10) {
            text.push('-');
        }
        text.push(HEX[usize::from(byte >> 4)] as char);
        text.push(HEX[usize::from(byte & 0x0f)] as char);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_uuid_v7_distinct_and_ordered_by_their_millisecond() {
        let before = now().0;
        let ids: Vec<String> = (0..100).map(|_| new_task_id()).collect();
        let after = now().0;
        for id in &ids {
            assert_eq!(id.len(), 36);
            assert_eq!(&id[14..15], "7");
            assert!("89ab".contains(&id[19..20]));
            let millis = u64::from_str_radix(&id[..13].replace('-', ""), 16).unwrap();
            assert!((before..=after).contains(&millis), "{id} is not of now");
        }
        let distinct: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }

    #[test]
    fn session_ids_are_uuid_v4_and_distinct() {
        let (a, b) = (random_uuid(), random_uuid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!("89ab".contains(&a[19..20]));
        assert_eq!(a.matches('-').count(), 4);
    }

    #[test]
    fn uuids_are_written_in_the_standard_form() {
        let bytes: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
        assert_eq!(uuid(bytes, 4), "00112233-4455-4677-8899-aabbccddeeff");
    }
}

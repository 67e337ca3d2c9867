//! The task table: every hosted task's record, its owner's listing order, its expiry, and
//! the quotas. No protocol state: each era reads and writes tasks through this table.
//!
//! Memory is kept small per task (a completed task costs about 220 bytes here besides its
//! result): records sit in fixed-size chunks (no doubling waste), the id is stored once
//! and shared, each owner's listing is a sorted array of 4-byte slot numbers, and the
//! expiry heap holds 16-byte entries checked against the slot's generation rather than
//! removed eagerly.
//!
//! Listing order is (creation time, id). The clock never goes back, so a new task lands at
//! the end of its owner's listing, or among the few created in the same millisecond;
//! tasks mostly expire from the front. Both stay cheap at a million tasks.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use serde_json::value::RawValue;

use crate::error::Quota;
use crate::ids::{Owner, TaskId};
use crate::jsonrpc::RpcError;
use crate::model::{Era, InputKinds, Outcome, TaskInfo, TaskRequest, TaskSnapshot};
use crate::status::TaskStatus;
use crate::time::Millis;

/// Index of an owner in the table.
pub(crate) type OwnerIdx = u32;

const CHUNK: usize = 1024;
const UNLIMITED: u64 = u64::MAX;
const NO_POLL: u32 = u32::MAX;
/// The most [`TaskTable::pace_poll`] raises a task's suggested poll interval to (ms).
const MAX_PACED_POLL_MS: u32 = 30_000;

/// How a finished task's stored outcome reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutcomeKind {
    None,
    Result,
    ErrorResult,
    Error,
}

/// A stored outcome, by reference.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StoredOutcome<'a> {
    /// A result object (`is_error`: it says `isError: true`).
    Result { raw: &'a RawValue, is_error: bool },
    /// A JSON-RPC error object.
    Error(&'a RawValue),
}

/// One hosted task.
#[derive(Debug)]
pub(crate) struct Record {
    pub id: TaskId,
    pub created_at: Millis,
    pub last_updated_at: Millis,
    ttl: u64,
    message: Option<Box<str>>,
    outcome: Option<Box<RawValue>>,
    pub owner: OwnerIdx,
    poll: u32,
    /// When a 2026-07-28 client last polled it ([`TaskTable::pace_poll`]); `Millis(0)`: never.
    polled: Millis,
    pub status: TaskStatus,
    pub era: Era,
    kind: OutcomeKind,
    inputs: u8,
    /// The call that created it, while it runs (only when journaling).
    pub request: Option<Box<TaskRequest>>,
}

impl Record {
    pub fn ttl_ms(&self) -> Option<u64> {
        (self.ttl != UNLIMITED).then_some(self.ttl)
    }

    pub fn poll_interval_ms(&self) -> Option<u64> {
        (self.poll != NO_POLL).then_some(u64::from(self.poll))
    }

    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    pub fn input_kinds(&self) -> InputKinds {
        InputKinds::from_bits(self.inputs)
    }

    pub fn expires_at(&self) -> Option<Millis> {
        self.ttl_ms().map(|ttl| self.created_at.plus(ttl))
    }

    pub fn outcome(&self) -> Option<StoredOutcome<'_>> {
        let raw = self.outcome.as_deref()?;
        Some(match self.kind {
            OutcomeKind::Error => StoredOutcome::Error(raw),
            kind => StoredOutcome::Result {
                raw,
                is_error: kind == OutcomeKind::ErrorResult,
            },
        })
    }

    /// Whether the outcome is a result that says `isError: true`.
    pub fn is_error_result(&self) -> bool {
        self.kind == OutcomeKind::ErrorResult
    }

    pub fn info(&self) -> TaskInfo {
        TaskInfo {
            id: self.id.clone(),
            status: self.status,
            status_message: self.message.as_deref().map(str::to_owned),
            created_at: self.created_at,
            last_updated_at: self.last_updated_at,
            ttl_ms: self.ttl_ms(),
            poll_interval_ms: self.poll_interval_ms(),
        }
    }
}

/// A new task's settings.
pub(crate) struct NewTask {
    pub id: TaskId,
    pub owner: OwnerIdx,
    pub now: Millis,
    pub ttl_ms: Option<u64>,
    pub poll_interval_ms: Option<u32>,
    pub era: Era,
    pub input_kinds: InputKinds,
    pub request: Option<Box<TaskRequest>>,
}

/// An outcome to store: a result object, or a JSON-RPC error object, serialized.
pub(crate) struct NewOutcome {
    pub raw: Box<RawValue>,
    pub kind: OutcomeKind,
}

/// Why a task was not created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CreateError {
    Duplicate,
    Quota(Quota),
}

#[derive(Debug)]
struct Slot {
    generation: u32,
    record: Option<Record>,
}

#[derive(Debug)]
struct OwnerEntry {
    name: Owner,
    /// This owner's tasks (their slots) in listing order: creation time, then id.
    list: VecDeque<u32>,
    /// Sessions acting for this owner, and tombstones naming it. An owner with none and no
    /// task is forgotten (its index is used again), so that owners that come and go (one
    /// per HTTP session) cost nothing once gone.
    holds: u32,
}

/// A position in listing order.
pub(crate) type ListKey<'a> = (Millis, &'a str);

/// All hosted tasks.
#[derive(Debug)]
pub(crate) struct TaskTable {
    chunks: Vec<Vec<Slot>>,
    free: Vec<u32>,
    ids: HashMap<TaskId, u32, BuildHasherDefault<IdHasher>>,
    owners: Vec<OwnerEntry>,
    owner_ids: HashMap<Owner, OwnerIdx>,
    /// Indexes of forgotten owners, for the next new one.
    free_owners: Vec<OwnerIdx>,
    expiry: BinaryHeap<Reverse<(Millis, u32, u32)>>,
    /// The most recently expired tasks, newest last, so that asking about one says it
    /// expired rather than that it never existed.
    tombstones: VecDeque<(TaskId, OwnerIdx)>,
    max_tasks: usize,
    max_per_owner: usize,
    /// Finished tasks held.
    finished_held: usize,
    /// Finished tasks in the order they finished (or were added finished), while the host
    /// lets the oldest go ([`TaskConfig::keep_finished`](crate::TaskConfig)); it may name
    /// tasks gone since.
    finished: Option<VecDeque<TaskId>>,
}

/// Expired tasks remembered by [`TaskTable::missing`].
const TOMBSTONES: usize = 1024;

impl TaskTable {
    pub fn new(max_tasks: usize, max_per_owner: usize) -> Self {
        TaskTable {
            chunks: Vec::new(),
            free: Vec::new(),
            ids: HashMap::default(),
            owners: Vec::new(),
            owner_ids: HashMap::new(),
            free_owners: Vec::new(),
            expiry: BinaryHeap::new(),
            tombstones: VecDeque::new(),
            max_tasks,
            max_per_owner,
            finished_held: 0,
            finished: None,
        }
    }

    /// From now on, remembers the order tasks finish in (those finished already first, in
    /// creation order), so that the oldest can be let go ([`TaskTable::oldest_finished`]).
    pub fn track_finished(&mut self) {
        if self.finished.is_some() {
            return;
        }
        let done = self
            .ids_by_creation()
            .into_iter()
            .filter(|id| self.get(id).is_some_and(|r| r.status.is_terminal()));
        self.finished = Some(done.collect());
    }

    /// Finished tasks held.
    pub fn finished_held(&self) -> usize {
        self.finished_held
    }

    /// The held finished task that finished first (taken off the order: give it back with
    /// [`TaskTable::keep_oldest_finished`] to keep it).
    pub fn oldest_finished(&mut self) -> Option<TaskId> {
        while let Some(id) = self.finished.as_mut()?.pop_front() {
            if self.get(&id).is_some_and(|r| r.status.is_terminal()) {
                return Some(id);
            }
        }
        None
    }

    /// The held finished task that finished first, without taking it off the order.
    pub fn peek_oldest_finished(&self) -> Option<&TaskId> {
        self.finished
            .as_ref()?
            .iter()
            .find(|id| self.get(id).is_some_and(|r| r.status.is_terminal()))
    }

    /// Puts `id` back first in the finished order.
    pub fn keep_oldest_finished(&mut self, id: TaskId) {
        if let Some(order) = self.finished.as_mut() {
            order.push_front(id);
        }
    }

    /// `id` finished (or was added finished).
    fn finished(&mut self, id: &TaskId) {
        self.finished_held += 1;
        let held = self.finished_held;
        let Some(order) = self.finished.as_mut() else {
            return;
        };
        order.push_back(id.clone());
        // Tasks that expired or were removed leave their ids behind: drop them now and then.
        if order.len() > 2 * held + 1024 {
            let mut order = self.finished.take().unwrap_or_default();
            order.retain(|id| self.get(id).is_some_and(|r| r.status.is_terminal()));
            self.finished = Some(order);
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Every task's id, in creation order (then id).
    pub fn ids_by_creation(&self) -> Vec<TaskId> {
        let mut all: Vec<(Millis, &TaskId)> = self
            .ids
            .iter()
            .filter_map(|(id, &slot)| Some((self.slot(slot).record.as_ref()?.created_at, id)))
            .collect();
        all.sort();
        all.into_iter().map(|(_, id)| id.clone()).collect()
    }

    /// The index of `owner`, registering it on first use. It stays registered while it
    /// holds a task or a [`TaskTable::hold`]; a caller that registers it for a task it then
    /// does not make calls [`TaskTable::forget_if_unused`].
    pub fn owner(&mut self, owner: &Owner) -> OwnerIdx {
        if let Some(&idx) = self.owner_ids.get(owner) {
            return idx;
        }
        let entry = OwnerEntry {
            name: owner.clone(),
            list: VecDeque::new(),
            holds: 0,
        };
        let idx = match self.free_owners.pop() {
            Some(idx) => {
                self.owners[idx as usize] = entry;
                idx
            }
            None => {
                self.owners.push(entry);
                (self.owners.len() - 1) as OwnerIdx
            }
        };
        self.owner_ids.insert(owner.clone(), idx);
        idx
    }

    /// Registers `owner` (see [`TaskTable::owner`]) for something that names it until
    /// [`TaskTable::release`] (a session).
    pub fn hold(&mut self, owner: &Owner) -> OwnerIdx {
        let idx = self.owner(owner);
        self.owners[idx as usize].holds += 1;
        idx
    }

    /// Ends one [`TaskTable::hold`] of `owner`.
    pub fn release(&mut self, owner: OwnerIdx) {
        let entry = &mut self.owners[owner as usize];
        entry.holds = entry.holds.saturating_sub(1);
        self.forget_if_unused(owner);
    }

    /// Forgets `owner` when nothing names it any more: no task, no hold.
    pub fn forget_if_unused(&mut self, owner: OwnerIdx) {
        let entry = &self.owners[owner as usize];
        let registered = self.owner_ids.get(&entry.name) == Some(&owner);
        if !registered || entry.holds > 0 || !entry.list.is_empty() {
            return;
        }
        let name = entry.name.clone();
        self.owner_ids.remove(&name);
        self.owners[owner as usize].list = VecDeque::new();
        self.free_owners.push(owner);
    }

    /// Owners registered now (each holds a task or is held).
    pub fn owner_count(&self) -> usize {
        self.owner_ids.len()
    }

    pub fn owner_name(&self, owner: OwnerIdx) -> &Owner {
        &self.owners[owner as usize].name
    }

    /// Tasks `owner` holds (every status).
    pub fn owner_len(&self, owner: &Owner) -> usize {
        self.owner_ids
            .get(owner)
            .map_or(0, |&idx| self.owners[idx as usize].list.len())
    }

    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    /// Stores a new task of `new.owner` (registered by [`TaskTable::owner`]; an owner
    /// registered only for it is forgotten again when it is refused).
    pub fn create(&mut self, new: NewTask) -> Result<&Record, CreateError> {
        let refused = if self.ids.contains_key(new.id.as_str()) {
            Some(CreateError::Duplicate)
        } else if self.ids.len() >= self.max_tasks {
            Some(CreateError::Quota(Quota::Host(self.max_tasks)))
        } else if self.owners[new.owner as usize].list.len() >= self.max_per_owner {
            Some(CreateError::Quota(Quota::Owner(self.max_per_owner)))
        } else {
            None
        };
        if let Some(refused) = refused {
            self.forget_if_unused(new.owner);
            return Err(refused);
        }
        let record = Record {
            id: new.id.clone(),
            created_at: new.now,
            last_updated_at: new.now,
            ttl: new.ttl_ms.map_or(UNLIMITED, |t| t.min(UNLIMITED - 1)),
            message: None,
            outcome: None,
            owner: new.owner,
            poll: new.poll_interval_ms.map_or(NO_POLL, |p| p.min(NO_POLL - 1)),
            polled: Millis(0),
            status: TaskStatus::Working,
            era: new.era,
            kind: OutcomeKind::None,
            inputs: new.input_kinds.bits(),
            request: new.request,
        };
        Ok(self.insert(record))
    }

    /// Stores a task as restored from a snapshot (no quota check: it existed before).
    pub fn restore(&mut self, snapshot: TaskSnapshot) -> Result<&Record, CreateError> {
        let TaskSnapshot {
            info,
            owner,
            era,
            input_kinds,
            outcome,
            request,
            // Input requests belong to the call that asked: the work here asks again, or a
            // stand-in shows another host's ([`State::sync_task`]).
            inputs: _,
            progress: _,
        } = snapshot;
        if self.ids.contains_key(info.id.as_str()) {
            return Err(CreateError::Duplicate);
        }
        let owner = self.owner(&owner);
        let (kind, raw) = match outcome {
            None => (OutcomeKind::None, None),
            Some(Outcome::Result { value, is_error }) => (
                if is_error {
                    OutcomeKind::ErrorResult
                } else {
                    OutcomeKind::Result
                },
                Some(value),
            ),
            Some(Outcome::Error(error)) => (
                OutcomeKind::Error,
                Some(serde_json::value::to_raw_value(&error).expect("errors serialize")),
            ),
        };
        let record = Record {
            id: info.id,
            created_at: info.created_at,
            last_updated_at: info.last_updated_at.max(info.created_at),
            ttl: info.ttl_ms.map_or(UNLIMITED, |t| t.min(UNLIMITED - 1)),
            message: info.status_message.map(String::into_boxed_str),
            outcome: raw,
            owner,
            poll: info.poll_interval_ms.map_or(NO_POLL, |p| {
                u32::try_from(p).unwrap_or(NO_POLL - 1).min(NO_POLL - 1)
            }),
            polled: Millis(0),
            status: info.status,
            era,
            kind,
            inputs: input_kinds.bits(),
            request: request.filter(|_| !info.status.is_terminal()).map(Box::new),
        };
        Ok(self.insert(record))
    }

    fn insert(&mut self, record: Record) -> &Record {
        if record.status.is_terminal() {
            self.finished(&record.id);
        }
        let (slot, generation) = self.alloc_slot();
        if let Some(at) = record.expires_at() {
            self.expiry.push(Reverse((at, slot, generation)));
        }
        self.ids.insert(record.id.clone(), slot);
        let (owner, key) = (record.owner, (record.created_at, record.id.clone()));
        self.slot_mut(slot).record = Some(record);
        let at = self.list_position(owner, (key.0, &key.1));
        self.owners[owner as usize].list.insert(at, slot);
        self.slot(slot).record.as_ref().expect("just stored")
    }

    /// Where `key` sits (or would sit) in `owner`'s listing: the count of tasks before it.
    fn list_position(&self, owner: OwnerIdx, key: ListKey<'_>) -> usize {
        let list = &self.owners[owner as usize].list;
        // Mostly at or near the end (the clock does not go back; ids of one millisecond
        // come in any order): look back 1, 2, 4… places from the end for a task before
        // `key`, then search only the span that step skipped.
        let before = |at: usize| self.key(list[at]) < key;
        let (mut low, mut high, mut step) = (0, list.len(), 1);
        while high > 0 {
            let probe = high.saturating_sub(step);
            if before(probe) {
                low = probe + 1;
                break;
            }
            high = probe;
            step *= 2;
        }
        // Every task before `low` sorts before `key`, none from `high` on.
        while low < high {
            let middle = low + (high - low) / 2;
            if before(middle) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }

    fn key(&self, slot: u32) -> ListKey<'_> {
        let record = self
            .slot(slot)
            .record
            .as_ref()
            .expect("listed slots hold records");
        (record.created_at, record.id.as_str())
    }

    fn alloc_slot(&mut self) -> (u32, u32) {
        if let Some(slot) = self.free.pop() {
            return (slot, self.slot_mut(slot).generation);
        }
        let full = self.chunks.last().is_none_or(|c| c.len() == CHUNK);
        if full {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let index = (self.chunks.len() - 1) * CHUNK + self.chunks.last().map_or(0, Vec::len);
        self.chunks
            .last_mut()
            .expect("a chunk with room")
            .push(Slot {
                generation: 0,
                record: None,
            });
        (u32::try_from(index).expect("fewer than 2^32 tasks"), 0)
    }

    fn slot(&self, slot: u32) -> &Slot {
        let slot = slot as usize;
        &self.chunks[slot / CHUNK][slot % CHUNK]
    }

    fn slot_mut(&mut self, slot: u32) -> &mut Slot {
        let slot = slot as usize;
        &mut self.chunks[slot / CHUNK][slot % CHUNK]
    }

    fn live(&self, slot: u32, generation: u32) -> Option<&Record> {
        let s = self.slot(slot);
        (s.generation == generation).then_some(s.record.as_ref()?)
    }

    pub fn get(&self, id: &str) -> Option<&Record> {
        let &slot = self.ids.get(id)?;
        self.slot(slot).record.as_ref()
    }

    /// The task, if it exists and belongs to `owner` (others must not learn it exists).
    pub fn get_owned(&self, id: &str, owner: OwnerIdx) -> Option<&Record> {
        self.get(id).filter(|r| r.owner == owner)
    }

    /// The -32602 for a task `owner` asked about and cannot have: "Task has expired" for
    /// one of its own that expired lately, else "Task not found" (also for another owner's:
    /// its existence does not leak).
    pub fn missing(&self, id: &str, owner: OwnerIdx, action: &str) -> RpcError {
        let expired = !self.ids.contains_key(id)
            && self
                .tombstones
                .iter()
                .any(|(t, o)| *o == owner && t.as_str() == id);
        let why = if expired {
            "Task has expired"
        } else {
            "Task not found"
        };
        RpcError::invalid_params(format!("Failed to {action} task: {why}"))
    }

    fn get_mut(&mut self, id: &str) -> Option<&mut Record> {
        let &slot = self.ids.get(id)?;
        self.slot_mut(slot).record.as_mut()
    }

    /// Moves a task along the transition table, optionally replacing its message; a terminal
    /// status needs an outcome and only a terminal status takes one. Returns `false` (and
    /// changes nothing) when the table forbids the move.
    pub fn transition(
        &mut self,
        id: &str,
        now: Millis,
        to: TaskStatus,
        message: Option<String>,
        outcome: Option<NewOutcome>,
    ) -> bool {
        let Some(task) = self.get_mut(id) else {
            return false;
        };
        if !task.status.can_become(to) || to.is_terminal() != outcome.is_some() {
            return false;
        }
        task.status = to;
        if let Some(outcome) = outcome {
            task.kind = outcome.kind;
            task.outcome = Some(outcome.raw);
            task.request = None;
        }
        if message.is_some() {
            task.message = message.map(String::into_boxed_str);
        }
        task.last_updated_at = task.last_updated_at.max(now);
        if to.is_terminal() {
            let id = task.id.clone();
            self.finished(&id);
        }
        true
    }

    /// Paces the polls of a running task (2026-07-28 checklist §2.9 r5): a poll sooner than
    /// half the suggested interval after the previous one doubles the interval, up to
    /// [`MAX_PACED_POLL_MS`] (never lowered); every poll is answered all the same. The task
    /// as it stands after, for the answer.
    pub fn pace_poll(&mut self, id: &str, now: Millis) -> Option<&Record> {
        let task = self.get_mut(id)?;
        if task.status.is_terminal() || task.poll == NO_POLL {
            return Some(task);
        }
        let previous = std::mem::replace(&mut task.polled, now);
        let early = now.0.saturating_sub(previous.0) < u64::from(task.poll / 2);
        if previous != Millis(0) && early {
            task.poll = task
                .poll
                .saturating_mul(2)
                .min(MAX_PACED_POLL_MS.max(task.poll));
        }
        Some(task)
    }

    /// Counts one more run of a task's work (its request's attempt) and returns the request
    /// to run; `None` when the task kept none. `stored`: the request as the store holds it
    /// now, when newer than the record's (a task synced before another host ran it again).
    pub fn start_again(&mut self, id: &str, stored: Option<TaskRequest>) -> Option<TaskRequest> {
        let record = self.get_mut(id)?;
        if let Some(stored) = stored {
            record.request = Some(Box::new(stored));
        }
        let request = record.request.as_deref_mut()?;
        request.attempt = request.attempt.saturating_add(1);
        Some(request.clone())
    }

    /// Marks a task's work as queued for another host (its request's attempt 0: no run has
    /// started). Returns whether the task keeps a request to queue.
    pub fn queue(&mut self, id: &str) -> bool {
        match self.get_mut(id).and_then(|r| r.request.as_deref_mut()) {
            Some(request) => {
                request.attempt = 0;
                true
            }
            None => false,
        }
    }

    /// Replaces the status message of a non-terminal task. Returns whether it changed.
    pub fn set_message(&mut self, id: &str, now: Millis, message: Option<String>) -> bool {
        match self.get_mut(id) {
            Some(task)
                if !task.status.is_terminal() && task.message.as_deref() != message.as_deref() =>
            {
                task.message = message.map(String::into_boxed_str);
                task.last_updated_at = task.last_updated_at.max(now);
                true
            }
            _ => false,
        }
    }

    /// Removes a task.
    pub fn remove(&mut self, id: &str) -> Option<Record> {
        let &slot = self.ids.get(id)?;
        let owner = self.slot(slot).record.as_ref()?.owner;
        let list = &self.owners[owner as usize].list;
        // Mostly the oldest (expiry) or the newest (a refused creation's neighbour).
        let at = if list.front() == Some(&slot) {
            0
        } else if list.back() == Some(&slot) {
            list.len() - 1
        } else {
            self.list_position(owner, self.key(slot))
        };
        self.owners[owner as usize].list.remove(at);
        self.ids.remove(id);
        let place = self.slot_mut(slot);
        let record = place.record.take()?;
        place.generation = place.generation.wrapping_add(1);
        if record.status.is_terminal() {
            self.finished_held -= 1;
        }
        self.free.push(slot);
        self.drop_stale_expiry();
        self.forget_if_unused(owner);
        Some(record)
    }

    fn drop_stale_expiry(&mut self) {
        while let Some(&Reverse((at, slot, generation))) = self.expiry.peek() {
            match self.live(slot, generation) {
                Some(r) if r.expires_at() == Some(at) => break,
                _ => {
                    self.expiry.pop();
                }
            }
        }
    }

    /// Up to `limit` of `owner`'s tasks of `era` after listing position `after`, and
    /// whether more remain (the last task's key is where to continue).
    pub fn page(
        &self,
        owner: OwnerIdx,
        era: Era,
        after: Option<ListKey<'_>>,
        limit: usize,
    ) -> (Vec<&Record>, bool) {
        let list = &self.owners[owner as usize].list;
        let start = after.map_or(0, |after| {
            list.partition_point(|&slot| self.key(slot) <= after)
        });
        let mut listed = list
            .range(start..)
            .filter_map(|&slot| self.slot(slot).record.as_ref())
            .filter(|r| r.era == era);
        let page: Vec<&Record> = listed.by_ref().take(limit).collect();
        let more = listed.next().is_some();
        (page, more)
    }

    /// When the next task expires.
    pub fn next_expiry(&self) -> Option<Millis> {
        self.expiry.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Removes and returns one task whose retention has run out at `now`.
    pub fn pop_expired(&mut self, now: Millis) -> Option<Record> {
        self.drop_stale_expiry();
        let &Reverse((at, slot, _)) = self.expiry.peek()?;
        if at > now {
            return None;
        }
        self.expiry.pop();
        let (id, owner) = {
            let record = self.slot(slot).record.as_ref()?;
            (record.id.clone(), record.owner)
        };
        // The tombstone names the owner: held before the removal may forget it.
        self.owners[owner as usize].holds += 1;
        let record = self.remove(&id)?;
        if self.tombstones.len() == TOMBSTONES {
            if let Some((_, buried)) = self.tombstones.pop_front() {
                self.release(buried);
            }
        }
        self.tombstones.push_back((record.id.clone(), record.owner));
        Some(record)
    }
}

/// FxHash-style hashing for the task table. Task ids are ours (random) or the
/// application's, so a peer cannot insert colliding keys; its lookups only probe.
#[derive(Clone, Copy, Default)]
pub(crate) struct IdHasher(u64);

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in chunks.by_ref() {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        // Spread the high bits, which hashbrown uses for its control bytes.
        self.0 ^ (self.0 >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(max: usize, per_owner: usize) -> (TaskTable, OwnerIdx, OwnerIdx) {
        let mut t = TaskTable::new(max, per_owner);
        let a = t.owner(&Owner::from("a"));
        let b = t.owner(&Owner::from("b"));
        (t, a, b)
    }

    fn new(id: &str, owner: OwnerIdx, now: u64, ttl: Option<u64>) -> NewTask {
        NewTask {
            id: TaskId::from(id),
            owner,
            now: Millis(now),
            ttl_ms: ttl,
            poll_interval_ms: None,
            era: Era::V2025_11_25,
            input_kinds: InputKinds::default(),
            request: None,
        }
    }

    fn done() -> Option<NewOutcome> {
        Some(NewOutcome {
            raw: RawValue::from_string("{}".into()).unwrap(),
            kind: OutcomeKind::Result,
        })
    }

    #[test]
    fn quotas_per_host_and_per_owner() {
        let (mut t, a, b) = table(3, 2);
        t.create(new("1", a, 1, None)).unwrap();
        assert_eq!(
            t.create(new("1", b, 1, None)).unwrap_err(),
            CreateError::Duplicate
        );
        t.create(new("2", a, 1, None)).unwrap();
        assert_eq!(
            t.create(new("3", a, 1, None)).unwrap_err(),
            CreateError::Quota(Quota::Owner(2))
        );
        t.create(new("3", b, 1, None)).unwrap();
        assert_eq!(
            t.create(new("4", b, 1, None)).unwrap_err(),
            CreateError::Quota(Quota::Host(3))
        );
        t.remove("1");
        t.create(new("4", a, 1, None)).unwrap();
        assert_eq!((t.len(), t.owner_len(&Owner::from("a"))), (3, 2));
    }

    #[test]
    fn transitions_follow_the_table_and_terminal_needs_an_outcome() {
        let (mut t, a, _) = table(10, 10);
        t.create(new("x", a, 10, None)).unwrap();
        assert!(!t.transition("x", Millis(11), TaskStatus::Completed, None, None));
        assert!(t.transition("x", Millis(12), TaskStatus::InputRequired, None, None));
        assert!(t.transition(
            "x",
            Millis(13),
            TaskStatus::Cancelled,
            Some("bye".into()),
            done()
        ));
        assert!(!t.transition("x", Millis(14), TaskStatus::Completed, None, done()));
        assert!(!t.set_message("x", Millis(15), Some("late".into())));
        let r = t.get("x").unwrap();
        assert_eq!(
            (r.status, r.last_updated_at),
            (TaskStatus::Cancelled, Millis(13))
        );
        assert_eq!(r.message(), Some("bye"));
    }

    #[test]
    fn pages_per_owner_by_creation_time_then_id_across_removals() {
        let (mut t, a, b) = table(1000, 1000);
        for (i, id) in ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]
            .iter()
            .enumerate()
        {
            let owner = if i % 2 == 0 { a } else { b };
            t.create(new(id, owner, i as u64 / 4, None)).unwrap();
        }
        // Same creation time, created out of id order: listed by id.
        t.create(new("t3b", b, 0, None)).unwrap();
        t.create(new("t10", a, 2, None)).unwrap();
        t.remove("t2");
        let ids = |page: &[&Record]| page.iter().map(|r| r.id.to_string()).collect::<Vec<_>>();
        let key = |r: &Record| (r.created_at, r.id.to_string());
        let (page, more) = t.page(a, Era::V2025_11_25, None, 2);
        assert_eq!(
            (ids(&page), more),
            (vec!["t0".to_owned(), "t4".to_owned()], true)
        );
        let after = key(page[1]);
        let (page, more) = t.page(a, Era::V2025_11_25, Some((after.0, &after.1)), 10);
        assert_eq!(
            (ids(&page), more),
            (
                vec!["t6".to_owned(), "t10".to_owned(), "t8".to_owned()],
                false
            )
        );
        let (page, _) = t.page(b, Era::V2025_11_25, None, 10);
        assert_eq!(ids(&page), ["t1", "t3", "t3b", "t5", "t7", "t9"]);
        // A cursor whose task has gone still resumes after its place.
        t.remove("t4");
        let gone = (Millis(1), "t4");
        let (page, _) = t.page(a, Era::V2025_11_25, Some(gone), 10);
        assert_eq!(ids(&page), ["t6", "t10", "t8"]);
    }

    #[test]
    fn tasks_made_out_of_order_are_listed_in_order_wherever_they_land() {
        let (mut t, a, _) = table(10_000, 10_000);
        // 0, 7, 14, … mod 1000 (7 and 1000 are coprime): every distance from the end.
        let order: Vec<u64> = (0..1000).map(|i| i * 7 % 1000).collect();
        for &i in &order {
            t.create(new(&format!("t{i:03}"), a, i / 10, None)).unwrap();
        }
        let listed: Vec<(Millis, String)> = t.owners[a as usize]
            .list
            .iter()
            .map(|&slot| {
                let (at, id) = t.key(slot);
                (at, id.to_owned())
            })
            .collect();
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed.len(), 1000);
        assert_eq!(listed, sorted);
    }

    #[test]
    fn expires_in_deadline_order_and_skips_removed_tasks() {
        let (mut t, a, _) = table(10, 10);
        t.create(new("b", a, 5, Some(100))).unwrap();
        t.create(new("a", a, 5, Some(50))).unwrap();
        t.create(new("c", a, 1, None)).unwrap();
        t.create(new("d", a, 1, Some(10))).unwrap();
        t.remove("d");
        assert_eq!(t.next_expiry(), Some(Millis(55)));
        assert!(t.pop_expired(Millis(54)).is_none());
        assert_eq!(t.pop_expired(Millis(200)).unwrap().id, "a");
        assert_eq!(t.pop_expired(Millis(200)).unwrap().id, "b");
        assert!(t.pop_expired(Millis(u64::MAX)).is_none());
        assert_eq!(t.len(), 1);
        assert_eq!(t.next_expiry(), None);
    }

    #[test]
    fn removals_anywhere_keep_the_listing_exact() {
        let (mut t, a, _) = table(100_000, 100_000);
        for i in 0..5000 {
            t.create(new(&format!("t{i:04}"), a, i, None)).unwrap();
        }
        for i in (0..5000).filter(|i| i % 3 != 0) {
            t.remove(&format!("t{i:04}"));
        }
        assert_eq!(t.owners[a as usize].list.len(), 1667);
        let (page, more) = t.page(a, Era::V2025_11_25, None, 3);
        assert!(more);
        assert_eq!(
            page.iter().map(|r| r.id.to_string()).collect::<Vec<_>>(),
            ["t0000", "t0003", "t0006"]
        );
    }
}

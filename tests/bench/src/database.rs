//! A fresh database for one server process, and its size on disk: for SQLite a directory of
//! its own, removed when the [`ScratchDb`] is dropped; for PostgreSQL a database of its own
//! ([`ScratchPgDb`]), dropped when it is dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::postgres_db::ScratchPgDb;

/// The database of one of ours on a durable store, removed when dropped.
#[derive(Debug)]
pub enum Database {
    /// A SQLite database in a directory of its own.
    Sqlite(ScratchDb),
    /// A PostgreSQL database of its own.
    Postgres(ScratchPgDb),
}

impl Database {
    /// Bytes on disk: SQLite's files (`.db`, `-wal`, `-shm`), or PostgreSQL's task table
    /// with its indexes and TOAST (`pg_total_relation_size('taskwire_tasks')`).
    pub fn bytes_on_disk(&self) -> Result<u64, String> {
        match self {
            Database::Sqlite(db) => db.bytes_on_disk(),
            Database::Postgres(db) => db.bytes_on_disk(),
        }
    }
}

/// Databases created by this process so far (part of each directory's name).
static CREATED: AtomicU64 = AtomicU64::new(0);

/// The files SQLite keeps for a database in WAL mode, as suffixes of its path.
const FILES: [&str; 3] = ["", "-wal", "-shm"];

/// A database path in a fresh directory, which is removed (with everything in it) on drop.
#[derive(Debug)]
pub struct ScratchDb {
    dir: PathBuf,
    path: PathBuf,
}

impl ScratchDb {
    /// A new, empty directory under `parent` (created if need be), named after this process,
    /// with `tasks.db` as the database path; the file itself is left for the server to create.
    pub fn create(parent: &Path) -> Result<ScratchDb, String> {
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("db-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join("tasks.db");
        Ok(ScratchDb { dir, path })
    }

    /// The database's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sizes of the database file and its `-wal` and `-shm` files, summed (a missing one
    /// counts 0).
    pub fn bytes_on_disk(&self) -> Result<u64, String> {
        let mut total = 0;
        for suffix in FILES {
            let mut file = self.path.clone().into_os_string();
            file.push(suffix);
            match std::fs::metadata(&file) {
                Ok(meta) => total += meta.len(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot stat {}: {e}", Path::new(&file).display())),
            }
        }
        Ok(total)
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_the_three_files_and_removes_its_directory() {
        let parent = std::env::temp_dir().join(format!("taskwire-scratch-{}", std::process::id()));
        let db = ScratchDb::create(&parent).unwrap();
        let other = ScratchDb::create(&parent).unwrap();
        assert_ne!(db.path(), other.path());
        assert_eq!(db.bytes_on_disk(), Ok(0));
        std::fs::write(db.path(), [0; 100]).unwrap();
        let mut wal = db.path().as_os_str().to_owned();
        wal.push("-wal");
        std::fs::write(&wal, [0; 20]).unwrap();
        assert_eq!(db.bytes_on_disk(), Ok(120));
        let dir = db.path().parent().unwrap().to_owned();
        drop(db);
        assert!(!dir.exists());
        drop(other);
        let _ = std::fs::remove_dir(&parent);
    }
}

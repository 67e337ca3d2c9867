//! A [`TokenStore`] in a JSON file readable by its user only: what a command-line client
//! keeps between runs (each server's tokens, each authorization server's registration).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::registration::ClientRegistration;
use super::tokens::{TokenStore, Tokens};

/// The file's content.
#[derive(Default, Serialize, Deserialize)]
struct Kept {
    #[serde(default)]
    tokens: BTreeMap<String, Tokens>,
    #[serde(default)]
    registrations: BTreeMap<String, ClientRegistration>,
}

/// Tokens and registrations in one JSON file. Every change rewrites the file whole, through
/// a temporary file renamed over it; on Unix both are created with mode `0600` (their
/// directory `0700` when this makes it). A file that cannot be read counts as empty, and
/// one that cannot be written keeps the tokens for this process only; both are logged.
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    /// Changes one at a time (read, change, write).
    lock: Mutex<()>,
}

impl FileStore {
    /// The store in the file at `path` (made on the first sign-in).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// Its file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Forgets the tokens for `server`: `Ok(true)` when there were some.
    pub fn forget(&self, server: &str) -> io::Result<bool> {
        let _one = self.lock.lock().expect("not poisoned");
        let mut kept = self.read()?;
        let had = kept.tokens.remove(server).is_some();
        if had {
            self.write(&kept)?;
        }
        Ok(had)
    }

    fn read(&self) -> io::Result<Kept> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is no token file: {e}", self.path.display()),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Kept::default()),
            Err(e) => Err(e),
        }
    }

    fn write(&self, kept: &Kept) -> io::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                private_dir(dir)?;
            }
        }
        let temporary = self.path.with_extension("tmp");
        let mut file = private_file(&temporary)?;
        file.write_all(&serde_json::to_vec_pretty(kept).map_err(io::Error::other)?)?;
        file.sync_all()?;
        std::fs::rename(&temporary, &self.path)
    }

    /// Reads, changes with `change`, writes; a failure is logged, not returned (the trait's
    /// callers sign in whatever happens to the file).
    fn change(&self, what: &str, change: impl FnOnce(&mut Kept)) {
        let _one = self.lock.lock().expect("not poisoned");
        let mut kept = self.read().unwrap_or_else(|e| {
            tracing::warn!(file = %self.path.display(), error = %e, "the token file is unreadable; starting it anew");
            Kept::default()
        });
        change(&mut kept);
        if let Err(e) = self.write(&kept) {
            tracing::warn!(file = %self.path.display(), error = %e, what, "cannot write the token file");
        }
    }

    fn kept(&self) -> Kept {
        let _one = self.lock.lock().expect("not poisoned");
        self.read().unwrap_or_else(|e| {
            tracing::warn!(file = %self.path.display(), error = %e, "the token file is unreadable");
            Kept::default()
        })
    }
}

impl TokenStore for FileStore {
    fn tokens(&self, server: &str) -> Option<Tokens> {
        self.kept().tokens.remove(server)
    }

    fn set_tokens(&self, server: &str, tokens: Option<Tokens>) {
        self.change("tokens", |kept| match tokens {
            Some(tokens) => {
                kept.tokens.insert(server.to_owned(), tokens);
            }
            None => {
                kept.tokens.remove(server);
            }
        });
    }

    fn registration(&self, issuer: &str) -> Option<ClientRegistration> {
        self.kept().registrations.remove(issuer)
    }

    fn set_registration(&self, issuer: &str, registration: ClientRegistration) {
        self.change("registration", |kept| {
            kept.registrations.insert(issuer.to_owned(), registration);
        });
    }
}

#[cfg(unix)]
fn private_file(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::create(path)
}

#[cfg(unix)]
fn private_dir(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}

#[cfg(not(unix))]
fn private_dir(path: &Path) -> io::Result<()> {
    std::fs::create_dir_all(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(access: &str) -> Tokens {
        Tokens {
            access_token: access.into(),
            refresh_token: Some("r".into()),
            expires_at: Some(1),
            issued_at: None,
            scopes: vec!["mcp".into()],
            issuer: "https://as".into(),
            token_endpoint: "https://as/token".into(),
            resource: "https://mcp/mcp".into(),
        }
    }

    #[test]
    fn tokens_outlive_the_store_in_a_file_only_its_user_reads() {
        let dir = std::env::temp_dir().join(format!("taskwire-file-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("nested").join("tokens.json");
        let store = FileStore::new(&path);
        assert_eq!(store.tokens("https://mcp/mcp"), None);
        store.set_tokens("https://mcp/mcp", Some(tokens("a1")));
        store.set_registration("https://as", ClientRegistration::new("c1", None));
        let again = FileStore::new(&path);
        assert_eq!(again.tokens("https://mcp/mcp"), Some(tokens("a1")));
        assert_eq!(
            again.registration("https://as"),
            Some(ClientRegistration::new("c1", None))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        assert!(again.forget("https://mcp/mcp").unwrap());
        assert!(!again.forget("https://mcp/mcp").unwrap());
        assert_eq!(store.tokens("https://mcp/mcp"), None);
        // A broken file reads as empty and is started anew.
        std::fs::write(&path, "not json").unwrap();
        assert_eq!(store.tokens("https://mcp/mcp"), None);
        store.set_tokens("https://mcp/mcp", Some(tokens("a2")));
        assert_eq!(again.tokens("https://mcp/mcp"), Some(tokens("a2")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

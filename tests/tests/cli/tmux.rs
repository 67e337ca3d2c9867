//! A real terminal for the command line's tests: a tmux session, its screen, its keys.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use taskwire_tests::peers::Argv;

/// A tmux session running one command, killed when dropped.
pub struct Tmux {
    name: String,
}

impl Tmux {
    /// Starts `command` (a shell line) in a fresh 100×30 terminal; when it ends, the pane
    /// shows `EXIT=<code>` and stays.
    pub fn start(test: &str, command: &str) -> Tmux {
        let name = format!("taskwire-{test}-{}", std::process::id());
        let line = format!("{command}; echo EXIT=$?; sleep 60");
        let status = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                "100",
                "-y",
                "30",
                &line,
            ])
            .env_remove("NO_COLOR")
            .status()
            .expect("tmux runs (apt-get install tmux)");
        assert!(status.success(), "tmux new-session failed");
        Tmux { name }
    }

    /// What the terminal shows now, with its scroll-back.
    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-S", "-200", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text`, and returns it; panics with the screen after
    /// `limit`.
    pub fn wait_for(&self, text: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < limit,
                "no {text:?} within {limit:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["send-keys", "-t", &self.name])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

/// A path quoted for the shell line of [`Tmux::start`].
pub fn shell(path: &Path) -> String {
    quote(&path.to_string_lossy())
}

/// A command line as a shell line for [`Tmux::start`] (its environment first, with `env`).
pub fn shell_line(argv: &Argv) -> String {
    let env = argv
        .env
        .iter()
        .map(|(k, v)| quote(&format!("{}={}", k.to_string_lossy(), v.to_string_lossy())));
    let words = argv.argv.iter().map(|a| quote(&a.to_string_lossy()));
    let line: Vec<String> = match argv.env.is_empty() {
        true => words.collect(),
        false => ["env".to_owned()]
            .into_iter()
            .chain(env)
            .chain(words)
            .collect(),
    };
    line.join(" ")
}

/// One word for `sh`, in single quotes.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

//! The driver's layering, checked on its source: the loop (`driver/`) names neither side of
//! the protocol (`client/`, `server/`, their handlers), and the two sides never name each
//! other, so a new application or connection kind is one more module, not edits in a circle.

use std::fs;
use std::path::{Path, PathBuf};

/// The code of every `.rs` file under `src/<dir>`, comments left out.
fn code_under(dir: &str) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in fs::read_dir(dir).expect("a source directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).expect("a source file");
                let code = text
                    .lines()
                    .map(|line| line.split("//").next().unwrap_or(""))
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push((path, code));
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join(dir),
        &mut files,
    );
    assert!(!files.is_empty(), "no sources under src/{dir}");
    files
}

fn assert_names_none(dir: &str, forbidden: &[&str]) {
    for (path, code) in code_under(dir) {
        for name in forbidden {
            assert!(
                !code.contains(name),
                "{} names {name}: src/{dir} must not depend on it",
                path.display()
            );
        }
    }
}

#[test]
fn the_loop_names_neither_side() {
    assert_names_none(
        "driver",
        &["crate::client", "crate::server", "crate::handler"],
    );
}

#[test]
fn client_and_server_do_not_name_each_other() {
    assert_names_none("client", &["crate::server"]);
    assert_names_none("server", &["crate::client"]);
}

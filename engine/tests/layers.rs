//! The engine's layering, checked on its source: the top-level modules import each other
//! without a cycle, the protocol eras never name each other, and neither the era-neutral
//! state nor the host façade names an era (the one place that does is `era/mod.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, with its path relative to `src/`.
fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    for entry in fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("under src");
            let text = fs::read_to_string(&path).expect("a source file");
            out.push((relative.to_string_lossy().replace('\\', "/"), text));
        }
    }
}

/// The lines of `text` that are code: comments and the unit tests at the end left out.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn engine() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    files.sort();
    files
}

/// The top-level module a file belongs to (`state/outbound.rs` → `state`).
fn module(path: &str) -> &str {
    path.split('/')
        .next()
        .unwrap_or(path)
        .trim_end_matches(".rs")
}

/// The top-level modules a file names through `crate::…`.
fn imports(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
        // `use crate::{a, b::c}` names several.
        if let Some(group) = rest.strip_prefix('{') {
            for part in group.split('}').next().unwrap_or("").split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
    }
    found
}

#[test]
fn top_level_modules_import_each_other_without_a_cycle() {
    let files = engine();
    let modules: BTreeSet<&str> = files
        .iter()
        .map(|(p, _)| module(p))
        .filter(|m| *m != "lib")
        .collect();
    let mut edges: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (path, text) in &files {
        let from = module(path);
        if from == "lib" {
            continue;
        }
        for to in imports(&code(text)) {
            if to != from && modules.contains(to.as_str()) {
                edges.entry(from).or_default().insert(to);
            }
        }
    }
    // Depth-first search for a cycle, reporting the first found.
    fn visit<'a>(
        m: &'a str,
        edges: &'a BTreeMap<&str, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|p| *p == m) {
            let mut cycle = path[at..].to_vec();
            cycle.push(m);
            panic!("import cycle: {}", cycle.join(" -> "));
        }
        if done.contains(m) {
            return;
        }
        path.push(m);
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in &modules {
        visit(m, &edges, &mut Vec::new(), &mut done);
    }
    // The layers the crate documents, top down.
    let uses = |from: &str, to: &str| edges.get(from).is_some_and(|e| e.contains(to));
    assert!(uses("host", "era") && uses("host", "state") && uses("era", "state"));
    assert!(!uses("state", "era") && !uses("state", "host") && !uses("era", "host"));
}

#[test]
fn eras_never_name_each_other() {
    let eras = ["v2025_11_25", "v2026_07_28"];
    for (path, text) in engine() {
        for era in eras {
            if !path.starts_with(&format!("era/{era}/")) {
                continue;
            }
            let code = code(&text);
            for other in eras.iter().filter(|o| **o != era) {
                assert!(
                    !code.contains(other),
                    "{path} names the other era's module {other}"
                );
            }
        }
    }
}

#[test]
fn only_the_seam_names_the_eras() {
    for (path, text) in engine() {
        if !(path.starts_with("host/") || path.starts_with("state/")) {
            continue;
        }
        let code = code(&text);
        for name in [
            "v2025_11_25",
            "v2026_07_28",
            "Era::V2025_11_25",
            "Era::V2026_07_28",
        ] {
            assert!(!code.contains(name), "{path} names the era {name}");
        }
    }
}

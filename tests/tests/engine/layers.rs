//! The house's layering, checked on the source of every product crate (the engine and each
//! adapter): no file imports a file that imports it back, at any distance; the engine's
//! top-level modules run one way; its protocol eras never name each other; and neither the
//! era-neutral state nor the host façade names an era (the one place that does is
//! `era/mod.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module of a crate, by its path (`["sessions", "table"]`; the crate root is `[]`).
type Module = Vec<String>;

/// The workspace's root.
fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

/// The `src/` folders of the product crates: the engine and every adapter.
fn product_crates() -> Vec<PathBuf> {
    let root = workspace();
    let mut crates = vec![root.join("engine/src")];
    for entry in fs::read_dir(root.join("adapters")).expect("adapters/") {
        let src = entry.expect("a directory entry").path().join("src");
        if src.is_dir() {
            crates.push(src);
        }
    }
    crates.sort();
    crates
}

/// Every module file under `src` with its code, by module path; `src/bin/` holds crates of
/// their own and is left out.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, String>) {
        for entry in fs::read_dir(dir).expect("a source directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                if path != src.join("bin") {
                    walk(&path, src, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(src).expect("under src");
                let mut module: Module = relative
                    .with_extension("")
                    .iter()
                    .map(|part| part.to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    module.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    module.pop();
                }
                let text = fs::read_to_string(&path).expect("a source file");
                out.insert(module, code(&text));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The lines of `text` that are code: comments and the unit tests at the end left out.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// Each path the code names from `crate`, `super` or `self` (a `use` group gives one path
/// per member), as its segments; visibility (`pub(super)`, `pub(in …)`) is no path.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices(|c: char| c.is_alphabetic()) {
        let before = &code[..at];
        let word = ident(&code[at..]);
        let after = &code[at + word.len()..];
        let starts_a_word = !before.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let visibility = before.ends_with("pub(") || before.ends_with("in ");
        if !starts_a_word || visibility || !matches!(word, "crate" | "super" | "self") {
            continue;
        }
        let mut segments = vec![word.to_owned()];
        let mut rest = after;
        while let Some(next) = rest.strip_prefix("::") {
            let name = ident(next);
            if name.is_empty() {
                break;
            }
            segments.push(name.to_owned());
            rest = &next[name.len()..];
        }
        if let Some(group) = rest.strip_prefix("::{") {
            for member in group.split('}').next().unwrap_or("").split(',') {
                let name = ident(member.trim());
                if !name.is_empty() {
                    found.push([segments.clone(), vec![name.to_owned()]].concat());
                }
            }
        }
        found.push(segments);
    }
    found
}

/// The module file `path`, named in `from`, resolves to: the longest prefix that is one.
fn resolve(from: &Module, path: &[String], modules: &BTreeMap<Module, String>) -> Module {
    let mut at = from.clone();
    let mut segments = path.iter().peekable();
    match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            at.clear();
            segments.next();
        }
        Some("self") => {
            segments.next();
        }
        _ => {}
    }
    while segments.peek().is_some_and(|s| *s == "super") {
        at.pop();
        segments.next();
    }
    for segment in segments {
        let mut next = at.clone();
        next.push(segment.clone());
        if !modules.contains_key(&next) {
            break;
        }
        at = next;
    }
    at
}

/// Which module files each module file imports (a parent that only declares a child
/// imports nothing).
fn imports(modules: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, code) in modules {
        for path in paths(code) {
            let to = resolve(from, &path, modules);
            if to != *from && !to.is_empty() {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

/// The first cycle found in `edges`, as its modules in order.
fn cycle<N: Ord + Clone>(edges: &BTreeMap<N, BTreeSet<N>>) -> Option<Vec<N>> {
    fn visit<N: Ord + Clone>(
        node: &N,
        edges: &BTreeMap<N, BTreeSet<N>>,
        path: &mut Vec<N>,
        done: &mut BTreeSet<N>,
    ) -> Option<Vec<N>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.clone());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

fn shown(module: &Module) -> String {
    if module.is_empty() {
        "lib".into()
    } else {
        module.join("/")
    }
}

#[test]
fn no_product_file_imports_a_file_that_imports_it_back() {
    let mut circles = Vec::new();
    for src in product_crates() {
        let modules = modules(&src);
        assert!(!modules.is_empty(), "no source under {}", src.display());
        if let Some(found) = cycle(&imports(&modules)) {
            let crate_dir = src.parent().expect("src is in a crate");
            let name = crate_dir.strip_prefix(workspace()).unwrap_or(crate_dir);
            let chain: Vec<String> = found.iter().map(shown).collect();
            circles.push(format!("{}: {}", name.display(), chain.join(" -> ")));
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_checker_sees_a_circle_and_ignores_visibility() {
    let modules: BTreeMap<Module, String> = [
        (vec![], "mod a; mod b;".to_owned()),
        (vec!["a".to_owned()], "use crate::b::{self, B};".to_owned()),
        (
            vec!["b".to_owned()],
            "pub(super) fn f() { super::a::g() }".to_owned(),
        ),
    ]
    .into_iter()
    .collect();
    let found = cycle(&imports(&modules)).expect("a -> b -> a");
    assert_eq!(found.len(), 3);
    let visibility_only: BTreeMap<Module, String> = [
        (vec![], "mod a;".to_owned()),
        (vec!["a".to_owned()], "pub(super) fn f() {}".to_owned()),
    ]
    .into_iter()
    .collect();
    assert!(imports(&visibility_only).is_empty());
}

/// The engine's modules, by path relative to its `src/` (`state/outbound.rs`).
fn engine() -> Vec<(String, String)> {
    modules(&workspace().join("engine/src"))
        .into_iter()
        .map(|(module, code)| (module.join("/"), code))
        .collect()
}

/// Whether the module `path` is `module` or inside it.
fn within(path: &str, module: &str) -> bool {
    path == module || path.starts_with(&format!("{module}/"))
}

#[test]
fn the_engine_top_level_modules_run_one_way() {
    let modules = modules(&workspace().join("engine/src"));
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in imports(&modules) {
        let Some(from) = from.first() else {
            continue;
        };
        for to in to.iter().filter_map(|m| m.first()) {
            if to != from {
                edges.entry(from.clone()).or_default().insert(to.clone());
            }
        }
    }
    if let Some(found) = cycle(&edges) {
        panic!("import cycle: {}", found.join(" -> "));
    }
    // The layers the crate documents, top down.
    let uses = |from: &str, to: &str| edges.get(from).is_some_and(|e| e.contains(to));
    assert!(uses("host", "era") && uses("host", "state") && uses("era", "state"));
    assert!(!uses("state", "era") && !uses("state", "host") && !uses("era", "host"));
}

#[test]
fn the_eras_never_name_each_other() {
    let eras = ["v2025_11_25", "v2026_07_28"];
    for (path, code) in engine() {
        for era in eras {
            if !within(&path, &format!("era/{era}")) {
                continue;
            }
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
    for (path, code) in engine() {
        if !(within(&path, "host") || within(&path, "state")) {
            continue;
        }
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

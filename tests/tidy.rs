//! Keeps the layering honest: only `src/lsp/` knows the LSP framework, and
//! every source file says what it is for.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

fn sources() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "found the sources");
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path.strip_prefix(&src).unwrap().to_path_buf(), text)
        })
        .collect()
}

#[test]
fn only_the_lsp_module_imports_the_lsp_framework() {
    for (path, text) in sources() {
        if path.starts_with("lsp") {
            continue;
        }
        for forbidden in ["tower_lsp_server", "ls_types", "lsp_types"] {
            assert!(
                !text.contains(forbidden),
                "{} mentions {forbidden}; keep LSP types in src/lsp/",
                path.display()
            );
        }
    }
}

#[test]
fn every_source_file_starts_with_a_module_doc() {
    for (path, text) in sources() {
        assert!(
            text.starts_with("//!"),
            "{} does not start with a `//!` doc comment",
            path.display()
        );
    }
}

/// Which top-level module of `src/` may import which. A new arrow that is
/// not here fails the test: add it only if it runs down the layers (see
/// ARCHITECTURE.md), never back up. `main.rs`, `lib.rs` and `cli`/`lsp`,
/// the front ends, sit on top.
const LAYERS: &[(&str, &[&str])] = &[
    ("text", &[]),
    ("codes", &[]),
    ("syntax", &["text"]),
    ("prose", &["text", "syntax"]),
    ("index", &["text", "syntax", "prose"]),
    ("language", &["text", "syntax", "prose", "index"]),
    (
        "checks",
        &["codes", "text", "syntax", "prose", "index", "language"],
    ),
    ("stats", &["text", "syntax", "prose", "index"]),
    ("storage", &["text", "index"]),
    ("kb", &["text", "index", "storage", "checks"]),
    (
        "health",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "stats", "storage",
        ],
    ),
    ("evidence", &["codes", "text", "syntax", "index", "storage"]),
    (
        "engine",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "storage", "kb", "evidence",
            "health",
        ],
    ),
    ("llm", &["codes", "text", "index", "storage", "engine"]),
    (
        "ide",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "storage", "kb", "engine",
            "stats", "health",
        ],
    ),
    ("export", &["text", "syntax", "index", "storage"]),
    (
        "cli",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "storage", "kb", "evidence",
            "engine", "llm", "ide", "export", "stats", "language", "health",
        ],
    ),
    (
        "lsp",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "storage", "kb", "evidence",
            "engine", "llm", "ide", "export", "stats", "language", "health",
        ],
    ),
];

/// The code of a file without its comments (line comments and doc
/// comments; block comments are not used here).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // Not inside a string: good enough for `use` lines and paths.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules under `crate::` that `code` names, among `known`.
fn crate_modules<'k>(code: &str, known: &[&'k str]) -> std::collections::BTreeSet<&'k str> {
    let mut found = std::collections::BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if let Some(module) = known.iter().find(|known| **known == name) {
            found.insert(*module);
        }
    }
    // `use crate::{a, b}` names several.
    for (at, _) in code.match_indices("crate::{") {
        let inner = &code[at + "crate::{".len()..];
        let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
        for part in inner.split(',') {
            let name = part.trim().split("::").next().unwrap_or("");
            if let Some(module) = known.iter().find(|known| **known == name) {
                found.insert(*module);
            }
        }
    }
    found
}

/// The arrows between top-level modules: (from, to, a file that imports).
fn module_arrows() -> Vec<(String, String, PathBuf)> {
    let known: Vec<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    let mut arrows = Vec::new();
    for (path, text) in sources() {
        let Some(top) = path.components().next() else {
            continue;
        };
        let top = top.as_os_str().to_string_lossy().into_owned();
        if !known.contains(&top.as_str()) {
            continue; // main.rs and lib.rs
        }
        for module in crate_modules(&code_of(&text), &known) {
            if module != top {
                arrows.push((top.clone(), module.to_owned(), path.clone()));
            }
        }
    }
    arrows
}

#[test]
fn every_module_imports_only_the_modules_below_it() {
    let known: Vec<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                known.contains(&name.as_str()),
                "src/{name}/ has no row in the module table of tests/tidy.rs"
            );
        }
    }
    let arrows = module_arrows();
    // The scan sees imports at all: the engine's conference validates with
    // the evidence module.
    assert!(
        arrows
            .iter()
            .any(|(from, to, _)| from == "engine" && to == "evidence")
    );
    let mut broken = Vec::new();
    for (from, to, file) in arrows {
        let allowed = LAYERS
            .iter()
            .find(|(name, _)| *name == from)
            .is_some_and(|(_, below)| below.contains(&to.as_str()));
        if !allowed {
            broken.push(format!("{} imports crate::{to}", file.display()));
        }
    }
    broken.sort();
    broken.dedup();
    assert!(
        broken.is_empty(),
        "arrows the module table does not allow:\n{}",
        broken.join("\n")
    );
}

/// A circle in `arrows` (node → nodes), if there is one.
fn circle(
    arrows: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        arrows: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|seen| seen == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in arrows.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, arrows, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    arrows
        .keys()
        .find_map(|node| visit(node, arrows, &mut Vec::new(), &mut done))
}

#[test]
fn the_top_level_modules_import_each_other_in_no_circle() {
    let mut arrows: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for (from, to, _) in module_arrows() {
        arrows.entry(from).or_default().insert(to);
    }
    assert_eq!(circle(&arrows), None);
    // The check itself finds a circle when there is one.
    arrows
        .entry("text".into())
        .or_default()
        .insert("lsp".into());
    assert!(circle(&arrows).is_some());
}

/// The paths `rest` names after `base`: `a::b` is one, `{a, b::c}` two.
fn expand(base: Vec<String>, rest: &str, paths: &mut Vec<Vec<String>>) {
    let mut path = base;
    let mut rest = rest;
    loop {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            break;
        }
        path.push(name.clone());
        rest = &rest[name.len()..];
        match rest.strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    if let Some(group) = rest.strip_prefix('{') {
        // The group's items at its own depth.
        let mut depth = 0;
        let mut start = 0;
        for (at, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    expand(path.clone(), group[start..at].trim(), paths);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(path.clone(), group[start..at].trim(), paths);
                    start = at + 1;
                }
                _ => {}
            }
        }
        return;
    }
    paths.push(path);
}

/// The files of `src/<top>/` (as module paths, `lsp::runs::drive`) that
/// `text`, a file of the module `module`, names with `super::` or
/// `crate::<top>::`.
fn imports_inside(
    top: &str,
    module: &[String],
    text: &str,
    files: &[Vec<String>],
) -> Vec<Vec<String>> {
    let code = code_of(text);
    let mut found = Vec::new();
    let mut paths: Vec<Vec<String>> = Vec::new();
    let prefix = format!("crate::{top}::");
    for (at, _) in code.match_indices(&prefix) {
        expand(vec![top.to_owned()], &code[at + prefix.len()..], &mut paths);
    }
    for (at, _) in code.match_indices("super::") {
        if at >= 2 && &code[at - 2..at] == "::" {
            continue; // `super::super::` is read from its first `super`
        }
        let mut rest = &code[at..];
        let mut base: Vec<String> = module.to_vec();
        while let Some(after) = rest.strip_prefix("super::") {
            base.pop();
            rest = after;
        }
        expand(base, rest, &mut paths);
    }
    // A module brought in by name is used through paths that start with
    // that name (`api::requests::hover::…`): follow those too.
    let imported: Vec<Vec<String>> = paths.clone();
    for module in imported {
        let Some(name) = module.last() else { continue };
        for (at, _) in code.match_indices(&format!("{name}::")) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            expand(module.clone(), &code[at + name.len() + 2..], &mut paths);
        }
    }
    for path in paths {
        // The longest prefix that is a file of the module.
        if let Some(file) = (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|prefix| files.contains(prefix))
            && file != module
        {
            found.push(file);
        }
    }
    found
}

/// Each file of `src/<top>/` as its module path (`lsp/runs/mod.rs` is
/// `lsp::runs`), with its text.
fn module_files(top: &str) -> Vec<(Vec<String>, String)> {
    sources()
        .into_iter()
        .filter(|(path, _)| path.starts_with(top))
        .map(|(path, text)| {
            let mut module: Vec<String> = path
                .with_extension("")
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|last| last == "mod") {
                module.pop();
            }
            (module, text)
        })
        .collect()
}

#[test]
fn the_files_of_the_language_server_import_each_other_in_no_circle() {
    let files = module_files("lsp");
    let names: Vec<Vec<String>> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut arrows: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for (module, text) in &files {
        // A module's own children are its parts, not arrows back up.
        for import in imports_inside("lsp", module, text, &names) {
            if import.starts_with(module) {
                continue;
            }
            arrows
                .entry(module.join("::"))
                .or_default()
                .insert(import.join("::"));
        }
    }
    assert!(
        arrows
            .get("lsp::server")
            .is_some_and(|imports| imports.contains("lsp::api")
                && imports.contains("lsp::api::requests::initialize")),
        "the scan sees the server's imports: {arrows:#?}"
    );
    assert_eq!(circle(&arrows), None, "{arrows:#?}");
}

/// Each direct child of `src/engine/` (a file, or a folder with all its
/// files) as one node, and an arrow where one names another with `super::`
/// or `crate::engine::`.
#[test]
fn the_children_of_the_engine_import_each_other_in_no_circle() {
    let files = module_files("engine");
    let names: Vec<Vec<String>> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut arrows: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for (module, text) in &files {
        // engine/mod.rs declares the children; it is none of them.
        let Some(child) = module.get(1) else {
            continue;
        };
        for import in imports_inside("engine", module, text, &names) {
            match import.get(1) {
                Some(target) if target != child => {
                    arrows
                        .entry(format!("engine::{child}"))
                        .or_default()
                        .insert(format!("engine::{target}"));
                }
                _ => {} // itself, or engine/mod.rs
            }
        }
    }
    assert!(
        arrows.get("engine::runner").is_some_and(
            |imports| imports.contains("engine::recipe") && imports.contains("engine::store")
        ),
        "the scan sees the runner's imports: {arrows:#?}"
    );
    assert!(
        arrows
            .get("engine::recipe")
            .is_some_and(|imports| imports.contains("engine::prompts")),
        "the scan sees imports from a folder's inner files: {arrows:#?}"
    );
    assert_eq!(circle(&arrows), None, "{arrows:#?}");
}

/// The most lines of code (tests apart) a source file may have.
const FILE_LINES: usize = 700;
/// The most lines a function may have.
const FUNCTION_LINES: usize = 125;

/// The lines of `text` before its `#[cfg(test)] mod tests` (all of a
/// `tests.rs` or test-support file).
fn code_lines<'t>(path: &Path, text: &'t str) -> Vec<&'t str> {
    let name = path.file_name().unwrap().to_string_lossy();
    if name == "tests.rs" || name == "test_support.rs" {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|pair| pair[0].trim() == "#[cfg(test)]" && pair[1].starts_with("mod tests"))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// Each function of `lines` with its length: from its `fn` line to the
/// closing brace at the same indentation.
fn functions(lines: &[&str]) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let declared = ["fn ", "pub fn ", "async fn ", "pub async fn "]
            .iter()
            .chain(&["pub(crate) fn ", "pub(super) fn ", "pub(crate) async fn "])
            .find_map(|prefix| trimmed.strip_prefix(prefix));
        if let Some(rest) = declared {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let close = format!("{}}}", " ".repeat(indent));
            // A declaration without a body (a trait's) ends in `;` before
            // any `{`.
            let opens = lines[at..]
                .iter()
                .position(|line| line.contains('{') || line.trim_end().ends_with(';'))
                .map(|offset| at + offset);
            let has_body = opens.is_some_and(|open| lines[open].contains('{'));
            if let Some(end) = lines[at..]
                .iter()
                .position(|line| line.trim_end() == close)
                .map(|offset| at + offset)
                .filter(|_| has_body)
            {
                found.push((name, end - at + 1));
                at = end;
            }
        }
        at += 1;
    }
    found
}

#[test]
fn no_source_file_or_function_is_too_long() {
    let mut too_long = Vec::new();
    for (path, text) in sources() {
        let lines = code_lines(&path, &text);
        if lines.len() > FILE_LINES {
            too_long.push(format!(
                "src/{} has {} lines of code (at most {FILE_LINES}): split it along its seams",
                path.display(),
                lines.len()
            ));
        }
        for (name, length) in functions(&lines) {
            if length > FUNCTION_LINES {
                too_long.push(format!(
                    "src/{}: fn {name} has {length} lines (at most {FUNCTION_LINES})",
                    path.display()
                ));
            }
        }
    }
    assert!(too_long.is_empty(), "{}", too_long.join("\n"));
    // The measure itself sees a long function.
    let long: Vec<String> = std::iter::once("fn long() {".to_owned())
        .chain((0..FUNCTION_LINES).map(|n| format!("    let x{n} = {n};")))
        .chain(std::iter::once("}".to_owned()))
        .collect();
    let long: Vec<&str> = long.iter().map(String::as_str).collect();
    assert_eq!(functions(&long), [("long".to_owned(), FUNCTION_LINES + 2)]);
}

//! Keeps the layering honest: only `src/lsp/` knows the LSP framework,
//! every module imports only the modules below it (the table here), no
//! modules import each other in a circle at any depth, and every source
//! file says what it is for.

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

/// Every module the front ends (`cli`, `lsp`) may use: all of the rest.
const BELOW_THE_FRONT_ENDS: &[&str] = &[
    "codes",
    "receipts",
    "text",
    "syntax",
    "prose",
    "index",
    "checks",
    "storage",
    "kb",
    "evidence",
    "tools",
    "llm",
    "runs",
    "plan",
    "voice",
    "conference",
    "foreman",
    "ide",
    "export",
    "manuscript",
    "stats",
    "language",
    "health",
];

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
    (
        "evidence",
        &["codes", "text", "syntax", "index", "storage", "receipts"],
    ),
    (
        "tools",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "storage",
        ],
    ),
    ("llm", &["codes", "text", "index", "storage"]),
    ("receipts", &["storage", "llm"]),
    (
        "runs",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "storage", "kb", "evidence",
            "health", "tools", "llm", "receipts",
        ],
    ),
    (
        "plan",
        &["codes", "text", "syntax", "index", "storage", "llm", "runs"],
    ),
    (
        "voice",
        &[
            "codes", "text", "syntax", "prose", "index", "storage", "llm", "runs",
        ],
    ),
    (
        "conference",
        &[
            "codes", "text", "syntax", "prose", "index", "storage", "evidence", "tools", "llm",
            "receipts", "runs",
        ],
    ),
    (
        "foreman",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "storage", "kb", "health",
            "tools", "llm", "receipts", "runs", "plan", "voice",
        ],
    ),
    (
        "ide",
        &[
            "codes", "text", "syntax", "prose", "index", "checks", "storage", "kb", "receipts",
            "runs", "stats", "health",
        ],
    ),
    ("export", &["text", "syntax", "index", "storage"]),
    (
        "manuscript",
        &["text", "syntax", "prose", "index", "storage", "export"],
    ),
    ("cli", BELOW_THE_FRONT_ENDS),
    ("lsp", BELOW_THE_FRONT_ENDS),
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
    // The scan sees imports at all: the conference validates with the
    // evidence module.
    assert!(
        arrows
            .iter()
            .any(|(from, to, _)| from == "conference" && to == "evidence")
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

/// The groups of nodes of `arrows` (node → nodes) that reach each other
/// (strongly connected components of more than one node), each sorted.
fn circles(arrows: &Arrows) -> Vec<Vec<String>> {
    let mut graph = petgraph::graph::DiGraph::<&str, ()>::new();
    let mut nodes = std::collections::BTreeMap::new();
    for (from, targets) in arrows {
        for name in std::iter::once(from).chain(targets) {
            nodes
                .entry(name.as_str())
                .or_insert_with(|| graph.add_node(name.as_str()));
        }
    }
    for (from, targets) in arrows {
        for to in targets {
            graph.add_edge(nodes[from.as_str()], nodes[to.as_str()], ());
        }
    }
    let mut found: Vec<Vec<String>> = petgraph::algo::tarjan_scc(&graph)
        .into_iter()
        .filter(|group| group.len() > 1)
        .map(|group| {
            let mut names: Vec<String> = group.iter().map(|&at| graph[at].to_owned()).collect();
            names.sort();
            names
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let mut arrows = Arrows::default();
    arrows
        .entry("text".into())
        .or_default()
        .insert("index".into());
    arrows
        .entry("index".into())
        .or_default()
        .insert("lsp".into());
    assert!(circles(&arrows).is_empty());
    arrows
        .entry("lsp".into())
        .or_default()
        .insert("text".into());
    assert_eq!(circles(&arrows), [["index", "lsp", "text"]]);
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

/// The files of `src/` (as module paths, `lsp::runs::drive`) that `code`,
/// the code of the module `module`, names with `super::` or `crate::`.
fn imports_of(module: &[String], code: &str, files: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut paths: Vec<Vec<String>> = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if at >= 1 && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // `some_crate::`
        }
        expand(Vec::new(), &code[at + "crate::".len()..], &mut paths);
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
    for named in imported {
        let Some(name) = named.last() else { continue };
        for (at, _) in code.match_indices(&format!("{name}::")) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            expand(named.clone(), &code[at + name.len() + 2..], &mut paths);
        }
    }
    let mut found = Vec::new();
    for path in paths {
        // The longest prefix that is a file.
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

/// Each file of `src/` as its module path (`lsp/runs/mod.rs` is
/// `lsp::runs`), with its code outside tests (its `mod tests`, and the
/// files that are tests or their support, are left out: a test may use
/// any module it tests with).
fn module_files() -> Vec<(Vec<String>, String)> {
    sources()
        .into_iter()
        .filter(|(path, _)| path.components().count() > 1 || path != Path::new("main.rs"))
        .filter_map(|(path, text)| {
            let code = code_of(&code_lines(&path, &text).join("\n"));
            if code.trim().is_empty() && text.contains("#[cfg(test)]") {
                return None;
            }
            let mut module: Vec<String> = path
                .with_extension("")
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module
                .last()
                .is_some_and(|last| last == "mod" || last == "lib")
            {
                module.pop();
            }
            Some((module, code))
        })
        .collect()
}

/// The arrows between the children of each folder of `src/` (the crate's
/// root among them), by the folder's module path: a child is a file, or a
/// subfolder with all its files; the folder's own `mod.rs` is none of them
/// (it declares them). An arrow is drawn where a file of one child names a
/// file of another.
fn sibling_arrows() -> std::collections::BTreeMap<String, Arrows> {
    let files = module_files();
    let names: Vec<Vec<String>> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut folders: std::collections::BTreeMap<String, Arrows> = Default::default();
    for (module, code) in &files {
        for import in imports_of(module, code, &names) {
            let shared = module
                .iter()
                .zip(&import)
                .take_while(|(one, other)| one == other)
                .count();
            let (Some(from), Some(to)) = (module.get(shared), import.get(shared)) else {
                continue; // a module and its own parent or part
            };
            let folder = module[..shared].join("::");
            let child = |name: &String| {
                let mut path = module[..shared].to_vec();
                path.push(name.clone());
                path.join("::")
            };
            folders
                .entry(folder)
                .or_default()
                .entry(child(from))
                .or_default()
                .insert(child(to));
        }
    }
    folders
}

type Arrows = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

#[test]
fn no_modules_import_each_other_in_a_circle_at_any_depth() {
    let folders = sibling_arrows();
    let arrows = |folder: &str| folders.get(folder).cloned().unwrap_or_default();
    // The scan sees imports at every depth: between top-level modules,
    // between a folder's files, and from a folder's inner files.
    assert!(arrows("").get("lsp").is_some_and(|to| to.contains("ide")));
    assert!(
        arrows("lsp")
            .get("lsp::server")
            .is_some_and(|to| to.contains("lsp::api")),
        "{:#?}",
        arrows("lsp")
    );
    assert!(
        arrows("runs")
            .get("runs::recipe")
            .is_some_and(|to| to.contains("runs::prompts")),
        "{:#?}",
        arrows("runs")
    );
    let circles: Vec<String> = folders
        .iter()
        .flat_map(|(folder, arrows)| {
            circles(arrows).into_iter().map(move |group| {
                format!("src/{}/: {}", folder.replace("::", "/"), group.join(", "))
            })
        })
        .collect();
    assert!(
        circles.is_empty(),
        "modules that import each other in a circle (break it: move what both need below them, or merge them if they are one thing):\n{}",
        circles.join("\n")
    );
}

/// A smoke alarm, not a rule: past this many lines of code (tests apart)
/// a file has likely grown more than one job. Split a file where its
/// meaning splits, never to get under a count.
const FILE_LINES: usize = 1000;
/// The same alarm for a function.
const FUNCTION_LINES: usize = 150;

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
                "src/{} has {} lines of code (the alarm rings past {FILE_LINES}): has it more than one job?",
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

/// The modules that may speak in sentences instead of error kinds: the
/// front ends, which show errors to the writer.
const FRONT_ENDS: [&str; 3] = ["cli", "lsp", "main.rs"];

/// The type arguments of each `Result<…>` in `code`, split at their top
/// level (`Result<Vec<(a, b)>, E>` gives `["Vec<(a, b)>", "E"]`).
fn result_arguments(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("Result<") {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // `RpcResult<`, `io::Result` is `::Result<`
        }
        let mut depth = 0;
        let mut arguments = vec![String::new()];
        for c in code[at + "Result<".len()..].chars() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => break,
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    arguments.push(String::new());
                    continue;
                }
                _ => {}
            }
            arguments.last_mut().unwrap().push(c);
        }
        found.push(
            arguments
                .iter()
                .map(|a| a.split_whitespace().collect())
                .collect(),
        );
    }
    found
}

/// An error variant that is a sentence and nothing else: `#[error("{0}")]`
/// over one `String`.
fn catch_all_variants(code: &str) -> Vec<String> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.trim() != "#[error(\"{0}\")]" {
            continue;
        }
        // The variant follows, after any doc lines.
        if let Some(variant) = lines[at + 1..]
            .iter()
            .map(|line| line.trim())
            .find(|line| !line.starts_with("///") && !line.starts_with("#["))
            && variant.ends_with("(String),")
        {
            found.push(variant.to_owned());
        }
    }
    found
}

#[test]
fn below_the_front_ends_errors_are_kinds_not_sentences() {
    let mut sentences = Vec::new();
    for (path, text) in sources() {
        let top = path
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        if FRONT_ENDS.contains(&top.as_ref()) {
            continue;
        }
        let code = code_of(&code_lines(&path, &text).join("\n"));
        for arguments in result_arguments(&code) {
            if arguments.len() == 2 && arguments[1] == "String" {
                sentences.push(format!(
                    "src/{}: Result<{}, String>",
                    path.display(),
                    arguments[0]
                ));
            }
        }
        for variant in catch_all_variants(&code) {
            sentences.push(format!("src/{}: {variant}", path.display()));
        }
        if code.contains("anyhow") {
            sentences.push(format!(
                "src/{}: anyhow outside a front end",
                path.display()
            ));
        }
    }
    assert!(
        sentences.is_empty(),
        "errors a caller cannot branch on (give them a thiserror kind with the data it names):\n{}",
        sentences.join("\n")
    );
    // The scan itself sees both shapes.
    assert_eq!(
        result_arguments("fn f() -> Result<Vec<(u8, u8)>,\n    String> {}"),
        [["Vec<(u8,u8)>", "String"]]
    );
    assert_eq!(
        catch_all_variants("    #[error(\"{0}\")]\n    /// Why.\n    Other(String),\n"),
        ["Other(String),"]
    );
}

/// A function that needs more arguments than clippy allows needs a type
/// that holds them, not an exemption.
#[test]
fn no_function_is_exempt_from_the_argument_limit() {
    let exempt: Vec<String> = sources()
        .into_iter()
        .filter(|(_, text)| text.contains("clippy::too_many_arguments"))
        .map(|(path, _)| format!("src/{}", path.display()))
        .collect();
    assert!(
        exempt.is_empty(),
        "give these functions' arguments a type instead of allowing clippy::too_many_arguments:\n{}",
        exempt.join("\n")
    );
}

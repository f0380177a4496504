//! Data-driven tests of the index and the checks.
//!
//! Every folder under `tests/fixtures/` is a case: a small manuscript and a
//! `fixture.txt` saying what it is about. The case is loaded with
//! [`Workspace::load`], checked with [`check_workspace`], and rendered as
//! text (the files as the index understood them, then one line per
//! diagnostic) that is compared with `tests/snapshots/integration__fixtures__<case>.snap`.
//! Adding a folder adds a case; its snapshot must be written once with
//! `INSTA_UPDATE=always cargo test --test integration fixtures::` and then read and checked
//! against the manuscript format before it is committed. A case without a
//! snapshot fails, also under `INSTA_FORCE_PASS`. After editing only a
//! `fixture.txt`, `INSTA_FORCE_UPDATE=1 INSTA_UPDATE=always` rewrites the
//! descriptions in the snapshot headers.
//!
//! Positions in the snapshots are 1-based lines and 1-based columns counted
//! in UTF-16 code units (the LSP and `check --format json` encoding, plus
//! one), written `line:column-line:column` for a diagnostic's start and end.

use crate::support;

use std::fmt::Write as _;

use control_room::checks::{Diagnostic, check_workspace};
use control_room::index::{FileContent, SourceFile, Workspace};
use control_room::text::{LineIndex, PositionEncoding, TextRange};

#[test]
fn every_fixture_matches_its_snapshot() {
    let cases = support::case_names();
    assert!(
        cases.len() >= 10,
        "expected the fixture folders, found {cases:?}"
    );
    let mut failed = Vec::new();
    for case in &cases {
        let outcome = std::panic::catch_unwind(|| check_case(case));
        if outcome.is_err() {
            failed.push(case.as_str());
        }
    }
    assert!(
        failed.is_empty(),
        "fixture cases that failed (see above): {failed:?}"
    );
}

/// Snapshots must not outlive their case, or a renamed fixture would leave
/// a stale snapshot behind that nobody reviews.
#[test]
fn every_snapshot_has_a_fixture() {
    support::assert_every_snapshot_has_a_case("fixtures", &support::case_names());
}

/// Applying "Add to outline" to each orphan of `orphan-placement` lists the
/// scene, re-read from disk, between the neighbours its date or folder calls for,
/// and leaves an ordered list numbered 1, 2, 3… again.
#[test]
fn add_to_outline_puts_each_orphan_in_its_chapter() {
    let expected = [
        ("SCN-watch", "SCN-flats", Some("SCN-tide")),
        ("SCN-night", "SCN-gate", Some("SCN-flats")),
        ("SCN-walls", "SCN-storm", None),
        ("SCN-epilogue", "SCN-storm", None),
        ("SCN-memory", "SCN-storm", None),
    ];
    let copy = support::materialise("orphan-placement");
    let workspace = Workspace::load(copy.path());
    let original = workspace
        .file("Story/SCN-outline.md")
        .unwrap()
        .text
        .to_string();
    let diagnostics = check_workspace(&workspace);
    let mut checked = Vec::new();
    for diagnostic in diagnostics
        .iter()
        .filter(|d| d.code.as_str() == "orphan-scene")
    {
        let scene = workspace
            .file(&diagnostic.path)
            .unwrap()
            .scene()
            .unwrap()
            .id
            .clone();
        let fix = &diagnostic.fixes[0];
        assert!(fix.title.starts_with("Add "), "{}", fix.title);
        let mut edits = fix.edits.clone();
        edits.sort_by_key(|edit| std::cmp::Reverse(edit.range.start));
        let mut text = original.clone();
        for edit in &edits {
            assert_eq!(&*edit.path, "Story/SCN-outline.md");
            text.replace_range(edit.range.start..edit.range.end, &edit.new_text);
        }
        std::fs::write(copy.path().join("Story/SCN-outline.md"), &text).unwrap();
        let after = Workspace::load(copy.path());
        let outline = after
            .file("Story/SCN-outline.md")
            .unwrap()
            .outline()
            .unwrap();
        let order: Vec<&str> = outline
            .entries
            .iter()
            .map(|e| e.scene_id.as_str())
            .collect();
        let at = order
            .iter()
            .position(|id| *id == scene)
            .unwrap_or_else(|| panic!("{scene} is not in the outline after its fix:\n{text}"));
        if scene == "SCN-prologue" {
            assert_eq!(at, 0, "{text}");
            assert_eq!(order[1], "SCN-arrival", "{text}");
        } else {
            let (_, before, next) = expected
                .iter()
                .find(|(id, ..)| *id == scene)
                .unwrap_or_else(|| panic!("unexpected orphan {scene}"));
            assert_eq!(
                order[at - 1],
                *before,
                "{scene} lands after the wrong entry:\n{text}"
            );
            assert_eq!(order.get(at + 1).copied(), *next, "{scene}:\n{text}");
        }
        if scene == "SCN-walls" {
            let heading = outline.entries[at].heading.unwrap();
            assert_eq!(
                outline.headings[heading].title, "Chapter 3: The Siege",
                "{text}"
            );
        }
        let numbers: Vec<&str> = text
            .lines()
            .filter_map(|line| line.split_once(". SCN-").map(|(number, _)| number))
            .collect();
        let counted: Vec<String> = (1..=numbers.len()).map(|n| n.to_string()).collect();
        assert_eq!(numbers, counted, "{scene}: numbering broken:\n{text}");
        checked.push(scene);
    }
    checked.sort();
    assert_eq!(
        checked,
        [
            "SCN-epilogue",
            "SCN-memory",
            "SCN-night",
            "SCN-prologue",
            "SCN-walls",
            "SCN-watch"
        ]
    );
}

fn check_case(case: &str) {
    let snapshot = support::snapshot_file("fixtures", case);
    // insta already fails on a missing snapshot unless told to write it; this
    // also holds under INSTA_FORCE_PASS, so a new case is never silently green.
    let writing = matches!(
        std::env::var("INSTA_UPDATE").as_deref(),
        Ok("always" | "1" | "force")
    );
    assert!(
        writing || snapshot.exists(),
        "fixture `{case}` has no snapshot {}: run `INSTA_UPDATE=always cargo test --test integration fixtures::`, then review it",
        snapshot.display()
    );
    let copy = support::materialise(case);
    let workspace = Workspace::load(copy.path());
    let diagnostics = check_workspace(&workspace);
    check_invariants(&workspace, &diagnostics);
    let rendered = render(&workspace, &diagnostics);
    insta::with_settings!({
        description => support::description(case),
        omit_expression => true,
    }, {
        insta::assert_snapshot!(case, rendered);
    });
}

/// Properties every diagnostic has whatever the case.
fn check_invariants(workspace: &Workspace, diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        let text = file_text(workspace, &diagnostic.path);
        assert_valid_range(&text, diagnostic.range, &diagnostic.path);
        for related in &diagnostic.related {
            let file = workspace
                .file(&related.path)
                .unwrap_or_else(|| panic!("related path {} is not indexed", related.path));
            assert_valid_range(&file.text, related.range, &related.path);
        }
        for fix in &diagnostic.fixes {
            assert!(!fix.edits.is_empty(), "fix `{}` edits nothing", fix.title);
            for edit in &fix.edits {
                assert_valid_range(&file_text(workspace, &edit.path), edit.range, &edit.path);
            }
        }
    }
    // Each file's diagnostics come together and in position order.
    let mut seen_paths: Vec<&str> = Vec::new();
    for pair in diagnostics.windows(2) {
        if pair[0].path == pair[1].path {
            assert!(
                pair[0].range.start <= pair[1].range.start,
                "{} is not in position order",
                pair[0].path
            );
        } else {
            seen_paths.push(&pair[0].path);
            assert!(
                !seen_paths.contains(&&*pair[1].path),
                "diagnostics of {} are not together",
                pair[1].path
            );
        }
    }
}

fn assert_valid_range(text: &str, range: TextRange, path: &str) {
    assert!(
        range.start <= range.end && range.end <= text.len(),
        "{path}: range {range:?} is outside the text ({} bytes)",
        text.len()
    );
    assert!(
        text.is_char_boundary(range.start) && text.is_char_boundary(range.end),
        "{path}: range {range:?} splits a character"
    );
}

/// The text a path's ranges refer to: the indexed text, or for files that are
/// not indexed (`control-room.toml`) the file on disk.
fn file_text(workspace: &Workspace, path: &str) -> String {
    match workspace.file(path) {
        Some(file) => file.text.to_string(),
        None => std::fs::read_to_string(workspace.absolute_path(path)).unwrap_or_default(),
    }
}

/// 1-based `line:column` of `offset` in `path`, columns in UTF-16 code units.
fn position(workspace: &Workspace, path: &str, offset: usize) -> String {
    let text = file_text(workspace, path);
    let index = LineIndex::new(&text);
    let position = index.position(&text, offset, PositionEncoding::Utf16);
    format!("{}:{}", position.line + 1, position.col + 1)
}

fn span(workspace: &Workspace, path: &str, range: TextRange) -> String {
    format!(
        "{}:{}-{}",
        path,
        position(workspace, path, range.start),
        position(workspace, path, range.end)
    )
}

fn render(workspace: &Workspace, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    writeln!(out, "files ({}):", workspace.files().len()).unwrap();
    for file in workspace.files() {
        writeln!(out, "  {}: {}", file.path, describe_file(file)).unwrap();
    }
    writeln!(out, "diagnostics ({}):", diagnostics.len()).unwrap();
    for diagnostic in diagnostics {
        writeln!(
            out,
            "  {} {}[{}]: {}",
            span(workspace, &diagnostic.path, diagnostic.range),
            diagnostic.severity.as_str(),
            diagnostic.code,
            diagnostic.message
        )
        .unwrap();
        for related in &diagnostic.related {
            writeln!(
                out,
                "    related {}: {}",
                span(workspace, &related.path, related.range),
                related.message
            )
            .unwrap();
        }
        for fix in &diagnostic.fixes {
            writeln!(out, "    fix: {}", fix.title).unwrap();
            for edit in &fix.edits {
                writeln!(
                    out,
                    "      edit {} {:?}",
                    span(workspace, &edit.path, edit.range),
                    edit.new_text
                )
                .unwrap();
            }
        }
    }
    out
}

/// What the index made of a file, in a line.
fn describe_file(file: &SourceFile) -> String {
    if let Some(reason) = &file.load_error {
        return format!("not indexed ({reason})");
    }
    let quoted = |texts: Vec<&str>| {
        texts
            .iter()
            .map(|text| format!("“{text}”"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &file.content {
        FileContent::Scene(scene) => {
            let mut line = format!("scene {}", scene.id);
            if let Some(pov) = &scene.pov {
                write!(line, "; pov “{}”", pov.text).unwrap();
            }
            if let Some(location) = &scene.location {
                write!(line, "; location “{}”", location.text).unwrap();
            }
            if !scene.characters.is_empty() {
                let names = scene
                    .characters
                    .iter()
                    .map(|name| name.text.as_str())
                    .collect();
                write!(line, "; characters {}", quoted(names)).unwrap();
            }
            if let Some(words) = scene.words_target {
                write!(line, "; words {words}").unwrap();
            }
            if scene.flashback {
                line.push_str("; flashback");
            }
            line
        }
        FileContent::Outline(outline) => {
            let ids: Vec<&str> = outline
                .entries
                .iter()
                .map(|entry| entry.scene_id.as_str())
                .collect();
            format!("outline of {}", ids.join(", "))
        }
        FileContent::Card(card) => {
            let mut line = format!("{} card {}", card.type_name, card.id);
            if let Some(name) = &card.name {
                write!(line, "; name “{}”", name.text).unwrap();
            }
            if !card.aliases.is_empty() {
                let aliases = card
                    .aliases
                    .iter()
                    .map(|alias| alias.text.as_str())
                    .collect();
                write!(line, "; aliases {}", quoted(aliases)).unwrap();
            }
            write!(line, "; {}", card.status.as_str()).unwrap();
            if let Some(died_in) = &card.died_in {
                write!(line, " in {}", died_in.text).unwrap();
            }
            line
        }
        FileContent::AntiPatterns(patterns) => {
            let phrases: Vec<String> = patterns
                .iter()
                .map(|pattern| format!("“{}” ({:?})", pattern.phrase, pattern.tolerance))
                .collect();
            format!("anti-patterns {}", phrases.join(", "))
        }
        FileContent::Bible(bible) => format!(
            "story bible {} ({}); {} of {} parts missing",
            bible.kind.id(),
            bible.status().as_str(),
            bible.gaps().len(),
            bible.parts.len()
        ),
        FileContent::VoiceGold(gold) => format!(
            "voice gold standard{}; {} words measured",
            if gold.locked { " (locked)" } else { "" },
            gold.traits.words
        ),
        FileContent::Other => "other".to_owned(),
    }
}

/// The mention index finds names in prose only, with possessives, titles,
/// multi-word names and capitalised lower-case aliases, at exact places.
#[test]
fn mentions_are_names_in_prose_only() {
    let copy = support::materialise("names-in-code-and-comments");
    let workspace = Workspace::load(copy.path());
    let path = "Story/Scenes/SCN-names.md";
    let file = workspace.file(path).expect("the scene is indexed");
    let found: Vec<String> = workspace
        .mentions(path)
        .iter()
        .map(|mention| {
            let start =
                file.line_index
                    .position(&file.text, mention.range.start, PositionEncoding::Utf16);
            let end =
                file.line_index
                    .position(&file.text, mention.range.end, PositionEncoding::Utf16);
            let mut line = format!(
                "{}:{}-{}:{} {} -> {}#{}",
                start.line + 1,
                start.col + 1,
                end.line + 1,
                end.col + 1,
                mention.range.slice(&file.text),
                mention.card,
                mention.name_index
            );
            if mention.possessive {
                line.push_str(" possessive");
            }
            if let Some(title) = mention.title() {
                write!(line, " title {:?}", title.slice(&file.text)).unwrap();
            }
            line
        })
        .collect();
    let kael = "Compendium/Characters/CHAR-kael-maren.md";
    let darcy = "Compendium/Characters/CHAR-darcy.md";
    let silas = "Compendium/Characters/CHAR-silas.md";
    let iria = "Compendium/Characters/CHAR-iria-vell.md";
    let expected = [
        // The heading is prose; the front matter above it is not.
        format!("7:3-7:7 Kael -> {kael}#1"),
        // The longest name wins over the alias it starts with.
        format!("9:1-9:11 Kael Maren -> {kael}#0"),
        format!("9:20-9:25 Darcy -> {darcy}#1 title \"Mr.\""),
        format!("9:39-9:43 Kael -> {kael}#1 possessive"),
        // A curly apostrophe is one UTF-16 unit (three bytes).
        format!("9:58-9:62 Kael -> {kael}#1 possessive"),
        format!("9:80-9:85 Silas -> {silas}#0 possessive"),
        // "the Warden" capitalised at a sentence start.
        format!("10:1-10:11 The Warden -> {kael}#2"),
        format!("10:30-10:34 Iria -> {iria}#1 title \"Captain\""),
        format!("10:37-10:41 KAEL -> {kael}#1"),
        // Link text is prose; its destination and title are not.
        format!("12:72-12:76 Iria -> {iria}#1"),
        // After the image, the code blocks and the HTML block, prose again.
        format!("26:12-26:16 Iria -> {iria}#1"),
        format!("26:18-26:23 Darcy -> {darcy}#1 possessive"),
    ];
    assert_eq!(found, expected, "mentions in {path}");

    // Nothing in the front matter, code, comments, URLs, images or HTML.
    let prose_only = |range: TextRange| file.syntax.is_prose(range);
    assert!(
        workspace
            .mentions(path)
            .iter()
            .all(|mention| prose_only(mention.range))
    );

    // Mentions are per file: the outline's beat names Kael Maren and Darcy too.
    let across: Vec<(String, String)> = workspace
        .mentions_of(darcy)
        .map(|(path, mention)| {
            let text = &workspace
                .file(path)
                .expect("a mention's file is indexed")
                .text;
            (path.to_string(), mention.range.slice(text).to_owned())
        })
        .collect();
    assert_eq!(
        across,
        [
            (darcy.to_owned(), "Fitzwilliam Darcy".to_owned()),
            ("Story/SCN-outline.md".to_owned(), "Darcy".to_owned()),
            (path.to_owned(), "Darcy".to_owned()),
            (path.to_owned(), "Darcy".to_owned()),
        ]
    );
}

/// An unclosed front matter block costs the block, not the body: the scene is
/// still a scene, with its id from the file name, and its prose is still read.
#[test]
fn unclosed_front_matter_leaves_the_body_indexed() {
    let copy = support::materialise("broken-front-matter");
    let workspace = Workspace::load(copy.path());
    let path = "Story/Scenes/SCN-unclosed.md";
    let file = workspace.file(path).expect("the scene is indexed");
    let scene = file.scene().expect("a file under Story/Scenes is a scene");
    assert_eq!(scene.id, "SCN-unclosed");
    assert_eq!(scene.pov, None, "an unclosed block has no entries");
    let iria = "Compendium/Characters/CHAR-iria-vell.md";
    let named: Vec<(&str, u32)> = workspace
        .mentions(path)
        .iter()
        .map(|mention| {
            (
                mention.range.slice(&file.text),
                file.line_index.line_of(mention.range.start) + 1,
            )
        })
        .collect();
    assert_eq!(named, [("Iria", 7)], "mentions in {path}");
    assert!(
        workspace
            .mentions(path)
            .iter()
            .all(|mention| &*mention.card == iria)
    );
}

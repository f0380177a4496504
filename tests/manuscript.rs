//! `control-room new`: a manuscript to start from, made whole or not at all,
//! never over anything already there.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn control_room(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the control-room binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

/// Every file and folder under `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = walk(dir)
        .into_iter()
        .map(|path| path.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    found.sort();
    found
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}

#[test]
fn new_makes_a_manuscript_whose_check_reports_only_what_the_story_bible_misses() {
    let parent = tempfile::tempdir().unwrap();
    let output = control_room(&["new", "The Lighthouse Keeper"], parent.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("Story/Scenes/SCN-the-first-scene.md"),
        "{stdout}"
    );
    let root = parent.path().join("The Lighthouse Keeper");
    let files = tree(&root);
    for expected in [
        "control-room.toml",
        "Story/SCN-outline.md",
        "Story/Scenes/SCN-the-first-scene.md",
        "Compendium/Characters/CHAR-ada-quill.md",
        "Compendium/Locations/LOC-the-lighthouse.md",
        "Story/Bible/protagonist.md",
        "Story/Bible/beat-sheet.md",
        "Story/Bible/theme.md",
        "Story/Bible/world-rules.md",
    ] {
        assert!(
            files.iter().any(|file| file == expected),
            "{expected} in {files:?}"
        );
    }
    // Nothing but the manuscript beside it: the folder it was made in is gone.
    assert_eq!(
        tree(parent.path())
            .iter()
            .filter(|path| !path.contains('/'))
            .count(),
        1
    );

    let outline = std::fs::read_to_string(root.join("Story/SCN-outline.md")).unwrap();
    assert!(
        outline.starts_with("# The Lighthouse Keeper\n"),
        "{outline}"
    );
    assert_eq!(outline.matches("\n## Chapter").count(), 2, "{outline}");
    // Every setting is there, and none is set: the file parses as the defaults.
    let settings = std::fs::read_to_string(root.join("control-room.toml")).unwrap();
    for section in [
        "[paths]",
        "[targets]",
        "[echo]",
        "[language]",
        "[voice]",
        "[health]",
        "[llm]",
    ] {
        assert!(settings.contains(section), "{section}");
    }
    assert!(
        settings
            .lines()
            .filter(|line| line.contains(" = "))
            .all(|line| line.trim_start().starts_with('#')),
        "every setting is commented out"
    );
    let workspace = control_room::index::Workspace::load(&root);
    assert!(
        workspace.config_error().is_none(),
        "{:?}",
        workspace.config_error()
    );

    let output = control_room(&["check", ".", "--format", "json"], &root);
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON report");
    let diagnostics = report["diagnostics"].as_array().expect("a list");
    let templates: std::collections::BTreeSet<&str> = diagnostics
        .iter()
        .map(|diagnostic| {
            assert_eq!(diagnostic["code"], "story-bible", "{diagnostic:#}");
            assert_eq!(diagnostic["severity"], "information", "{diagnostic:#}");
            diagnostic["path"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        templates.len(),
        4,
        "each template says what it misses: {templates:?}"
    );
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn new_refuses_a_folder_that_is_not_empty_and_leaves_it_as_it_was() {
    let parent = tempfile::tempdir().unwrap();
    let book = parent.path().join("book");
    std::fs::create_dir(&book).unwrap();
    std::fs::write(
        book.join("chapter-one.md"),
        "It was a dark and stormy night.\n",
    )
    .unwrap();
    let output = control_room(&["new", "book"], parent.path());
    assert_ne!(output.status.code(), Some(0));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("book is not empty"), "{stderr}");
    assert_eq!(tree(parent.path()), ["book", "book/chapter-one.md"]);
    assert_eq!(
        std::fs::read_to_string(book.join("chapter-one.md")).unwrap(),
        "It was a dark and stormy night.\n"
    );

    std::fs::write(parent.path().join("notes.txt"), "a file").unwrap();
    let output = control_room(&["new", "notes.txt"], parent.path());
    assert_ne!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("notes.txt is a file"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(parent.path().join("notes.txt")).unwrap(),
        "a file"
    );
}

#[test]
fn new_fills_an_empty_folder_and_the_current_one_by_default() {
    let parent = tempfile::tempdir().unwrap();
    let empty = parent.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = control_room(&["new"], &empty);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(empty.join("Story/SCN-outline.md").is_file());
    let outline = std::fs::read_to_string(empty.join("Story/SCN-outline.md")).unwrap();
    assert!(
        outline.starts_with("# empty\n"),
        "the folder's name is the working title"
    );
    // Made once, it is not empty any more: a second `new` changes nothing.
    let output = control_room(&["new"], &empty);
    assert_ne!(output.status.code(), Some(0));
    assert!(text(&output.stderr).contains("is not empty"));
}

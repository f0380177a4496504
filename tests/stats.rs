//! Word targets and progress end to end: `control-room stats` on the
//! example (and its most repeated phrases), in a git repository with yesterday's commit and today's
//! unsaved-to-git work, and outside one; over LSP, `controlRoom.stats`
//! counting this session's words as the writer types, and the outline's
//! lenses giving each chapter and the book against their targets.

use crate::support;
use crate::support::lsp_client;

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn git(root: &Path, args: &[&str], date: &str) {
    let status = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .envs([
            ("GIT_AUTHOR_DATE", date),
            ("GIT_COMMITTER_DATE", date),
            ("GIT_AUTHOR_NAME", "Writer"),
            ("GIT_AUTHOR_EMAIL", "writer@example.com"),
            ("GIT_COMMITTER_NAME", "Writer"),
            ("GIT_COMMITTER_EMAIL", "writer@example.com"),
        ])
        .stdout(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn stats_json(root: &Path) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["stats", "--format", "json"])
        .arg(root)
        .output()
        .expect("control-room runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}

const TARGETS: &str = "\n[targets]\nchapter = 1500\nmanuscript = 80000\ndaily = 500\n";

#[test]
fn stats_counts_scenes_chapters_and_the_book_and_todays_words_from_git() {
    let (_dir, root) = lsp_client::example_copy();
    let config = root.join("control-room.toml");
    let settings = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{settings}{TARGETS}")).unwrap();
    // Committed yesterday at noon, then today's work, not committed.
    let yesterday = jiff::Zoned::now()
        .start_of_day()
        .unwrap()
        .checked_sub(jiff::Span::new().hours(12))
        .unwrap();
    let date = format!("@{} +0000", yesterday.timestamp().as_second());
    git(&root, &["init", "-q"], &date);
    git(&root, &["add", "-A"], &date);
    git(&root, &["commit", "-q", "-m", "the first draft"], &date);
    let before = stats_json(&root);
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let text = std::fs::read_to_string(&scene).unwrap();
    std::fs::write(
        &scene,
        format!("{text}\nShe barred the gate again, twice over.\n"),
    )
    .unwrap();
    let report = stats_json(&root);

    let progress = &report["progress"];
    assert_eq!(report["title"], "The Salt Road");
    let gate = progress["scenes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|scene| scene["id"] == "SCN-the-gate")
        .expect("the gate is counted");
    assert_eq!(gate["target"], 400);
    assert_eq!(gate["own_target"], true);
    let words_before = before["progress"]["scenes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|scene| scene["id"] == "SCN-the-gate")
        .unwrap()["words"]
        .as_u64()
        .unwrap();
    assert_eq!(gate["words"].as_u64().unwrap(), words_before + 7);
    let reckoning = progress["scenes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|scene| scene["id"] == "SCN-the-reckoning")
        .unwrap();
    assert_eq!(reckoning["path"], Value::Null, "listed, not written");
    let chapters: Vec<(&str, u64)> = progress["chapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chapter| {
            assert_eq!(chapter["target"], 1500);
            (
                chapter["title"].as_str().unwrap(),
                chapter["words"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(chapters.len(), 2);
    assert_eq!(chapters[0].0, "Chapter 1: The Gate");
    assert_eq!(
        chapters.iter().map(|(_, words)| words).sum::<u64>(),
        progress["total"]["words"].as_u64().unwrap()
    );
    assert_eq!(progress["total"]["target"], 80000);
    assert_eq!(
        progress["unlisted"],
        json!(["Story/Scenes/SCN-deleted-dream.md"])
    );
    // Today: the seven words not committed yet; yesterday: the whole draft.
    assert_eq!(report["daily_target"], 500);
    let days = report["days"].as_array().expect("a history");
    assert_eq!(days.len(), 7);
    assert_eq!(days[0]["words"], 7, "{days:?}");
    assert!(days[1]["words"].as_i64().unwrap() > 2000, "{days:?}");
    assert_eq!(days[2]["words"], 0);

    // The most repeated phrases, most used first.
    let phrases = report["phrases"].as_array().expect("phrases");
    assert_eq!(
        phrases[0],
        json!({"phrase": "the seventh stone", "count": 6}),
        "{phrases:?}"
    );
    assert!(phrases.len() <= 10);

    // For people: the same, in lines.
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .arg("stats")
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("The Salt Road: "), "{text}");
    assert!(text.contains("/ 80,000 words"), "{text}");
    assert!(text.contains("Today: +7 words of 500 (1%)"), "{text}");
    assert!(
        text.contains("SCN-the-reckoning    no scene file yet"),
        "{text}"
    );
}

#[test]
fn outside_git_stats_says_there_is_no_history_and_still_counts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("book");
    support::copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road"),
        &root,
    );
    let report = stats_json(&root);
    assert_eq!(report["days"], Value::Null);
    assert_eq!(report["history_unavailable"], "not a git repository");
    assert!(report["progress"]["total"]["words"].as_u64().unwrap() > 2000);
}

#[test]
fn the_editor_counts_the_sessions_words_and_shows_chapters_and_the_book_in_lenses() {
    let (_dir, root) = lsp_client::example_copy();
    let config = root.join("control-room.toml");
    let settings = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{settings}{TARGETS}scene = 300\n")).unwrap();
    let mut client = lsp_client::Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let scene_uri = lsp_client::uri(&scene);
    let text = client.open(&scene, 1);
    let ask = |client: &mut lsp_client::Client| {
        client.request(
            "workspace/executeCommand",
            json!({"command": "controlRoom.stats", "arguments": [{"uri": scene_uri}]}),
        )
    };
    let start = ask(&mut client);
    assert_eq!(start["session"], 0, "{start}");
    assert_eq!(start["history_unavailable"], "not a git repository");
    assert_eq!(start["total"]["target"], 80000);
    assert_eq!(start["scene"]["id"], "SCN-the-gate");
    assert_eq!(start["scene"]["target"], 400, "its own target wins");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 2},
               "contentChanges": [{"text": format!("{text}\nFive more words go here.\n")}]}),
    );
    let typed = ask(&mut client);
    assert_eq!(typed["session"], 5, "{typed}");
    assert_eq!(
        typed["scene"]["words"].as_u64().unwrap(),
        start["scene"]["words"].as_u64().unwrap() + 5
    );

    // The outline's lenses: each entry, each chapter, the book.
    let outline = root.join("Story/SCN-outline.md");
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": lsp_client::uri(&outline)}}),
    );
    let titles: Vec<(u64, String)> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|lens| {
            (
                lens["range"]["start"]["line"].as_u64().unwrap(),
                lens["command"]["title"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let at = |line: u64| -> Vec<&str> {
        titles
            .iter()
            .filter(|(at, _)| *at == line)
            .map(|(_, title)| title.as_str())
            .collect()
    };
    assert!(
        at(0)
            .iter()
            .any(|title| title.starts_with("manuscript: ") && title.contains("/ 80,000 words")),
        "{titles:?}"
    );
    assert!(
        at(2)
            .iter()
            .any(|title| title.starts_with("chapter: ") && title.contains("/ 1,500 words")),
        "{titles:?}"
    );
    assert!(
        at(4)
            .iter()
            .any(|title| title.ends_with("/ 400 words (96%)")),
        "{titles:?}"
    );
    // A scene without `words:` would count against `[targets] scene`; the
    // lens of a scene file shows its count.
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": scene_uri}}),
    );
    assert!(
        lenses[0]["command"]["title"]
            .as_str()
            .unwrap()
            .contains("/ 400 words")
    );
    client.shutdown();
}

//! The story clock in the editor and on the command line, with the real
//! binary on a copy of the `story-clock` continuity case (a world calendar
//! of five months, birth dates, travel times): inlay hints give each scene's
//! day as the calendar names it, its time and its point of view's age, at
//! the scene's heading in UTF-16 columns, and follow edits of the scene and
//! of the card (the editor told to ask again when another file changes
//! them); the outline's entries get their scenes' days; a calendar
//! that cannot be one is reported on `control-room.toml` and the Gregorian
//! calendar is used.

use crate::support::lsp_client;

use std::path::PathBuf;
use std::process::Command;

use lsp_client::{Client, copy_of, uri};
use serde_json::{Value, json};

fn clock_copy() -> (tempfile::TempDir, PathBuf) {
    copy_of("tests/continuity/story-clock")
}

fn hints(client: &mut Client, file_uri: &str) -> Vec<Value> {
    let hints = client.request(
        "textDocument/inlayHint",
        json!({
            "textDocument": {"uri": file_uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10_000, "character": 0}},
        }),
    );
    hints.as_array().cloned().unwrap_or_default()
}

fn change(client: &mut Client, file_uri: &str, version: i32, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": file_uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

#[test]
fn inlay_hints_give_each_scene_its_day_time_and_the_point_of_views_age() {
    let (_dir, root) = clock_copy();
    let mut client = Client::spawn(&[]);
    let initialized = client.initialize(
        &root,
        json!({"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}}}),
    );
    assert_eq!(
        initialized["capabilities"]["inlayHintProvider"], true,
        "{initialized}"
    );
    client.wait_for_index();

    // Kael, born on the 10th of Bloom 1170, is 32 on the 17th of Thaw 1203.
    let harbour = root.join("Story/Scenes/SCN-the-harbour.md");
    let harbour_uri = uri(&harbour);
    let text = client.open(&harbour, 1);
    let found = hints(&mut client, &harbour_uri);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["label"], "17 Thaw 1203 · dawn · Kael Maren, 32");
    let heading_line = text
        .lines()
        .position(|line| line == "# The Harbour")
        .unwrap();
    assert_eq!(
        found[0]["position"],
        json!({"line": heading_line, "character": "# The Harbour".len()})
    );
    assert_eq!(found[0]["paddingLeft"], true);
    let tooltip = found[0]["tooltip"].as_str().unwrap();
    assert!(tooltip.contains("born 10 Bloom 1170, is 32"), "{tooltip}");

    // The heading in UTF-16 columns, and the hint follows the scene's date.
    let edited = text
        .replace("# The Harbour", "# The Harbour — Vel’s quay")
        .replace("date: 1203-01-17", "date: 1203-02-11");
    change(&mut client, &harbour_uri, 2, &edited);
    let found = hints(&mut client, &harbour_uri);
    assert_eq!(found[0]["label"], "11 Bloom 1203 · dawn · Kael Maren, 33");
    let heading = "# The Harbour — Vel’s quay";
    assert_eq!(
        found[0]["position"]["character"],
        heading.encode_utf16().count()
    );

    // And the card's birth date.
    let kael = root.join("Compendium/Characters/CHAR-kael-maren.md");
    let kael_uri = uri(&kael);
    let card = client.open(&kael, 1);
    let before = client.seen.len();
    change(
        &mut client,
        &kael_uri,
        2,
        &card.replace("born: 1170-02-10", "born: 1180"),
    );
    // The editor is told to ask again: another file's hints changed.
    let is_refresh = |message: &Value| message["method"] == "workspace/inlayHint/refresh";
    if !client.seen[before..].iter().any(is_refresh) {
        client.wait_for(is_refresh);
    }
    let found = hints(&mut client, &harbour_uri);
    assert_eq!(
        found[0]["label"],
        "11 Bloom 1203 · dawn · Kael Maren, 22–23"
    );

    // A scene without a point of view's birth date shows its day alone; the
    // outline shows every dated scene's day after its id.
    let outline = root.join("Story/SCN-outline.md");
    let outline_uri = uri(&outline);
    let outline_text = client.open(&outline, 1);
    let found = hints(&mut client, &outline_uri);
    let labels: Vec<&str> = found
        .iter()
        .filter_map(|hint| hint["label"].as_str())
        .collect();
    assert_eq!(labels.len(), 8, "{labels:?}");
    assert_eq!(labels[0], "10 Thaw 1203 · morning · Iria Vell, 17");
    assert_eq!(labels[4], "12 Thaw 1203 · flashback · Kael Maren, 22–23");
    let ledger_line = outline_text
        .lines()
        .position(|line| line.starts_with("- SCN-the-ledger"))
        .unwrap();
    assert_eq!(
        found[0]["position"],
        json!({"line": ledger_line, "character": "- SCN-the-ledger".len()})
    );

    // A range that holds no heading asks for no hint.
    let none = client.request(
        "textDocument/inlayHint",
        json!({
            "textDocument": {"uri": harbour_uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}},
        }),
    );
    assert_eq!(none, json!([]));
    client.shutdown();
}

#[test]
fn a_calendar_that_cannot_be_one_is_reported_and_the_gregorian_one_used() {
    let (_dir, root) = clock_copy();
    let config = root.join("control-room.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace(
            "{ name = \"Bloom\", days = 30 }",
            "{ name = \"Bloom\", days = 0 }",
        ),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", "--format", "json"])
        .arg(&root)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    let broken = diagnostics
        .iter()
        .find(|d| d["path"] == "control-room.toml")
        .unwrap_or_else(|| panic!("{diagnostics:#?}"));
    assert_eq!(broken["code"], "unreadable");
    assert!(
        broken["message"]
            .as_str()
            .unwrap()
            .contains("Bloom has 0 days; give it from 1 to 99 (the Gregorian calendar is used)"),
        "{broken}"
    );
    // Day 39 of the fifth month is no Gregorian date: May has 31 days.
    let iria = diagnostics
        .iter()
        .find(|d| d["path"] == "Compendium/Characters/CHAR-iria-vell.md")
        .unwrap_or_else(|| panic!("{diagnostics:#?}"));
    assert_eq!(iria["code"], "front-matter");
    assert!(
        iria["message"]
            .as_str()
            .unwrap()
            .contains("May has 31 days"),
        "{iria}"
    );
}

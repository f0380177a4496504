//! The Story Bible in the editor, with the real binary on a copy of the
//! `story-bible` continuity case: a template's missing part is a diagnostic
//! that an edit filling it clears; a world rule's name in prose hovers with
//! the rule and goes to it; a scene id in the beat sheet goes to the scene,
//! and the scene's hover in the outline names its beat; the protagonist's
//! name hovers with the profile's flaw and lie.

use crate::support::lsp_client;

use std::path::PathBuf;

use lsp_client::{Client, copy_of, position_of, uri};
use serde_json::{Value, json};

fn bible_copy() -> (tempfile::TempDir, PathBuf) {
    copy_of("tests/continuity/story-bible")
}

fn hover_text(client: &mut Client, file_uri: &str, position: Value) -> String {
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": file_uri}, "position": position}),
    );
    hover["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn definition(client: &mut Client, file_uri: &str, position: Value) -> Value {
    let found = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": file_uri}, "position": position}),
    );
    match found {
        Value::Array(mut list) if !list.is_empty() => list.remove(0),
        other => other,
    }
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| {
            format!(
                "{}:{}",
                d["range"]["start"]["line"],
                d["code"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn a_missing_part_of_the_story_bible_is_reported_until_the_writer_fills_it() {
    let (_dir, root) = bible_copy();
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let theme = root.join("Story/Bible/theme.md");
    let theme_uri = uri(&theme);
    let text = client.open(&theme, 1);
    let published = client.diagnostics_since(0, &theme_uri, |list| !list.is_empty());
    let list = published["diagnostics"].as_array().unwrap();
    assert_eq!(codes(list), ["8:story-bible"], "{list:#?}");
    assert_eq!(list[0]["severity"], 2, "a template marked complete warns");
    assert!(
        list[0]["message"]
            .as_str()
            .unwrap()
            .contains("marked complete, but “Theme Statement” is empty"),
        "{list:#?}"
    );
    let filled = text.replace("TBD", "Pride costs what it guards.");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": theme_uri, "version": 2}, "contentChanges": [{"text": filled}]}),
    );
    client.diagnostics_for(&theme_uri, <[Value]>::is_empty);
    client.shutdown();
}

#[test]
fn world_rules_beats_and_the_protagonist_reach_the_prose_through_hover_and_definition() {
    let (_dir, root) = bible_copy();
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();

    // A world rule named in a scene's prose.
    let arrival = root.join("Story/Scenes/SCN-the-arrival.md");
    let arrival_uri = uri(&arrival);
    let text = client.open(&arrival, 1);
    let at_rule = position_of(&text, "salt oath", 0);
    let hover = hover_text(&mut client, &arrival_uri, at_rule.clone());
    assert!(
        hover.starts_with("**The salt oath** · world rule"),
        "{hover}"
    );
    assert!(
        hover.contains("A promise over salt cannot be broken."),
        "{hover}"
    );
    let target = definition(&mut client, &arrival_uri, at_rule);
    assert!(
        target["uri"]
            .as_str()
            .unwrap()
            .ends_with("Story/Bible/world-rules.md"),
        "{target}"
    );
    assert_eq!(target["range"]["start"], json!({"line": 6, "character": 4}));

    // The protagonist's name shows the profile.
    let hover = hover_text(
        &mut client,
        &arrival_uri,
        position_of(&text, "Kael reached", 0),
    );
    assert!(hover.contains("Protagonist"), "{hover}");
    assert!(
        hover.contains("Fatal Flaw: Pride: he would rather die than ask."),
        "{hover}"
    );

    // A scene id in the beat sheet goes to the scene; the outline's entry
    // names the beat that carries it.
    let beats = root.join("Story/Bible/beat-sheet.md");
    let beats_uri = uri(&beats);
    let beats_text = client.open(&beats, 1);
    let target = definition(
        &mut client,
        &beats_uri,
        position_of(&beats_text, "SCN-the-arrival", 0),
    );
    assert!(
        target["uri"]
            .as_str()
            .unwrap()
            .ends_with("Story/Scenes/SCN-the-arrival.md"),
        "{target}"
    );
    let outline = root.join("Story/SCN-outline.md");
    let outline_uri = uri(&outline);
    let outline_text = client.open(&outline, 1);
    let at_gate = position_of(&outline_text, "SCN-the-gate", 0);
    let hover = hover_text(&mut client, &outline_uri, at_gate.clone());
    assert!(
        hover.contains("Beat sheet: Break into Two (beat 6)"),
        "{hover}"
    );
    let references = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": outline_uri}, "position": at_gate, "context": {"includeDeclaration": false}}),
    );
    let in_beats = references
        .as_array()
        .unwrap()
        .iter()
        .filter(|location| location["uri"] == beats_uri)
        .count();
    assert_eq!(in_beats, 1, "{references:#}");
    client.shutdown();
}

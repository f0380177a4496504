//! The knowledge base end to end: an agent's `<action type="save_decision">`
//! lands in `.control-room/kb/decisions.jsonl` with who saved it and for
//! which scene, and the decision reaches the next run's prompts, as the
//! request the fake model server received shows.

use crate::support;
use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;
use std::process::Command;

use model_server::{FakeModelServer, serve_draft_scene};
use serde_json::Value;

const DECISION: &str = "Kael never raises his voice, even in anger.";

fn draft(root: &Path) {
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args([
            "run",
            "creative_draft_scene",
            "--arg",
            "scene_id=SCN-the-reckoning",
            "--dir",
        ])
        .arg(root)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", support::output_text(&output));
}

#[test]
fn a_saved_decision_is_kept_and_reaches_the_next_prompt() {
    let dir = support::example_copy("kb");
    let root = dir.path();
    let server = FakeModelServer::start();
    serve_draft_scene(
        &server,
        &format!(
            "\n<action type=\"save_decision\"><category>character</category><key>Kael Maren</key><value>{DECISION}</value></action>\n<action type=\"save_decision\"><category>gossip</category><key>x</key><value>y</value></action>"
        ),
    );
    lsp_client::editor::configure(root, &server.url);

    draft(root);
    let first = server.received();
    assert!(
        first
            .iter()
            .all(|request| !request.body.to_string().contains(DECISION)),
        "no prompt knew the decision before it was saved"
    );
    let kb = std::fs::read_to_string(root.join(".control-room/kb/decisions.jsonl")).unwrap();
    let decisions: Vec<Value> = kb
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // The unknown category is not kept.
    assert_eq!(decisions.len(), 1, "{kb}");
    let decision = &decisions[0];
    assert_eq!(decision["category"], "character");
    assert_eq!(decision["key"], "Kael Maren");
    assert_eq!(decision["value"], DECISION);
    assert_eq!(decision["scene"], "SCN-the-reckoning");
    assert_eq!(decision["promoted"], false);
    let source = decision["source"].as_str().unwrap();
    assert!(
        source.starts_with("writer (run_") && source.ends_with(", step draft)"),
        "{source}"
    );
    // The draft itself holds no action.
    let runs = support::run_ids(root);
    let cache =
        support::read_json(&root.join(format!(".control-room/runs/{}/cache.json", runs[0])));
    assert!(!cache.to_string().contains("save_decision"), "{cache}");
    // The writer's receipt records the decision it took (and not the one the
    // knowledge base refused).
    let audit = root.join(".control-room/audit/issues").join(&runs[0]);
    let receipts: Vec<Value> = std::fs::read_dir(&audit)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.to_string_lossy().contains("__receipt__"))
        .map(|path| support::read_json(&path))
        .collect();
    let receipt = receipts
        .iter()
        .find(|receipt| receipt["step_id"] == "draft")
        .expect("the draft step's receipt");
    assert_eq!(
        receipt["decisions"],
        serde_json::json!([format!("character/Kael Maren: {DECISION}")]),
        "{receipt:#}"
    );

    draft(root);
    let second = &server.received()[first.len()..];
    assert!(!second.is_empty());
    assert!(
        second
            .iter()
            .all(|request| request.body.to_string().contains(DECISION)),
        "every prompt of the next run carries the character decision"
    );
}

#[test]
fn remember_this_makes_a_decision_of_the_selection() {
    use lsp_client::editor::{code_actions, editor_client};
    let dir = support::example_copy("kb");
    let root = dir.path().canonicalize().unwrap();
    let server = FakeModelServer::start();
    let mut client = editor_client(&root, &server.url, true, None);
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let text = client.open(&scene, 1);
    let remember = |client: &mut lsp_client::Client, passage: &str| {
        // The passage's start, and its end (where the rest of the text begins).
        let stop = text.find(passage).unwrap() + passage.len();
        let range = serde_json::json!({
            "start": lsp_client::position_of(&text, passage, 0),
            "end": lsp_client::position_of(&text, &text[stop..], 0),
        });
        let action = code_actions(client, &scene, range)
            .into_iter()
            .find(|action| action["title"] == "Remember this")
            .expect("Remember this on a selection");
        client.request(
            "workspace/executeCommand",
            serde_json::json!({"command": action["command"]["command"], "arguments": action["command"]["arguments"]}),
        )
    };
    let about_kael = remember(&mut client, "She looked at Kael for a long moment");
    // "She" is not a name: the one character named is Kael.
    assert_eq!(about_kael["decision"]["category"], "character");
    assert_eq!(about_kael["decision"]["key"], "Kael Maren");
    assert_eq!(
        about_kael["decision"]["value"],
        "She looked at Kael for a long moment"
    );
    assert_eq!(about_kael["decision"]["scene"], "SCN-the-gate");
    let both = remember(
        &mut client,
        "Ysolde Harrow crossed the yard without hurrying. She looked at Kael",
    );
    assert_eq!(both["decision"]["category"], "constraint");
    assert_eq!(
        both["decision"]["key"],
        "SCN-the-gate: Ysolde Harrow crossed the yard without"
    );
    let mut problems = Vec::new();
    let kept = control_room::runs::prompts::state::load_decisions(&root, &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
    let keys: Vec<&str> = kept.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "Kael Maren",
            "SCN-the-gate: Ysolde Harrow crossed the yard without"
        ]
    );
    client.shutdown();
}

#[test]
fn a_decision_contradicting_its_card_is_shown_and_promoted_to_the_card() {
    use lsp_client::editor::{apply_to_disk, code_actions, editor_client};
    use serde_json::json;
    let dir = support::example_copy("kb");
    let root = dir.path().canonicalize().unwrap();
    let kb = support::write_character_decisions(
        &root,
        &[
            ("Kael", "Kael has green eyes now, since the flats."),
            ("Iria Vell", "Iria drowns in the spring tide."),
            ("Kael Maren", DECISION),
        ],
    );
    let server = FakeModelServer::start();
    let mut client = editor_client(&root, &server.url, true, None);
    let kb_uri = lsp_client::uri(&kb);
    let text = client.open(&kb, 1);
    let shown = client.diagnostics_for(&kb_uri, |d| d.len() == 2);
    let diagnostics = shown["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics[0]["code"], "decision-contradicts-card");
    assert_eq!(diagnostics[0]["severity"], 2);
    assert_eq!(
        diagnostics[0]["message"],
        "this decision gives Kael Maren green eyes, but the card says grey; promote the decision to the card if it is the new canon, or withdraw it"
    );
    assert_eq!(diagnostics[0]["range"]["start"]["line"], 0);
    let card = root.join("Compendium/Characters/CHAR-kael-maren.md");
    assert_eq!(
        diagnostics[0]["relatedInformation"][0]["location"]["uri"],
        lsp_client::uri(&card)
    );
    assert_eq!(
        diagnostics[1]["message"],
        "this decision says Iria Vell dies, but the card says alive; promote the decision to the card if it is the new canon, or withdraw it"
    );
    assert_eq!(diagnostics[1]["range"]["start"]["line"], 1);
    // A pulled diagnostic says the same.
    let pulled = client.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": kb_uri}}),
    );
    assert_eq!(pulled["items"].as_array().unwrap().len(), 2, "{pulled}");

    // Both sides: the card, then the decision with who saved it.
    let related = &diagnostics[0]["relatedInformation"];
    assert_eq!(related[0]["message"], "what the card says");
    assert_eq!(related[1]["location"]["uri"], kb_uri);
    assert_eq!(related[1]["location"]["range"]["start"]["line"], 0);
    assert!(
        related[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("the decision, saved by"),
        "{related}"
    );

    let actions = code_actions(&mut client, &kb, diagnostics[0]["range"].clone());
    // A fix for each side: the card kept, the decision's line removed.
    let keep = actions
        .iter()
        .find(|action| action["title"] == "Keep the card: withdraw this decision")
        .unwrap_or_else(|| panic!("{actions:#?}"));
    let removal = &keep["edit"]["documentChanges"][0]["edits"][0];
    assert_eq!(removal["newText"], "");
    assert_eq!(removal["range"]["start"]["line"], 0);
    assert_eq!(removal["range"]["end"]["line"], 1);
    let promote = actions
        .iter()
        .find(|action| action["title"] == "Promote to card: Kael Maren")
        .unwrap_or_else(|| panic!("{actions:#?}"));
    let changes = promote["edit"]["documentChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "the card and the decision, in one edit");
    let kb_change = changes
        .iter()
        .find(|change| change["textDocument"]["uri"] == kb_uri)
        .unwrap();
    assert_eq!(
        kb_change["textDocument"]["version"], 1,
        "a versioned edit of the open file"
    );
    apply_to_disk(&promote["edit"]);
    let card_text = std::fs::read_to_string(&card).unwrap();
    assert!(card_text.contains("eyes: green\n"), "{card_text}");
    assert!(
        card_text.contains("hair: black\n"),
        "the rest of the card is kept"
    );
    let kb_text = std::fs::read_to_string(&kb).unwrap();
    let first: Value = serde_json::from_str(kb_text.lines().next().unwrap()).unwrap();
    assert_eq!(first["promoted"], true);
    assert_eq!(first["value"], "Kael has green eyes now, since the flats.");
    assert_ne!(first["updated_at"], "2026-11-20T10:00:00.000Z");
    assert_eq!(
        kb_text.lines().nth(2),
        text.lines().nth(2),
        "other decisions are untouched"
    );

    // As an editor would after applying it: the buffer changes, the card is saved.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": kb_uri, "version": 2}, "contentChanges": [{"text": kb_text}]}),
    );
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": lsp_client::uri(&card), "type": 2}]}),
    );
    let left = client.diagnostics_for(&kb_uri, |d| d.len() == 1);
    assert_eq!(left["diagnostics"][0]["range"]["start"]["line"], 1);

    // Promoting the death sets the card's status and the scene it happened in.
    let actions = code_actions(&mut client, &kb, left["diagnostics"][0]["range"].clone());
    let promote = actions
        .iter()
        .find(|action| action["title"] == "Promote to card: Iria Vell")
        .unwrap();
    apply_to_disk(&promote["edit"]);
    let iria =
        std::fs::read_to_string(root.join("Compendium/Characters/CHAR-iria-vell.md")).unwrap();
    assert!(iria.contains("status: dead\n"), "{iria}");
    assert!(iria.contains("died_in: SCN-the-high-tide\n---"), "{iria}");
    client.shutdown();
}

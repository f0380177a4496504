//! The continuity checks' quick fixes in the editor, over LSP with the real
//! binary: a speaker on no card offers "Create card" as a workspace edit
//! that creates the card (never over a file that is there), and a character
//! acting unlisted offers to add them to the scene's `characters`.

use crate::support::lsp_client;

use lsp_client::{Client, example_copy, position_of, uri};
use serde_json::json;

#[test]
fn an_unknown_speaker_offers_to_create_the_card_and_an_unlisted_one_to_be_listed() {
    let (_dir, root) = example_copy();
    let vigil = root.join("Story/Scenes/SCN-the-vigil.md");
    let text = std::fs::read_to_string(&vigil).unwrap();
    std::fs::write(
        &vigil,
        format!(
            "{}\n\n\"Hold fast!\" Rhys shouted from the wall.\n\n\"The tide is turning,\" Ysolde said from the stair.\n",
            text.trim_end()
        ),
    )
    .unwrap();
    let mut client = Client::spawn(&[]);
    client.initialize(
        &root,
        json!({"workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}}}),
    );
    let vigil_uri = uri(&vigil);
    let text = client.open(&vigil, 1);
    let published = client.diagnostics_for(&vigil_uri, |list| {
        list.iter().any(|d| d["code"] == "unknown-speaker")
            && list.iter().any(|d| d["code"] == "presence")
    });
    let diagnostics = published["diagnostics"].as_array().unwrap();
    let unknown = diagnostics
        .iter()
        .find(|d| d["code"] == "unknown-speaker")
        .unwrap();
    assert_eq!(unknown["message"], "Rhys speaks here but is on no card");

    let at = position_of(&text, "Rhys", 0);
    let fixes = client.quick_fixes(&vigil_uri, &at);
    let create = fixes
        .iter()
        .find(|fix| fix["title"] == "Create card Compendium/Characters/CHAR-rhys.md")
        .unwrap_or_else(|| panic!("no Create card among {fixes:#?}"));
    let operations = create["edit"]["documentChanges"]
        .as_array()
        .expect("the card is created through documentChanges");
    let card_uri = uri(&root.join("Compendium/Characters/CHAR-rhys.md"));
    assert_eq!(operations[0]["kind"], "create");
    assert_eq!(operations[0]["uri"], card_uri.as_str());
    assert_eq!(operations[0]["options"]["overwrite"], false);
    assert_eq!(operations[1]["textDocument"]["uri"], card_uri.as_str());
    let card = operations[1]["edits"][0]["newText"].as_str().unwrap();
    assert!(
        card.starts_with("---\ntype: character\nname: Rhys\n"),
        "{card}"
    );

    let at = position_of(&text, "Ysolde said", 0);
    let fixes = client.quick_fixes(&vigil_uri, &at);
    let add = fixes
        .iter()
        .find(|fix| fix["title"] == "Add Ysolde to the scene's characters")
        .unwrap_or_else(|| panic!("no fix to list Ysolde among {fixes:#?}"));
    let edit = &add["edit"]["changes"][&vigil_uri][0];
    assert_eq!(edit["newText"], ", Ysolde");
    let line = text
        .lines()
        .position(|line| line.starts_with("characters:"))
        .unwrap();
    assert_eq!(edit["range"]["start"]["line"], line);
    assert_eq!(
        edit["range"]["start"]["character"],
        "characters: [Kael, Iria".len()
    );
}

/// After each paragraph of dialogue, an inlay hint names its speaker as the
/// checks read it, and how when it is not an attribution; a line nobody is
/// found for has none.
#[test]
fn an_inlay_hint_after_each_line_of_dialogue_names_its_speaker() {
    let (_dir, root) = lsp_client::copy_of("tests/continuity/speakers");
    let kitchen = root.join("Story/Scenes/SCN-the-kitchen.md");
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let kitchen_uri = uri(&kitchen);
    let text = client.open(&kitchen, 1);
    let hints = client.request(
        "textDocument/inlayHint",
        json!({
            "textDocument": {"uri": kitchen_uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10_000, "character": 0}},
        }),
    );
    let found: Vec<(String, u64, u64)> = hints
        .as_array()
        .unwrap()
        .iter()
        .filter(|hint| {
            hint["label"]
                .as_str()
                .is_some_and(|label| label.starts_with('—'))
        })
        .map(|hint| {
            (
                hint["label"].as_str().unwrap().to_owned(),
                hint["position"]["line"].as_u64().unwrap(),
                hint["position"]["character"].as_u64().unwrap(),
            )
        })
        .collect();
    let end_of = |line: &str| {
        let at = position_of(&text, line, 0);
        let width = line.encode_utf16().count() as u64;
        (
            at["line"].as_u64().unwrap(),
            at["character"].as_u64().unwrap() + width,
        )
    };
    let expected: Vec<(String, u64, u64)> = [
        ("— Tomas", "\"You're late,\" Tomas said from the hearth."),
        ("— Kael Maren", "\"The road was long,\" Kael said."),
        ("— Tomas (by turn)", "\"Longer for some.\""),
        ("— Kael Maren (by turn)", "\"Not for you.\""),
        ("— Iria Vell", "\"Sit,\" Iria said."),
    ]
    .into_iter()
    .map(|(label, line)| {
        let (at_line, at_character) = end_of(line);
        (label.to_owned(), at_line, at_character)
    })
    .collect();
    assert_eq!(found[..expected.len()], expected[..], "{found:#?}");
    assert!(
        found.iter().any(|(label, ..)| label == "— Maud (no card)"),
        "{found:#?}"
    );
    assert!(
        found.iter().all(|(label, ..)| !label.contains("nobody")),
        "a line nobody is found for has no hint: {found:#?}"
    );
}

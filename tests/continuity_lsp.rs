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

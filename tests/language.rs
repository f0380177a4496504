//! Spelling and grammar that know the canon: what is planted is found, the
//! manuscript's own words and dialogue's licence are left alone (from the
//! command line), grammar follows the scenes open in the editor, and "Add to
//! dictionary" writes the word and clears it everywhere (over LSP).

use crate::support::lsp_client;

use std::path::Path;
use std::process::Command;

use lsp_client::{Client, example_copy, position_of, uri};
use serde_json::{Value, json};

/// A scene with planted mistakes and traps, in the bundled example.
const SCENE: &str = "---
title: The Proof
pov: Kael Maren
location: The Salt Fortress
characters: [Kael, Iria]
date: 1203-04-20
---

Kael walked to the waystones and did not recieve an answer from the wall.

Iria opened the the door of the ward-room. She had had enough of the sea.

He could of waited for the tide at Ashfall, but the saltmaster's bell was ringing.

\"We're goin' down to the the strand,\" Iria said. \"Kael, you c-comin'?\"

The blue-grey stones were cold, and the kethra burned low.

Teh wind rose. Morwen came in, good-natured and unsubdued, for a tête-à-tête with Iria, who saw that Morwen was tired.

Morwen smiled slightingly. Wehn the bell rang, she went out.
";

fn write_scene(root: &Path) -> std::path::PathBuf {
    let path = root.join("Story/Scenes/SCN-the-proof.md");
    std::fs::write(&path, SCENE).unwrap();
    std::fs::write(
        root.join("control-room.toml"),
        "[language]\nwords = [\"kethra\"]\ngrammar = \"open\"\n",
    )
    .unwrap();
    path
}

#[test]
fn grammar_is_on_by_default_in_an_open_scene_and_spelling_too() {
    let (_dir, root) = example_copy();
    let scene = write_scene(&root);
    // The configuration says nothing of grammar.
    std::fs::write(
        root.join("control-room.toml"),
        "[language]\nwords = [\"kethra\"]\n",
    )
    .unwrap();
    let scene_uri = uri(&scene);
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({}));
    client.open(&scene, 1);
    let published = client.diagnostics_for(&scene_uri, |list| {
        list.iter().any(|d| d["code"] == "grammar")
    });
    let list = published["diagnostics"].as_array().unwrap();
    let grammar = list.iter().filter(|d| d["code"] == "grammar").count();
    assert_eq!(grammar, 2, "{published:#}");
    assert!(
        list.iter().any(|d| d["code"] == "spelling"),
        "{published:#}"
    );
    client.shutdown();
}

/// A scene reopened to be read, its paragraphs all in grammar's memo, gets
/// its grammar without harper being loaded (its dictionary alone is some
/// 130 MB); a paragraph typed afresh loads it, and its grammar follows.
#[test]
fn a_scene_reopened_from_grammars_memo_loads_no_harper_until_a_new_paragraph_is_typed() {
    let (_dir, root) = example_copy();
    let scene = write_scene(&root);
    let scene_uri = uri(&scene);
    let progress = json!({"window": {"workDoneProgress": true}});
    let grammar = |list: &[Value]| list.iter().filter(|d| d["code"] == "grammar").count();
    // The first start lints the scene with harper; the memo is saved at
    // shutdown.
    let mut client = Client::spawn(&[]);
    client.initialize(&root, progress.clone());
    client.open(&scene, 1);
    client.diagnostics_for(&scene_uri, |list| grammar(list) == 2);
    client.wait_for_index();
    let with_harper = client.peak_memory();
    client.shutdown();

    let mut client = Client::spawn(&[]);
    client.initialize(&root, progress);
    let text = client.open(&scene, 1);
    client.diagnostics_for(&scene_uri, |list| grammar(list) == 2);
    client.wait_for_index();
    let from_memo = client.peak_memory();
    assert!(
        from_memo + 64 * 1024 * 1024 < with_harper,
        "peak {from_memo} bytes read from the memo against {with_harper} with harper"
    );

    // A new paragraph with a doubled word: harper loads, and finds it.
    let end = json!({"line": text.lines().count(), "character": 0});
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 2},
               "contentChanges": [{"range": {"start": end, "end": end},
                                   "text": "\nThe gulls cried over the the harbour.\n"}]}),
    );
    let typed = client.diagnostics_for(&scene_uri, |list| grammar(list) == 3);
    assert_eq!(typed["version"], 2);
    client.shutdown();
}

/// `(line, code, text)` of each spelling and grammar diagnostic of the scene.
fn language_diagnostics(report: &Value, text: &str) -> Vec<(u64, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found: Vec<(u64, String, String)> = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["path"] == "Story/Scenes/SCN-the-proof.md")
        .filter(|d| d["code"] == "spelling" || d["code"] == "grammar")
        .map(|d| {
            let line = d["range"]["start"]["line"].as_u64().unwrap();
            let start = d["range"]["start"]["character"].as_u64().unwrap() as usize;
            let end = d["range"]["end"]["character"].as_u64().unwrap() as usize;
            let on = lines[line as usize];
            let said: String = on.chars().skip(start).take(end - start).collect();
            (line + 1, d["code"].as_str().unwrap().to_owned(), said)
        })
        .collect();
    found.sort();
    found
}

fn check(root: &Path, grammar: bool) -> Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_control-room"));
    command.args(["check", "--format", "json"]);
    if grammar {
        command.arg("--grammar");
    }
    let output = command.arg(root).output().expect("control-room runs");
    serde_json::from_slice(&output.stdout).expect("a JSON report")
}

#[test]
fn spelling_and_grammar_find_what_is_planted_and_spare_the_canon_and_dialogue() {
    let (_dir, root) = example_copy();
    write_scene(&root);
    let found = language_diagnostics(&check(&root, true), SCENE);
    // Traps, none reported: Kael, Iria, Ashfall (cards); waystones and
    // saltmaster's (the dictionary file, a plural, a possessive); kethra
    // (`[language] words`); "had had"; "goin'", "c-comin'" and the doubled
    // "the the" in dialogue; the compound "blue-grey"; "Morwen" at a
    // sentence's start, a name the scene uses inside a sentence;
    // "good-natured", "tête-à-tête", "unsubdued", "slightingly". Found too:
    // "Teh" and "Wehn", typos at a sentence's start.
    let expected: Vec<(u64, String, String)> = vec![
        (9, "spelling".into(), "recieve".into()),
        (11, "grammar".into(), "the the".into()),
        (13, "grammar".into(), "could of".into()),
        (19, "spelling".into(), "Teh".into()),
        (21, "spelling".into(), "Wehn".into()),
    ];
    assert_eq!(found, expected);
    // Grammar is on by default: `check` reads it without --grammar, the
    // second time from the memo it saved.
    assert!(root.join(".control-room/index/grammar.bin").is_file());
    assert_eq!(language_diagnostics(&check(&root, false), SCENE), expected);
    // Turned off, `check` reads spelling only.
    std::fs::write(
        root.join("control-room.toml"),
        "[language]\nwords = [\"kethra\"]\ngrammar = \"off\"\n",
    )
    .unwrap();
    let found = language_diagnostics(&check(&root, false), SCENE);
    let spelling: Vec<_> = expected
        .iter()
        .filter(|(_, code, _)| code == "spelling")
        .cloned()
        .collect();
    assert_eq!(found, spelling);
}

#[test]
fn grammar_follows_the_open_scenes_and_add_to_dictionary_clears_the_word_everywhere() {
    // (The scene's grammar is left out while it is closed: see the end.)
    let (_dir, root) = example_copy();
    let scene = write_scene(&root);
    let scene_uri = uri(&scene);
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({}));
    let codes = |published: &Value| -> Vec<String> {
        published["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let text = client.open(&scene, 1);
    let open = client.diagnostics_for(&scene_uri, |list| {
        list.iter().any(|d| d["code"] == "grammar")
    });
    let grammar = open["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "grammar")
        .count();
    assert_eq!(grammar, 2, "{open:#}");
    assert!(codes(&open).contains(&"spelling".to_owned()));

    let at = position_of(&text, "recieve", 0);
    let fixes = client.quick_fixes(&scene_uri, &at);
    let titles: Vec<&str> = fixes.iter().filter_map(|f| f["title"].as_str()).collect();
    assert!(titles.contains(&"Change to “receive”"), "{titles:?}");
    let add = fixes
        .iter()
        .find(|fix| fix["title"] == "Add “recieve” to the manuscript's dictionary")
        .unwrap_or_else(|| panic!("no Add to dictionary among {titles:?}"));
    let command = &add["command"];
    // The scene is published again as the word is added, which may be
    // before the command's answer arrives.
    let mark = client.seen.len();
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    assert_eq!(answer["dictionary"], "Compendium/dictionary.txt");
    let dictionary =
        std::fs::read_to_string(root.join("Compendium/dictionary.txt")).expect("the dictionary");
    assert!(
        dictionary.lines().any(|line| line == "recieve"),
        "{dictionary}"
    );
    let cleared = client.diagnostics_since(mark, &scene_uri, |list| {
        !list.iter().any(|d| {
            d["code"] == "spelling" && d["message"].as_str().unwrap_or("").contains("recieve")
        })
    });
    assert!(codes(&cleared).contains(&"grammar".to_owned()));

    // A rule turned off in the editor's settings is off at once.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"controlRoom": {"language": {"rules": {"RepeatedWords": false}}}}}),
    );
    client.diagnostics_for(&scene_uri, |list| {
        list.iter().filter(|d| d["code"] == "grammar").count() == 1
    });

    // Closed again: no grammar.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": scene_uri}}),
    );
    client.diagnostics_for(&scene_uri, |list| {
        !list.iter().any(|d| d["code"] == "grammar")
    });
    client.shutdown();
}

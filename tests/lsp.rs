//! End-to-end tests: the real binary, spoken to over stdio.

use crate::support::lsp_client;

use std::path::Path;

use lsp_client::{Client, example_copy, position_of, uri};
use serde_json::{Value, json};
use sha2::Digest;

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|diagnostic| diagnostic["code"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The text a location points at, read from disk.
fn text_at(location: &Value) -> String {
    let path = location["uri"]
        .as_str()
        .unwrap()
        .strip_prefix("file://")
        .unwrap()
        .replace("%20", " ");
    let text = std::fs::read_to_string(path).unwrap();
    let line = text
        .lines()
        .nth(location["range"]["start"]["line"].as_u64().unwrap() as usize)
        .unwrap();
    let utf16: Vec<u16> = line.encode_utf16().collect();
    let start = location["range"]["start"]["character"].as_u64().unwrap() as usize;
    let end = location["range"]["end"]["character"].as_u64().unwrap() as usize;
    String::from_utf16(&utf16[start..end]).unwrap()
}

#[test]
fn initialize_open_navigate_rename_and_exit() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    let init = client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(
        init["capabilities"]["textDocumentSync"]["change"], 2,
        "incremental sync"
    );

    let arrival = root.join("Story/Scenes/SCN-the-arrival.md");
    let arrival_uri = uri(&arrival);
    let text = client.open(&arrival, 1);
    let published = client.diagnostics_for(&arrival_uri, |diagnostics| !diagnostics.is_empty());
    assert_eq!(published["version"], 1);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert!(
        codes(diagnostics).contains(&"unknown-reference".to_owned()),
        "{diagnostics:#?}"
    );
    let unknown = diagnostics
        .iter()
        .find(|d| d["code"] == "unknown-reference")
        .unwrap();
    assert_eq!(
        unknown["range"]["start"],
        json!({"line": 4, "character": 25})
    );
    assert_eq!(unknown["source"], "control-room");

    // Queries see the whole manuscript once the initial index has ended.
    client.wait_for_index();

    // Hover on a prose mention shows the card.
    let kael = position_of(&text, "Kael had walked", 0);
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": arrival_uri}, "position": kael}),
    );
    let markdown = hover["contents"]["value"].as_str().unwrap();
    assert!(
        markdown.contains("**Kael Maren** · character"),
        "{markdown}"
    );
    assert!(markdown.contains("eyes: grey"), "{markdown}");

    // Definition: the name goes to the card's alias; `location:` to the location card.
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": arrival_uri}, "position": kael}),
    );
    assert!(
        definition["uri"]
            .as_str()
            .unwrap()
            .ends_with("Compendium/Characters/CHAR-kael-maren.md")
    );
    assert_eq!(text_at(&definition), "Kael");
    let location = position_of(&text, "The Glass Flats", 0);
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": arrival_uri}, "position": location}),
    );
    assert!(
        definition["uri"]
            .as_str()
            .unwrap()
            .ends_with("LOC-the-glass-flats.md"),
        "{definition}"
    );

    // References to Iria, from the front matter list: prose, front matter and the card.
    let iria = position_of(&text, "Iria", 0);
    let references = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": arrival_uri}, "position": iria, "context": {"includeDeclaration": true}}),
    );
    let references = references.as_array().unwrap();
    assert!(references.len() >= 10, "{references:#?}");
    for reference in references {
        let written = text_at(reference);
        assert!(
            written == "Iria" || written == "Iria Vell",
            "{written:?} at {reference}"
        );
    }
    let files: Vec<&str> = references
        .iter()
        .map(|reference| reference["uri"].as_str().unwrap())
        .collect();
    assert!(files.iter().any(|file| file.ends_with("CHAR-iria-vell.md")));
    assert!(files.iter().any(|file| file.ends_with("SCN-the-gate.md")));
    // Nothing to find is an empty list.
    let nothing = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": arrival_uri}, "position": {"line": 0, "character": 0},
               "context": {"includeDeclaration": true}}),
    );
    assert_eq!(nothing, json!([]));

    // Rename the alias "Iria": the alias, front matter references and prose change; "Iria Vell" stays.
    let edit = client.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": arrival_uri}, "position": iria, "newName": "Irie"}),
    );
    let changes = edit["changes"].as_object().unwrap();
    let card_uri = uri(&root.join("Compendium/Characters/CHAR-iria-vell.md"));
    assert!(changes.contains_key(&card_uri), "{edit:#}");
    assert!(changes.contains_key(&arrival_uri));
    let edit_count: usize = changes
        .values()
        .map(|edits| edits.as_array().unwrap().len())
        .sum();
    let alias_references = references
        .iter()
        .filter(|reference| text_at(reference) == "Iria")
        .count();
    assert_eq!(
        edit_count, alias_references,
        "every use of the alias, and nothing else, is renamed"
    );

    // Symbols, completion, folding and word counts answer on the outline and the scene.
    let outline_uri = uri(&root.join("Story/SCN-outline.md"));
    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": outline_uri}}),
    );
    let chapters = symbols[0]["children"].as_array().unwrap();
    assert!(
        chapters[0]["name"]
            .as_str()
            .unwrap()
            .starts_with("Chapter 1"),
        "{symbols:#}"
    );
    assert_eq!(chapters[0]["children"][0]["name"], "SCN-the-arrival");
    let outline_text = std::fs::read_to_string(root.join("Story/SCN-outline.md")).unwrap();
    let scene_definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": outline_uri}, "position": position_of(&outline_text, "SCN-the-gate", 0)}),
    );
    assert!(
        scene_definition["uri"]
            .as_str()
            .unwrap()
            .ends_with("Story/Scenes/SCN-the-gate.md"),
        "{scene_definition}"
    );
    let found = client.request("workspace/symbol", json!({"query": "tomas"}));
    assert!(
        found
            .as_array()
            .unwrap()
            .iter()
            .any(|symbol| symbol["name"] == "Old Tomas"),
        "{found:#}"
    );
    let completion = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": arrival_uri}, "position": {"line": 2, "character": 7}}),
    );
    let labels: Vec<&str> = completion
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|item| item["label"].as_str())
        .collect();
    assert!(
        labels.contains(&"Kael Maren") && !labels.contains(&"The Salt Fortress"),
        "pov offers characters: {labels:?}"
    );
    let folds = client.request(
        "textDocument/foldingRange",
        json!({"textDocument": {"uri": arrival_uri}}),
    );
    assert_eq!(folds[0]["startLine"], 0);
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": arrival_uri}}),
    );
    let title = lenses[0]["command"]["title"].as_str().unwrap();
    assert!(title.contains("/ 400 words"), "{title}");

    client.shutdown();
}

#[test]
fn a_thousand_fast_edits_arrive_in_order() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({}));
    let path = root.join("Story/Scenes/SCN-the-gate.md");
    let file_uri = uri(&path);
    let mut text = client.open(&path, 0);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let words = [
        "Kael ",
        "é",
        "said",
        "\n",
        "“Go,”",
        "😀",
        " the Warden",
        "",
        "`x`",
    ];
    for version in 1..=1000 {
        // A random char range of the current text, replaced by a random word.
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let start_char = (next() as usize) % (chars.len() + 1);
        let end_char = (start_char + (next() as usize) % 4).min(chars.len());
        let offset = |char_index: usize| {
            chars
                .get(char_index)
                .map_or(text.len(), |(offset, _)| *offset)
        };
        let (start, end) = (offset(start_char), offset(end_char));
        let insert = words[(next() as usize) % words.len()];
        let range = json!({"start": position_at(&text, start), "end": position_at(&text, end)});
        text.replace_range(start..end, insert);
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": file_uri, "version": version}, "contentChanges": [{"range": range, "text": insert}]}),
        );
    }
    let state = client.request("controlRoom/documentState", json!({"uri": file_uri}));
    assert_eq!(state["version"], 1000);
    assert_eq!(state["length"], text.len());
    let expected: String = sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    assert_eq!(state["sha256"], expected);
    client.shutdown();
}

fn position_at(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    json!({"line": line, "character": text[line_start..offset].chars().map(char::len_utf16).sum::<usize>()})
}

#[test]
fn diagnostics_follow_edits_and_files_changed_on_disk() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    client.initialize(
        &root,
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}),
    );
    let arrival = root.join("Story/Scenes/SCN-the-arrival.md");
    let arrival_uri = uri(&arrival);
    let text = client.open(&arrival, 1);
    client.diagnostics_for(&arrival_uri, |diagnostics| {
        codes(diagnostics).contains(&"unknown-reference".to_owned())
    });

    // Fix the reference in the editor: the diagnostic goes, published for version 2.
    let brannoc = position_of(&text, "Brannoc", 0);
    let end =
        json!({"line": brannoc["line"], "character": brannoc["character"].as_u64().unwrap() + 7});
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": arrival_uri, "version": 2}, "contentChanges": [{"range": {"start": brannoc, "end": end}, "text": "Ysolde"}]}),
    );
    let published = client.diagnostics_for(&arrival_uri, |diagnostics| {
        !codes(diagnostics).contains(&"unknown-reference".to_owned())
    });
    assert_eq!(published["version"], 2);

    // A card written by another program: the scene's reference to it resolves.
    let gate = root.join("Story/Scenes/SCN-the-gate.md");
    let gate_text = std::fs::read_to_string(&gate).unwrap();
    let broken = gate_text.replacen("pov: Iria Vell", "pov: Marit", 1);
    assert_ne!(broken, gate_text, "the gate scene's pov is Iria");
    std::fs::write(&gate, &broken).unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&gate), "type": 2}]}),
    );
    client.diagnostics_for(&uri(&gate), |diagnostics| {
        codes(diagnostics).contains(&"unknown-reference".to_owned())
    });
    let card = root.join("Compendium/Characters/CHAR-marit.md");
    std::fs::write(&card, "---\ntype: character\nname: Marit\n---\n\n# Marit\n").unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&card), "type": 1}]}),
    );
    client.diagnostics_for(&uri(&gate), |diagnostics| {
        !codes(diagnostics).contains(&"unknown-reference".to_owned())
    });

    // The card deleted by another program: the reference is unknown again.
    let card_uri = uri(&card);
    std::fs::remove_file(&card).unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": card_uri, "type": 3}]}),
    );
    client.diagnostics_for(&uri(&gate), |diagnostics| {
        codes(diagnostics).contains(&"unknown-reference".to_owned())
    });

    // A new setting in control-room.toml applies at once: orphans are not reported.
    let config = root.join("control-room.toml");
    let settings = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{settings}\n[diagnostics.severity]\norphan-scene = \"off\"\n"),
    )
    .unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&config), "type": 2}]}),
    );
    let orphan = uri(&root.join("Story/Scenes/SCN-deleted-dream.md"));
    client.diagnostics_for(&orphan, <[Value]>::is_empty);
    client.shutdown();
}

#[test]
fn pull_diagnostics_and_progress_when_the_client_supports_them() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    let init = client.initialize(
        &root,
        json!({"textDocument": {"diagnostic": {}}, "window": {"workDoneProgress": true}, "general": {"positionEncodings": ["utf-8", "utf-16"]}}),
    );
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    assert!(init["capabilities"]["diagnosticProvider"].is_object());
    client.wait_for_index();
    assert!(
        client
            .seen
            .iter()
            .any(|message| message["method"] == "window/workDoneProgress/create")
    );
    assert!(
        client
            .seen
            .iter()
            .any(|message| message["method"] == "$/progress"
                && message["params"]["value"]["kind"] == "begin")
    );
    let outline = root.join("Story/SCN-outline.md");
    client.open(&outline, 1);
    let report = client.request(
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": uri(&outline)}}),
    );
    assert_eq!(report["kind"], "full");
    let items = report["items"].as_array().unwrap();
    assert_eq!(codes(items), ["missing-scene"]);
    assert_eq!(
        items[0]["range"]["start"],
        json!({"line": 13, "character": 2})
    );
    assert!(report.get("resultId").is_none(), "{report}");
    // The whole manuscript's, pulled: the outline's report among them,
    // with the version of the document open.
    let workspace = client.request("workspace/diagnostic", json!({"previousResultIds": []}));
    let reports = workspace["items"].as_array().unwrap();
    let outline_report = reports
        .iter()
        .find(|report| report["uri"] == uri(&outline))
        .unwrap_or_else(|| panic!("no report for the outline: {workspace}"));
    assert_eq!(outline_report["kind"], "full");
    assert_eq!(outline_report["version"], 1);
    assert_eq!(
        codes(outline_report["items"].as_array().unwrap()),
        ["missing-scene"]
    );
    assert!(
        reports.iter().all(|report| report["uri"]
            .as_str()
            .is_some_and(|uri| uri.starts_with("file://"))),
        "{workspace}"
    );
    assert!(
        !client
            .seen
            .iter()
            .any(|message| message["method"] == "textDocument/publishDiagnostics")
    );
    client.shutdown();
}

#[test]
fn bad_files_and_panicking_handlers_do_not_kill_the_server() {
    let (_dir, root) = example_copy();
    let scenes = root.join("Story/Scenes");
    std::fs::write(scenes.join("SCN-binary.md"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    std::fs::write(scenes.join("SCN-latin1.md"), b"---\ntitle: Caf\xe9\n---\n").unwrap();
    std::fs::write(scenes.join("SCN-empty.md"), b"").unwrap();
    let huge = "Kael walked on. ".repeat(10 * 1024 * 1024 / 16);
    std::fs::write(scenes.join("SCN-huge.md"), huge).unwrap();
    std::fs::write(
        root.join("Compendium/Characters/CHAR-broken.md"),
        "---\nname: [unclosed\n---\n",
    )
    .unwrap();

    let mut client = Client::spawn(&[("CONTROL_ROOM_TEST_PANIC_IN", "textDocument/hover")]);
    client.initialize(&root, json!({}));
    // Each bad file gets a diagnostic saying why it is not indexed, in any order.
    let expected = [
        ("SCN-binary.md", "binary"),
        ("SCN-latin1.md", "not UTF-8"),
        ("SCN-huge.md", "too large"),
    ];
    let mut pending: Vec<(String, &str)> = expected
        .iter()
        .map(|(name, reason)| (uri(&scenes.join(name)), *reason))
        .collect();
    while !pending.is_empty() {
        let message =
            client.wait_for(|message| message["method"] == "textDocument/publishDiagnostics");
        pending.retain(|(file_uri, reason)| {
            let diagnostics = &message["params"]["diagnostics"];
            !(message["params"]["uri"] == file_uri.as_str()
                && diagnostics[0]["code"] == "unreadable"
                && diagnostics[0]["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains(reason))
        });
    }
    let arrival = root.join("Story/Scenes/SCN-the-arrival.md");
    let text = client.open(&arrival, 1);
    let hover = client.request_raw(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&arrival)}, "position": position_of(&text, "Kael", 1)}),
    );
    assert!(
        hover["error"]["message"]
            .as_str()
            .unwrap()
            .contains("panic requested in textDocument/hover"),
        "{hover}"
    );
    assert!(client.is_running());
    let definition = client.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri(&arrival)}, "position": position_of(&text, "Kael", 1)}),
    );
    assert!(
        definition["uri"]
            .as_str()
            .unwrap()
            .ends_with("CHAR-kael-maren.md")
    );
    client.shutdown();
}

#[test]
fn requests_before_initialize_are_errors_not_crashes() {
    let mut client = Client::spawn(&[]);
    let reply = client.request_raw(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///x.md"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(reply.get("error").is_some());
    client.initialize(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/salt-road")
            .as_path(),
        json!({}),
    );
    client.shutdown();
}

#[test]
fn an_open_clean_scene_gets_an_empty_list_for_each_version() {
    let (_dir, root) = example_copy();
    let vigil = root.join("Story/Scenes/SCN-the-high-tide.md");
    // The example plants a dead man speaking in this scene; give the line to the living.
    let text = std::fs::read_to_string(&vigil).expect("the example scene is readable");
    assert!(text.contains("\" Tomas said."));
    std::fs::write(&vigil, text.replace("\" Tomas said.", "\" Iria said."))
        .expect("the copy is writable");
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({}));
    let vigil_uri = uri(&vigil);
    client.open(&vigil, 7);
    let published = client.diagnostics_for(&vigil_uri, |_| true);
    assert_eq!(published["version"], 7);
    assert_eq!(published["diagnostics"], json!([]));
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": vigil_uri, "version": 8}, "contentChanges": [{"range": {"start": {"line": 12, "character": 0}, "end": {"line": 12, "character": 0}}, "text": "Rain. "}]}),
    );
    let published = client.diagnostics_for(&vigil_uri, |_| true);
    assert_eq!(
        published["version"], 8,
        "diagnostics are republished for the new version"
    );
    client.shutdown();
}

/// The defect: the server went on publishing after answering `shutdown`
/// (the diagnostics of a change typed just before). Eglot sends `exit`,
/// then waits only until anything arrives from the server: a message
/// after the answer read as a server that had not exited, and it was
/// killed (CI saw status 9).
#[test]
fn nothing_but_answers_follows_the_answer_to_shutdown() {
    let (_dir, root) = example_copy();
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let scene_uri = uri(&scene);
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({}));
    client.open(&scene, 1);
    client.diagnostics_for(&scene_uri, |_| true);
    // Its diagnostics wait for the typing debounce (150 ms in the example's
    // settings): they would be published after the answer to `shutdown`.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 8, "character": 0}, "end": {"line": 8, "character": 0}}, "text": "Rain. "}]}),
    );
    let answer = client.request_raw("shutdown", Value::Null);
    assert!(answer.get("error").is_none(), "{answer}");
    let after = client.messages_within(std::time::Duration::from_millis(1500));
    assert!(
        after.is_empty(),
        "messages after the answer to shutdown: {after:#?}"
    );
    // Requests after `shutdown` are still answered (with an error).
    let late = client.request_raw(
        "textDocument/hover",
        json!({"textDocument": {"uri": scene_uri}, "position": {"line": 0, "character": 0}}),
    );
    assert!(late.get("error").is_some(), "{late}");
    client.notify("exit", Value::Null);
    let (status, stderr) = client.wait_exit();
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(stderr.trim(), "", "nothing on stderr at a clean exit");
}

#[test]
fn opening_a_document_no_longer_waits_for_the_typing_debounce() {
    let (_dir, root) = example_copy();
    // A debounce far longer than the test waits: typing waits for it,
    // opening a document does not.
    let config = root.join("control-room.toml");
    let settings = std::fs::read_to_string(&config).unwrap();
    assert!(settings.contains("debounce_ms = 150"), "{settings}");
    std::fs::write(
        &config,
        settings.replace("debounce_ms = 150", "debounce_ms = 20000"),
    )
    .unwrap();
    let scene = root.join("Story/Scenes/SCN-the-saltmaster.md");
    let scene_uri = uri(&scene);
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let opened = std::time::Instant::now();
    client.open(&scene, 3);
    let published = client.wait_for_within(std::time::Duration::from_secs(10), |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == scene_uri.as_str()
            && m["params"]["version"] == 3
    });
    assert!(
        opened.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        opened.elapsed()
    );
    assert_eq!(
        codes(published["params"]["diagnostics"].as_array().unwrap()),
        ["name-typo"]
    );
    client.shutdown();
}

/// The codes of a published diagnostics list, with their LSP severities.
fn codes_and_severities(diagnostics: &[Value]) -> Vec<(String, u64)> {
    diagnostics
        .iter()
        .map(|diagnostic| {
            (
                diagnostic["code"].as_str().unwrap_or_default().to_owned(),
                diagnostic["severity"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn editor_severity_settings_quick_fixes_and_marking_intentional() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    // Severities from the editor: anti-patterns off from the start.
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&root), "capabilities": {},
               "initializationOptions": {"controlRoom": {"diagnostics": {"severity": {"anti-pattern": "off"}}}}}),
    );
    client.notify("initialized", json!({}));
    let gate = root.join("Story/Scenes/SCN-the-gate.md");
    let gate_uri = uri(&gate);
    let text = client.open(&gate, 1);
    let published = client.diagnostics_for(&gate_uri, |list| !list.is_empty());
    let found = codes_and_severities(published["diagnostics"].as_array().expect("a list"));
    assert_eq!(found, vec![("attribute-mismatch".to_owned(), 2)]);

    // A changed setting takes effect at once, and the editor's value wins.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"controlRoom": {"diagnostics": {"severity": {"attribute-mismatch": "hint"}}}}}),
    );
    let published = client.diagnostics_for(&gate_uri, |list| list.len() == 2);
    let found = codes_and_severities(published["diagnostics"].as_array().expect("a list"));
    assert_eq!(
        found,
        vec![
            ("attribute-mismatch".to_owned(), 4),
            ("anti-pattern".to_owned(), 3)
        ]
    );

    // The mismatch offers the card's value (preferred) and marking it intentional.
    let at = position_of(&text, "blue eyes", 0);
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": gate_uri}, "range": {"start": at, "end": at},
               "context": {"diagnostics": []}}),
    );
    // The quick fixes; the recipe runs offered on any scene come after them.
    let actions: Vec<Value> = actions
        .as_array()
        .expect("a list of actions")
        .iter()
        .filter(|action| action["kind"] == "quickfix")
        .cloned()
        .collect();
    let titles: Vec<(&str, bool)> = actions
        .iter()
        .map(|action| {
            (
                action["title"].as_str().unwrap_or_default(),
                action["isPreferred"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        titles,
        vec![
            ("Use the card's value: “grey”", true),
            ("Mark as intentional (allow attribute-mismatch here)", false)
        ]
    );
    let fix = &actions[0]["edit"]["changes"][&gate_uri][0];
    assert_eq!(fix["newText"], "grey");
    assert_eq!(fix["range"]["start"], at);

    // Applying the allow edit (as the client would) silences that diagnostic.
    // The paragraph starts on that line, so the comment gets a line of its own.
    let allow = &actions[1]["edit"]["changes"][&gate_uri][0];
    assert_eq!(
        allow["newText"],
        "<!-- control-room: allow attribute-mismatch -->\n"
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": gate_uri, "version": 2},
               "contentChanges": [{"range": allow["range"], "text": allow["newText"]}]}),
    );
    let published = client.diagnostics_for(&gate_uri, |list| {
        list.iter().all(|d| d["code"] != "attribute-mismatch")
    });
    assert_eq!(published["version"], 2);
    assert_eq!(
        codes_and_severities(published["diagnostics"].as_array().expect("a list")),
        vec![("anti-pattern".to_owned(), 3)]
    );
    client.shutdown();
}

/// The text an LSP range (UTF-16, on one line) covers in `text`.
fn text_in(text: &str, range: &Value) -> String {
    let line = text
        .lines()
        .nth(range["start"]["line"].as_u64().unwrap() as usize)
        .unwrap();
    let utf16: Vec<u16> = line.encode_utf16().collect();
    let start = range["start"]["character"].as_u64().unwrap() as usize;
    let end = range["end"]["character"].as_u64().unwrap() as usize;
    String::from_utf16(&utf16[start..end]).unwrap()
}

#[test]
fn an_open_project_recipe_shows_its_errors_where_they_are() {
    let (_dir, root) = example_copy();
    let recipes = root.join(".control-room/recipes");
    std::fs::create_dir_all(&recipes).unwrap();
    let recipe = recipes.join("check_gate.json");
    let text = r#"{
  "recipe_id": "check_gate",
  "label": "Check the gate",
  "task_patterns": ["gate check"],
  "phase_a": [
    {"step_id": "find", "tool": "file_locater", "args": {}, "output_slot": "found", "colour": "blue"},
    {"step_id": "find", "tool": "prose_analyzer", "args": {"scene_path": {"$ref": "discovery.path"}}, "output_slot": "prose"}
  ],
  "phase_b": [],
  "dod": [{"check": "slot_is_nice", "slot": "prose"}]
}"#;
    std::fs::write(&recipe, text).unwrap();
    let recipe_uri = uri(&recipe);
    let mut client = Client::spawn(&[]);
    client.initialize(
        &root,
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}),
    );
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": recipe_uri, "languageId": "json", "version": 1, "text": text}}),
    );
    let published = client.diagnostics_for(&recipe_uri, |diagnostics| !diagnostics.is_empty());
    assert_eq!(published["version"], 1);
    let diagnostics = published["diagnostics"].as_array().unwrap().clone();
    let at = |code: &str| -> String {
        let diagnostic = diagnostics
            .iter()
            .find(|diagnostic| diagnostic["code"] == code)
            .unwrap_or_else(|| panic!("no {code} in {diagnostics:#?}"));
        assert_eq!(diagnostic["severity"], 1, "{diagnostic}");
        text_in(text, &diagnostic["range"])
    };
    assert_eq!(at("unknown-tool"), "\"file_locater\"");
    assert_eq!(at("unknown-field"), "\"colour\"");
    assert_eq!(at("duplicate-step-id"), "\"find\"");
    assert_eq!(at("unknown-slot"), "\"discovery.path\"");
    assert_eq!(at("unknown-dod-check"), "\"slot_is_nice\"");
    let tool = diagnostics
        .iter()
        .find(|diagnostic| diagnostic["code"] == "unknown-tool")
        .unwrap();
    assert!(
        tool["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `file_locator`?"),
        "{tool}"
    );
    assert_eq!(tool["data"]["pointer"], "/phase_a/0/tool");

    // Fixing the tool's name in the editor clears that error, for version 2.
    let start = position_of(text, "file_locater", 0);
    let end =
        json!({"line": start["line"], "character": start["character"].as_u64().unwrap() + 12});
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": recipe_uri, "version": 2}, "contentChanges": [{"range": {"start": start, "end": end}, "text": "file_locator"}]}),
    );
    let published = client.diagnostics_for(&recipe_uri, |diagnostics| {
        !codes(diagnostics).contains(&"unknown-tool".to_owned())
    });
    assert_eq!(published["version"], 2);
    assert!(codes(published["diagnostics"].as_array().unwrap()).contains(&"unknown-field".into()));

    // Broken JSON: one error where the parser stopped.
    let broken = "{\n  \"recipe_id\": \"check_gate\",\n  oops\n}";
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": recipe_uri, "version": 3}, "contentChanges": [{"text": broken}]}),
    );
    let published = client.diagnostics_for(&recipe_uri, |diagnostics| {
        codes(diagnostics) == ["invalid-json"]
    });
    assert_eq!(
        published["diagnostics"][0]["range"]["start"],
        json!({"line": 2, "character": 2})
    );

    // A valid recipe whose id another project file (on disk) already has.
    let valid = text
        .replace("file_locater", "file_locator")
        .replace(", \"colour\": \"blue\"", "")
        .replace(
            "{\"step_id\": \"find\", \"tool\": \"prose",
            "{\"step_id\": \"look\", \"tool\": \"prose",
        )
        .replace("discovery.path", "found.matches")
        .replace("slot_is_nice", "slot_not_null");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": recipe_uri, "version": 4}, "contentChanges": [{"text": valid}]}),
    );
    client.diagnostics_for(&recipe_uri, <[Value]>::is_empty);
    let twin = recipes.join("a_gate.json");
    std::fs::write(&twin, &valid).unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&twin), "type": 1}]}),
    );
    let published = client.diagnostics_for(&recipe_uri, |diagnostics| {
        codes(diagnostics) == ["duplicate-recipe-id"]
    });
    let duplicate = &published["diagnostics"][0];
    assert!(
        duplicate["message"]
            .as_str()
            .unwrap()
            .contains(".control-room/recipes/a_gate.json"),
        "{duplicate}"
    );
    assert_eq!(text_in(&valid, &duplicate["range"]), "\"check_gate\"");

    // Closed, the recipe's errors leave the editor.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": recipe_uri}}),
    );
    let published = client.diagnostics_for(&recipe_uri, <[Value]>::is_empty);
    assert!(published["version"].is_null(), "{published}");
    client.shutdown();
}

#[test]
fn check_workspace_reads_the_disk_again_and_sums_up_every_file() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&root), "capabilities": {"window": {"workDoneProgress": true}},
               "initializationOptions": {"controlRoom": {"diagnostics": {"debounceMs": 0, "severity": {"anti-pattern": "off"}}}}}),
    );
    client.notify("initialized", json!({}));
    client.wait_for_index();
    let check = |client: &mut Client| {
        client.request(
            "workspace/executeCommand",
            json!({"command": "controlRoom.checkWorkspace", "arguments": []}),
        )
    };
    let before = check(&mut client);
    let files = before["files"].as_u64().unwrap();
    assert!(files >= 10, "{before}");
    assert_eq!(before["by_code"]["name-typo"], 1, "{before}");
    assert_eq!(before["by_code"]["anti-pattern"], Value::Null, "{before}");
    let by_code: u64 = before["by_code"]
        .as_object()
        .unwrap()
        .values()
        .map(|count| count.as_u64().unwrap())
        .sum();
    let by_severity: u64 = ["errors", "warnings", "information", "hints"]
        .iter()
        .map(|key| before[key].as_u64().unwrap())
        .sum();
    assert_eq!(by_code, by_severity, "{before}");
    assert_eq!(before["errors"], 1, "{before}");

    // A scene written behind the server's back (no watched-files event) is
    // read, checked and published by the command.
    let new_scene = root.join("Story/Scenes/SCN-the-ledger.md");
    std::fs::write(
        &new_scene,
        "---\nid: SCN-the-ledger\ntitle: The Ledger\npov: Kael Maren\n---\n\n\"We count it again,\" Kale said.\n",
    )
    .unwrap();
    let after = check(&mut client);
    assert_eq!(after["files"].as_u64().unwrap(), files + 1, "{after}");
    assert_eq!(after["by_code"]["name-typo"], 2, "{after}");
    // Published by the command (or by the index's own last publish, which
    // may still be sending when the command answers).
    let ledger = uri(&new_scene);
    let is_ledger = |m: &Value| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == ledger.as_str()
    };
    let published = match client.seen.iter().rfind(|m| is_ledger(m)) {
        Some(published) => published.clone(),
        None => client.wait_for(is_ledger),
    };
    let codes = codes(published["params"]["diagnostics"].as_array().unwrap());
    assert!(codes.contains(&"name-typo".to_owned()), "{codes:?}");
    client.shutdown();
}

#[test]
fn an_empty_configuration_change_keeps_the_initialization_options() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&root), "capabilities": {},
               "initializationOptions": {"controlRoom": {"diagnostics": {"severity": {"attribute-mismatch": "off"}}}}}),
    );
    client.notify("initialized", json!({}));
    // As Eglot does after `initialized`.
    client.notify("workspace/didChangeConfiguration", json!({"settings": {}}));
    let gate = root.join("Story/Scenes/SCN-the-gate.md");
    let text = client.open(&gate, 1);
    let published = client.diagnostics_for(&uri(&gate), |list| !list.is_empty());
    assert_eq!(
        codes_and_severities(published["diagnostics"].as_array().unwrap()),
        vec![("anti-pattern".to_owned(), 3)]
    );
    // A change with a `diagnostics` part replaces that part.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"controlRoom": {"diagnostics": {"severity": {}}, "llm": null}}}),
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&gate), "version": 2},
               "contentChanges": [{"text": format!("{text}\n")}]}),
    );
    let published = client.diagnostics_for(&uri(&gate), |list| list.len() == 2);
    assert_eq!(published["version"], 2);
    client.shutdown();
}

/// A frame with `body` and its true length.
fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

#[test]
fn one_malformed_frame_no_longer_ends_the_server() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    // Bodies that are not JSON-RPC messages, each with a correct length.
    let bodies = [
        ("not json at all", -32700),
        ("{\"jsonrpc\": \"2.0\", \"method\": ", -32700),
        ("[1, 2, 3]", -32600),
        ("{\"hello\": \"world\"}", -32600),
        ("\u{00e9}t\u{00e9}", -32700),
        ("", -32700),
    ];
    for (body, code) in bodies {
        client.send_bytes(&frame(body));
        let refused = client.wait_for(|m| m.get("error").is_some() && m["id"].is_null());
        assert_eq!(refused["error"]["code"], code, "{body:?}: {refused}");
    }
    // A `$/` request is refused with MethodNotFound, as the spec asks.
    let refused = client.request_raw("$/unknownThing", json!({}));
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    // Blank lines between frames, and a header it does not know, are harmless.
    client.send_bytes(b"\r\n");
    let arrival = root.join("Story/Scenes/SCN-the-arrival.md");
    let text = client.open(&arrival, 1);
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&arrival)}, "position": position_of(&text, "Kael", 1)}),
    );
    assert!(hover["contents"]["value"].as_str().is_some(), "{hover}");
    client.shutdown();
}

/// A message whose ignored field holds bytes that are not UTF-8 passed the
/// framing (serde skips what it ignores unread) and ended the framework's
/// reader, which reads every body as UTF-8 first: the server went deaf.
/// Found by `tests/fuzz.rs`.
#[test]
fn a_frame_whose_body_is_not_utf8_no_longer_ends_the_server() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({}));
    let mut body = br#"{"jsonrpc": "2.0", "method": "textDocument/didSave", "extra": ""#.to_vec();
    body.extend([0x80, 0xff]);
    body.extend(br#""}"#);
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend(body);
    client.send_bytes(&bytes);
    let refused = client.wait_for(|m| m.get("error").is_some() && m["id"].is_null());
    assert_eq!(refused["error"]["code"], -32700, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not UTF-8"),
        "{refused}"
    );
    let symbols = client.request("workspace/symbol", json!({"query": "Kael"}));
    assert!(symbols.is_array(), "{symbols}");
    client.shutdown();
}

#[test]
fn a_frame_whose_length_is_unusable_closes_the_connection_with_an_error() {
    for garbled in [
        &b"Content-Length: many\r\n\r\n{}"[..],
        b"Content-Type: application/json\r\n\r\n{}",
        b"Content-Length: 99999999999\r\n\r\n{}",
    ] {
        let (_dir, root) = example_copy();
        let mut client = Client::spawn(&[]);
        client.initialize(&root, json!({}));
        client.send_bytes(garbled);
        let (status, stderr) = client.wait_exit();
        assert!(!status.success(), "{status}");
        assert!(
            stderr.contains("the connection to the editor was closed"),
            "{stderr}"
        );
    }
}

/// A server started for a client that registers watched files dynamically:
/// the server asks it to, in `initialized`, and waits for the answer.
fn server_asking_for_a_registration(root: &Path) -> Client {
    let mut client = Client::spawn(&[]);
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(root), "capabilities": {
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}}),
    );
    client.notify("initialized", json!({}));
    client
}

#[test]
fn a_server_whose_input_closes_while_it_waits_for_the_editor_exits() {
    let (_dir, root) = example_copy();
    let mut client = server_asking_for_a_registration(&root);
    // The editor goes away without answering, and without `exit`.
    client.close_input();
    let (status, stderr) = client.wait_exit();
    assert!(status.success(), "{status}: {stderr}");
}

/// The defect: after `exit` the framework waited for every handler still
/// running, and `initialized` waits for the editor to answer its
/// registration: a server asked to exit stayed alive as long as the editor
/// kept its input open. Eglot kills a server that has not exited 0.1 s after
/// `exit`.
#[test]
fn a_server_asked_to_exit_while_a_handler_waits_for_the_editor_exits_at_once() {
    let (_dir, root) = example_copy();
    // The registration is never answered.
    let mut client = server_asking_for_a_registration(&root);
    client.wait_for_unanswered(|message| message["method"] == "client/registerCapability");
    client.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "shutdown", "params": null}));
    client.notify("exit", Value::Null);
    let asked = std::time::Instant::now();
    let (status, stderr) = client.wait_exit();
    let took = asked.elapsed();
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        took < std::time::Duration::from_secs(2),
        "the server took {took:?} to exit after `exit`, its input still open"
    );
}
#[test]
fn a_byte_order_mark_in_did_open_text_keeps_the_front_matter_diagnostics() {
    let (_dir, root) = example_copy();
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let text =
        std::fs::read_to_string(&scene)
            .unwrap()
            .replacen("pov: ", "pov: Brannoc\nold_pov: ", 1);
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({}));
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(&scene), "languageId": "markdown", "version": 1,
               "text": format!("\u{feff}{text}")}}),
    );
    let published = client.diagnostics_for(&uri(&scene), |d| {
        d.iter().any(|d| d["code"] == "unknown-reference")
    });
    let unknown = published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "unknown-reference")
        .unwrap()
        .clone();
    assert!(
        unknown["message"].as_str().unwrap().contains("Brannoc"),
        "{unknown}"
    );
    client.shutdown();
}

/// A scene of seven megabytes opened in the editor used to be parsed whole,
/// at open and at every keystroke: 2.4 GB and seconds a keystroke. Now its
/// text is kept unchecked (its front matter is still read), with an
/// information diagnostic that says so; edits are answered, and cut back to
/// a scene's size its text is checked again.
#[test]
fn a_document_of_seven_megabytes_opened_in_the_editor_is_kept_unchecked_in_bounded_memory() {
    let (_dir, root) = example_copy();
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let scene_uri = uri(&scene);
    let original = std::fs::read_to_string(&scene).unwrap();
    let body_start = original[4..].find("---\n").unwrap() + 8;
    let mut big = original.replacen("pov: ", "pov: Brannoc\nold_pov: ", 1);
    let heading_end = big.find("# The Gate\n\n").unwrap() + "# The Gate\n\n".len();
    big.insert_str(heading_end, "“Go,” Kale said.\n\n");
    while big.len() < 7_000_000 {
        big.push_str(&original[body_start..]);
        big.push('\n');
    }
    // On disk too, as a file the editor opens is.
    std::fs::write(&scene, &big).unwrap();
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({}));
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": scene_uri, "languageId": "markdown", "version": 1, "text": big}}),
    );
    let too_large = |diagnostics: &[Value]| diagnostics.iter().any(|d| d["code"] == "too-large");
    // The version's diagnostics (the file on disk has its own, without one).
    let of_version = |client: &mut Client, version: i64| {
        client.wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == scene_uri.as_str()
                && m["params"]["version"] == version
        })["params"]
            .clone()
    };
    let published = of_version(&mut client, 1);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    // The front matter is read; the text, where “Kale” is, is not.
    assert_eq!(
        codes(diagnostics),
        ["too-large", "unknown-reference"],
        "{diagnostics:#?}"
    );
    assert_eq!(diagnostics[0]["severity"], 3, "information");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.contains("too large to check (6.7 MiB; the limit is 1 MiB): its front matter is read, but not its text"),
        "{message}"
    );

    // Edits are applied and answered, in the middle and at the end.
    let lines = big.lines().count() as u64;
    for (version, line) in [(2, lines / 2), (3, lines), (4, 10)] {
        let at = json!({"line": line, "character": 0});
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": scene_uri, "version": version},
                   "contentChanges": [{"range": {"start": at, "end": at}, "text": "Kael waited. "}]}),
        );
        let published = of_version(&mut client, version);
        assert!(too_large(published["diagnostics"].as_array().unwrap()));
    }
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": scene_uri}, "position": {"line": lines / 2, "character": 3}}),
    );
    assert_eq!(hover, Value::Null, "nothing is known of an unchecked text");

    // Cut back to a scene's size, it is checked again.
    let small = &big[..body_start + 400];
    let small = &small[..small.rfind('\n').unwrap() + 1];
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 5}, "contentChanges": [{"text": small}]}),
    );
    let published = of_version(&mut client, 5);
    let found = codes(published["diagnostics"].as_array().unwrap());
    assert!(
        found.contains(&"name-typo".into()) && !found.contains(&"too-large".into()),
        "{published:#?}"
    );
    // The old server peaked above a gigabyte here; the text costs a few copies of itself.
    let peak = client.peak_memory();
    assert!(peak < 500 << 20, "peak memory {} MB", peak >> 20);
    client.shutdown();
}

/// A change typed while the initial index still reads the manuscript is
/// published after its pause, not when the index ends: the index's batches
/// that land in the pause are in the pass's snapshot, never a reason to
/// drop it.
#[test]
fn a_change_typed_during_the_initial_index_is_published_before_the_index_ends() {
    let (_dir, root) = example_copy();
    let config = root.join("control-room.toml");
    let settings = std::fs::read_to_string(&config).unwrap();
    assert!(settings.contains("debounce_ms = 150"));
    std::fs::write(
        &config,
        settings.replace("debounce_ms = 150", "debounce_ms = 300"),
    )
    .unwrap();
    // Enough scenes that the index takes seconds in a test build, even on
    // many cores.
    let paragraph = "Maren Kell walked the long road to the gate, and the salt wind \
                     followed her past the fields and the quiet houses. "
        .repeat(40);
    for n in 0..3000 {
        std::fs::write(
            root.join(format!("Story/Scenes/SCN-filler-{n}.md")),
            format!("---\nid: SCN-filler-{n}\ntitle: Filler {n}\n---\n\n{paragraph}\n"),
        )
        .unwrap();
    }
    let scene = root.join("Story/Scenes/SCN-the-arrival.md");
    let scene_uri = uri(&scene);
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    let text = client.open(&scene, 1);
    client.diagnostics_for(&scene_uri, |_| true);
    let is_end = |message: &Value| {
        message["method"] == "$/progress" && message["params"]["value"]["kind"] == "end"
    };
    assert!(
        !client.seen.iter().any(is_end),
        "the manuscript was indexed before the scene's first diagnostics: nothing typed can fall in the index"
    );
    let end = text.lines().count();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 2},
               "contentChanges": [{"range": {"start": {"line": end, "character": 0},
                                             "end": {"line": end, "character": 0}},
                                   "text": "\nMaren waited.\n"}]}),
    );
    let typed = client.wait_for(|message| {
        message["method"] == "textDocument/publishDiagnostics"
            && message["params"]["uri"] == scene_uri
            && message["params"]["version"] == 2
            || is_end(message)
    });
    assert_eq!(
        typed["method"], "textDocument/publishDiagnostics",
        "the change's diagnostics waited for the end of the index"
    );
    client.shutdown();
}

//! Voice calibration end to end over LSP with the fake model server: a
//! tournament of three contestants lands as one file, "Why does this
//! work?" answers under a version, "Pick this voice" writes the gold
//! standard and the bundle, the lock is the writer's; the next "Draft
//! scene" prompt holds the bundle (in the prompt preview and in what the
//! model was sent), and a drafted scene that leaves the voice is flagged.

use crate::support;
use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;

use lsp_client::editor::{changed, editor_client, progress};
use lsp_client::{Client, uri};
use model_server::{Answer, FakeModelServer, serve_draft_scene, step_marker};
use serde_json::{Value, json};

const SPARSE: &str = "Iria put her shoulder to the bar. It did not move. She tried again. The \
wood groaned. She hauled the wicket open a hand's width. The Warden came through sideways. He \
smelled of the road. \"Quickly,\" she said. He did not thank her. She dropped the bar back. The \
sound went through the stones. Nobody came. The yard stayed dark. She looked up at the keep. No \
lamp there. Good. He stood with his back to the wall. Rain ran off his hood. \"Where is the \
saltmaster?\" he said. \"Asleep.\" \"Wake him.\" \"No.\" He looked at her then. She did not look \
away. The wind came over the wall. It smelled of weed and iron. Somewhere a shutter banged. She \
counted to ten. Nothing moved. \"You can sleep in the stable,\" she said. \"Go before the bell.\" \
He nodded once. He went. She stayed by the gate. Her hands hurt. She put them in her sleeves. The \
bar was cold. The stones were cold. Out on the flats the tide was turning. She could hear it. She \
waited until she could not.";

const LYRICAL: &str = "The bar on the great gate lay across it like the arm of some old sleeper \
who would not be woken, and Iria leaned into it as if into a wind off the flats, until at last \
it gave with a groan that rolled out over the sea-wall like thunder heard from very far away.";

const CLOSE: &str = "She should not be doing this. Iria knew it even as she set her shoulder to \
the bar, knew what the Commander would say, wondered whether Tomas would hear the groan from the \
keep, and remembered, absurdly, that she had not eaten since noon.";

const WHY: &str = "The lyrical version works because each sentence rolls like the tide it \
describes: “like the arm of some old sleeper” gives the bar a body, and the one long breath \
of the sentence makes the gate's weight felt. Keep the long line; avoid stacking figures.";

/// A draft in another voice than the sparse gold standard: long sentences,
/// a figure in each, about 400 words.
fn drifting_draft() -> String {
    let sentences = [
        "The yard that morning lay under the wrack like a field after some drowned harvest, and Kael walked through it slowly, as if every step might wake the sea again, while the garrison gathered along the wall in a long grey line that wavered like smoke in the wind off the flats.",
        "Ysolde stood alone by the gate with her hands folded before her like a woman at a graveside, and the light that came down through the broken cloud lay on her shoulders as though the sky itself had chosen to judge her before any of them could.",
        "Iria spoke first, and her words went out over the yard like gulls blown from a cliff, scattering before they reached anyone, and Kael felt the silence that followed settle on the stones like salt drying in the creases of a coat.",
        "When at last he told them what he had seen on the flats, the shapes in the shallows and the lantern guttering on the ward-stone, his voice carried like a bell over water, and the garrison listened as if to a tide coming in.",
    ];
    let mut text = String::from("# The Reckoning\n\n");
    for round in 0..3 {
        for sentence in sentences {
            text.push_str(sentence);
            text.push(' ');
        }
        text.push_str(if round < 2 { "\n\n" } else { "\n" });
    }
    text
}

/// The tournament's contestants answer in order.
fn serve_contestants(server: &FakeModelServer, versions: &[&str]) {
    for (at, version) in versions.iter().enumerate() {
        server.on(
            &step_marker(&format!("tournament-{}", at + 1), "writer"),
            vec![Answer::text(*version)],
        );
    }
}

fn command(client: &mut Client, name: &str, args: Value, token: Option<&str>) -> Value {
    let mut params = json!({"command": name, "arguments": [args]});
    if let Some(token) = token {
        params["workDoneToken"] = json!(token);
    }
    client.request("workspace/executeCommand", params)
}

fn lenses(client: &mut Client, path: &Path) -> Vec<Value> {
    client
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri(path)}}),
        )
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_tournament_of_three_lands_as_one_file_and_its_pick_becomes_the_voice_that_drafts_and_checks() {
    let dir = support::example_copy("voice-lsp");
    let root = dir.path().to_path_buf();
    let server = FakeModelServer::start();
    serve_contestants(&server, &[SPARSE, LYRICAL, CLOSE]);
    server.on(&step_marker("voice-why", "critic"), vec![Answer::text(WHY)]);
    // The scene's draft and its polish leave the voice.
    server.on(
        &step_marker("draft", "writer"),
        vec![Answer::text(drifting_draft())],
    );
    server.on(
        &step_marker("polish", "editor"),
        vec![Answer::text(drifting_draft())],
    );
    serve_draft_scene(&server, "");
    let mut client = editor_client(&root, &server.url, true, None);

    // The tournament: three contestants, one file.
    let started = command(
        &mut client,
        "controlRoom.voice.tournament",
        json!({"scene": "SCN-the-gate", "contestants": ["sparse", "lyrical", "close"]}),
        Some("tournament"),
    );
    let id = started["tournament"].as_str().expect("an id").to_owned();
    let ended = progress(&mut client, "tournament");
    assert_eq!(
        ended.last().unwrap()["message"],
        format!("3 of 3 versions in Compendium/Voice/tournaments/{id}.md"),
        "{ended:?}"
    );
    let file = root.join(format!("Compendium/Voice/tournaments/{id}.md"));
    let text = std::fs::read_to_string(&file).unwrap();
    for (heading, prose) in [
        ("## 1. sparse", SPARSE),
        ("## 2. lyrical", LYRICAL),
        ("## 3. close", CLOSE),
    ] {
        assert!(text.contains(heading), "{text}");
        assert!(text.contains(prose), "{text}");
    }
    assert_eq!(text.matches("*Measured:*").count(), 3, "{text}");
    let asked: Vec<String> = server
        .received()
        .iter()
        .map(|request| request.body.to_string())
        .filter(|body| body.contains("<current_step>tournament-"))
        .collect();
    assert_eq!(asked.len(), 3, "one request per contestant");
    assert!(
        asked
            .iter()
            .all(|body| body.contains("Iria lets him in against orders")),
        "every contestant had the scene's beat"
    );

    // The tournament file's lenses; "Why does this work?" on version 2.
    changed(&mut client, &[&file]);
    client.open(&file, 1);
    let found = lenses(&mut client, &file);
    let titles: Vec<&str> = found
        .iter()
        .filter_map(|lens| lens["command"]["title"].as_str())
        .collect();
    assert_eq!(
        titles
            .iter()
            .filter(|title| **title == "Pick this voice")
            .count(),
        3,
        "{titles:?}"
    );
    let why = found
        .iter()
        .find(|lens| {
            lens["command"]["title"] == "Why does this work?"
                && lens["command"]["arguments"][0]["version"] == 2
        })
        .expect("a why lens on version 2");
    let asking = command(
        &mut client,
        "controlRoom.voice.why",
        why["command"]["arguments"][0].clone(),
        Some("why"),
    );
    assert_eq!(asking["asking"], "2");
    progress(&mut client, "why");
    let text = std::fs::read_to_string(&file).unwrap();
    let lyrical = text.find("## 2. lyrical").unwrap();
    let close = text.find("## 3. close").unwrap();
    let answer = text.find("### Why does this work?").expect("the answer");
    assert!(lyrical < answer && answer < close, "{text}");
    assert!(text.contains(WHY));

    // "Pick this voice" on version 1: the gold standard and the bundle.
    let pick = found
        .iter()
        .find(|lens| {
            lens["command"]["title"] == "Pick this voice"
                && lens["command"]["arguments"][0]["version"] == 1
        })
        .expect("a pick lens on version 1");
    let picked = command(
        &mut client,
        "controlRoom.voice.pick",
        pick["command"]["arguments"][0].clone(),
        None,
    );
    assert_eq!(picked["picked"], true, "{picked}");
    let gold = root.join("Compendium/Voice/gold-standard.md");
    let phase = root.join("Compendium/Voice/phase-evolution.md");
    let gold_text = std::fs::read_to_string(&gold).unwrap();
    assert!(gold_text.contains(SPARSE), "{gold_text}");
    assert!(gold_text.contains("locked: false"));
    assert!(
        std::fs::read_to_string(&phase)
            .unwrap()
            .contains("## Act two")
    );
    changed(&mut client, &[&gold, &phase]);
    let locked = command(&mut client, "controlRoom.voice.lock", json!({}), None);
    assert_eq!(locked["locked"], true, "{locked}");
    assert!(
        std::fs::read_to_string(&gold)
            .unwrap()
            .contains("locked: true")
    );
    changed(&mut client, &[&gold]);

    // The next draft's prompt holds the bundle, trimmed by tier: in the
    // preview, the summary alone for this small model (§6.3), and the
    // gold standard's file and passage at the full tier…
    let preview = |tier: Option<&str>| {
        let mut args = vec![
            "prompt",
            "creative_draft_scene",
            "draft",
            "--arg",
            "scene_id=SCN-the-reckoning",
            "--json",
        ];
        if let Some(tier) = tier {
            args.extend(["--tier", tier]);
        }
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        support::output_text(&output)
    };
    let minimal = preview(None);
    assert!(minimal.contains("\"variant\": \"t1\""), "{minimal}");
    assert!(
        minimal.contains("<voice_summary>short, clipped sentences"),
        "{minimal}"
    );
    assert!(!minimal.contains("<voice_bundle"), "{minimal}");
    let full = preview(Some("full"));
    assert!(
        full.contains("<voice_bundle loaded=\\\"true\\\" locked=\\\"true\\\">"),
        "{full}"
    );
    assert!(full.contains("<winning_passage_file>Compendium/Voice/gold-standard.md"));
    assert!(full.contains("It did not move. She tried again."));

    // …and in what the model is sent; the drafted scene leaves the voice.
    let run = command(
        &mut client,
        "controlRoom.runRecipe",
        json!({"recipe": "creative_draft_scene", "args": {"scene_id": "SCN-the-reckoning"}}),
        Some("draft"),
    );
    assert!(run["run_id"].is_string(), "{run}");
    progress(&mut client, "draft");
    let sent = server
        .received()
        .into_iter()
        .find(|request| {
            request
                .body
                .to_string()
                .contains(&step_marker("draft", "writer"))
        })
        .expect("the draft step asked the model")
        .body
        .to_string();
    assert!(
        sent.contains("<voice_summary>short, clipped sentences"),
        "{sent}"
    );
    let scene = root.join("Story/Scenes/SCN-the-reckoning.md");
    assert!(
        std::fs::read_to_string(&scene)
            .unwrap()
            .contains("drowned harvest")
    );
    changed(&mut client, &[&scene]);
    let diagnostics = client.diagnostics_for(&uri(&scene), |diagnostics| {
        diagnostics
            .iter()
            .any(|diagnostic| diagnostic["code"] == "voice-drift")
    });
    let drift = diagnostics["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|diagnostic| diagnostic["code"] == "voice-drift")
        .unwrap();
    let message = drift["message"].as_str().unwrap();
    assert!(
        message.contains("words a sentence in the narration against 4.6"),
        "{message}"
    );
    assert_eq!(drift["severity"], 3, "information by default");
}

#[test]
fn the_foreman_starts_a_tournament_from_the_desk_and_a_scaffold_reaches_the_draft() {
    let dir = support::example_copy("voice-foreman");
    let root = dir.path().to_path_buf();
    let server = FakeModelServer::start();
    serve_contestants(&server, &[SPARSE, LYRICAL]);
    server.on(
        "V1-find the voice",
        vec![Answer::text(
            "<message>Two voices for the gate.</message><action type=\"start_tournament\"><passage>SCN-the-gate</passage><contestants>sparse, lyrical</contestants></action>",
        )],
    );
    let mut client = editor_client(&root, &server.url, true, None);
    let moved = command(
        &mut client,
        "controlRoom.mode.advance",
        json!({"to": "voice_calibration"}),
        None,
    );
    assert_eq!(moved["moved"], true, "{moved}");
    let answer = command(
        &mut client,
        "controlRoom.askForeman",
        json!({"message": "V1-find the voice of the gate."}),
        Some("ask"),
    );
    assert!(answer["turn"].is_number(), "{answer}");
    progress(&mut client, "ask");
    // The tournament runs in its own task: its file lands.
    let folder = root.join("Compendium/Voice/tournaments");
    client.wait_for(|message| {
        message["method"] == "$/progress"
            && message["params"]["value"]["kind"] == "end"
            && message["params"]["value"]["message"]
                .as_str()
                .is_some_and(|said| said.starts_with("2 of 2 versions in"))
    });
    let files: Vec<_> = std::fs::read_dir(&folder).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(text.contains(SPARSE) && text.contains(LYRICAL), "{text}");
    let desk = std::fs::read_to_string(root.join("Notes/foreman.md")).unwrap();
    assert!(desk.contains("- Done: started tournament T-"), "{desk}");

    // In DIRECTOR, "Scaffold scene" on the outline's entries; the scaffold
    // beside the scene is what its draft is drafted from.
    let moved = command(
        &mut client,
        "controlRoom.mode.advance",
        json!({"to": "director", "skip": true, "because": "the voice is found"}),
        None,
    );
    assert_eq!(moved["moved"], true, "{moved}");
    let outline = root.join("Story/SCN-outline.md");
    client.open(&outline, 1);
    let found = lenses(&mut client, &outline);
    let lens = found
        .iter()
        .find(|lens| {
            lens["command"]["title"] == "Scaffold scene"
                && lens["command"]["arguments"][0]["scene_id"] == "SCN-the-reckoning"
        })
        .unwrap_or_else(|| panic!("a Scaffold scene lens: {found:?}"));
    let mut args = lens["command"]["arguments"][0].clone();
    args["goal"] = json!("Ysolde makes Kael answer for the gate, and he hands back the keys.");
    let scaffolded = command(&mut client, "controlRoom.scaffold", args, None);
    assert_eq!(
        scaffolded["scaffolded"], "Story/Scenes/SCN-the-reckoning.scaffold.md",
        "{scaffolded}"
    );
    let scaffold = root.join("Story/Scenes/SCN-the-reckoning.scaffold.md");
    assert!(
        std::fs::read_to_string(&scaffold)
            .unwrap()
            .contains("## Goal\n\nYsolde makes Kael answer for the gate")
    );
    let preview = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args([
            "prompt",
            "creative_draft_scene",
            "draft",
            "--arg",
            "scene_id=SCN-the-reckoning",
            "--tier",
            "full",
            "--json",
        ])
        .current_dir(&root)
        .output()
        .unwrap();
    let preview = support::output_text(&preview);
    assert!(
        preview.contains("The writer's scaffold of this scene (Story/Scenes/SCN-the-reckoning.scaffold.md): draft from it"),
        "{preview}"
    );
    assert!(preview.contains("<active_scaffold scaffold_id=\\\"SCN-the-reckoning\\\">"));
    assert!(preview.contains("he hands back the keys"));
}

/// A tournament's contestants are drafted at once on a server on this
/// machine that says it writes several replies at once (llama.cpp's slots),
/// and one after the other on one that does not say.
#[test]
fn a_tournament_drafts_its_contestants_at_once_where_the_local_server_has_the_slots() {
    let delay = std::time::Duration::from_millis(600);
    for slots in [3, 0] {
        let dir = support::example_copy("voice-slots");
        let root = dir.path();
        let server = FakeModelServer::start();
        server.slots(slots);
        for at in 1..=3 {
            server.on(
                &step_marker(&format!("tournament-{at}"), "writer"),
                vec![Answer::Delayed(delay, Box::new(Answer::text(SPARSE)))],
            );
        }
        std::fs::write(
            root.join("control-room.toml"),
            format!(
                "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"llama3.1:8b\"\nmax_retries = 0\n",
                server.url
            ),
        )
        .unwrap();
        let output = support::control_room(
            root,
            &[
                "voice",
                "tournament",
                "--text",
                "Iria opens the gate at night for a stranger.",
                "--contestants",
                "sparse",
                "lyrical",
                "close",
            ],
        );
        assert!(output.status.success(), "{}", support::output_text(&output));
        let mut arrived: Vec<std::time::Instant> = server
            .received()
            .iter()
            .filter(|request| request.path.ends_with("/chat/completions"))
            .map(|request| request.at)
            .collect();
        arrived.sort();
        assert_eq!(arrived.len(), 3);
        let spread = arrived[2] - arrived[0];
        println!("{slots} slots: the three contestants were asked within {spread:?}");
        if slots == 3 {
            assert!(
                spread < delay / 2,
                "three slots, yet asked {spread:?} apart"
            );
        } else {
            assert!(
                spread >= delay * 2,
                "one at a time, yet asked {spread:?} apart"
            );
        }
    }
}

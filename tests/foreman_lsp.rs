//! The Foreman's desk in the editor, end to end over LSP with the fake
//! model server: five turns through the four modes. The Story Bible's theme
//! is written by an action, a gate refuses and the writer overrides it, a
//! scaffold and a scene are drafted in DIRECTOR as edits, an `apply_edit`
//! revises a scene in EDITOR and an action the mode forbids is refused and
//! quoted back to the model; every reply lands in the desk as an edit and
//! every action has its signed receipt.

use crate::support;
use crate::support::lsp_client;
use crate::support::model_server;

use control_room::foreman::desk::REPLY_END;

use lsp_client::editor::{changed, editor_client, progress};
use lsp_client::{Client, uri};
use model_server::{Answer, FakeModelServer, serve_draft_scene};
use serde_json::{Value, json};

fn ask(client: &mut Client, token: &str, message: Option<&str>) -> Vec<Value> {
    let args = match message {
        Some(message) => json!({"message": message}),
        None => json!({}),
    };
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.askForeman", "arguments": [args], "workDoneToken": token}),
    );
    assert!(answer["turn"].is_number(), "{answer}");
    progress(client, token)
}

fn advance(client: &mut Client, args: Value) -> Value {
    client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.mode.advance", "arguments": [args]}),
    )
}

#[test]
fn five_turns_at_the_desk_take_the_book_through_the_four_modes_by_actions_as_edits() {
    let dir = support::example_copy("foreman-five");
    let root = dir.path().to_path_buf();
    std::fs::remove_file(root.join("Story/Bible/theme.md")).unwrap();
    let gate_scene = root.join("Story/Scenes/SCN-the-gate.md");
    let gate_text = std::fs::read_to_string(&gate_scene).unwrap();
    let sentence = gate_text
        .lines()
        .rev()
        .find(|line| line.len() > 40 && !line.contains('"'))
        .unwrap()
        .to_owned();

    let server = FakeModelServer::start();
    // Later turns carry the earlier ones in their history: their rules come first.
    server.on(
        "M5-thanks",
        vec![Answer::text(
            "<message>Then the book is yours to finish.</message>",
        )],
    );
    server.on(
        "write_template was refused",
        vec![Answer::text(
            "<message>The scene is tighter; the theme stays as it is.</message>",
        )],
    );
    server.on(
        "M4-tighten",
        vec![Answer::text(format!(
            "<message>Tightened.</message><action type=\"apply_edit\"><file>Story/Scenes/SCN-the-gate.md</file><find>{sentence}</find><replace>The gate held, and so did she.</replace></action><action type=\"write_template\"><template>theme</template><content><central_theme>Fear.</central_theme></content></action>"
        ))],
    );
    server.on(
        "M3-draft",
        vec![Answer::text("<message>Drafting the reckoning.</message><action type=\"write_scene\"><scene_id>SCN-the-reckoning</scene_id></action>")],
    );
    server.on(
        "M2-scaffold",
        vec![Answer::text("<message>Here is its scaffold.</message><action type=\"generate_scaffold\"><scene_id>SCN-the-reckoning</scene_id><goal>Ysolde makes Kael answer for the gate.</goal></action>")],
    );
    server.on(
        "M1-theme",
        vec![Answer::text("<message>Written.</message><action type=\"write_template\"><template>theme</template><status>complete</status><content><central_theme>Pride and the price of asking.</central_theme><theme_statement>What we guard alone we lose.</theme_statement></content></action><action type=\"save_decision\"><category>structure</category><key>theme</key><value>Pride and asking</value></action>")],
    );
    serve_draft_scene(&server, "");
    let mut client = editor_client(&root, &server.url, true, None);

    // Turn 1, ARCHITECT: the theme written by an action, as a new file.
    let turn = ask(
        &mut client,
        "ask-1",
        Some("M1-theme: pride, and what asking costs."),
    );
    assert_eq!(
        turn.last().unwrap()["message"],
        "replied: 2 done, 0 refused",
        "{turn:?}"
    );
    let theme = root.join("Story/Bible/theme.md");
    assert!(
        std::fs::read_to_string(&theme)
            .unwrap()
            .contains("What we guard alone we lose.")
    );
    changed(&mut client, &[&theme]);

    // The gates: the Story Bible's is open, the voice's is not, the writer overrides it.
    assert_eq!(
        advance(&mut client, json!({}))["mode"]["mode"],
        "voice_calibration"
    );
    let refused = advance(&mut client, json!({}));
    assert_eq!(refused["moved"], false);
    assert!(
        refused["refused"]
            .as_str()
            .unwrap()
            .contains("gold-standard.md"),
        "{refused}"
    );
    let moved = advance(
        &mut client,
        json!({"skip": true, "because": "the voice is in the scenes already"}),
    );
    assert_eq!(moved["mode"]["mode"], "director", "{moved}");

    // Turns 2 and 3, DIRECTOR: a scaffold, then the scene drafted by its run.
    let turn = ask(&mut client, "ask-2", Some("M2-scaffold the reckoning."));
    assert_eq!(
        turn.last().unwrap()["message"],
        "replied: 1 done, 0 refused",
        "{turn:?}"
    );
    let scaffold = root.join("Story/Scenes/SCN-the-reckoning.scaffold.md");
    assert!(
        std::fs::read_to_string(&scaffold)
            .unwrap()
            .contains("## Goal\n\nYsolde makes Kael answer for the gate.")
    );
    ask(&mut client, "ask-3", Some("M3-draft it."));
    let reckoning = root.join("Story/Scenes/SCN-the-reckoning.md");
    // The run's own progress ends when its draft is delivered (the editor
    // answering its edit on the way).
    let ended = client.wait_for(|message| {
        message["method"] == "$/progress"
            && message["params"]["value"]["kind"] == "end"
            && message["params"]["token"]
                .as_str()
                .is_some_and(|token| !token.starts_with("ask-"))
    });
    let prose = std::fs::read_to_string(&reckoning).unwrap();
    assert!(
        prose.lines().filter(|line| !line.trim().is_empty()).count() > 5,
        "{ended}\n{prose}"
    );
    changed(&mut client, &[&reckoning]);
    let moved = advance(&mut client, json!({}));
    assert_eq!(
        moved["mode"]["mode"], "editor",
        "every scene is drafted: {moved}"
    );

    // Turn 4, EDITOR: apply_edit lands; write_template is refused and quoted back.
    let turn = ask(&mut client, "ask-4", Some("M4-tighten the gate scene."));
    assert_eq!(
        turn.last().unwrap()["message"],
        "replied: 1 done, 1 refused",
        "{turn:?}"
    );
    let revised = std::fs::read_to_string(&gate_scene).unwrap();
    assert_eq!(
        revised,
        gate_text.replace(&sentence, "The gate held, and so did she.")
    );
    let retry = server
        .received()
        .into_iter()
        .find(|request| {
            request
                .body
                .to_string()
                .contains("write_template was refused")
        })
        .expect("the refusal went back to the model");
    assert!(
        retry
            .body
            .to_string()
            .contains("write_template is not allowed in EDITOR mode")
    );

    // Turn 5: the writer types in the desk; "Ask the Foreman" answers it.
    let desk = root.join("Notes/foreman.md");
    let text = std::fs::read_to_string(&desk).unwrap();
    std::fs::write(
        &desk,
        format!("{text}\n## Writer\n\nM5-thanks, that is all.\n"),
    )
    .unwrap();
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri(&desk)}}),
    );
    client.open(&desk, 1);
    let lenses = if lenses.as_array().is_some_and(Vec::is_empty) {
        client.request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri(&desk)}}),
        )
    } else {
        lenses
    };
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|lens| lens["command"]["title"].as_str())
        .collect();
    assert!(titles.contains(&"Ask the Foreman"), "{titles:?}");
    assert!(
        titles.iter().any(|title| title.starts_with("Mode EDITOR")),
        "{titles:?}"
    );
    // The writer closes the desk and asks; the editor applies the reply's
    // edits to the file on disk.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&desk)}}),
    );
    ask(&mut client, "ask-5", None);

    let desk_text = std::fs::read_to_string(&desk).unwrap();
    assert_eq!(desk_text.matches("\n## Writer\n").count(), 5, "{desk_text}");
    assert_eq!(
        desk_text.matches("\n## Foreman\n").count(),
        5,
        "{desk_text}"
    );
    assert!(
        desk_text
            .trim_end()
            .trim_end_matches(REPLY_END)
            .trim_end()
            .ends_with("Then the book is yours to finish."),
        "{desk_text}"
    );

    let receipts =
        std::fs::read_to_string(root.join(".control-room/audit/foreman/receipts.jsonl")).unwrap();
    let summary: Vec<String> = receipts
        .lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            assert!(line["signature"].as_str().is_some_and(|s| !s.is_empty()));
            format!(
                "{} {} {}",
                line["mode"].as_str().unwrap(),
                line["action"].as_str().unwrap(),
                line["status"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            "architect write_template done",
            "architect save_decision done",
            "director generate_scaffold done",
            "director write_scene done",
            "editor apply_edit done",
            "editor write_template refused",
        ]
    );
    let mode = support::read_json(&root.join(".control-room/mode.json"));
    assert_eq!(
        mode["history"][1]["because"],
        "the voice is in the scenes already"
    );
    client.shutdown();
}

#[test]
fn a_request_no_recipe_takes_becomes_the_chiefs_plan_or_a_question_the_editor_answers() {
    let dir = support::example_copy("foreman-chief-lsp");
    let root = dir.path().to_path_buf();
    let server = FakeModelServer::start();
    server.on(
        "LSP-next one",
        vec![Answer::text("{\"intent\": \"clarify\", \"question\": \"Which scene?\", \"choices\": [\"draft scene SCN-the-reckoning\", \"draft scene SCN-the-vigil\"]}")],
    );
    server.on(
        "LSP-finish the book",
        vec![Answer::text("{\"intent\": \"plan\", \"tasks\": [{\"task\": \"draft scene SCN-the-reckoning\"}, {\"task\": \"check continuity of SCN-the-reckoning\", \"depends_on\": [1]}]}")],
    );
    serve_draft_scene(&server, "");
    let mut client = editor_client(
        &root,
        &server.url,
        true,
        Some("draft scene SCN-the-reckoning"),
    );

    // A plan: saved, and its checklist shown.
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runRecipe", "arguments": [{"task": "LSP-finish the book"}], "workDoneToken": "chief-1"}),
    );
    assert_eq!(answer["decomposing"], "LSP-finish the book", "{answer}");
    let ended = progress(&mut client, "chief-1");
    let summary = ended.last().unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(summary.starts_with("a plan of 2 tasks: sp_"), "{summary}");
    let plan_id = summary.rsplit(' ').next().unwrap();
    let shown = lsp_client::editor::requests(&client, "window/showDocument");
    assert!(
        shown.iter().any(|request| request["params"]["uri"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{plan_id}/plan.md"))),
        "{shown:?}"
    );
    let plan = support::read_json(
        &root
            .join(".control-room/sessions")
            .join(plan_id)
            .join("plan.json"),
    );
    assert_eq!(plan["tasks"][1]["recipe_id"], "analytical_consistency");

    // A question: the editor picks a choice, and it runs.
    client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runRecipe", "arguments": [{"task": "LSP-next one"}], "workDoneToken": "chief-2"}),
    );
    let ended = progress(&mut client, "chief-2");
    let summary = ended.last().unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        summary.starts_with("asked “Which scene?”; running “draft scene SCN-the-reckoning” (run_"),
        "{summary}"
    );
    let asked = lsp_client::editor::requests(&client, "window/showMessageRequest");
    assert!(
        asked
            .iter()
            .any(|request| request["params"]["message"] == "Which scene?"),
        "{asked:?}"
    );
    client.wait_for(|message| {
        message["method"] == "$/progress"
            && message["params"]["value"]["kind"] == "end"
            && message["params"]["token"]
                .as_str()
                .is_some_and(|token| token.starts_with("control-room/run/"))
    });
    let reckoning =
        std::fs::read_to_string(root.join("Story/Scenes/SCN-the-reckoning.md")).unwrap();
    assert!(
        reckoning
            .lines()
            .filter(|line| !line.trim().is_empty())
            .count()
            > 5,
        "{reckoning}"
    );
    client.shutdown();
}

#[test]
fn a_desk_ending_in_blank_lines_gets_the_new_turn_once_not_the_whole_desk_again() {
    let dir = support::example_copy("foreman-blank-lines");
    let root = dir.path().to_path_buf();
    let desk = root.join("Notes/foreman.md");
    std::fs::create_dir_all(desk.parent().unwrap()).unwrap();
    std::fs::write(
        &desk,
        "# The Foreman\n\n## Writer\n\nEarlier.\n\n## Foreman\n\nAn earlier reply.\n\n\n\n",
    )
    .unwrap();
    let server = FakeModelServer::start();
    server.on("M-again", vec![Answer::text("<message>Again.</message>")]);
    let mut client = editor_client(&root, &server.url, true, None);
    ask(&mut client, "ask-blank", Some("M-again"));
    let text = std::fs::read_to_string(&desk).unwrap();
    assert_eq!(text.matches("# The Foreman\n").count(), 1, "{text}");
    assert_eq!(text.matches("An earlier reply.").count(), 1, "{text}");
    assert!(
        text.contains("## Writer\n\nM-again\n\n## Foreman\n\nAgain.\n"),
        "{text}"
    );
    client.shutdown();
}

#[test]
fn the_foremans_reply_streams_into_the_open_desk_and_becomes_the_reply_at_its_end() {
    use std::sync::{Arc, Mutex};
    let dir = support::example_copy("foreman-stream");
    let root = dir.path().canonicalize().unwrap();
    let desk = root.join("Notes/foreman.md");
    std::fs::create_dir_all(desk.parent().unwrap()).unwrap();
    let before = "# The Foreman\n\n## Writer\n\nS1-stream: what now?\n";
    std::fs::write(&desk, before).unwrap();
    let words: Vec<String> = (1..=40).map(|n| format!("word{n}")).collect();
    let message = words.join(" ");
    let server = FakeModelServer::start();
    server.on(
        "S1-stream",
        vec![Answer::Paced(
            format!("<thinking>secret plans</thinking><message>{message}</message>"),
            std::time::Duration::from_millis(25),
        )],
    );
    let mut client = editor_client(&root, &server.url, true, None);
    client.open(&desk, 1);
    let buffer = Arc::new(Mutex::new(lsp_client::editor::OpenBuffer {
        uri: uri(&desk),
        text: before.to_owned(),
        version: 1,
        edited_at: Vec::new(),
        refused: 0,
        texts: Vec::new(),
    }));
    client.responder = Some(lsp_client::editor::editor_with_open(
        buffer.clone(),
        client.outbox.clone(),
    ));
    let turn = ask(&mut client, "stream", None);
    assert_eq!(
        turn.last().unwrap()["message"],
        "replied: 0 done, 0 refused",
        "{turn:?}"
    );
    let buffer = buffer.lock().unwrap();
    // The block, then the reply as it grew, then the reply in its place.
    let partial: Vec<&String> = buffer
        .texts
        .iter()
        .filter(|text| text.contains("word1 ") && !text.contains("word40"))
        .collect();
    assert!(
        !partial.is_empty(),
        "no edit showed the reply half written: {:?}",
        buffer.texts
    );
    assert!(
        partial
            .iter()
            .all(|text| text.contains("<!-- the Foreman is writing… -->")),
        "{partial:?}"
    );
    assert!(
        buffer
            .texts
            .iter()
            .all(|text| !text.contains("secret plans")),
        "the reasoning never reaches the desk"
    );
    assert_eq!(
        buffer.text,
        format!("{before}\n## Foreman\n\n{message}\n\n{REPLY_END}\n"),
        "the block became the reply"
    );
    // Every edit was made at the buffer's version.
    assert_eq!(buffer.refused, 0, "{:?}", buffer.edited_at);
}

/// The Foreman proposes a move; the editor asks the writer, and only their
/// yes moves the project, which the mode file and the action's receipt
/// record. Without it, nothing moves.
#[test]
fn a_foreman_turn_proposes_a_move_that_moves_the_mode_only_when_the_writer_confirms_it() {
    for (choice, moved) in [(Some("Move to VOICE_CALIBRATION"), true), (None, false)] {
        let dir = support::example_copy("foreman-move");
        let root = dir.path().to_path_buf();
        let server = FakeModelServer::start();
        server.on(
            "M-move-on",
            vec![Answer::text(
                "<message>Your Story Bible is complete; the voice comes next.</message><action type=\"advance_mode\"><to>voice_calibration</to></action>",
            )],
        );
        let mut client = editor_client(&root, &server.url, true, choice);
        ask(&mut client, "ask-move", Some("M-move-on"));
        let said = client.wait_for(|m| {
            m["method"] == "window/showMessage"
                && m["params"]["message"]
                    .as_str()
                    .is_some_and(|text| text.contains("moved to") || text.contains("stayed in"))
        });
        let asked = lsp_client::editor::requests(&client, "window/showMessageRequest");
        assert!(
            asked.iter().any(|request| request["params"]["message"]
                == "The Foreman proposes moving the project from ARCHITECT to VOICE_CALIBRATION."),
            "{asked:?}"
        );
        let mode_file = root.join(".control-room/mode.json");
        let mode = if mode_file.exists() {
            support::read_json(&mode_file)
        } else {
            json!({"mode": "architect"})
        };
        let receipts =
            std::fs::read_to_string(root.join(".control-room/audit/foreman/receipts.jsonl"))
                .unwrap();
        let receipt: Value = serde_json::from_str(receipts.lines().last().unwrap()).unwrap();
        assert_eq!(receipt["action"], "advance_mode", "{receipt}");
        assert_eq!(receipt["status"], "done", "{receipt}");
        let desk = std::fs::read_to_string(root.join("Notes/foreman.md")).unwrap();
        assert!(
            desk.contains("- Done: proposed moving the project to VOICE_CALIBRATION; it moves when you confirm"),
            "{desk}"
        );
        if moved {
            assert_eq!(
                said["params"]["message"], "control-room: moved to VOICE_CALIBRATION.",
                "{said}"
            );
            assert_eq!(mode["mode"], "voice_calibration", "{mode}");
            assert_eq!(mode["history"][0]["from"], "architect", "{mode}");
        } else {
            assert_eq!(
                said["params"]["message"], "control-room: stayed in ARCHITECT.",
                "{said}"
            );
            assert_ne!(mode["mode"], "voice_calibration", "{mode}");
        }
        client.shutdown();
    }
}

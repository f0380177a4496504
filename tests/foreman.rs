//! The project's modes and their gates from the command line, on copies of
//! the bundled example: the Story Bible opens the ARCHITECT gate; a shut gate
//! refuses with what it lacks and the risk; the writer's say-so passes it and
//! is recorded; going back is free; in EDITOR, advancing marks the manuscript
//! complete; and the session state of a prompt shows the project's mode.
//! In the editor, the same through `controlRoom.mode` and
//! `controlRoom.mode.advance`, and a code lens on the Story Bible.

mod lsp_support;
mod support;

use std::fs;

use serde_json::json;

use support::{control_room, example_copy, output_text, read_json};

#[test]
fn a_shut_gate_refuses_until_the_writer_skips_it_with_a_reason_and_the_skip_is_recorded() {
    let dir = example_copy("foreman-gates");
    let root = dir.path();

    let shown = control_room(root, &["mode", "--json"]);
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["mode"], "architect");
    assert_eq!(
        shown["gate"]["met"], true,
        "the example's Story Bible is complete"
    );

    // The Story Bible's theme loses its statement: the gate shuts.
    let theme = root.join("Story/Bible/theme.md");
    let text = fs::read_to_string(&theme).unwrap();
    let statement =
        "What we guard alone we lose; what we let others share the weight of can be held.";
    fs::write(&theme, text.replace(statement, "TBD")).unwrap();
    let refused = control_room(root, &["mode", "advance"]);
    assert_eq!(refused.status.code(), Some(1), "{}", output_text(&refused));
    let said = output_text(&refused);
    assert!(said.contains("the gate out of ARCHITECT is shut"), "{said}");
    assert!(
        said.contains("Theme is complete; missing Theme Statement"),
        "{said}"
    );
    assert!(
        said.contains("the risk: drafting without a complete Story Bible"),
        "{said}"
    );
    assert!(!root.join(".control-room/mode.json").exists());

    // --skip needs a reason.
    let no_reason = control_room(root, &["mode", "advance", "--skip"]);
    assert_eq!(
        no_reason.status.code(),
        Some(2),
        "{}",
        output_text(&no_reason)
    );

    let skipped = control_room(
        root,
        &[
            "mode",
            "advance",
            "--skip",
            "--because",
            "the theme will come in the draft",
        ],
    );
    assert_eq!(skipped.status.code(), Some(0), "{}", output_text(&skipped));
    let state = read_json(&root.join(".control-room/mode.json"));
    assert_eq!(state["version"], 1);
    assert_eq!(state["mode"], "voice_calibration");
    let moved = &state["history"][0];
    assert_eq!(moved["skipped"], true);
    assert_eq!(moved["because"], "the theme will come in the draft");
    assert_eq!(
        moved["unmet"][0],
        "Theme is complete; missing Theme Statement"
    );
    assert!(
        moved["risk"]
            .as_str()
            .unwrap()
            .starts_with("drafting without a complete Story Bible")
    );

    // The voice bundle is not there: DIRECTOR is refused, naming its files.
    let refused = control_room(root, &["mode", "set", "director"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(output_text(&refused).contains("no Compendium/Voice/gold-standard.md"));

    // Back is free.
    let back = control_room(root, &["mode", "set", "architect"]);
    assert_eq!(back.status.code(), Some(0), "{}", output_text(&back));
    assert_eq!(
        read_json(&root.join(".control-room/mode.json"))["mode"],
        "architect"
    );
}

#[test]
fn a_locked_voice_bundle_and_a_drafted_outline_open_their_gates_and_editor_ends_with_the_writers_mark()
 {
    let dir = example_copy("foreman-editor");
    let root = dir.path();
    fs::write(
        root.join("Compendium/Voice/gold-standard.md"),
        "---\nlocked: true\n---\n# Gold standard\n\nThe sea came with it.\n",
    )
    .unwrap();
    fs::write(
        root.join("Compendium/Voice/phase-evolution.md"),
        "# Phase evolution\n\nTighter as the tide rises.\n",
    )
    .unwrap();
    let advanced = control_room(root, &["mode", "set", "director"]);
    assert_eq!(
        advanced.status.code(),
        Some(0),
        "{}",
        output_text(&advanced)
    );

    // The example's last scene has no prose yet.
    let refused = control_room(root, &["mode", "advance"]);
    assert!(output_text(&refused).contains("1 of 7 outline scenes not drafted: SCN-the-reckoning"));
    fs::write(
        root.join("Story/Scenes/SCN-the-reckoning.md"),
        "---\ntitle: The Reckoning\n---\nYsolde opened the gate herself.\n",
    )
    .unwrap();
    let advanced = control_room(root, &["mode", "advance"]);
    assert_eq!(
        advanced.status.code(),
        Some(0),
        "{}",
        output_text(&advanced)
    );
    let done = control_room(root, &["mode", "advance"]);
    assert!(output_text(&done).contains("The manuscript is marked complete."));
    let state = read_json(&root.join(".control-room/mode.json"));
    assert_eq!(state["mode"], "editor");
    assert!(state["completed_at"].is_string());
    let again = control_room(root, &["mode", "advance"]);
    assert_ne!(again.status.code(), Some(0));
    assert!(output_text(&again).contains("EDITOR is the last mode"));
    // No move was a skip.
    assert!(
        state["history"]
            .as_array()
            .unwrap()
            .iter()
            .all(|moved| moved["skipped"] == false)
    );
}

#[test]
fn the_session_state_of_a_prompt_carries_the_projects_mode_and_the_work_order() {
    let dir = example_copy("foreman-state");
    let root = dir.path();
    let theme = root.join("Story/Bible/theme.md");
    let text = fs::read_to_string(&theme).unwrap();
    fs::write(
        &theme,
        text.replace("status: complete", "status: in_progress"),
    )
    .unwrap();
    let prompt = control_room(
        root,
        &[
            "prompt",
            "creative_draft_scene",
            "brief",
            "--arg",
            "scene_id=SCN-the-gate",
            "--tier",
            "full",
        ],
    );
    let said = output_text(&prompt);
    assert!(
        said.contains("<current_mode>ARCHITECT</current_mode>"),
        "{said}"
    );
    assert!(
        said.contains("<completion_pct>75</completion_pct>"),
        "{said}"
    );
    assert!(
        said.contains("<template name=\"Theme\" status=\"in_progress\"/>"),
        "{said}"
    );

    // A drafting step works in DIRECTOR and names the project's mode beside it.
    let prompt = control_room(
        root,
        &[
            "prompt",
            "creative_draft_scene",
            "draft",
            "--arg",
            "scene_id=SCN-the-gate",
            "--tier",
            "full",
        ],
    );
    let said = output_text(&prompt);
    assert!(
        said.contains(
            "<current_mode>DIRECTOR</current_mode>\n  <project_mode>ARCHITECT</project_mode>"
        ),
        "{said}"
    );
    assert!(
        said.contains("<work_order summary=\"Story Bible: 3 of 4 templates complete\"/>"),
        "{said}"
    );
}

#[test]
fn the_editor_shows_the_mode_on_the_story_bible_and_advances_it_through_its_gate() {
    let dir = example_copy("foreman-lsp");
    let root = dir.path().to_path_buf();
    let theme = root.join("Story/Bible/theme.md");
    let text = fs::read_to_string(&theme).unwrap();
    fs::write(&theme, text.replace("status: complete", "status: draft")).unwrap();
    let mut client = lsp_support::Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let commands = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.mode", "arguments": []}),
    );
    assert_eq!(commands["mode"], "architect", "{commands}");
    assert_eq!(commands["gate"]["percent"], 75);

    client.open(&theme, 1);
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": lsp_support::uri(&theme)}}),
    );
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|lens| lens["command"]["title"].as_str())
        .collect();
    assert!(
        titles.contains(
            &"Mode ARCHITECT · gate to VOICE_CALIBRATION (the Story Bible complete) shut, 75%"
        ),
        "{titles:?}"
    );
    assert!(
        !titles.iter().any(|title| title.starts_with("Advance")),
        "{titles:?}"
    );

    let refused = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.mode.advance", "arguments": [{}]}),
    );
    assert_eq!(refused["moved"], false, "{refused}");
    assert!(
        refused["refused"]
            .as_str()
            .unwrap()
            .contains("Theme is draft"),
        "{refused}"
    );
    let moved = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.mode.advance", "arguments": [{"skip": true, "because": "the theme is close enough"}]}),
    );
    assert_eq!(moved["moved"], true, "{moved}");
    assert_eq!(moved["mode"]["mode"], "voice_calibration");
    assert_eq!(
        read_json(&root.join(".control-room/mode.json"))["history"][0]["because"],
        "the theme is close enough"
    );
    client.shutdown();
}

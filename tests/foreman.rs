//! The project's modes and their gates from the command line, on copies of
//! the bundled example: the Story Bible opens the ARCHITECT gate; a shut gate
//! refuses with what it lacks and the risk; the writer's say-so passes it and
//! is recorded; going back is free; in EDITOR, advancing marks the manuscript
//! complete; and the session state of a prompt shows the project's mode.
//! In the editor, the same through `controlRoom.mode` and
//! `controlRoom.mode.advance`, and a code lens on the Story Bible.

use crate::support;
use crate::support::lsp_client;

use std::fs;

use control_room::foreman::desk::REPLY_END;
use std::path::Path;

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
    let mut client = lsp_client::Client::spawn(&[]);
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
        json!({"textDocument": {"uri": lsp_client::uri(&theme)}}),
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

#[test]
fn a_conversation_at_the_desk_writes_the_story_bible_by_actions_refuses_what_the_mode_forbids_and_signs_every_action()
 {
    let dir = example_copy("foreman-desk");
    let root = dir.path();
    fs::remove_file(root.join("Story/Bible/theme.md")).unwrap();
    let script = root.join("script.json");
    let replies = json!({
        "turn-1": "<thinking>The theme is missing.</thinking><message>Your theme, as you said it.</message>\n<action type=\"write_template\"><template>theme</template><status>complete</status><content><central_theme>Pride and the price of asking.</central_theme><theme_statement>What we guard alone we lose.</theme_statement></content></action>\n<action type=\"save_decision\"><category>structure</category><key>theme</key><value>Pride and asking</value></action>\n<action type=\"write_scene\"><scene_id>SCN-the-reckoning</scene_id></action>",
        "turn-1.retry-1": "<message>The theme is written; drafting waits for DIRECTOR.</message>",
        "turn-2": "<message>Then we calibrate the voice next.</message><action type=\"update_status\"><template>theme</template><status>finished</status></action>",
        "turn-2.retry-1": "<message>The theme stays complete.</message>",
    });
    fs::write(&script, replies.to_string()).unwrap();
    let model = format!("scripted:{}", script.display());

    let asked = control_room(
        root,
        &[
            "ask",
            "Write down the theme: pride, and what asking costs.",
            "--model",
            &model,
        ],
    );
    let said = output_text(&asked);
    assert_eq!(asked.status.code(), Some(0), "{said}");
    assert!(said.contains("wrote Story/Bible/theme.md"), "{said}");
    assert!(
        said.contains(
            "refused: write_scene: write_scene is not allowed in ARCHITECT mode (only in DIRECTOR)"
        ),
        "{said}"
    );
    let theme = fs::read_to_string(root.join("Story/Bible/theme.md")).unwrap();
    assert!(
        theme.contains("status: complete")
            && theme.contains("## Theme Statement\n\nWhat we guard alone we lose."),
        "{theme}"
    );
    let decisions = fs::read_to_string(root.join(".control-room/kb/decisions.jsonl")).unwrap();
    assert!(decisions.contains("\"key\":\"theme\""), "{decisions}");

    // The writer's second message, written in the desk itself.
    let desk_path = root.join("Notes/foreman.md");
    let desk = fs::read_to_string(&desk_path).unwrap();
    assert!(desk.contains("## Writer\n\nWrite down the theme"), "{desk}");
    assert!(desk.contains("## Foreman\n\nThe theme is written; drafting waits for DIRECTOR.\n\n- Done: wrote central_theme, theme_statement of the Theme"), "{desk}");
    assert!(
        desk.contains("- Refused: write_scene: write_scene is not allowed in ARCHITECT mode"),
        "{desk}"
    );
    assert!(
        !desk.contains("The theme is missing"),
        "thinking never reaches the desk"
    );
    fs::write(&desk_path, desk + "\n## Writer\n\nWhat next?\n").unwrap();
    let asked = control_room(root, &["ask", "--model", &model]);
    assert_eq!(asked.status.code(), Some(0), "{}", output_text(&asked));
    let desk = fs::read_to_string(&desk_path).unwrap();
    assert!(desk.trim_end().ends_with(&format!("- Refused: update_status: the update_status action's parameters break its schema: at /status: \"finished\" is not one of not_started, in_progress, draft, draft_ready, complete\n\n{REPLY_END}")), "{desk}");

    // Every action has its signed receipt.
    let receipts =
        fs::read_to_string(root.join(".control-room/audit/foreman/receipts.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = receipts
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let summary: Vec<(String, String)> = lines
        .iter()
        .map(|line| {
            (
                line["action"].as_str().unwrap().to_owned(),
                line["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("write_template".to_owned(), "done".to_owned()),
            ("save_decision".to_owned(), "done".to_owned()),
            ("write_scene".to_owned(), "refused".to_owned()),
            ("update_status".to_owned(), "refused".to_owned()),
        ]
    );
    assert!(
        lines
            .iter()
            .all(|line| line["signature"].as_str().is_some_and(|s| s.len() > 20))
    );
    assert_eq!(lines[0]["files"][0]["path"], "Story/Bible/theme.md");
    assert!(lines[0]["files"][0]["before"].is_null());
}

#[test]
fn a_request_no_recipe_takes_becomes_the_chiefs_plan_or_a_numbered_question_on_the_command_line() {
    let dir = example_copy("foreman-chief");
    let root = dir.path();
    let drafts: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples/scripted/draft-the-reckoning.json"),
        )
        .unwrap(),
    )
    .unwrap();
    // A plan whose second task no recipe takes is sent back, then fixed.
    let mut script = drafts.as_object().unwrap().clone();
    script.insert("decompose".into(), json!("{\"intent\": \"plan\", \"tasks\": [{\"task\": \"draft scene SCN-the-reckoning\"}, {\"task\": \"celebrate\", \"depends_on\": [1]}]}"));
    script.insert("decompose.retry-1".into(), json!("{\"intent\": \"plan\", \"tasks\": [{\"task\": \"draft scene SCN-the-reckoning\", \"dod\": \"the reckoning is drafted\"}, {\"task\": \"check continuity of SCN-the-reckoning\", \"depends_on\": [1]}]}"));
    let plan_script = root.join("plan.json");
    fs::write(
        &plan_script,
        serde_json::Value::Object(script.clone()).to_string(),
    )
    .unwrap();
    let output = control_room(
        root,
        &[
            "run",
            "finish the book",
            "--model",
            &format!("scripted:{}", plan_script.display()),
        ],
    );
    let said = output_text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let plan_id = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let plan = read_json(
        &root
            .join(".control-room/sessions")
            .join(&plan_id)
            .join("plan.json"),
    );
    assert_eq!(plan["created_by"], "chief");
    assert_eq!(plan["tasks"][0]["recipe_id"], "creative_draft_scene");
    assert_eq!(plan["tasks"][0]["dod"], "the reckoning is drafted");
    assert_eq!(plan["tasks"][1]["recipe_id"], "analytical_consistency");
    assert_eq!(plan["tasks"][1]["deps"], json!([1]));
    assert!(
        said.contains("run it with: control-room plan run"),
        "{said}"
    );

    // A question, numbered; the writer's choice runs in its place.
    script.insert("decompose".into(), json!("{\"intent\": \"clarify\", \"question\": \"Which scene do you mean?\", \"choices\": [\"draft scene SCN-the-reckoning\", \"draft scene SCN-the-vigil\"]}"));
    let ask_script = root.join("ask.json");
    fs::write(&ask_script, serde_json::Value::Object(script).to_string()).unwrap();
    let unanswered = control_room(
        root,
        &[
            "run",
            "do the next one",
            "--model",
            &format!("scripted:{}", ask_script.display()),
        ],
    );
    let said = output_text(&unanswered);
    assert_eq!(unanswered.status.code(), Some(1), "{said}");
    assert!(said.contains("Which scene do you mean?\n  1. draft scene SCN-the-reckoning\n  2. draft scene SCN-the-vigil"), "{said}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args([
            "run",
            "do the next one",
            "--model",
            &format!("scripted:{}", ask_script.display()),
            "--dir",
        ])
        .arg(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"1\n").unwrap();
    let answered = child.wait_with_output().unwrap();
    let said = output_text(&answered);
    assert_eq!(answered.status.code(), Some(0), "{said}");
    assert!(
        said.contains("running: draft scene SCN-the-reckoning"),
        "{said}"
    );
    let reckoning = fs::read_to_string(root.join("Story/Scenes/SCN-the-reckoning.md")).unwrap();
    assert!(
        reckoning
            .lines()
            .filter(|line| !line.trim().is_empty())
            .count()
            > 5,
        "{reckoning}"
    );
}

#[test]
fn a_foreman_reply_that_writes_prose_or_claims_a_move_is_sent_back_as_a_system_message_and_refused_when_it_persists()
 {
    let dir = example_copy("foreman-contract");
    let root = dir.path();
    let paragraph = "The rain had not stopped since the ferry left the harbour, and Iria stood at the rail with her collar up, counting the lights of the coast as they went out one by one behind the swell.";
    let scene = format!(
        "{paragraph}\n\n“Cold,” said Kael, and he did not look at her.\n\n{paragraph}\n\n{paragraph}\n\n{paragraph}\n\n{paragraph}"
    );
    let script = root.join("script.json");
    let replies = json!({
        // Claims a move nothing made; then prose for a file; then a scene
        // as its message: refused.
        "turn-1": "<message>Your Story Bible is done. Moving you to DIRECTOR now.</message>",
        "turn-1.retry-1": "<message>Here is the scene.</message><content_update target=\"Story/Scenes/SCN-the-gate.md\">She ran.</content_update>",
        "turn-1.retry-2": format!("<message>{scene}</message>"),
        // Broken once, then kept.
        "turn-2": "<message>You're now in EDITOR mode.</message>",
        "turn-2.retry-1": "<message>The gate to VOICE_CALIBRATION is shut: the theme is still a draft.</message>",
    });
    fs::write(&script, replies.to_string()).unwrap();
    let model = format!("scripted:{}", script.display());
    let cassette = root.join("exchanges.jsonl");
    let gate = fs::read_to_string(root.join("Story/Scenes/SCN-the-gate.md")).unwrap();

    let asked = control_room(
        root,
        &[
            "ask",
            "Just write the gate scene for me.",
            "--model",
            &model,
            "--record",
            &cassette.display().to_string(),
        ],
    );
    assert_eq!(asked.status.code(), Some(0), "{}", output_text(&asked));
    let desk = fs::read_to_string(root.join("Notes/foreman.md")).unwrap();
    assert!(
        desk.contains("(The Foreman's reply was refused: the message is a scene's prose"),
        "{desk}"
    );
    assert!(
        !desk.contains("Moving you to DIRECTOR") && !desk.contains("counting the lights"),
        "{desk}"
    );
    assert_eq!(
        fs::read_to_string(root.join("Story/Scenes/SCN-the-gate.md")).unwrap(),
        gate,
        "nothing written"
    );
    let mode = control_room(root, &["mode", "--json"]);
    assert!(
        output_text(&mode).contains("\"architect\""),
        "{}",
        output_text(&mode)
    );

    // The retries were told why by the system, never as the writer's words.
    let exchanges: Vec<serde_json::Value> = fs::read_to_string(&cassette)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(exchanges.len(), 3);
    let messages = exchanges[2]["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "system",
            "assistant",
            "system"
        ],
        "{messages:#?}"
    );
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .ends_with("Just write the gate scene for me.")
    );
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("the message says the project moved to DIRECTOR, but nothing moved it"),
        "{:#}",
        messages[3]
    );
    assert!(
        messages[5]["content"]
            .as_str()
            .unwrap()
            .contains("a <content_update>"),
        "{:#}",
        messages[5]
    );
    assert!(messages.iter().all(|m| {
        !m["content"]
            .as_str()
            .unwrap()
            .contains("The writer says:\nWhat your")
    }));

    // A reply broken once and then kept reaches the desk as kept.
    let asked = control_room(root, &["ask", "Can we move on?", "--model", &model]);
    assert_eq!(asked.status.code(), Some(0), "{}", output_text(&asked));
    let desk = fs::read_to_string(root.join("Notes/foreman.md")).unwrap();
    assert!(
        desk.contains(
            "## Foreman\n\nThe gate to VOICE_CALIBRATION is shut: the theme is still a draft."
        ),
        "{desk}"
    );
    assert!(!desk.contains("now in EDITOR"), "{desk}");
}

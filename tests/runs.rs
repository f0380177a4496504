//! Recipe runs started from the editor, end to end: the real binary over
//! stdio, agents answered over real HTTP by the fake model server, results
//! arriving as workspace edits this client applies to real files.

use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;
use std::time::Duration;

use lsp_client::editor::{
    capabilities, code_actions, configure, editor, editor_client, offset_of, progress, requests,
    text_at,
};
use lsp_client::{Client, example_copy, position_of, uri};
use model_server::{
    Answer, FakeModelServer, finding_step, scripted_reply, serve_draft_scene, step_marker,
};
use serde_json::{Value, json};

fn execute(client: &mut Client, arguments: Value) -> Value {
    client.request_raw(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runRecipe", "arguments": [arguments]}),
    )
}

/// Waits for the run's progress to say `message`.
fn wait_for_report(client: &mut Client, token: &str, message: &str) {
    client.wait_for(|m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == token
            && m["params"]["value"]["message"] == message
    });
}

fn run_token(run_id: &str) -> String {
    format!("control-room/run/{run_id}")
}

fn agent_findings(diagnostics: &[Value]) -> Vec<&Value> {
    diagnostics
        .iter()
        .filter(|d| d["code"] == "agent-finding")
        .collect()
}

fn run_file(root: &Path, run_id: &str, name: &str) -> String {
    std::fs::read_to_string(root.join(format!(".control-room/runs/{run_id}/{name}"))).unwrap()
}

fn status_of(root: &Path, run_id: &str) -> String {
    let manifest: Value = serde_json::from_str(&run_file(root, run_id, "run.json")).unwrap();
    manifest["status"].as_str().unwrap().to_owned()
}

#[test]
fn draft_scene_from_the_outline_arrives_as_an_edit_with_its_findings_as_diagnostics() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    let mut client = editor_client(&root, &server.url, true, None);

    // The outline offers "Draft scene" as the missing scene's quick fix.
    let outline = root.join("Story/SCN-outline.md");
    let outline_text = client.open(&outline, 1);
    let at = position_of(&outline_text, "SCN-the-reckoning", 0);
    let actions = code_actions(&mut client, &outline, json!({"start": at, "end": at}));
    let draft = actions
        .iter()
        .find(|action| action["title"] == "Draft scene SCN-the-reckoning")
        .unwrap_or_else(|| panic!("no Draft scene action: {actions:#?}"))
        .clone();
    assert_eq!(draft["kind"], "quickfix");
    assert_eq!(draft["diagnostics"][0]["code"], "missing-scene");
    assert!(
        draft.get("edit").is_none(),
        "the action starts a run, it does not block on one"
    );
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri(&outline)}}),
    );
    let lens = lenses
        .as_array()
        .unwrap()
        .iter()
        .find(|lens| lens["command"]["title"] == "Draft scene")
        .expect("a Draft scene lens above the entry");
    assert_eq!(lens["range"]["start"], at);

    // Executing it answers the run id at once; the run goes on.
    let command = &draft["command"];
    let reply = client.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    let run_id = reply["run_id"].as_str().unwrap().to_owned();
    let values = progress(&mut client, &run_token(&run_id));
    assert_eq!(values[0]["kind"], "begin");
    assert_eq!(
        values[0]["title"],
        "Draft a scene from outline: SCN-the-reckoning"
    );
    assert_eq!(values[0]["cancellable"], true);
    let every: Vec<&str> = values
        .iter()
        .filter(|value| value["kind"] == "report")
        .filter_map(|value| value["message"].as_str())
        .collect();
    // Each agent's reply shows as the model streams it, word by word.
    let writing: Vec<&str> = every
        .iter()
        .copied()
        .filter(|message| message.contains(" words … "))
        .collect();
    assert!(
        writing
            .iter()
            .any(|message| message.starts_with("[5/8] draft: ")),
        "{writing:#?}"
    );
    let reports: Vec<&str> = every
        .into_iter()
        .filter(|message| !message.contains(" words … "))
        .collect();
    assert_eq!(
        reports,
        [
            "[1/8] discover (file_locator)",
            "[2/8] analyze_outline (outline_analyzer)",
            "[3/8] check_canon (canon_checker)",
            "[4/8] brief (planner)",
            "[5/8] draft (writer)",
            "[6/8] polish (editor)",
            "[7/8] continuity (continuity)",
            "[8/8] critique (critic)",
            "checking the Definition of Done",
        ]
    );
    let end = values.last().unwrap();
    assert_eq!(end["kind"], "end");
    assert_eq!(
        end["message"],
        "done: Story/Scenes/SCN-the-reckoning.md, 2 findings"
    );

    // The new scene came as CreateFile + an edit carrying the polished draft.
    let scene = root.join("Story/Scenes/SCN-the-reckoning.md");
    let applied = requests(&client, "workspace/applyEdit");
    assert_eq!(applied.len(), 1);
    let changes = &applied[0]["params"]["edit"]["documentChanges"];
    assert_eq!(changes[0]["kind"], "create");
    assert_eq!(changes[0]["uri"], uri(&scene));
    assert_eq!(changes[0]["options"]["overwrite"], false);
    assert_eq!(changes[1]["textDocument"]["version"], Value::Null);
    let new_text = changes[1]["edits"][0]["newText"].as_str().unwrap();
    assert!(
        new_text.starts_with(
            "---\nid: SCN-the-reckoning\ntitle: The Reckoning\npov: Kael Maren\nlocation: The Salt Fortress\ncharacters: [Kael Maren, Ysolde Harrow, Iria Vell]\n"
        ),
        "{new_text}"
    );
    let polished = scripted_reply("polish");
    assert!(
        new_text.ends_with(&format!("---\n\n{}\n", polished)),
        "{new_text}"
    );
    assert_eq!(std::fs::read_to_string(&scene).unwrap(), new_text);
    // The new scene is shown once it is there, without taking the focus.
    let shown = client.wait_for(|m| m["method"] == "window/showDocument");
    assert_eq!(shown["params"]["uri"], uri(&scene));
    assert_eq!(shown["params"]["takeFocus"], false);

    // The continuity and critic findings, where their quotes are.
    let scene_uri = uri(&scene);
    let text = client.open(&scene, 1);
    let published = client.diagnostics_for(&scene_uri, |d| agent_findings(d).len() == 2);
    let findings: Vec<Value> = agent_findings(published["diagnostics"].as_array().unwrap())
        .into_iter()
        .cloned()
        .collect();
    let quotes: Vec<String> = findings
        .iter()
        .map(|f| text_at(&text, &f["range"]))
        .collect();
    assert_eq!(
        quotes,
        [
            "the keys on their cord around her neck",
            "Iria spoke first, and badly."
        ]
    );
    assert_eq!(findings[0]["severity"], 3);
    assert!(
        findings[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("Critique: The reader never hears what Iria says"),
        "{}",
        findings[1]["message"]
    );
    let steps: Vec<Value> = run_file(&root, &run_id, "steps.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for (finding, step) in findings.iter().zip(["continuity", "critique"]) {
        assert_eq!(finding["data"]["run_id"], run_id.as_str());
        let receipt = &steps.iter().find(|s| s["step_id"] == step).unwrap()["receipt_id"];
        assert_eq!(
            &finding["data"]["receipt_id"], receipt,
            "the receipt of step {step}"
        );
    }
    let report = root.join(format!(".control-room/runs/{run_id}/report.md"));
    let related = &findings[0]["relatedInformation"][0]["location"];
    assert_eq!(related["uri"], uri(&report));
    let report_text = std::fs::read_to_string(&report).unwrap();
    let line = related["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(
        report_text
            .lines()
            .nth(line)
            .unwrap()
            .contains("“the keys on their cord around her neck”"),
        "{report_text}"
    );
    assert!(report_text.contains("- Result: [Story/Scenes/SCN-the-reckoning.md]"));
    assert!(report_text.contains("## Scene brief (step `brief`, planner)"));

    // When the text moves the finding moves; when it goes the finding goes.
    let body_start = text.find("# The Reckoning").unwrap();
    let before = position_of(&text, "# The Reckoning", 0);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 2}, "contentChanges": [
            {"range": {"start": before, "end": before}, "text": "A cold wind.\n\n"}]}),
    );
    let mut text = text.clone();
    text.insert_str(body_start, "A cold wind.\n\n");
    let moved = client.diagnostics_for(&scene_uri, |d| {
        agent_findings(d).len() == 2
            && agent_findings(d)[0]["range"]["start"]["line"]
                == findings[0]["range"]["start"]["line"].as_u64().unwrap() + 2
    });
    assert_eq!(moved["version"], 2);
    let keys = position_of(&text, "on their cord around her neck", 0);
    let keys_end = position_of(&text, " around her neck.", 0);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 3}, "contentChanges": [
            {"range": {"start": keys, "end": keys_end}, "text": "at her belt"}]}),
    );
    let gone = client.diagnostics_for(&scene_uri, |d| agent_findings(d).len() == 1);
    let left = agent_findings(gone["diagnostics"].as_array().unwrap())[0].clone();
    assert!(left["message"].as_str().unwrap().starts_with("Critique:"));

    // Dismissed, and it stays dismissed.
    let actions = code_actions(&mut client, &scene, left["range"].clone());
    let dismiss = actions
        .iter()
        .find(|action| action["title"] == "Dismiss this finding")
        .unwrap()
        .clone();
    let mark = client.seen.len();
    client.request(
        "workspace/executeCommand",
        json!({"command": dismiss["command"]["command"], "arguments": dismiss["command"]["arguments"]}),
    );
    // The server publishes before it answers, so look at what came meanwhile.
    client.diagnostics_since(mark, &scene_uri, |d| agent_findings(d).is_empty());
    let dismissed =
        std::fs::read_to_string(root.join(".control-room/findings/dismissed.jsonl")).unwrap();
    assert!(
        dismissed.contains(&format!("\"finding_id\":\"{run_id}:critique:2\"")),
        "{dismissed}"
    );
    client.shutdown();

    // After a restart the findings come back from the run's files; the
    // dismissed one does not.
    let mut client = Client::spawn(&[]);
    client.initialize(&root, capabilities());
    client.wait_for_index();
    let text = client.open(&scene, 1);
    let published = client.diagnostics_for(&scene_uri, |d| !agent_findings(d).is_empty());
    let back = agent_findings(published["diagnostics"].as_array().unwrap());
    assert_eq!(back.len(), 1);
    assert_eq!(
        text_at(&text, &back[0]["range"]),
        "the keys on their cord around her neck"
    );
    client.shutdown();
}

#[test]
fn a_refused_edit_or_a_scene_changed_mid_run_keeps_the_draft_beside_the_scene() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    // The writer takes a while, so the test can edit the scene meanwhile.
    server.on(
        &step_marker("draft", "writer"),
        vec![Answer::Delayed(
            Duration::from_millis(1200),
            Box::new(Answer::text(scripted_reply("draft"))),
        )],
    );
    serve_draft_scene(&server, "");
    let mut client = editor_client(&root, &server.url, false, Some("Open draft"));

    // 1. The editor refuses the versioned edit.
    let vigil = root.join("Story/Scenes/SCN-the-vigil.md");
    let vigil_text = client.open(&vigil, 7);
    let reply = execute(
        &mut client,
        json!({"recipe": "creative_draft_scene", "scene": "SCN-the-vigil"}),
    );
    let first = reply["result"]["run_id"].as_str().unwrap().to_owned();
    let end = progress(&mut client, &run_token(&first)).pop().unwrap();
    let applied = requests(&client, "workspace/applyEdit");
    assert_eq!(applied.len(), 1);
    let change = &applied[0]["params"]["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["uri"], uri(&vigil));
    assert_eq!(
        change["textDocument"]["version"], 7,
        "the version seen when the run started"
    );
    let front_end = vigil_text[4..].find("---\n").unwrap() + 4 + 4;
    assert_eq!(
        offset_of(&vigil_text, &change["edits"][0]["range"]["start"]),
        front_end,
        "the body after the front matter is replaced"
    );
    let beside = root.join(format!("Story/Scenes/SCN-the-vigil.draft-{first}.md"));
    let kept = std::fs::read_to_string(&beside).unwrap();
    assert!(kept.starts_with(&vigil_text[..front_end]), "{kept}");
    assert!(kept.ends_with(&format!("{}\n", scripted_reply("polish"))));
    assert_eq!(
        std::fs::read_to_string(&vigil).unwrap(),
        vigil_text,
        "the scene is untouched"
    );
    assert_eq!(
        end["message"],
        format!("done: the draft is in Story/Scenes/SCN-the-vigil.draft-{first}.md")
    );
    let message = client.wait_for(|m| m["method"] == "window/showMessageRequest");
    let said = message["params"]["message"].as_str().unwrap();
    assert!(
        said.contains(
            "the editor did not apply the edit (the document has changed since the edit was made)"
        ),
        "{said}"
    );
    assert!(said.contains("Nothing you wrote was changed"), "{said}");
    let shown = client.wait_for(|m| m["method"] == "window/showDocument");
    assert_eq!(shown["params"]["uri"], uri(&beside), "Open draft opens it");
    assert_eq!(shown["params"]["takeFocus"], true);

    // 2. The writer types in the scene while the run works: no edit is sent.
    let gate = root.join("Story/Scenes/SCN-the-gate.md");
    let gate_text = client.open(&gate, 1);
    let reply = execute(
        &mut client,
        json!({"recipe": "creative_draft_scene", "scene": "Story/Scenes/SCN-the-gate.md"}),
    );
    let second = reply["result"]["run_id"].as_str().unwrap().to_owned();
    let token = run_token(&second);
    wait_for_report(&mut client, &token, "[5/8] draft (writer)");
    let last_line = gate_text.lines().count();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&gate), "version": 2}, "contentChanges": [
            {"range": {"start": {"line": last_line, "character": 0}, "end": {"line": last_line, "character": 0}},
             "text": "\nShe had not slept.\n"}]}),
    );
    progress(&mut client, &token);
    assert_eq!(
        requests(&client, "workspace/applyEdit").len(),
        1,
        "no second edit"
    );
    let beside = root.join(format!("Story/Scenes/SCN-the-gate.draft-{second}.md"));
    assert!(beside.is_file());
    assert_eq!(std::fs::read_to_string(&gate).unwrap(), gate_text);
    let message = client.wait_for(|m| {
        m["method"] == "window/showMessageRequest"
            && m["params"]["message"]
                .as_str()
                .is_some_and(|text| text.contains("SCN-the-gate"))
    });
    assert!(
        message["params"]["message"]
            .as_str()
            .unwrap()
            .contains("because the scene changed while the run worked")
    );
    let titles: Vec<&str> = message["params"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|action| action["title"].as_str())
        .collect();
    assert_eq!(titles, ["Open draft", "Open report"]);
    // The draft beside the scene is not part of the manuscript: no
    // orphan-scene warning, no duplicate id.
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", "--format", "json"])
        .arg(&root)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert!(
        !report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["path"].as_str().unwrap().contains(".draft-")),
        "{report:#}"
    );
    client.shutdown();
}

#[test]
fn cancelled_failed_and_panicking_runs_end_their_progress_and_write_nothing() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    server.on(&step_marker("draft", "writer"), vec![Answer::Hang]);
    serve_draft_scene(&server, "");
    configure(&root, &server.url);
    let scene = root.join("Story/Scenes/SCN-the-reckoning.md");
    let mut client = Client::spawn(&[]);
    client.responder = Some(editor(true, None));
    client.initialize(&root, capabilities());
    client.wait_for_index();

    // Cancelled from the progress's cancel button.
    let reply = execute(
        &mut client,
        json!({"task": "draft scene SCN-the-reckoning"}),
    );
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_owned();
    let token = run_token(&run_id);
    wait_for_report(&mut client, &token, "[5/8] draft (writer)");
    // A second run of the recipe on the scene is refused meanwhile.
    let again = execute(
        &mut client,
        json!({"task": "draft scene SCN-the-reckoning"}),
    );
    let refusal = again["error"]["message"].as_str().unwrap();
    assert!(
        refusal.contains(
            "“Draft a scene from outline” is already running on Story/Scenes/SCN-the-reckoning.md"
        ) && refusal.contains(&run_id),
        "{refusal}"
    );
    let runs = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.listRuns", "arguments": []}),
    );
    assert_eq!(runs[0]["run_id"], run_id.as_str());
    assert_eq!(runs[0]["in_flight"], true);
    assert_eq!(runs[0]["step"], "[5/8] draft (writer)");
    client.notify("window/workDoneProgress/cancel", json!({"token": token}));
    let end = progress(&mut client, &token).pop().unwrap();
    assert_eq!(end["message"], "cancelled");
    assert_eq!(status_of(&root, &run_id), "cancelled");
    assert!(!scene.exists());
    assert!(requests(&client, "workspace/applyEdit").is_empty());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.dropped() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.dropped(), 1, "the model request was dropped");
    assert!(
        run_file(&root, &run_id, "report.md")
            .contains("Result: not written, because the run was cancelled")
    );

    // Cancelled with the command.
    let reply = execute(
        &mut client,
        json!({"task": "draft scene SCN-the-reckoning"}),
    );
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_owned();
    let token = run_token(&run_id);
    wait_for_report(&mut client, &token, "[5/8] draft (writer)");
    let cancelled = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.cancelRun", "arguments": [{"run_id": run_id}]}),
    );
    assert_eq!(cancelled["status"], "cancelling");
    assert_eq!(
        progress(&mut client, &token).pop().unwrap()["message"],
        "cancelled"
    );

    // A model failure: the consistency check's agents have no answer here,
    // so the model server refuses them.
    let reply = execute(
        &mut client,
        json!({"task": "check consistency SCN-the-gate"}),
    );
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_owned();
    let end = progress(&mut client, &run_token(&run_id)).pop().unwrap();
    let message = end["message"].as_str().unwrap();
    assert!(
        message.starts_with("failed: step `") && message.contains("HTTP 400"),
        "{message}"
    );
    assert_eq!(status_of(&root, &run_id), "failed");
    let shown =
        client.wait_for(|m| m["method"] == "window/showMessageRequest" && m["params"]["type"] == 1);
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Check a scene's consistency with canon: SCN-the-gate failed: step `")
    );
    assert!(requests(&client, "workspace/applyEdit").is_empty());
    let opened = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.openRun", "arguments": [{"run_id": run_id}]}),
    );
    let report = root.join(format!(".control-room/runs/{run_id}/report.md"));
    assert_eq!(opened["uri"], uri(&report));
    client.shutdown();

    // A panic inside a run still ends its progress and fails the run.
    let mut client = Client::spawn(&[("CONTROL_ROOM_TEST_PANIC_IN", "run")]);
    client.initialize(&root, capabilities());
    client.wait_for_index();
    let reply = execute(
        &mut client,
        json!({"task": "draft scene SCN-the-reckoning"}),
    );
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_owned();
    let end = progress(&mut client, &run_token(&run_id)).pop().unwrap();
    assert!(
        end["message"]
            .as_str()
            .unwrap()
            .starts_with("failed: internal error: panic requested in run"),
        "{end}"
    );
    assert_eq!(status_of(&root, &run_id), "failed");
    assert!(client.is_running());
    client.shutdown();
}

#[test]
fn a_draft_whose_continuity_check_finds_an_error_goes_beside_the_scene_never_into_it() {
    let (_dir, root) = example_copy();
    // A project recipe: the bundled draft, but the continuity check must pass.
    let mut recipe: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/creative_draft_scene.json"),
        )
        .unwrap(),
    )
    .unwrap();
    recipe["recipe_id"] = json!("strict_draft_scene");
    recipe["label"] = json!("Draft a scene that passes continuity");
    recipe["task_patterns"] = json!(["strict draft"]);
    // The bundled draft's Definition of Done holds the continuity verdict.
    assert!(
        recipe["dod"].as_array().unwrap().contains(
            &json!({"check": "slot_field_equals", "slot": "continuity_report", "field": "pass", "expected": true})
        ),
        "{recipe:#}"
    );
    std::fs::create_dir_all(root.join(".control-room/recipes")).unwrap();
    std::fs::write(
        root.join(".control-room/recipes/strict_draft_scene.json"),
        serde_json::to_string_pretty(&recipe).unwrap(),
    )
    .unwrap();
    let server = FakeModelServer::start();
    server.on(
        &step_marker("continuity", "continuity"),
        vec![finding_step(
            r#"{"pass": false, "findings": [{"severity": "error", "quote": "the keys on their cord", "message": "Ysolde gave the keys away in The Gate."}]}"#,
        )],
    );
    serve_draft_scene(&server, "");
    let mut client = editor_client(&root, &server.url, true, None);

    // The project's recipe is offered on a scene by its label.
    let gate = root.join("Story/Scenes/SCN-the-gate.md");
    client.open(&gate, 1);
    let start = json!({"line": 0, "character": 0});
    let actions = code_actions(&mut client, &gate, json!({"start": start, "end": start}));
    let offered = actions
        .iter()
        .find(|action| action["command"]["arguments"][0]["recipe"] == "strict_draft_scene")
        .unwrap_or_else(|| panic!("the project recipe is not offered: {actions:#?}"));
    assert_eq!(
        offered["title"],
        "Draft a scene that passes continuity (SCN-the-gate)"
    );

    let reply = execute(
        &mut client,
        json!({"recipe": "strict_draft_scene", "scene": "SCN-the-reckoning"}),
    );
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_owned();
    let end = progress(&mut client, &run_token(&run_id)).pop().unwrap();
    let summary = end["message"].as_str().unwrap();
    assert!(
        summary.starts_with("failed: the Definition of Done failed (slot_field_equals: `continuity_report.pass` is false, expected true)"),
        "{summary}"
    );
    assert!(requests(&client, "workspace/applyEdit").is_empty());
    assert!(!root.join("Story/Scenes/SCN-the-reckoning.md").exists());
    let issue = format!(".control-room/issues/DOD-{run_id}.md");
    assert!(root.join(&issue).is_file());
    let message = client.wait_for(|m| m["method"] == "window/showMessageRequest");
    assert_eq!(message["params"]["type"], 2, "a warning");
    let titles: Vec<&str> = message["params"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|action| action["title"].as_str())
        .collect();
    assert_eq!(titles, ["Open issue", "Open report"]);
    let report = run_file(&root, &run_id, "report.md");
    assert!(
        report.contains(&format!(
            "- Definition of Done: **failed**, see [{issue}](../../../{issue})"
        )),
        "{report}"
    );
    // The draft is kept beside the scene, never in it: no words are lost.
    let beside = format!("Story/Scenes/SCN-the-reckoning.draft-{run_id}.md");
    assert!(
        report.contains(&format!("- Result: written beside the scene as [{beside}]"))
            && report.contains("because its Definition of Done failed"),
        "{report}"
    );
    let kept = std::fs::read_to_string(root.join(&beside)).unwrap();
    assert!(kept.contains(&scripted_reply("polish")), "{kept}");
    client.shutdown();
}

#[test]
fn a_run_started_right_after_initialize_waits_for_the_first_index() {
    let (_dir, root) = example_copy();
    // Many cards, so the first index takes a while after `initialized`.
    let characters = root.join("Compendium/Characters");
    for n in 0..1500 {
        std::fs::write(
            characters.join(format!("CHAR-extra-{n}.md")),
            format!(
                "---\nname: Extra {n}\nstatus: alive\neyes: grey\n---\n\nA face in the crowd.\n"
            ),
        )
        .unwrap();
    }
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    lsp_client::editor::configure(&root, &server.url);
    let mut client = Client::spawn(&[]);
    client.responder = Some(editor(true, None));
    client.initialize(&root, capabilities());
    // At once, before the index has ended.
    let reply = execute(
        &mut client,
        json!({"recipe": "creative_draft_scene", "scene": "SCN-the-reckoning"}),
    );
    let run_id = reply["result"]["run_id"]
        .as_str()
        .unwrap_or_else(|| panic!("the run did not start: {reply}"))
        .to_owned();
    let values = progress(&mut client, &run_token(&run_id));
    assert_eq!(
        values.last().unwrap()["message"],
        "done: Story/Scenes/SCN-the-reckoning.md, 2 findings"
    );
    client.shutdown();
}

#[test]
fn draft_again_from_the_editor_asks_the_model_anew_with_fresh() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    let mut client = editor_client(&root, &server.url, true, None);
    let scene = root.join("Story/Scenes/SCN-the-reckoning.md");
    // Each draft starts from the same manuscript: the drafted scene goes.
    let draft = |client: &mut Client, fresh: bool| {
        let reply = execute(
            client,
            json!({"recipe": "creative_draft_scene", "scene": "SCN-the-reckoning", "fresh": fresh}),
        );
        let run_id = reply["result"]["run_id"].as_str().unwrap().to_owned();
        let values = progress(client, &run_token(&run_id));
        let end = values.last().unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            end.starts_with("done: Story/Scenes/SCN-the-reckoning.md"),
            "{end}"
        );
        std::fs::remove_file(&scene).unwrap();
        client.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": uri(&scene), "type": 3}]}),
        );
        server.received().len()
    };
    // Five agents, the two finding steps of this t1 model in micro-steps
    // (a triage, then a finding and its evidence for the one problem).
    let first = draft(&mut client, false);
    assert_eq!(first, 9, "five agents asked");
    // Again, as it was: every answer is reused, nothing is asked.
    assert_eq!(draft(&mut client, false), first);
    // Again, fresh: all five are asked anew.
    assert_eq!(draft(&mut client, true), first + 9);
    client.shutdown();
}

#[test]
fn a_model_asked_without_a_writer_limit_is_sent_the_tiers_reply_reserve() {
    // With no `max_tokens` a local model server writes until its context is
    // full; every agent call carries the room its prompt's tier keeps for
    // the reply instead (the minimal tier's 1,000 tokens for llama3.1:8b).
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    let mut client = editor_client(&root, &server.url, true, None);
    let reply = execute(
        &mut client,
        json!({"recipe": "creative_draft_scene", "scene": "SCN-the-reckoning"}),
    );
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_owned();
    let values = progress(&mut client, &run_token(&run_id));
    let end = values.last().unwrap()["message"].as_str().unwrap();
    assert!(end.starts_with("done:"), "{end}");
    let received = server.received();
    assert_eq!(received.len(), 9, "five agents asked, two in micro-steps");
    for request in &received {
        assert_eq!(request.body["max_tokens"], 1000, "{}", request.body);
    }
    client.shutdown();
    // The writer's own limit wins.
    std::fs::write(
        root.join("control-room.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"llama3.1:8b\"\nmax_retries = 0\nmax_tokens = 700\n",
            server.url
        ),
    )
    .unwrap();
    let mut client = Client::spawn(&[]);
    client.responder = Some(editor(true, None));
    client.initialize(&root, capabilities());
    client.wait_for_index();
    let reply = execute(
        &mut client,
        json!({"recipe": "creative_draft_scene", "scene": "SCN-the-vigil", "fresh": true}),
    );
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_owned();
    progress(&mut client, &run_token(&run_id));
    let received = server.received();
    assert!(received.len() > 9, "the second run asked the model");
    for request in &received[9..] {
        assert_eq!(request.body["max_tokens"], 700, "{}", request.body);
    }
    client.shutdown();
}

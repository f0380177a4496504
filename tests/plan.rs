//! Session plans from the command line, end to end: the real binary makes a
//! plan, runs its tasks in dependency order with the example's scripted
//! model (each a run linked to its task), delivers the drafts as the editor
//! does (never over text the writer changed meanwhile), and reports the writer's mistakes in
//! `plan.md` at their lines, on the command line and, over LSP, in the
//! editor (where a save takes the checklist into `plan.json`).

use crate::support;
use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;

use serde_json::{Value, json};
use support::{control_room, example_copy, output_text, read_json};

fn new_plan(root: &Path, args: &[&str]) -> String {
    let mut all = vec!["plan", "new"];
    all.extend_from_slice(args);
    let output = control_room(root, &all);
    assert!(output.status.success(), "{}", output_text(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn scripted() -> String {
    format!(
        "scripted:{}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/scripted/draft-the-reckoning.json")
            .display()
    )
}

/// How many runs the workspace has.
fn runs(root: &Path) -> usize {
    if root.join(".control-room/runs").is_dir() {
        support::run_ids(root).len()
    } else {
        0
    }
}

fn plan_json(root: &Path, id: &str) -> Value {
    read_json(&root.join(format!(".control-room/sessions/{id}/plan.json")))
}

#[test]
fn a_two_task_plan_runs_in_dependency_order_and_delivers_its_drafts() {
    let dir = example_copy("plan");
    let root = dir.path();
    let vigil = std::fs::read_to_string(root.join("Story/Scenes/SCN-the-vigil.md")).unwrap();
    // Task 1 waits for task 2, so task 2 runs first.
    let id = new_plan(
        root,
        &[
            "draft scene SCN-the-vigil",
            "draft scene SCN-the-reckoning",
            "--dep",
            "1:2",
        ],
    );
    assert!(id.starts_with("sp_"), "{id}");
    let plan = plan_json(root, &id);
    let statuses: Vec<&str> = plan["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["blocked", "pending"]);
    assert_eq!(plan["tasks"][0]["recipe_id"], "creative_draft_scene");
    assert_eq!(plan["created_by"], "writer");

    let output = control_room(root, &["plan", "run", &id, "--model", &scripted()]);
    assert!(output.status.success(), "{}", output_text(&output));
    let plan = plan_json(root, &id);
    assert_eq!(plan["status"], "done");
    let listed = control_room(root, &["plan", "list"]);
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        listed.starts_with(&format!("{id}  done      2/2 tasks done  ")),
        "{listed}"
    );
    let runs: Vec<(u64, String)> = plan["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            assert_eq!(task["status"], "done");
            let run_id = task["run_id"].as_str().unwrap();
            let manifest = read_json(&root.join(format!(".control-room/runs/{run_id}/run.json")));
            assert_eq!(manifest["session_id"], id.as_str());
            assert_eq!(manifest["task"]["session_plan_task_id"], task["id"]);
            (
                task["id"].as_u64().unwrap(),
                manifest["created_at"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(runs[1].1 < runs[0].1, "task 2 ran before task 1: {runs:?}");

    // The new scene was written; the existing one, unchanged while its run
    // worked, kept its front matter and got the draft as its body, as the
    // editor delivers it.
    let reckoning =
        std::fs::read_to_string(root.join("Story/Scenes/SCN-the-reckoning.md")).unwrap();
    assert!(
        reckoning.starts_with("---\nid: SCN-the-reckoning\n"),
        "{reckoning}"
    );
    assert!(reckoning.contains("# The Reckoning"));
    let vigil_now = std::fs::read_to_string(root.join("Story/Scenes/SCN-the-vigil.md")).unwrap();
    let front_matter_end = vigil.find("\n---\n").unwrap() + 5;
    assert_eq!(vigil_now[..front_matter_end], vigil[..front_matter_end]);
    assert_ne!(vigil_now, vigil, "the draft replaced the body");
    let vigil_run = plan["tasks"][0]["run_id"].as_str().unwrap();
    assert!(
        !root
            .join(format!("Story/Scenes/SCN-the-vigil.draft-{vigil_run}.md"))
            .exists()
    );
    // Each run's report says where its draft went.
    let report = |run: &str| {
        std::fs::read_to_string(root.join(format!(".control-room/runs/{run}/report.md"))).unwrap()
    };
    let vigil_report = report(vigil_run);
    assert!(
        vigil_report.contains("- Result: [Story/Scenes/SCN-the-vigil.md]"),
        "{vigil_report}"
    );
    let reckoning_report = report(plan["tasks"][1]["run_id"].as_str().unwrap());
    assert!(
        reckoning_report.contains("- Result: [Story/Scenes/SCN-the-reckoning.md]"),
        "{reckoning_report}"
    );
    let markdown =
        std::fs::read_to_string(root.join(format!(".control-room/sessions/{id}/plan.md"))).unwrap();
    assert!(
        markdown.contains("- [x] 1. draft scene SCN-the-vigil\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- [x] 2. draft scene SCN-the-reckoning\n"),
        "{markdown}"
    );
}

#[test]
fn mistakes_in_plan_md_are_shown_at_their_lines_and_stop_the_run() {
    let dir = example_copy("plan");
    let root = dir.path();
    let id = new_plan(
        root,
        &[
            "draft scene SCN-the-reckoning",
            "make it sing",
            "--dep",
            "2:1",
        ],
    );
    let path = root.join(format!(".control-room/sessions/{id}/plan.md"));
    let text = std::fs::read_to_string(&path).unwrap();
    // The writer makes task 1 wait for task 2: a cycle; and misspells a status.
    let edited = text
        .replacen(
            "  - recipe: creative_draft_scene\n",
            "  - recipe: creative_draft_scene\n  - deps: 2\n",
            1,
        )
        .replacen("  - status: needs_scoping\n", "  - status: snoozing\n", 1);
    std::fs::write(&path, &edited).unwrap();
    let line_of = |needle: &str| edited.lines().position(|line| line == needle).unwrap() + 1;
    let shown = path.display().to_string();

    let output = control_room(root, &["plan", "show", &id]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    for expected in [
        format!(
            "{shown}:{}: error: `snoozing` is not a task status",
            line_of("  - status: snoozing")
        ),
        format!(
            "{shown}:{}: error: tasks depend on each other in a cycle: 1 → 2 → 1",
            line_of("  - deps: 2")
        ),
        format!(
            "{shown}:{}: note: task 2 needs scoping: no recipe",
            line_of("- [ ] 2. make it sing")
        ),
    ] {
        assert!(stderr.contains(&expected), "`{expected}` in\n{stderr}");
    }
    let output = control_room(root, &["plan", "run", &id, "--model", &scripted()]);
    assert_eq!(output.status.code(), Some(2), "{}", output_text(&output));
    assert!(output_text(&output).contains("has errors; fix plan.md"));
    assert!(runs(root) == 0, "no run started");
}

#[test]
fn a_blocked_task_runs_only_when_forced() {
    let dir = example_copy("plan");
    let root = dir.path();
    let id = new_plan(
        root,
        &[
            "draft scene SCN-the-reckoning",
            "make it sing",
            "--dep",
            "1:2",
        ],
    );
    // Task 1 waits for a task that needs scoping: nothing is ready.
    let output = control_room(root, &["plan", "run", &id, "--model", &scripted()]);
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    assert!(runs(root) == 0);
    let output = control_room(
        root,
        &["plan", "run", &id, "--force", "1", "--model", &scripted()],
    );
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    let plan = plan_json(root, &id);
    assert_eq!(plan["tasks"][0]["status"], "done");
    assert_eq!(plan["tasks"][1]["status"], "needs_scoping");
    assert_eq!(runs(root), 1);
    let output = control_room(root, &["plan", "run", &id, "--force", "2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output_text(&output).contains("task 2 is needs_scoping"));
}

#[test]
fn an_open_plan_md_shows_its_problems_and_a_save_goes_into_plan_json() {
    let dir = example_copy("plan");
    let root = dir.path().canonicalize().unwrap();
    let id = new_plan(&root, &["draft scene SCN-the-reckoning", "make it sing"]);
    let path = root.join(format!(".control-room/sessions/{id}/plan.md"));
    let plan_uri = lsp_client::uri(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen(
        "  - recipe: creative_draft_scene\n",
        "  - recipe: creative_draft_scene\n  - deps: 1, 7\n",
        1,
    );
    let line_of = |needle: &str| edited.lines().position(|line| line == needle).unwrap() as u64;

    let mut client = lsp_client::Client::spawn(&[]);
    client.initialize(&root, json!({}));
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": plan_uri, "languageId": "markdown", "version": 1, "text": edited}}),
    );
    let published = client.diagnostics_for(&plan_uri, |list| !list.is_empty());
    let found: Vec<(String, u64, u64, String)> = published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["range"]["start"]["line"].as_u64().unwrap(),
                d["severity"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let deps = line_of("  - deps: 1, 7");
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!(
        found[0],
        (
            "plan-dependency".to_owned(),
            deps,
            1,
            "task 1 depends on itself".to_owned()
        )
    );
    assert_eq!(
        found[1],
        (
            "plan-dependency".to_owned(),
            deps,
            1,
            "task 1 depends on task 7, which is not in the plan".to_owned()
        )
    );
    assert_eq!(found[2].0, "plan-needs-scoping");
    assert_eq!(found[2].1, line_of("- [ ] 2. make it sing"));
    assert_eq!(found[2].2, 3);

    // The writer fixes both and saves: the checklist goes into plan.json.
    let fixed = text.replacen("2. make it sing", "2. review prose SCN-the-gate", 1);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": plan_uri, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    client.diagnostics_for(&plan_uri, <[Value]>::is_empty);
    // As an editor does: the file is written, then the save is told.
    std::fs::write(&path, &fixed).unwrap();
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": plan_uri}}),
    );
    let deadline = std::time::Instant::now() + lsp_client::TIMEOUT;
    loop {
        let plan = plan_json(&root, &id);
        if plan["tasks"][1]["recipe_id"] == "analytical_prose" {
            assert_eq!(plan["tasks"][1]["status"], "pending");
            assert_eq!(plan["tasks"][1]["description"], "review prose SCN-the-gate");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "plan.json not updated: {plan}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The checklist stays as the writer wrote it.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), fixed);
    client.shutdown();
}

#[test]
fn lenses_run_a_plan_through_the_editors_runs_in_dependency_order() {
    let dir = example_copy("plan");
    let root = dir.path().canonicalize().unwrap();
    let server = model_server::FakeModelServer::start();
    model_server::serve_draft_scene(&server, "");
    // Task 1 waits for task 2.
    let id = new_plan(
        &root,
        &[
            "draft scene SCN-the-vigil",
            "draft scene SCN-the-reckoning",
            "--dep",
            "1:2",
        ],
    );
    let path = root.join(format!(".control-room/sessions/{id}/plan.md"));
    // The writer's own note in the checklist must survive every update.
    let text = format!(
        "{}\nMy note: keep the vigil short.\n",
        std::fs::read_to_string(&path).unwrap()
    );
    std::fs::write(&path, &text).unwrap();
    let plan_uri = lsp_client::uri(&path);
    let mut client = lsp_client::editor::editor_client(&root, &server.url, true, None);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": plan_uri, "languageId": "markdown", "version": 1, "text": text}}),
    );
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": plan_uri}}),
    );
    let shown: Vec<(&str, u64, &Value)> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|lens| {
            (
                lens["command"]["title"].as_str().unwrap(),
                lens["range"]["start"]["line"].as_u64().unwrap(),
                &lens["command"]["arguments"][0],
            )
        })
        .collect();
    let line_of = |needle: &str| text.lines().position(|line| line == needle).unwrap() as u64;
    assert_eq!(
        shown,
        [
            ("Run all ready", 0, &json!({"session_id": id})),
            (
                "Run task anyway",
                line_of("- [ ] 1. draft scene SCN-the-vigil"),
                &json!({"session_id": id, "task": 1, "force": true})
            ),
            (
                "Run task",
                line_of("- [ ] 2. draft scene SCN-the-reckoning"),
                &json!({"session_id": id, "task": 2, "force": false})
            ),
        ]
    );
    // Closed again, so the server keeps plan.md on disk in step.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": plan_uri}}),
    );
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runPlan", "arguments": [shown[0].2]}),
    );
    assert_eq!(answer["task"], 2);
    // Both runs report their end (the client answers the server meanwhile).
    for _ in 0..2 {
        client.wait_for(|m| {
            m["method"] == "$/progress"
                && m["params"]["value"]["kind"] == "end"
                && m["params"]["token"]
                    .as_str()
                    .is_some_and(|token| token.starts_with("control-room/run/"))
        });
    }
    let deadline = std::time::Instant::now() + lsp_client::TIMEOUT;
    let plan = loop {
        // plan.json is written first, then plan.md is brought in step.
        let plan = plan_json(&root, &id);
        let markdown = std::fs::read_to_string(&path).unwrap_or_default();
        if plan["status"] == "done" && markdown.matches("  - status: done\n").count() == 2 {
            break plan;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the plan did not finish: {plan}\n{markdown}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let created: Vec<String> = plan["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            let run_id = task["run_id"].as_str().unwrap();
            let manifest = read_json(&root.join(format!(".control-room/runs/{run_id}/run.json")));
            assert_eq!(manifest["task"]["session_plan_task_id"], task["id"]);
            manifest["created_at"].as_str().unwrap().to_owned()
        })
        .collect();
    assert!(created[1] < created[0], "task 2 ran first: {created:?}");
    // The new scene arrived through the editor's edit.
    assert!(root.join("Story/Scenes/SCN-the-reckoning.md").is_file());
    let markdown = std::fs::read_to_string(&path).unwrap();
    assert!(
        markdown.contains("- [x] 1. draft scene SCN-the-vigil\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- [x] 2. draft scene SCN-the-reckoning\n"),
        "{markdown}"
    );
    assert!(
        markdown.ends_with("\nMy note: keep the vigil short.\n"),
        "{markdown}"
    );
    assert_eq!(
        markdown.matches("  - status: done\n").count(),
        2,
        "{markdown}"
    );

    // Paused, a plan starts nothing more; its lenses offer no pause then.
    let paused = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.pausePlan", "arguments": [{"session_id": id}]}),
    );
    assert_eq!(paused["status"], "paused");
    assert_eq!(plan_json(&root, &id)["status"], "paused");
    client.shutdown();
}

#[test]
fn an_open_plan_md_is_kept_in_step_by_versioned_edits_of_its_buffer() {
    let dir = example_copy("plan");
    let root = dir.path().canonicalize().unwrap();
    let server = model_server::FakeModelServer::start();
    model_server::serve_draft_scene(&server, "");
    let id = new_plan(
        &root,
        &[
            "draft scene SCN-the-reckoning",
            "draft scene SCN-the-vigil",
            "--dep",
            "2:1",
        ],
    );
    let path = root.join(format!(".control-room/sessions/{id}/plan.md"));
    let on_disk = std::fs::read_to_string(&path).unwrap();
    // Unsaved in the buffer: the writer's note.
    let text = format!("{on_disk}\nUnsaved note: the vigil can wait.\n");
    let plan_uri = lsp_client::uri(&path);
    let buffer = std::sync::Arc::new(std::sync::Mutex::new(lsp_client::editor::OpenBuffer {
        uri: plan_uri.clone(),
        text: text.clone(),
        version: 1,
        edited_at: Vec::new(),
        refused: 0,
        texts: Vec::new(),
    }));
    lsp_client::editor::configure(&root, &server.url);
    let mut client = lsp_client::Client::spawn(&[]);
    client.responder = Some(lsp_client::editor::editor_with_open(
        buffer.clone(),
        client.outbox.clone(),
    ));
    client.initialize(&root, lsp_client::editor::capabilities());
    client.wait_for_index();
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": plan_uri, "languageId": "markdown", "version": 1, "text": text}}),
    );
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runPlan", "arguments": [{"session_id": id, "task": 1}]}),
    );
    assert_eq!(answer["task"], 1);
    // Wait for the buffer to say the task is done (each edit is answered meanwhile).
    client.wait_for(|_| {
        buffer
            .lock()
            .unwrap()
            .text
            .contains("- [x] 1. draft scene SCN-the-reckoning\n")
    });
    let buffer = buffer.lock().unwrap();
    assert_eq!(
        buffer.refused, 0,
        "every edit carried the buffer's version: {:?}",
        buffer.edited_at
    );
    assert!(
        buffer.edited_at.len() >= 2,
        "running, then done: {:?}",
        buffer.edited_at
    );
    assert_eq!(
        buffer.edited_at,
        (1..=buffer.edited_at.len() as i64).collect::<Vec<_>>(),
        "each edit followed the last didChange"
    );
    assert!(
        buffer
            .text
            .ends_with("\nUnsaved note: the vigil can wait.\n"),
        "{}",
        buffer.text
    );
    assert!(
        buffer.text.contains("  - status: done\n"),
        "{}",
        buffer.text
    );
    // The file on disk is the writer's to save: the server wrote plan.json only.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), on_disk);
    assert_eq!(plan_json(&root, &id)["tasks"][0]["status"], "done");
    drop(buffer);
    client.shutdown();
}

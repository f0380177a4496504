//! The command line and the editor are two front ends of one engine: the
//! same recipe, run once with `control-room run` and once through the
//! server's `controlRoom.runRecipe` (agents answered alike by the fake model
//! server over HTTP), leaves the same text in the manuscript, the same
//! findings and the same report; a resumed run does too, and neither writes
//! over a scene the writer changed since the run began.

mod lsp_support;
mod model_server;
mod support;

use std::path::{Path, PathBuf};

use lsp_support::editor::{configure, editor_client};
use lsp_support::{Client, example_copy};
use model_server::{Answer, FakeModelServer, serve_draft_scene, step_marker};
use serde_json::{Value, json};
use support::{control_room, output_text, read_json};

const RECIPE: &str = "creative_draft_scene";

/// Waits for the end of run `run_id`'s progress; its last message.
fn wait_for_end(client: &mut Client, run_id: &str) -> String {
    let token = format!("control-room/run/{run_id}");
    let end = client.wait_for(|m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == token.as_str()
            && m["params"]["value"]["kind"] == "end"
    });
    end["params"]["value"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Runs `command` with `arguments` in the editor and waits for its run.
fn editor_run(client: &mut Client, command: &str, arguments: Value) -> (String, String) {
    let reply = client.request(
        "workspace/executeCommand",
        json!({"command": command, "arguments": [arguments]}),
    );
    let run_id = reply["run_id"].as_str().expect("a run id").to_owned();
    let end = wait_for_end(client, &run_id);
    (run_id, end)
}

/// The runs of a workspace (none before its first run).
fn runs(root: &Path) -> Vec<String> {
    if root.join(".control-room/runs").is_dir() {
        support::run_ids(root)
    } else {
        Vec::new()
    }
}

/// The one run that is not among `before`.
fn new_run(root: &Path, before: &[String]) -> String {
    let new: Vec<String> = runs(root)
        .into_iter()
        .filter(|run| !before.contains(run))
        .collect();
    assert_eq!(new.len(), 1, "one new run: {new:?}");
    new[0].clone()
}

/// What a run left for the writer, with its run id made neutral: the
/// report's "Result" line and the findings' messages.
fn left_by(root: &Path, run_id: &str) -> (String, Vec<String>) {
    let dir = root.join(format!(".control-room/runs/{run_id}"));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let result = report
        .lines()
        .find(|line| line.starts_with("- Result:"))
        .unwrap_or_else(|| panic!("no Result line: {report}"))
        .replace(run_id, "RUN");
    let findings = read_json(&dir.join("findings.json"));
    let messages = findings["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["message"].as_str().unwrap().to_owned())
        .collect();
    (result, messages)
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// Two copies of the example, both set up for the fake server.
fn two_copies(server: &FakeModelServer) -> [(tempfile::TempDir, PathBuf); 2] {
    let copies = [example_copy(), example_copy()];
    for (_, root) in &copies {
        configure(root, &server.url);
    }
    copies
}

#[test]
fn the_cli_and_the_editor_deliver_the_same_drafts_findings_and_reports() {
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    let [(_cli_dir, cli), (_editor_dir, editor)] = two_copies(&server);
    let vigil_before = read(&cli, "Story/Scenes/SCN-the-vigil.md");
    let mut client = editor_client(&editor, &server.url, true, None);

    // A new scene, and an existing one the writer did not touch meanwhile.
    for scene in ["SCN-the-reckoning", "SCN-the-vigil"] {
        let path = format!("Story/Scenes/{scene}.md");
        let before = runs(&cli);
        let output = control_room(
            &cli,
            &["run", RECIPE, "--arg", &format!("scene_id={scene}")],
        );
        assert!(output.status.success(), "{}", output_text(&output));
        assert!(
            output_text(&output).contains(&format!("the draft is in {path}")),
            "{}",
            output_text(&output)
        );
        let cli_run = new_run(&cli, &before);

        let (editor_run_id, end) = editor_run(
            &mut client,
            "controlRoom.runRecipe",
            json!({"recipe": RECIPE, "scene": scene}),
        );
        assert!(end.starts_with(&format!("done: {path}")), "{end}");

        assert_eq!(
            read(&cli, &path),
            read(&editor, &path),
            "{scene}: the same text lands through both front ends"
        );
        assert_eq!(
            left_by(&cli, &cli_run),
            left_by(&editor, &editor_run_id),
            "{scene}: the same report result and findings"
        );
    }
    // The existing scene kept its front matter; its body is the draft.
    let vigil_after = read(&cli, "Story/Scenes/SCN-the-vigil.md");
    let front_matter = &vigil_before[..vigil_before.find("\n---\n").unwrap() + 5];
    assert!(vigil_after.starts_with(front_matter), "{vigil_after}");
    assert_ne!(vigil_after, vigil_before);
    client.shutdown();
}

#[test]
fn resume_in_either_front_end_keeps_a_scene_changed_since_the_run_began() {
    let server = FakeModelServer::start();
    // The writer's first call fails, so the run stops at its draft step;
    // every later call answers.
    server.on(
        &step_marker("draft", "writer"),
        vec![
            Answer::status(400),
            Answer::status(400),
            Answer::text(model_server::scripted_reply("draft")),
        ],
    );
    serve_draft_scene(&server, "");
    let [(_cli_dir, cli), (_editor_dir, editor)] = two_copies(&server);
    let scene = "Story/Scenes/SCN-the-vigil.md";

    let output = control_room(&cli, &["run", RECIPE, "--arg", "scene_id=SCN-the-vigil"]);
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    let cli_run = new_run(&cli, &[]);
    let mut client = editor_client(&editor, &server.url, true, None);
    let (editor_run_id, end) = editor_run(
        &mut client,
        "controlRoom.runRecipe",
        json!({"recipe": RECIPE, "scene": "SCN-the-vigil"}),
    );
    assert!(end.starts_with("failed:"), "{end}");

    // The writer changes the scene while the runs wait.
    for root in [&cli, &editor] {
        let text = read(root, scene) + "\nA line the writer added.\n";
        std::fs::write(root.join(scene), text).unwrap();
    }
    let output = control_room(&cli, &["runs", "resume", &cli_run]);
    assert!(output.status.success(), "{}", output_text(&output));
    let (resumed, end) = editor_run(
        &mut client,
        "controlRoom.resumeRun",
        json!({"run_id": editor_run_id}),
    );
    assert_eq!(resumed, editor_run_id, "the same run goes on");
    assert!(end.starts_with("done: the draft is in"), "{end}");

    for (root, run_id) in [(&cli, &cli_run), (&editor, &editor_run_id)] {
        assert!(
            read(root, scene).ends_with("A line the writer added.\n"),
            "the writer's text stays"
        );
        let beside = format!("Story/Scenes/SCN-the-vigil.draft-{run_id}.md");
        assert!(root.join(&beside).is_file(), "{beside}");
        let result = left_by(root, run_id).0;
        assert!(
            result.starts_with(
                "- Result: written beside the scene as [Story/Scenes/SCN-the-vigil.draft-RUN.md]"
            ) && result.contains("because the scene changed while the run worked"),
            "{result}"
        );
    }
    assert_eq!(
        read(
            &cli,
            &format!("Story/Scenes/SCN-the-vigil.draft-{cli_run}.md")
        ),
        read(
            &editor,
            &format!("Story/Scenes/SCN-the-vigil.draft-{editor_run_id}.md")
        ),
        "the same draft beside the scene"
    );
    client.shutdown();
}

#[test]
fn route_is_the_same_answer_on_the_command_line_and_in_the_editor() {
    let server = FakeModelServer::start();
    let [(_cli_dir, cli), (_editor_dir, editor)] = two_copies(&server);
    let task = "draft scene SCN-the-reckoning";
    let output = control_room(&cli, &["route", task]);
    assert!(output.status.success(), "{}", output_text(&output));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut client = editor_client(&editor, &server.url, true, None);
    let answered = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.route", "arguments": [{"task": task}]}),
    );
    assert_eq!(printed["recipe_id"], "creative_draft_scene");
    // The paths in the arguments are relative, so the two copies agree.
    assert_eq!(printed, answered);
    client.shutdown();
}

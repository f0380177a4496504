//! Session plans from the command line, end to end: the real binary makes a
//! plan, runs its tasks in dependency order with the example's scripted
//! model (each a run linked to its task), delivers the drafts without
//! touching the writer's text, and reports the writer's mistakes in
//! `plan.md` at their lines.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use support::{example_copy, output_text, read_json};

fn control_room(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(args)
        .arg("--dir")
        .arg(root)
        .output()
        .expect("the binary runs")
}

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

    // The new scene was written; the existing one was left alone, its draft beside it.
    let reckoning =
        std::fs::read_to_string(root.join("Story/Scenes/SCN-the-reckoning.md")).unwrap();
    assert!(
        reckoning.starts_with("---\nid: SCN-the-reckoning\n"),
        "{reckoning}"
    );
    assert!(reckoning.contains("# The Reckoning"));
    assert_eq!(
        std::fs::read_to_string(root.join("Story/Scenes/SCN-the-vigil.md")).unwrap(),
        vigil
    );
    let vigil_run = plan["tasks"][0]["run_id"].as_str().unwrap();
    assert!(
        root.join(format!("Story/Scenes/SCN-the-vigil.draft-{vigil_run}.md"))
            .is_file()
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

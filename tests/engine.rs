//! The pipeline engine through the real binary: routing, a scripted dry run
//! of `creative_draft_scene`, signed receipts, cancel, kill -9 and resume,
//! and the bad inputs the issue lists. Every workspace is a temporary copy of
//! the bundled example.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{only_run, output_text as text, read_json};
use tempfile::TempDir;

use control_room::receipts::audit;
use control_room::receipts::{self, SigningKey, ToolReceipt};
use control_room::runs::store::Disk;

const RECIPE_STEPS: [&str; 8] = [
    "discover",
    "analyze_outline",
    "check_canon",
    "brief",
    "draft",
    "polish",
    "continuity",
    "critique",
];

fn script_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scripted/draft-the-reckoning.json")
}

/// The example's scripted replies, with `changes` merged in (e.g. delays).
fn script(dir: &Path, changes: Value) -> PathBuf {
    let mut replies: Value =
        serde_json::from_str(&std::fs::read_to_string(script_path()).unwrap()).unwrap();
    for (step, change) in changes.as_object().unwrap() {
        replies[step] = change.clone();
    }
    let path = dir.join("replies.json");
    std::fs::write(&path, serde_json::to_string(&replies).unwrap()).unwrap();
    path
}

fn command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_control-room"));
    command.args(args).arg("--dir").arg(root);
    command
}

fn run_cli(root: &Path, args: &[&str]) -> Output {
    command(root, args).output().expect("the binary runs")
}

fn run_dir(root: &Path, run_id: &str) -> PathBuf {
    root.join(".control-room/runs").join(run_id)
}

fn steps(root: &Path, run_id: &str) -> Vec<Value> {
    let path = run_dir(root, run_id).join("steps.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "a torn last line:\n{text}"
    );
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("bad line {line}: {e}")))
        .collect()
}

/// Every JSON file of the run parses, no step id appears twice, and no
/// temporary file is left.
fn assert_run_files_valid(root: &Path, run_id: &str) {
    assert_run_files_parse(root, run_id);
    let dir = run_dir(root, run_id);
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            !name.contains(".tmp-"),
            "temporary file left behind: {name}"
        );
    }
}

/// What a kill -9 may leave: a temporary file beside the JSON files, which
/// must all parse, with no step id twice. (cache.json is written when a run
/// ends: a run killed before has none, and its slots are in its lines.)
fn assert_run_files_parse(root: &Path, run_id: &str) {
    let dir = run_dir(root, run_id);
    read_json(&dir.join("run.json"));
    if dir.join("cache.json").exists() {
        read_json(&dir.join("cache.json"));
    }
    let steps = steps(root, run_id);
    let mut ids: Vec<&str> = steps
        .iter()
        .map(|s| s["step_id"].as_str().unwrap())
        .collect();
    let count = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), count, "a step id appears twice: {ids:?}");
}

/// The slots of a finished run, without what differs between runs (receipt
/// ids): a pointer's output hash and summary, an artifact's text.
fn final_slots(root: &Path, run_id: &str) -> BTreeMap<String, Value> {
    let cache = read_json(&run_dir(root, run_id).join("cache.json"));
    cache
        .as_object()
        .unwrap()
        .iter()
        .map(|(slot, value)| {
            let kept = match value["type"].as_str() {
                Some("pointer") => json!({"sha256": value["sha256"], "summary": value["summary"]}),
                _ => json!({"text": value["text"], "agent_id": value["agent_id"]}),
            };
            (slot.clone(), kept)
        })
        .collect()
}

/// `run creative_draft_scene` for SCN-the-reckoning with scripted replies.
fn draft_reckoning(root: &Path, script: &Path, extra: &[&str]) -> Output {
    let model = format!("scripted:{}", script.display());
    let mut args = vec![
        "run",
        "creative_draft_scene",
        "--arg",
        "scene_id=SCN-the-reckoning",
        "--model",
        &model,
    ];
    args.extend_from_slice(extra);
    run_cli(root, &args)
}

fn receipts_of(root: &Path, run_id: &str) -> Vec<ToolReceipt> {
    let manifest = read_json(&run_dir(root, run_id).join("run.json"));
    receipts::load(root, manifest["session_id"].as_str().unwrap())
}

#[test]
fn route_prints_the_routing_result_as_json() {
    let dir = example();
    let route = |task: &str| -> Value {
        let output = run_cli(dir.path(), &["route", task]);
        assert!(output.status.success(), "{}", text(&output));
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let drafted = route("Please DRAFT SCENE SCN-the-reckoning");
    assert_eq!(drafted["recipe_id"], "creative_draft_scene");
    assert_eq!(drafted["routable"], true);
    assert_eq!(
        drafted["initial_args"]["scene_path"],
        "Story/Scenes/SCN-the-reckoning.md"
    );
    assert_eq!(
        drafted["initial_args"]["canon_paths"],
        json!([
            "Compendium/Characters/CHAR-kael-maren.md",
            "Compendium/Characters/CHAR-ysolde-harrow.md"
        ])
    );
    // "check continuity" (16) is longer than "consistency" and "prose".
    let checked = route("check continuity and prose of scene 2");
    assert_eq!(checked["recipe_id"], "analytical_consistency", "{checked}");
    assert_eq!(checked["initial_args"]["scene_id"], "SCN-the-gate");
    assert!(
        checked["reason"]
            .as_str()
            .unwrap()
            .contains("check continuity")
    );
    let prose = route("review prose in Story/Scenes/SCN-the-vigil.md");
    assert_eq!(prose["recipe_id"], "analytical_prose");
    assert_eq!(
        prose["initial_args"]["scene_path"],
        "Story/Scenes/SCN-the-vigil.md"
    );
    let nothing = route("make me a sandwich");
    assert_eq!(nothing["routable"], false);
    assert_eq!(nothing["recipe_id"], Value::Null);
    assert!(
        nothing["reason"].as_str().unwrap().contains("no recipe"),
        "{nothing}"
    );
}

#[test]
fn a_scripted_dry_run_of_draft_scene_leaves_a_complete_signed_record() {
    let dir = example();
    let root = dir.path();
    let script = script_path();
    let output = run_cli(
        root,
        &[
            "run",
            "draft scene SCN-the-reckoning",
            "--model",
            &format!("scripted:{}", script.display()),
        ],
    );
    assert!(output.status.success(), "{}", text(&output));
    let run_id = only_run(root);
    assert!(String::from_utf8_lossy(&output.stdout).contains(&format!("run {run_id} done")));
    assert_run_files_valid(root, &run_id);

    let manifest = read_json(&run_dir(root, &run_id).join("run.json"));
    assert_eq!(manifest["status"], "done");
    assert_eq!(manifest["recipe_id"], "creative_draft_scene");
    assert_eq!(manifest["current_step_index"], 8);
    assert_eq!(manifest["total_steps"], 8);
    assert_eq!(manifest["phase"], Value::Null);
    assert!(manifest["completed_at"].is_string());
    for field in [
        "run_id",
        "session_id",
        "created_at",
        "updated_at",
        "task",
        "error",
    ] {
        assert!(manifest.get(field).is_some(), "run.json lacks {field}");
    }

    let steps = steps(root, &run_id);
    let ids: Vec<&str> = steps
        .iter()
        .map(|s| s["step_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, RECIPE_STEPS);
    for (index, step) in steps.iter().enumerate() {
        assert_eq!(step["step_index"], index);
        assert_eq!(step["status"], "done");
        assert!(step["output_hash"].as_str().unwrap().starts_with("sha256:"));
        let phase_a = index < 3;
        assert_eq!(step["phase"], if phase_a { "a" } else { "b" });
        // Tool steps cite their tool receipt, agent steps their agent receipt.
        let receipt_id = step["receipt_id"].as_str().unwrap();
        assert_eq!(receipt_id.starts_with("arcpt_"), !phase_a, "{step}");
        assert_eq!(step["agent_archetype"].is_string(), !phase_a, "{step}");
    }

    // Each agent step was handed a packet and left a signed receipt, both
    // valid v0.2 contracts with their version, linked to each other and to the run.
    let key = SigningKey::load_or_create(root, &Disk::default()).unwrap();
    let packets = audit::load_packets(root, &run_id);
    let agent_receipts = audit::load_receipts(root, &run_id);
    assert_eq!(packets.len(), 5);
    assert_eq!(agent_receipts.len(), 5);
    for ((packet, receipt), step) in packets.iter().zip(&agent_receipts).zip(&steps[3..]) {
        assert!(
            audit::contract_errors("packet.v0.2", &serde_json::to_value(packet).unwrap())
                .is_empty()
        );
        assert!(
            audit::contract_errors("receipt.v0.2", &serde_json::to_value(receipt).unwrap())
                .is_empty()
        );
        assert_eq!(
            (packet.version.as_deref(), receipt.version.as_deref()),
            (Some("0.2"), Some("0.2"))
        );
        assert_eq!(receipt.packet_id, packet.packet_id);
        assert_eq!(
            (receipt.issue_id.as_str(), packet.parent_issue_id.as_str()),
            (run_id.as_str(), run_id.as_str())
        );
        assert_eq!(step["receipt_id"], receipt.receipt_id.as_str());
        assert_eq!(packet.handoff.step_id, receipt.step_id);
        assert!(
            receipt.verify(&key),
            "{} does not verify",
            receipt.receipt_id
        );
        assert_eq!(receipt.actor.provider, "scripted");
        assert!(!receipt.stop_hook && receipt.attempts == 1);
        assert_eq!(receipt.outputs_produced.len(), 1);
        assert!(
            receipt.checks_performed.iter().all(|check| check.passed),
            "{:?}",
            receipt.checks_performed
        );
    }
    assert_eq!(
        packets[0].target.scene_id.as_deref(),
        Some("SCN-the-reckoning")
    );
    assert_eq!(packets[0].intent, "plan");
    assert_eq!(packets[1].intent, "draft");
    assert!(
        packets[1]
            .output_contract
            .expected_artifacts
            .contains(&"Story/Scenes/SCN-the-reckoning.md".to_owned())
    );
    assert_eq!(
        packets[3].output_contract.schema.as_deref(),
        Some("prompts/schemas/check_continuity.json")
    );
    assert!(
        agent_receipts[3]
            .checks_performed
            .iter()
            .any(|c| c.check == "json_schema" && c.passed)
    );
    // The first agent cites the tool receipts its inputs came from.
    assert_eq!(agent_receipts[0].citations.len(), 2);
    assert_eq!(
        steps[3]["input_slot_refs"],
        json!(["outline_beat", "canon_context"])
    );

    let cache = read_json(&run_dir(root, &run_id).join("cache.json"));
    assert_eq!(cache["discovery"]["type"], "pointer");
    assert_eq!(cache["edited_draft"]["type"], "artifact");
    assert!(
        cache["edited_draft"]["text"]
            .as_str()
            .unwrap()
            .starts_with("# The Reckoning")
    );
    assert!(
        cache["outline_beat"]["summary"]
            .as_str()
            .unwrap()
            .contains("Ysolde answers")
    );

    // Three tool receipts, each signed with the workspace's key; a receipt
    // with one byte changed no longer verifies.
    let receipts = receipts_of(root, &run_id);
    assert_eq!(receipts.len(), 3);
    for (receipt, step) in receipts.iter().zip(&steps) {
        assert!(receipts::is_receipt_id(&receipt.receipt_id));
        assert_eq!(step["receipt_id"], receipt.receipt_id.as_str());
        assert!(
            receipt.verify(&key),
            "{} does not verify",
            receipt.receipt_id
        );
        assert!(!receipt.file_refs.is_empty() || receipt.tool == "file_locator");
        for file in &receipt.file_refs {
            assert_eq!(file.sha256.len(), 64);
            assert!(file.start_line >= 1 && file.end_line >= file.start_line);
            assert!(file.excerpt.chars().count() <= 200);
        }
    }
    let log = receipts::receipts_path(root, manifest["session_id"].as_str().unwrap());
    let original = std::fs::read_to_string(&log).unwrap();
    let at = original
        .find("Ysolde answers")
        .expect("the beat is in the outline receipt");
    let mut tampered = original.clone().into_bytes();
    tampered[at] = b'X';
    std::fs::write(&log, tampered).unwrap();
    let after = receipts::load(root, manifest["session_id"].as_str().unwrap());
    assert_eq!(
        after.iter().filter(|receipt| !receipt.verify(&key)).count(),
        1
    );
    std::fs::write(&log, original).unwrap();

    // The signing key is kept out of git.
    let ignore = std::fs::read_to_string(root.join(".control-room/.gitignore")).unwrap();
    assert!(ignore.contains("audit/secret.key"));

    let listed = run_cli(root, &["runs", "list"]);
    assert!(
        text(&listed).contains(&run_id) && text(&listed).contains("done"),
        "{}",
        text(&listed)
    );
    let shown = run_cli(root, &["runs", "show", &run_id]);
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["steps"].as_array().unwrap().len(), 8);
    assert_eq!(shown["cache_summary"]["draft"]["type"], "artifact");
}

/// The final slots of an uninterrupted run, the reference for resumed ones.
fn reference_slots() -> BTreeMap<String, Value> {
    let dir = example();
    let script = script(dir.path(), json!({}));
    let output = draft_reckoning(dir.path(), &script, &["--task", "draft"]);
    assert!(output.status.success(), "{}", text(&output));
    final_slots(dir.path(), &only_run(dir.path()))
}

fn start_run(root: &Path, script: &Path) -> Child {
    command(
        root,
        &[
            "run",
            "creative_draft_scene",
            "--arg",
            "scene_id=SCN-the-reckoning",
            "--task",
            "draft",
            "--model",
            &format!("scripted:{}", script.display()),
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn step_lines(root: &Path) -> usize {
    let Ok(runs) = std::fs::read_dir(root.join(".control-room/runs")) else {
        return 0;
    };
    runs.flatten()
        .map(|run| {
            std::fs::read_to_string(run.path().join("steps.jsonl"))
                .map_or(0, |text| text.lines().count())
        })
        .sum()
}

#[test]
fn a_run_killed_at_any_step_boundary_or_mid_step_resumes_to_the_same_slots() {
    let reference = reference_slots();
    // Agent steps take a moment, so a kill can land inside them; tool steps
    // are quick, so kills after their lines land wherever the run has got to.
    // The polished scene is long enough to be one (the recipe's Definition
    // of Done asks a hundred words).
    let polished = format!(
        "# The Reckoning\n\n{}",
        "The tide had left the yard strewn with wrack, and nobody had swept it. ".repeat(8)
    );
    let slow = json!({
        "brief": {"reply": "POV: Kael Maren. Goal: the reckoning.", "delay_ms": 150},
        "draft": {"reply": "# The Reckoning\n\nThe tide had left the yard strewn with wrack.", "delay_ms": 150},
        "polish": {"reply": polished, "delay_ms": 150},
    });
    let reference = {
        let dir = example();
        let script = script(dir.path(), slow.clone());
        let output = draft_reckoning(dir.path(), &script, &["--task", "draft"]);
        assert!(output.status.success(), "{}", text(&output));
        let slots = final_slots(dir.path(), &only_run(dir.path()));
        assert_eq!(slots.len(), reference.len());
        slots
    };
    // (lines to wait for, extra wait): at each boundary, and inside each agent step.
    let mut kills: Vec<(usize, u64)> = (0..RECIPE_STEPS.len()).map(|lines| (lines, 0)).collect();
    kills.extend([(3, 60), (4, 60), (5, 60)]);
    for (lines, extra_ms) in kills {
        let dir = example();
        let root = dir.path();
        let script = script(root, slow.clone());
        let mut child = start_run(root, &script);
        wait_for(&format!("{lines} step lines"), || {
            if lines == 0 {
                root.join(".control-room/runs")
                    .read_dir()
                    .is_ok_and(|entries| {
                        entries
                            .flatten()
                            .any(|e| !e.file_name().to_string_lossy().starts_with('.'))
                    })
            } else {
                step_lines(root) >= lines
            }
        });
        std::thread::sleep(Duration::from_millis(extra_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let run_id = only_run(root);
        assert_run_files_parse(root, &run_id);
        let manifest = read_json(&run_dir(root, &run_id).join("run.json"));
        if manifest["status"] == "done" {
            continue; // the kill came after the end
        }
        let finished_before = steps(root, &run_id);
        let resumed = run_cli(
            root,
            &[
                "runs",
                "resume",
                &run_id,
                "--model",
                &format!("scripted:{}", script.display()),
            ],
        );
        assert!(
            resumed.status.success(),
            "kill after {lines} lines +{extra_ms} ms: {}",
            text(&resumed)
        );
        assert_run_files_valid(root, &run_id);
        let steps = steps(root, &run_id);
        let ids: Vec<&str> = steps
            .iter()
            .map(|s| s["step_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, RECIPE_STEPS, "kill after {lines} lines +{extra_ms} ms");
        // Finished steps were not repeated: their lines are kept as they were.
        assert_eq!(
            steps[..finished_before.len()],
            finished_before[..],
            "kill after {lines} lines"
        );
        assert_eq!(
            final_slots(root, &run_id),
            reference,
            "kill after {lines} lines +{extra_ms} ms"
        );
        let manifest = read_json(&run_dir(root, &run_id).join("run.json"));
        assert_eq!(manifest["status"], "done");
        // Every receipt a step points at exists and verifies. (A tool call
        // killed before its step line was written left a receipt too: it
        // happened, so the log keeps it, but no step points at it.)
        let key = SigningKey::load_or_create(root, &Disk::default()).unwrap();
        let receipts = receipts_of(root, &run_id);
        for step in &steps[..3] {
            let id = step["receipt_id"].as_str().unwrap();
            let receipt = receipts
                .iter()
                .find(|r| r.receipt_id == id)
                .expect("the step's receipt exists");
            assert!(receipt.verify(&key));
        }
    }
}

/// A run of the draft recipe whose writer answers only after 30 s, started
/// and waited for until it is at the draft step: the process and the run.
fn start_a_run_that_waits_at_the_draft(root: &Path) -> (Child, String) {
    let script = script(
        root,
        json!({"draft": {"reply": "# Never", "delay_ms": 30000}}),
    );
    let child = start_run(root, &script);
    wait_for("the draft step", || step_lines(root) >= 4);
    (child, only_run(root))
}

#[test]
fn cancel_stops_the_current_step_and_resume_finishes_the_run() {
    let dir = example();
    let root = dir.path();
    let (mut child, run_id) = start_a_run_that_waits_at_the_draft(root);
    let started = Instant::now();
    let cancelled = run_cli(root, &["runs", "cancel", &run_id]);
    assert!(cancelled.status.success(), "{}", text(&cancelled));
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cancel took {:?}",
        started.elapsed()
    );
    assert_eq!(status.code(), Some(1));
    assert_run_files_valid(root, &run_id);
    let manifest = read_json(&run_dir(root, &run_id).join("run.json"));
    assert_eq!(manifest["status"], "cancelled");
    assert_eq!(manifest["current_step_index"], 4);
    assert!(
        manifest["error"]
            .as_str()
            .unwrap()
            .contains("cancelled during step 5 of 8")
    );
    assert_eq!(
        steps(root, &run_id).len(),
        4,
        "nothing of the cancelled step is written"
    );
    let cache = read_json(&run_dir(root, &run_id).join("cache.json"));
    assert!(cache.get("draft").is_none());

    let fixed = script_path();
    let resumed = run_cli(
        root,
        &[
            "runs",
            "resume",
            &run_id,
            "--model",
            &format!("scripted:{}", fixed.display()),
        ],
    );
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_eq!(steps(root, &run_id).len(), 8);
    assert_eq!(
        read_json(&run_dir(root, &run_id).join("run.json"))["status"],
        "done"
    );

    let again = run_cli(root, &["runs", "cancel", &run_id]);
    assert!(text(&again).contains("already done"), "{}", text(&again));
}

#[test]
fn a_failing_agent_halts_the_run_and_resume_does_not_repeat_finished_steps() {
    let dir = example();
    let root = dir.path();
    let script = script(
        root,
        json!({"polish": {"error": "the editor model is overloaded"}}),
    );
    let output = draft_reckoning(root, &script, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let run_id = only_run(root);
    let manifest = read_json(&run_dir(root, &run_id).join("run.json"));
    assert_eq!(manifest["status"], "failed");
    let error = manifest["error"].as_str().unwrap();
    assert!(
        error.contains("step `polish` (agent editor)") && error.contains("overloaded"),
        "{error}"
    );
    assert!(text(&output).contains("overloaded"));
    assert_eq!(steps(root, &run_id).len(), 5);

    let resumed = run_cli(
        root,
        &[
            "runs",
            "resume",
            &run_id,
            "--model",
            &format!("scripted:{}", script_path().display()),
        ],
    );
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_run_files_valid(root, &run_id);
    assert_eq!(steps(root, &run_id).len(), 8);
    assert_eq!(receipts_of(root, &run_id).len(), 3);
}

/// A run halted at its `polish` step, with run.json edited by `change`.
fn halted_run_with_run_json(root: &Path, change: impl FnOnce(&mut Value)) -> (String, PathBuf) {
    let script = script(
        root,
        json!({"polish": {"error": "the editor model is overloaded"}}),
    );
    let output = draft_reckoning(root, &script, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let run_id = only_run(root);
    let path = run_dir(root, &run_id).join("run.json");
    let mut manifest = read_json(&path);
    change(&mut manifest);
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    (run_id, path)
}

fn resume_with_the_example_replies(root: &Path, run_id: &str) -> Output {
    let model = format!("scripted:{}", script_path().display());
    run_cli(root, &["runs", "resume", run_id, "--model", &model])
}

#[test]
fn a_run_json_from_before_the_version_field_still_resumes() {
    let dir = example();
    let root = dir.path();
    let (run_id, path) = halted_run_with_run_json(root, |manifest| {
        assert_eq!(manifest["version"], 1);
        manifest.as_object_mut().unwrap().remove("version");
    });
    let resumed = resume_with_the_example_replies(root, &run_id);
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_eq!(steps(root, &run_id).len(), 8);
    let manifest = read_json(&path);
    assert_eq!(manifest["status"], "done");
    assert_eq!(manifest["version"], 1, "written back with its version");
}

#[test]
fn a_run_json_of_a_newer_version_is_refused_naming_the_file_and_both_versions() {
    let dir = example();
    let root = dir.path();
    let (run_id, path) = halted_run_with_run_json(root, |manifest| {
        manifest["version"] = json!(2);
    });
    let before = std::fs::read(&path).unwrap();
    for args in [
        vec!["runs", "show", run_id.as_str()],
        vec!["runs", "resume", run_id.as_str()],
    ] {
        let output = if args[1] == "resume" {
            resume_with_the_example_replies(root, &run_id)
        } else {
            run_cli(root, &args)
        };
        let said = text(&output);
        assert!(
            !output.status.success() && output.status.code() != Some(101),
            "{args:?} should fail cleanly: {said}"
        );
        assert!(
            said.contains(&format!("{run_id}/run.json"))
                && said.contains("version 2")
                && said.contains("version 1"),
            "{args:?}: {said}"
        );
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "left as it was");
    assert_eq!(steps(root, &run_id).len(), 5, "no step ran");
}

#[test]
fn a_reply_that_is_not_json_where_json_is_due_fails_its_step() {
    let dir = example();
    let root = dir.path();
    let script = script(root, json!({"continuity": "Looks fine to me!"}));
    let output = draft_reckoning(root, &script, &[]);
    assert_eq!(output.status.code(), Some(1));
    let manifest = read_json(&run_dir(root, &only_run(root)).join("run.json"));
    let error = manifest["error"].as_str().unwrap();
    assert!(
        error.contains("step `continuity`")
            && error.contains("not valid JSON")
            && error.contains("Looks fine"),
        "{error}"
    );
}

fn write_recipe(root: &Path, name: &str, recipe: &Value) {
    let dir = root.join(".control-room/recipes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(name),
        serde_json::to_string_pretty(recipe).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_broken_project_recipe_is_reported_with_file_pointer_and_rule() {
    let dir = example();
    let root = dir.path();
    let recipe = json!({
        "recipe_id": "check_gate",
        "label": "Check the gate",
        "task_patterns": ["gate check", "/gate (check/"],
        "phase_a": [
            {"step_id": "find", "tool": "file_locater", "args": {}, "output_slot": "found"},
            {"step_id": "look", "tool": "prose_analyzer", "args": {"scene_path": {"$ref": "discovery.matches[0].path"}}, "output_slot": "prose"}
        ],
        "phase_b": [
            {"step_id": "find", "agent_archetype": "critic", "input_slots": ["prose", "outline"], "output_slot": "critique", "prompt_type": "evaluate_reader_experience"},
            {"step_id": "judge", "agent_archetype": "judge", "input_slots": [], "output_slot": "verdict", "prompt_type": "no_such_prompt"}
        ],
        "dod": [{"check": "slot_is_nice", "slot": "critique"}]
    });
    write_recipe(root, "check_gate.json", &recipe);
    let output = run_cli(root, &["run", "check_gate"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    let all = text(&output);
    for expected in [
        ".control-room/recipes/check_gate.json at /phase_a/0/tool: unknown tool `file_locater` (did you mean `file_locator`?)",
        "[unknown-tool]",
        "at /phase_a/1/args/scene_path/$ref: `discovery.matches[0].path` names slot `discovery`, which no earlier step produces (available: found) [unknown-slot]",
        "at /phase_b/0/step_id: step id `find` is used twice [duplicate-step-id]",
        "at /phase_b/0/input_slots/1: input slot `outline` is not produced by an earlier step",
        "at /phase_b/1/agent_archetype: unknown agent archetype `judge`",
        "at /phase_b/0/input_slots: the template `evaluate_reader_experience` (prompts/templates/evaluate_reader_experience.t1.md) injects `{{edited_draft | revision_notes | validation}}`, which none of this step's input slots provides [unfed-placeholder]",
        "at /phase_b/1/prompt_type: no prompt template `no_such_prompt`",
        "at /dod/0/check: unknown DoD check `slot_is_nice`",
        "at /task_patterns/1: task pattern `/gate (check/` is not usable",
        "[bad-pattern]",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
    // Invalid JSON gives its line and column.
    std::fs::write(
        root.join(".control-room/recipes/check_gate.json"),
        "{\n  \"recipe_id\": \"check_gate\",\n  oops\n}",
    )
    .unwrap();
    let output = run_cli(root, &["run", "check_gate"]);
    assert!(
        text(&output).contains(".control-room/recipes/check_gate.json:3:3: not valid JSON"),
        "{}",
        text(&output)
    );
    // The bundled recipes still work beside a broken project one.
    let routed = run_cli(root, &["route", "draft scene SCN-the-gate"]);
    assert!(routed.status.success());
}

#[test]
fn a_broken_review_block_is_reported_at_its_pointers() {
    let dir = example();
    let root = dir.path();
    let bundled: Value = serde_json::from_str(include_str!(
        "../recipes/creative_draft_scene_reviewed.json"
    ))
    .unwrap();
    let mut broken = bundled.clone();
    broken["recipe_id"] = json!("reviewed_badly");
    broken["task_patterns"] = json!(["review badly"]);
    broken["review"]["after"] = json!("drafting");
    broken["review"]["prompt_type"] = json!("draft_scene");
    broken["review"]["max_iterations"] = json!(9);
    broken["review"]["gates"]["word_tolerance"] = json!(2);
    broken["review"]["rules"][1]["id"] = json!("beats");
    broken["review"]["rules"][2]["colour"] = json!("red");
    write_recipe(root, "reviewed_badly.json", &broken);
    let output = run_cli(root, &["run", "reviewed_badly"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    let all = text(&output);
    for expected in [
        "at /review/after: `after` must name a phase B step (the writer); there is no `drafting` [unknown-step]",
        "at /review/prompt_type: the reviewer's template `draft_scene` must answer JSON (the verdict) [review-not-json]",
        "at /review/max_iterations: `max_iterations` must be a whole number from 1 to 5",
        "at /review/gates/word_tolerance: `word_tolerance` must be a fraction above 0 and at most 1",
        "at /review/rules/1/id: rule id `beats` is used twice [duplicate-rule]",
        "at /review/rules/2/colour: unknown field `colour`",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
    // The bundled reviewed recipe itself is valid, and a `#` in a step id is refused.
    let mut hashed = bundled;
    hashed["recipe_id"] = json!("hashed");
    hashed["task_patterns"] = json!(["hashed"]);
    hashed["phase_b"][3]["step_id"] = json!("continuity#2");
    write_recipe(root, "reviewed_badly.json", &hashed);
    let all = text(&run_cli(root, &["run", "hashed"]));
    assert!(
        all.contains("at /phase_b/3/step_id: step id `continuity#2` may not contain `#`"),
        "{all}"
    );
}

#[test]
fn a_project_recipe_shadows_the_bundled_one_and_a_failed_dod_writes_an_issue() {
    let dir = example();
    let root = dir.path();
    let bundled: Value =
        serde_json::from_str(include_str!("../recipes/creative_draft_scene.json")).unwrap();
    let mut strict = bundled.clone();
    strict["label"] = json!("Draft a scene, strictly");
    strict["task_patterns"] = json!(["/(draft|write) (a|the) (new )?scene/"]);
    strict["dod"] = json!([
        {"check": "slot_field_equals", "slot": "continuity_report", "field": "pass", "expected": true},
        {"check": "file_exists", "path": {"$ref": "task.args.scene_path"}}
    ]);
    write_recipe(root, "strict.json", &strict);
    let script = script(
        root,
        json!({"continuity": {"pass": false, "findings": [{"severity": "error", "quote": "the keys on their cord", "message": "Tomas is dead."}]}}),
    );
    // The project recipe's regular expression routes; the bundled patterns
    // it shadows do not.
    let routed: Value = serde_json::from_slice(
        &run_cli(root, &["route", "Write the NEW scene SCN-the-gate"]).stdout,
    )
    .unwrap();
    assert_eq!(routed["recipe_id"], "creative_draft_scene", "{routed}");
    assert!(
        routed["reason"]
            .as_str()
            .unwrap()
            .contains("/(draft|write)"),
        "{routed}"
    );
    let bundled_words: Value =
        serde_json::from_slice(&run_cli(root, &["route", "scene from outline"]).stdout).unwrap();
    assert_eq!(bundled_words["routable"], false, "{bundled_words}");
    let output = draft_reckoning(root, &script, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let run_id = only_run(root);
    let manifest = read_json(&run_dir(root, &run_id).join("run.json"));
    assert_eq!(manifest["status"], "failed");
    assert_eq!(
        steps(root, &run_id).len(),
        8,
        "every step ran; only the DoD failed"
    );
    let issue_path = root.join(format!(".control-room/issues/DOD-{run_id}.md"));
    let issue = std::fs::read_to_string(&issue_path).unwrap();
    assert!(
        issue.contains("Draft a scene, strictly"),
        "the project recipe ran:\n{issue}"
    );
    assert!(issue.contains(&run_id));
    assert!(
        issue.contains("`continuity_report.pass` is false, expected true"),
        "{issue}"
    );
    assert!(
        issue.contains("file_exists: `Story/Scenes/SCN-the-reckoning.md` does not exist"),
        "{issue}"
    );
    assert!(issue.contains(&format!("../runs/{run_id}/steps.jsonl")));
    assert!(
        manifest["error"]
            .as_str()
            .unwrap()
            .contains(&format!("DOD-{run_id}.md"))
    );
}

#[test]
fn a_missing_task_argument_fails_the_step_that_needs_it() {
    let dir = example();
    let root = dir.path();
    let output = run_cli(
        root,
        &[
            "run",
            "analytical_prose",
            "--model",
            &format!("scripted:{}", script_path().display()),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let manifest = read_json(&run_dir(root, &only_run(root)).join("run.json"));
    let error = manifest["error"].as_str().unwrap();
    assert_eq!(
        error,
        "step `discover` (tool file_locator) failed: `$ref` `task.args.scene_path` broke at `scene_path`: no such field (pass it with --arg scene_path=…)"
    );
}

/// A workspace where `.control-room/` cannot be created: read-only for an
/// ordinary user; for root (which ignores permissions) a file stands where
/// the folder should be.
#[test]
fn a_workspace_that_cannot_be_written_gives_a_clear_error() {
    let dir = example();
    let root = dir.path();
    set_read_only(root, true);
    let read_only = std::fs::write(root.join("probe"), "x").is_err();
    if !read_only {
        set_read_only(root, false);
        std::fs::write(root.join(".control-room"), "not a folder").unwrap();
    }
    let output = run_cli(
        root,
        &[
            "run",
            "creative_draft_scene",
            "--arg",
            "scene_id=SCN-the-gate",
        ],
    );
    set_read_only(root, false);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    let all = text(&output);
    assert!(all.contains("cannot write the run's files"), "{all}");
    let reason = if read_only {
        "ermission denied"
    } else {
        "ot a directory"
    };
    assert!(all.contains(reason), "{all}");
}

fn set_read_only(path: &Path, read_only: bool) {
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(read_only);
    std::fs::set_permissions(path, permissions).unwrap();
}

/// A disk that fills after N writes, for every N up to a whole run: the run
/// stops with an error naming the cause, its files stay valid, and a resume
/// on a disk with room finishes it with the same slots as a run that never
/// stopped. This also stands for a crash between any two of a step's writes.
#[test]
fn a_disk_that_fills_at_any_write_leaves_valid_files_and_resumes() {
    use control_room::llm::model::{Model, ScriptedModel};
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let model: Arc<dyn Model> = Arc::new(ScriptedModel::load(&script_path()).unwrap());
    let runner = |root: &Path, disk: Disk| support::runner(root, disk, model.clone());
    let mut args = serde_json::Map::new();
    args.insert("scene_id".into(), json!("SCN-the-reckoning"));

    let reference = {
        let dir = example();
        let runner = runner(dir.path(), Disk::default());
        let run = runner
            .create("creative_draft_scene", "draft", args.clone(), None)
            .unwrap();
        let done = runtime
            .block_on(runner.execute(&run.run_id, CancellationToken::new()))
            .unwrap();
        assert_eq!(done.status.as_str(), "done");
        final_slots(dir.path(), &run.run_id)
    };
    let mut stopped = 0;
    for writes in 0..60 {
        let dir = example();
        let root = dir.path();
        let full = runner(root, Disk::failing_after_writes(writes));
        let Ok(run) = full.create("creative_draft_scene", "draft", args.clone(), None) else {
            continue; // the disk filled before the run existed
        };
        match runtime.block_on(full.execute(&run.run_id, CancellationToken::new())) {
            Ok(manifest) if manifest.status.as_str() == "done" => break,
            Ok(manifest) => panic!("after {writes} writes: {manifest:?}"),
            Err(error) => {
                assert!(
                    error.to_string().contains("No space left on device"),
                    "{error}"
                );
            }
        }
        stopped += 1;
        assert_run_files_valid(root, &run.run_id);
        let roomy = runner(root, Disk::default());
        let done = runtime
            .block_on(roomy.execute(&run.run_id, CancellationToken::new()))
            .unwrap_or_else(|error| panic!("resume after {writes} writes: {error}"));
        assert_eq!(done.status.as_str(), "done", "after {writes} writes");
        assert_run_files_valid(root, &run.run_id);
        let ids: Vec<String> = steps(root, &run.run_id)
            .iter()
            .map(|s| s["step_id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(ids, RECIPE_STEPS, "after {writes} writes");
        assert_eq!(
            final_slots(root, &run.run_id),
            reference,
            "after {writes} writes"
        );
    }
    // A run of this recipe writes 27 times: run.json when it is made,
    // starts, changes phase and ends, each tool's receipt, each agent's
    // packet and receipt, each step's line, and cache.json at the end.
    assert!(stopped >= 25, "only {stopped} write points were exercised");
}

/// Sinks hear the run: start, each step's start and end in order, the DoD
/// check, the end.
#[test]
fn sinks_hear_every_step_in_order() {
    use control_room::index::Workspace;
    use control_room::llm::model::ScriptedModel;
    use control_room::runs::events::{Recorder, RunEvent};
    use control_room::runs::prompts::Prompts;
    use control_room::runs::recipe::Registry;
    use control_room::runs::runner::Runner;
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;

    let dir = example();
    let root = dir.path();
    let recorder = Arc::new(Recorder::default());
    let templates = Prompts::load(root);
    let runner = Runner {
        workspace: Arc::new(Workspace::load(root)),
        registry: Arc::new(Registry::load(root, &templates)),
        prompts: Arc::new(templates),
        model: Some(Arc::new(ScriptedModel::load(&script_path()).unwrap())),
        disk: Disk::default(),
        sinks: vec![recorder.clone()],
        reuse: false,
        graph: Default::default(),
        cited: Default::default(),
    };
    let mut args = serde_json::Map::new();
    args.insert("scene_id".into(), json!("SCN-the-reckoning"));
    let run = runner
        .create("creative_draft_scene", "draft", args, None)
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(runner.execute(&run.run_id, CancellationToken::new()))
        .unwrap();
    let events = recorder.events();
    let mut described = Vec::new();
    for event in &events {
        described.push(match event {
            RunEvent::Started { from_step, .. } => format!("start@{from_step}"),
            RunEvent::StepStarted {
                step_id,
                phase,
                actor,
                index,
                total,
                ..
            } => {
                format!("{}/{total} {phase} {step_id} {actor}", index + 1)
            }
            RunEvent::StepFinished { step_id, .. } => format!("done {step_id}"),
            RunEvent::Writing { step_id, .. } => format!("writing {step_id}"),
            RunEvent::Checking { .. } => "dod".to_owned(),
            RunEvent::Finished { manifest } => format!("end {}", manifest.status.as_str()),
        });
    }
    assert_eq!(described.first().map(String::as_str), Some("start@0"));
    assert_eq!(described[1], "1/8 a discover file_locator");
    assert_eq!(described[2], "done discover");
    assert_eq!(described[7], "4/8 b brief planner");
    assert_eq!(
        described[described.len() - 2..],
        ["dod".to_owned(), "end done".to_owned()]
    );
    assert_eq!(described.len(), 1 + 16 + 2);
}

#[test]
fn a_terminal_gets_a_progress_bar_and_a_pipe_gets_plain_lines() {
    let dir = example();
    let root = dir.path();
    let replies: Value =
        serde_json::from_str(&std::fs::read_to_string(script_path()).unwrap()).unwrap();
    let script = script(
        root,
        json!({"draft": {"reply": replies["draft"], "delay_ms": 300}}),
    );
    // `script` (util-linux) runs the command on a pseudo-terminal.
    let command_line = format!(
        "'{}' run creative_draft_scene --arg scene_id=SCN-the-reckoning --model 'scripted:{}' --dir '{}'",
        env!("CARGO_BIN_EXE_control-room"),
        script.display(),
        root.display()
    );
    let output = Command::new("script")
        .args(["-qec", &command_line, "/dev/null"])
        .env("TERM", "xterm-256color")
        .output()
        .expect("`script` from util-linux runs");
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    assert!(
        shown.contains("[4/8] phase b: draft (writer)"),
        "the bar shows the step and its phase:\n{shown}"
    );
    assert!(
        shown.contains("\r\x1b[2K"),
        "the bar is redrawn in place:\n{shown}"
    );
    assert!(!shown.contains("draft done"), "no plain lines:\n{shown}");
    assert!(
        !shown.contains("[0/0]"),
        "no bar before the run starts:\n{shown}"
    );

    let piped = draft_reckoning(root, &script, &[]);
    let lines = String::from_utf8_lossy(&piped.stderr);
    assert!(
        lines.contains("[5/8] phase b: draft (writer)\n[5/8] draft done\n"),
        "{lines}"
    );
    assert!(
        !lines.contains('\x1b'),
        "no terminal codes in a pipe:\n{lines}"
    );
}

fn example() -> TempDir {
    support::example_copy("control-room-engine-")
}

#[test]
fn prompt_prints_what_a_step_would_be_sent_at_each_tier() {
    let dir = example();
    let root = dir.path();
    let prompt = |extra: &[&str]| {
        let mut args = vec![
            "prompt",
            "creative_draft_scene",
            "draft",
            "--arg",
            "scene_id=SCN-the-reckoning",
            "--json",
        ];
        args.extend(extra);
        let output = run_cli(root, &args);
        assert!(output.status.success(), "{}", text(&output));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let parts = |value: &Value| -> Vec<String> {
        value["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|part| part["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // Without [llm], the default model (a small local one) is minimal.
    let small = prompt(&[]);
    assert_eq!(small["model"], "llama3.1:8b");
    assert_eq!(
        (small["tier"].as_str(), small["variant"].as_str()),
        (Some("minimal"), Some("t1"))
    );
    assert!(!parts(&small).contains(&"process_map".to_owned()));
    let user = small["messages"][1]["content"].as_str().unwrap();
    // Phase A ran for real; the planner's brief is a placeholder.
    assert!(
        user.contains("[the planner's output from step `brief` goes here]"),
        "{user}"
    );
    assert!(user.contains("Kael Maren"), "{user}");
    let system = small["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("<current_step>draft (writer)</current_step>"),
        "{system}"
    );
    assert!(
        system.contains("Ysolde answers for the barred gate"),
        "{system}"
    );

    let large = prompt(&["--model", "claude-sonnet-4-5"]);
    assert_eq!(
        (large["tier"].as_str(), large["variant"].as_str()),
        (Some("full"), Some("t5"))
    );
    assert_eq!(
        parts(&large),
        [
            "identity",
            "process_map",
            "modes/director",
            "session_state",
            "protocols",
            "role",
            "template",
            "task_packet"
        ]
    );
    // The message closes with the step's task packet as the run sends it:
    // its contract, its files and who gets the draft next, with no ids.
    let user = large["messages"][1]["content"].as_str().unwrap();
    let packet = user
        .split_once("<task_packet>\n")
        .and_then(|(_, rest)| rest.strip_suffix("\n</task_packet>"))
        .unwrap_or_else(|| panic!("no packet closes the message: {user}"));
    let packet: serde_json::Value = serde_json::from_str(packet).unwrap();
    assert_eq!(packet["intent"], "draft");
    assert_eq!(packet["output_contract"]["kind"], "prose");
    assert_eq!(packet["handoff"]["step_id"], "draft");
    assert_eq!(packet["handoff"]["next_step_id"], "polish");
    assert!(packet.get("packet_id").is_none() && packet.get("timestamp").is_none());
    assert!(large["tokens"].as_u64().unwrap() > small["tokens"].as_u64().unwrap());
    let forced = prompt(&["--tier", "medium"]);
    assert_eq!(forced["variant"], "t3");

    // A project template wins, and a finished run supplies the real inputs.
    std::fs::create_dir_all(root.join(".control-room/prompts/templates")).unwrap();
    std::fs::write(
        root.join(".control-room/prompts/templates/polish_draft.md"),
        "Polish, project style:\n{{draft}}\n",
    )
    .unwrap();
    let output = draft_reckoning(root, &script_path(), &[]);
    assert!(output.status.success(), "{}", text(&output));
    let run_id = only_run(root);
    let output = run_cli(
        root,
        &["prompt", "creative_draft_scene", "polish", "--run", &run_id],
    );
    assert!(output.status.success(), "{}", text(&output));
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        shown.contains(".control-room/prompts/templates/polish_draft.md"),
        "{shown}"
    );
    assert!(
        shown.contains("──── user ────\nPolish, project style:\n# The Reckoning"),
        "{shown}"
    );

    let output = run_cli(root, &["prompt", "creative_draft_scene", "discover"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("recipe `creative_draft_scene` has no agent step `discover`; its agent steps are brief, draft, polish, continuity, critique"),
        "{}",
        text(&output)
    );
}

#[test]
fn a_run_whose_process_was_killed_is_listed_as_interrupted_not_running() {
    let dir = example();
    let root = dir.path();
    let (mut child, run_id) = start_a_run_that_waits_at_the_draft(root);
    let listed = text(&run_cli(root, &["runs", "list"]));
    assert!(listed.contains(&format!("{run_id}  running  ")), "{listed}");
    child.kill().unwrap();
    child.wait().unwrap();
    let listed = text(&run_cli(root, &["runs", "list"]));
    assert!(
        listed.contains(&format!("{run_id}  interrupted")),
        "{listed}"
    );
    // It can be resumed, and then it is done.
    let resumed = run_cli(
        root,
        &[
            "runs",
            "resume",
            &run_id,
            "--model",
            &format!("scripted:{}", script_path().display()),
        ],
    );
    assert!(resumed.status.success(), "{}", text(&resumed));
    let listed = text(&run_cli(root, &["runs", "list"]));
    assert!(listed.contains(&format!("{run_id}  done")), "{listed}");
}

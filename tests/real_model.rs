//! The AI half against a real local model server (llama-cpp-python with
//! SmolLM2-135M-Instruct, see `tests/real_model_server`), with nothing set
//! but the provider, the URL and the model. The model is weak on purpose;
//! these tests pin the plumbing, not the prose: every run ends within its
//! bound, ends in a state that says what happened, lands its output or
//! lands nothing, and never presents a reply cut off at its limit as
//! finished. Each prints its time and, per step, how often the model kept
//! its contract, the figures the project reports for a small local model.

use crate::support;
use crate::support::lsp_client;
use crate::support::real_model_server;

use std::path::Path;
use std::time::{Duration, Instant};

use lsp_client::editor::{capabilities, editor};
use lsp_client::{Client, example_copy};
use real_model_server::RealModelServer;
use serde_json::{Value, json};
use support::{control_room, output_text, read_json};

/// How long one recipe may take against the real server on a 2-core
/// machine; a run that takes longer hangs.
const RUN_BOUND: Duration = Duration::from_secs(480);

/// `recipe` run on the gate from the command line: its output, that output
/// as text, and how long it took.
fn run_on_the_gate(root: &Path, recipe: &str) -> (std::process::Output, String, Duration) {
    let started = Instant::now();
    let output = control_room(
        root,
        &[
            "run",
            recipe,
            "--arg",
            "scene_path=Story/Scenes/SCN-the-gate.md",
        ],
    );
    let elapsed = started.elapsed();
    let text = output_text(&output);
    (output, text, elapsed)
}

/// Every agent receipt of `run_id`.
fn agent_receipts(root: &Path, run_id: &str) -> Vec<Value> {
    let dir = root.join(".control-room/audit/issues").join(run_id);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut receipts: Vec<(String, Value)> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.to_string_lossy().contains("__receipt__"))
        .map(|path| (path.to_string_lossy().into_owned(), read_json(&path)))
        .collect();
    receipts.sort_by(|a, b| a.0.cmp(&b.0));
    receipts.into_iter().map(|(_, receipt)| receipt).collect()
}

/// Checks what every agent receipt of a run says and prints, per step,
/// whether the model kept its contract and at which attempt.
fn check_receipts(root: &Path, run_id: &str, label: &str) -> Vec<Value> {
    let receipts = agent_receipts(root, run_id);
    for receipt in &receipts {
        let effective = &receipt["actor"]["decoding"]["effective"];
        assert!(
            effective["max_tokens"]
                .as_u64()
                .is_some_and(|limit| limit > 0),
            "every call carries a reply limit: {receipt:#}"
        );
        assert_ne!(
            effective["response_format"], "json_schema",
            "this server refuses json_schema: the call stepped down: {receipt:#}"
        );
        let failed: Vec<&str> = receipt["checks_performed"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|check| check["passed"] == false)
            .filter_map(|check| check["check"].as_str())
            .collect();
        eprintln!(
            "{label}: step {} ({}): {} attempt(s), contract {}{}",
            receipt["step_id"].as_str().unwrap_or("?"),
            effective["response_format"].as_str().unwrap_or("?"),
            receipt["attempts"],
            if receipt["stop_hook"] == true {
                "broken"
            } else {
                "kept"
            },
            if failed.is_empty() {
                String::new()
            } else {
                format!(" (failed checks on the way: {})", failed.join(", "))
            }
        );
    }
    receipts
}

fn run_status(root: &Path, run_id: &str) -> String {
    let manifest = read_json(&root.join(format!(".control-room/runs/{run_id}/run.json")));
    manifest["status"].as_str().unwrap().to_owned()
}

/// The runs of a workspace.
fn run_ids(root: &Path) -> Vec<String> {
    if root.join(".control-room/runs").is_dir() {
        support::run_ids(root)
    } else {
        Vec::new()
    }
}

#[test]
fn draft_scene_in_the_editor_with_a_real_model_ends_in_time_and_lands_only_a_finished_draft() {
    let Some(model) = RealModelServer::start("draft_scene_in_the_editor_with_a_real_model") else {
        return;
    };
    let (_dir, root) = example_copy();
    model.configure(&root);
    let scene = root.join("Story/Scenes/SCN-the-reckoning.md");
    assert!(!scene.exists(), "the scene is new");

    let mut client = Client::spawn(&[]);
    client.responder = Some(editor(true, None));
    client.initialize(&root, capabilities());
    client.wait_for_index();
    let started = Instant::now();
    let reply = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runRecipe", "arguments": [{"recipe": "creative_draft_scene", "scene": "SCN-the-reckoning"}]}),
    );
    let run_id = reply["run_id"].as_str().expect("a run id").to_owned();
    let token = format!("control-room/run/{run_id}");
    let end = client.wait_for_within(RUN_BOUND, |m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == token.as_str()
            && m["params"]["value"]["kind"] == "end"
    });
    let elapsed = started.elapsed();
    let message = end["params"]["value"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    eprintln!("draft scene: {elapsed:.1?}, {message}");

    let status = run_status(&root, &run_id);
    let receipts = check_receipts(&root, &run_id, "draft scene");
    match status.as_str() {
        "done" => {
            assert_eq!(receipts.len(), 5, "five agents answered");
            assert!(
                message.starts_with("done: Story/Scenes/SCN-the-reckoning.md"),
                "{message}"
            );
            let text = std::fs::read_to_string(&scene).unwrap();
            let body = text.rsplit("---").next().unwrap_or_default();
            assert!(
                body.split_whitespace().count() > 20,
                "a draft landed: {text}"
            );
        }
        "failed" if message.contains("Definition of Done failed") => {
            // The continuity check found an error in the draft: it went
            // beside the scene with its findings, never into it.
            assert!(
                !scene.exists(),
                "a draft that failed its gates lands nothing"
            );
            let beside = root.join(format!("Story/Scenes/SCN-the-reckoning.draft-{run_id}.md"));
            assert!(
                beside.exists(),
                "the draft is kept beside the scene: {message}"
            );
        }
        "failed" => {
            // A clear message naming the step, and nothing in the manuscript.
            assert!(message.contains("step `"), "{message}");
            assert!(!scene.exists(), "a failed run lands nothing");
        }
        other => panic!("the run ended {other}: {message}"),
    }
    client.shutdown();
}

/// A validation of the vigil against its beat, run to its end.
struct Validated {
    output: std::process::Output,
    text: String,
    run_id: String,
    status: String,
    elapsed: Duration,
}

/// Runs `analytical_scene_validate` on the vigil in `root`: it must end
/// within its bound, as one run.
fn validate_the_vigil(root: &Path, label: &str) -> Validated {
    let started = Instant::now();
    let output = control_room(
        root,
        &[
            "run",
            "analytical_scene_validate",
            "--arg",
            "scene_id=SCN-the-vigil",
        ],
    );
    let elapsed = started.elapsed();
    let text = output_text(&output);
    eprintln!("{label}: {elapsed:.1?}\n{text}");
    assert!(elapsed < RUN_BOUND, "{label}: {elapsed:?}");
    let mut runs = run_ids(root);
    assert_eq!(runs.len(), 1, "{text}");
    let run_id = runs.remove(0);
    let status = run_status(root, &run_id);
    Validated {
        output,
        text,
        run_id,
        status,
        elapsed,
    }
}

#[test]
fn a_json_recipe_with_a_real_model_ends_in_time_with_its_schema_sent_the_way_the_server_takes() {
    let Some(model) = RealModelServer::start("a_json_recipe_with_a_real_model") else {
        return;
    };
    let (_dir, root) = example_copy();
    model.configure(&root);
    let scene = root.join("Story/Scenes/SCN-the-vigil.md");
    let before = std::fs::read_to_string(&scene).unwrap();
    let validated = validate_the_vigil(&root, "JSON recipe");
    let (output, text, runs, status) = (
        validated.output,
        validated.text,
        vec![validated.run_id],
        validated.status,
    );
    let receipts = check_receipts(&root, &runs[0], "JSON recipe");
    let json_steps: Vec<&Value> = receipts
        .iter()
        .filter(|receipt| {
            receipt["actor"]["decoding"]["requested"]["response_format"] == "json_schema"
        })
        .collect();
    assert!(!json_steps.is_empty(), "the continuity step asks for JSON");
    assert!(
        !text.contains("HTTP 500"),
        "no call fails on the server's dialect: {text}"
    );
    match status.as_str() {
        "done" => assert_eq!(output.status.code(), Some(0), "{text}"),
        "failed" => {
            assert_eq!(output.status.code(), Some(1), "{text}");
            assert!(text.contains("step `"), "a failure names its step: {text}");
        }
        other => panic!("the run ended {other}: {text}"),
    }
    // A validation reads the scene; it never writes it.
    assert_eq!(std::fs::read_to_string(&scene).unwrap(), before);
}

/// The contract-failure rate of each tier on the real model: the same
/// validation (the beat comparison, whose reply is its receipt, then the
/// continuity check, in micro-steps at t1) with the prompts of each tier
/// forced. Printed as a table; each run must end in its bound, say how its
/// replies fared, and stop with STOP_HOOK rather than land a broken reply.
#[test]
fn the_contract_failure_rate_of_each_tier_with_a_real_model() {
    let Some(model) = RealModelServer::start("the_contract_failure_rate_of_each_tier") else {
        return;
    };
    let mut table = Vec::new();
    for tier in ["minimal", "medium", "full"] {
        let (_dir, root) = example_copy();
        model.configure(&root);
        let toml = root.join("control-room.toml");
        let settings = std::fs::read_to_string(&toml).unwrap();
        // The same room for the reply at every tier: only the prompts differ
        // (a tier's own reserve lets this model ramble for minutes).
        std::fs::write(
            &toml,
            format!("{settings}tier = \"{tier}\"\nmax_tokens = 400\n"),
        )
        .unwrap();
        let Validated {
            text,
            run_id,
            status,
            elapsed,
            ..
        } = validate_the_vigil(&root, tier);
        let runs = [run_id];
        assert!(
            status == "done" || (status == "failed" && text.contains("step `")),
            "{tier}: {status}: {text}"
        );
        check_receipts(&root, &runs[0], tier);
        let shown = control_room(&root, &["runs", "show", &runs[0]]);
        let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
        let (broken, replies) = (
            shown["contracts"]["broken"].as_u64().unwrap(),
            shown["contracts"]["replies"].as_u64().unwrap(),
        );
        assert!(replies >= 1 && broken <= replies, "{shown:#}");
        table.push(format!(
            "| {tier} | {replies} | {broken} | {:.0}% | {status} | {elapsed:.1?} |",
            100.0 * broken as f64 / replies as f64
        ));
    }
    eprintln!(
        "contract failures per tier, {}, analytical_scene_validate:\n| tier | replies | broke their contract | rate | run | time |\n|---|---|---|---|---|---|\n{}",
        real_model_server::MODEL,
        table.join("\n")
    );
}

#[test]
fn a_three_agent_conference_with_a_real_model_ends_in_time_and_says_whether_any_reply_held() {
    let Some(model) = RealModelServer::start("a_three_agent_conference_with_a_real_model") else {
        return;
    };
    let (_dir, root) = example_copy();
    model.configure(&root);
    let started = Instant::now();
    let output = control_room(
        &root,
        &[
            "conference",
            "Is Kael's return to the ninth waystone earned?",
            "--agents",
            "planner,continuity,critic",
        ],
    );
    let elapsed = started.elapsed();
    let text = output_text(&output);
    eprintln!("conference of three: {elapsed:.1?}\n{text}");
    assert!(elapsed < RUN_BOUND, "{elapsed:?}");
    // 0: at least one grounded reply; 1: none held, and it says so; 2: the
    // Chief could not gather evidence, and the agents were not asked.
    match output.status.code() {
        Some(0) => assert!(text.contains("transcript"), "{text}"),
        Some(1) => assert!(
            text.contains("no agent"),
            "a conference without a grounded reply says so: {text}"
        ),
        Some(2) => assert!(
            text.contains("the Chief") && text.contains("the agents were not asked"),
            "{text}"
        ),
        other => panic!("the conference exited {other:?}: {text}"),
    }
}

#[test]
fn a_plan_task_with_a_real_model_ends_in_time_and_records_its_outcome() {
    let Some(model) = RealModelServer::start("a_plan_task_with_a_real_model") else {
        return;
    };
    let (_dir, root) = example_copy();
    model.configure(&root);
    let output = control_room(&root, &["plan", "new", "check continuity of SCN-the-vigil"]);
    assert!(output.status.success(), "{}", output_text(&output));
    let plan_id = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let started = Instant::now();
    let output = control_room(&root, &["plan", "run", &plan_id]);
    let elapsed = started.elapsed();
    let text = output_text(&output);
    eprintln!("plan task: {elapsed:.1?}\n{text}");
    assert!(elapsed < RUN_BOUND, "{elapsed:?}");
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "the plan ran to an outcome: {text}"
    );
    let runs = run_ids(&root);
    assert_eq!(runs.len(), 1, "one task, one run: {text}");
    let status = run_status(&root, &runs[0]);
    assert!(
        matches!(status.as_str(), "done" | "failed"),
        "the task's run ended: {status}"
    );
    check_receipts(&root, &runs[0], "plan task");
    let show = control_room(&root, &["plan", "show", &plan_id]);
    let plan = output_text(&show);
    assert!(
        plan.contains(if status == "done" { "done" } else { "failed" }),
        "the plan records the task's outcome: {plan}"
    );
}

#[test]
fn prose_revisions_with_a_real_model_end_in_time_and_each_edit_is_made_or_refused_with_a_reason() {
    let Some(model) = RealModelServer::start("prose_revisions_with_a_real_model") else {
        return;
    };
    let (_dir, root) = example_copy();
    model.configure(&root);
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let before = std::fs::read_to_string(&scene).unwrap();
    let (output, text, elapsed) = run_on_the_gate(&root, "analytical_prose");
    eprintln!("prose revisions: {elapsed:.1?}\n{text}");
    assert!(elapsed < RUN_BOUND, "{elapsed:?}");
    let runs = run_ids(&root);
    assert_eq!(runs.len(), 1, "{text}");
    let status = run_status(&root, &runs[0]);
    check_receipts(&root, &runs[0], "prose revisions");
    let after = std::fs::read_to_string(&scene).unwrap();
    let kept = root.join(format!(
        ".control-room/runs/{}/before/Story/Scenes/SCN-the-gate.md",
        runs[0]
    ));
    match status.as_str() {
        "done" => {
            assert_eq!(output.status.code(), Some(0), "{text}");
            // What the report lists as made is what the scene shows: a
            // changed scene has its earlier text kept, an unchanged one
            // made no edit.
            if after == before {
                assert!(!text.contains("edit(s) made"), "{text}");
            } else {
                assert!(text.contains("edit(s) made"), "{text}");
                assert_eq!(std::fs::read_to_string(kept).unwrap(), before);
            }
            if text.contains("edit(s) not made") {
                let report = std::fs::read_to_string(
                    root.join(format!(".control-room/runs/{}/report.md", runs[0])),
                )
                .unwrap();
                assert!(report.contains("Not made, and why:"), "{report}");
            }
        }
        "failed" => {
            assert_eq!(output.status.code(), Some(1), "{text}");
            assert!(text.contains("step `"), "a failure names its step: {text}");
            assert_eq!(after, before, "a failed run changes nothing");
        }
        other => panic!("the run ended {other}: {text}"),
    }
}

#[test]
fn a_turn_at_the_foremans_desk_with_a_real_model_ends_in_time_and_lands_its_reply() {
    let Some(model) = RealModelServer::start("a_turn_at_the_foremans_desk_with_a_real_model")
    else {
        return;
    };
    let (_dir, root) = example_copy();
    model.configure(&root);
    let started = Instant::now();
    let output = control_room(
        &root,
        &[
            "ask",
            "The Story Bible is done. What should I do next, and why?",
        ],
    );
    let elapsed = started.elapsed();
    let text = output_text(&output);
    eprintln!("a turn at the desk: {elapsed:.1?}\n{text}");
    assert!(elapsed < RUN_BOUND, "{elapsed:?}");
    let desk = std::fs::read_to_string(root.join("Notes/foreman.md")).unwrap();
    assert!(
        desk.contains("## Writer\n\nThe Story Bible is done."),
        "the writer's message is kept whatever the model does: {desk}"
    );
    match output.status.code() {
        // A reply, whatever its quality, lands under the Foreman's heading,
        // with its actions done or refused and never its reasoning.
        Some(0) => {
            let reply = desk
                .split("\n## Foreman\n")
                .nth(1)
                .expect("the reply's turn");
            assert!(!reply.trim().is_empty(), "{desk}");
            assert!(!reply.contains("<thinking>"), "{desk}");
        }
        // No usable reply (cut off, the server failing): said, and nothing landed.
        Some(1) => {
            assert!(text.contains("the Foreman could not answer"), "{text}");
            // The desk's preamble names the heading; no turn has it.
            assert!(
                !desk
                    .lines()
                    .any(|line| line.trim().eq_ignore_ascii_case("## Foreman")),
                "{desk}"
            );
        }
        other => panic!("ask exited {other:?}: {text}"),
    }
    // Whatever actions the small model wrote, each has a signed receipt.
    if let Ok(receipts) =
        std::fs::read_to_string(root.join(".control-room/audit/foreman/receipts.jsonl"))
    {
        for line in receipts.lines() {
            let receipt: Value = serde_json::from_str(line).unwrap();
            assert!(
                receipt["signature"].as_str().is_some_and(|s| !s.is_empty()),
                "{receipt}"
            );
            eprintln!(
                "action {} {}: {}",
                receipt["action"], receipt["status"], receipt["detail"]
            );
        }
    }
}

#[test]
fn a_voice_tournament_with_a_real_model_ends_in_time_and_lands_each_version_or_why_not() {
    let Some(model) = RealModelServer::start("a_voice_tournament_with_a_real_model") else {
        return;
    };
    let (_dir, root) = example_copy();
    model.configure(&root);
    let started = Instant::now();
    let output = control_room(
        &root,
        &[
            "voice",
            "tournament",
            "--scene",
            "SCN-the-gate",
            "--contestants",
            "sparse,lyrical",
            "--words",
            "150",
        ],
    );
    let elapsed = started.elapsed();
    let text = output_text(&output);
    eprintln!("a voice tournament of two: {elapsed:.1?}\n{text}");
    assert!(elapsed < RUN_BOUND, "{elapsed:?}");
    let folder = root.join("Compendium/Voice/tournaments");
    match output.status.code() {
        // At least one version: the file lands with both, each with its
        // prose and traits or the reason it failed.
        Some(0) => {
            let files: Vec<_> = std::fs::read_dir(&folder).unwrap().flatten().collect();
            assert_eq!(files.len(), 1, "{text}");
            let file = std::fs::read_to_string(files[0].path()).unwrap();
            for heading in ["## 1. sparse", "## 2. lyrical"] {
                let at = file.find(heading).expect(heading);
                let section = &file[at..];
                assert!(
                    section.contains("*Measured:*") || section.contains("*Failed:*"),
                    "{file}"
                );
            }
            assert!(!file.contains("<thinking>"), "{file}");
        }
        // No contestant wrote usable prose: said, and no file.
        Some(1) => {
            assert!(
                text.contains("no contestant wrote a usable version"),
                "{text}"
            );
            assert!(!folder.exists() || std::fs::read_dir(&folder).unwrap().next().is_none());
        }
        other => panic!("voice tournament exited {other:?}: {text}"),
    }
}

/// The health checks a model reads (A3, B1, C2) on one scene with the real
/// model: the run ends in its bound and says what happened; what the
/// report then shows of the scene is only what the model's replies kept,
/// each claim kept only where its quote is in the scene; the scene is never
/// written. Prints each check's verdict and its kept and dropped claims.
#[test]
fn a_scenes_story_health_read_by_a_real_model_keeps_only_claims_that_quote_the_scene() {
    let Some(model) = RealModelServer::start("a_scenes_story_health_read_by_a_real_model") else {
        return;
    };
    let (_dir, root) = example_copy();
    model.configure(&root);
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let before = std::fs::read_to_string(&scene).unwrap();
    let (_, text, elapsed) = run_on_the_gate(&root, "analytical_story_health");
    assert!(elapsed < RUN_BOUND, "{elapsed:?}: {text}");
    let runs = run_ids(&root);
    assert_eq!(runs.len(), 1, "{text}");
    let status = run_status(&root, &runs[0]);
    check_receipts(&root, &runs[0], "story health");
    let report = control_room(&root, &["health", "--json"]);
    assert!(report.status.success(), "{}", output_text(&report));
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let mut lines = Vec::new();
    for id in ["A3", "B1", "C2"] {
        let check = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|check| check["id"] == id)
            .unwrap();
        let summary = check["summary"].as_str().unwrap();
        match status.as_str() {
            // A finished run read the scene for every check.
            "done" => assert!(summary.starts_with("1 of "), "{id}: {summary}"),
            "failed" => assert!(text.contains("step `"), "a failure names its step: {text}"),
            other => panic!("the run ended {other}: {text}"),
        }
        // Every claim shown points at words the scene has.
        for finding in check["findings"].as_array().unwrap() {
            if let Some(at) = finding["at"].as_str() {
                assert!(at.starts_with("Story/Scenes/SCN-the-gate.md:"), "{finding}");
            }
        }
        lines.push(format!("| {id} | {:?} | {summary} |", check["score"]));
    }
    eprintln!(
        "story health of SCN-the-gate, {}: {status} in {elapsed:.1?}\n| check | score | summary |\n|---|---|---|\n{}",
        real_model_server::MODEL,
        lines.join("\n")
    );
    assert_eq!(std::fs::read_to_string(&scene).unwrap(), before);
}

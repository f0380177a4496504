//! The writer → gates → reviewer loop end to end: the real binary runs
//! `creative_draft_scene_reviewed` against the fake model server on
//! 127.0.0.1, and the requests it received show who saw which draft.
//!
//! - a draft that fails a gate goes back to the writer with the failure and
//!   never reaches the reviewer;
//! - a reviewer approving a draft with a violated rule is refused by the
//!   validation and asked again;
//! - fixable feedback sends the draft back once, and the revision passes;
//! - in a plan, a misscoped verdict sends the task back to scoping and a
//!   too_big verdict splits it.

use crate::support;
use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;
use std::process::Output;

use model_server::{Answer, FakeModelServer, finding_step, scripted_reply, step_marker};
use serde_json::{Value, json};
use support::{control_room, output_text, read_json};

const REVIEWED: &str = "creative_draft_scene_reviewed";
const TOMAS: &str = "\"Hold the gate,\" Old Tomas said from the wall.";
/// The steps of a reviewed draft whose first draft failed a gate.
const AFTER_A_FAILED_GATE: [&str; 12] = [
    "discover",
    "analyze_outline",
    "check_canon",
    "brief",
    "draft",
    "gates",
    "draft#2",
    "gates#2",
    "review#2",
    "polish",
    "continuity",
    "critique",
];
const REVISED: &str = "Iria spoke first, and badly, stumbling over the word 'barred'.";

fn draft(root: &Path) -> Output {
    control_room(
        root,
        &["run", REVIEWED, "--arg", "scene_id=SCN-the-reckoning"],
    )
}

/// The example's scripted draft (it passes every gate).
fn clean_draft() -> String {
    scripted_reply("draft")
}

/// A verdict judging every rule of the recipe on `draft`, quoting it.
fn verdict(verdict: &str, kind: Option<&str>, violated: Option<&str>, feedback: &str) -> Value {
    let quote = "The tide had left the yard strewn with wrack";
    let entries: Vec<Value> = ["beats", "pov", "canon", "open-questions", "voices"]
        .iter()
        .map(|id| {
            if Some(*id) == violated {
                json!({"sop_id": id, "status": "violated", "evidence": format!("\"{quote}\" opens it, but Iria's words are never heard"), "violations": ["Iria's bad speech is told, not shown"]})
            } else {
                json!({"sop_id": id, "status": "passed", "evidence": format!("The draft opens: \"{quote}\"."), "violations": []})
            }
        })
        .collect();
    json!({
        "verdict": verdict,
        "rejection_type": kind,
        "sop_review": entries,
        "confidence": 0.85,
        "feedback": feedback,
    })
}

/// The planner, editor, continuity and critic as the scripted dry run
/// answers them; the writer and the reviewer are the test's.
fn serve(server: &FakeModelServer, writer: &[String], reviewer: Vec<Answer>) {
    server.on(
        &step_marker("brief", "planner"),
        vec![Answer::text(scripted_reply("brief"))],
    );
    for (k, text) in writer.iter().enumerate() {
        let id = if k == 0 {
            "draft".to_owned()
        } else {
            format!("draft#{}", k + 1)
        };
        server.on(
            &step_marker(&id, "writer"),
            vec![Answer::text(text.clone())],
        );
    }
    server.on("(reviewer)</current_step>", reviewer);
    server.on(
        &step_marker("polish", "editor"),
        vec![Answer::text(scripted_reply("polish"))],
    );
    for (step, archetype) in [("continuity", "continuity"), ("critique", "critic")] {
        server.on(
            &step_marker(step, archetype),
            vec![finding_step(&scripted_reply(step))],
        );
    }
}

/// Which agent each step went to, in order, as its step marker says (a t1
/// finding step's micro-steps, one request after another, count once).
fn steps_asked(server: &FakeModelServer) -> Vec<String> {
    let mut steps: Vec<String> = server
        .received()
        .iter()
        .map(|request| {
            let body = request.body.to_string();
            let start =
                body.find("<current_step>").expect("a step marker") + "<current_step>".len();
            let end = body[start..].find("</current_step>").unwrap() + start;
            body[start..end].to_owned()
        })
        .collect();
    steps.dedup();
    steps
}

fn bodies_of(server: &FakeModelServer, marker: &str) -> Vec<String> {
    server
        .received()
        .iter()
        .map(|request| request.body.to_string())
        .filter(|body| body.contains(marker))
        .collect()
}

fn run_json(root: &Path) -> (String, Value) {
    let run = support::only_run(root);
    let manifest = read_json(&root.join(format!(".control-room/runs/{run}/run.json")));
    (run, manifest)
}

fn step_ids(root: &Path, run: &str) -> Vec<String> {
    std::fs::read_to_string(root.join(format!(".control-room/runs/{run}/steps.jsonl")))
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["step_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn report(root: &Path, run: &str) -> String {
    std::fs::read_to_string(root.join(format!(".control-room/runs/{run}/report.md"))).unwrap()
}

#[test]
fn a_draft_failing_a_gate_never_reaches_the_reviewer() {
    let dir = support::example_copy("review-gate");
    let root = dir.path();
    let server = FakeModelServer::start();
    let failing = format!("{}\n{TOMAS}\n", clean_draft().trim_end());
    serve(
        &server,
        &[failing, clean_draft()],
        vec![Answer::text(
            verdict("approved", None, None, "The reckoning lands.").to_string(),
        )],
    );
    lsp_client::editor::configure(root, &server.url);

    let output = draft(root);
    assert!(output.status.success(), "{}", output_text(&output));
    assert_eq!(
        steps_asked(&server),
        [
            "brief (planner)",
            "draft (writer)",
            "draft#2 (writer)",
            "review#2 (reviewer)",
            "polish (editor)",
            "continuity (continuity)",
            "critique (critic)"
        ]
    );
    // The writer heard why, with its own draft before it.
    let again = bodies_of(&server, &step_marker("draft#2", "writer"));
    assert!(again[0].contains("dead-character"), "{}", again[0]);
    assert!(again[0].contains("failed these checks"), "{}", again[0]);
    assert!(
        again[0].contains("Hold the gate"),
        "the previous draft is in the request"
    );
    // The reviewer saw only the draft that passed.
    let review = &bodies_of(&server, "(reviewer)</current_step>")[0];
    assert!(!review.contains("Hold the gate"), "{review}");
    assert!(
        review.contains("`voices`"),
        "the rules are listed: {review}"
    );

    let (run, manifest) = run_json(root);
    assert_eq!(manifest["status"], "done");
    assert_eq!(manifest["review"]["iterations"], 2);
    assert_eq!(manifest["review"]["outcome"], "approved");
    assert_eq!(step_ids(root, &run), AFTER_A_FAILED_GATE);
    // Each gates run left a signed receipt.
    let session = manifest["session_id"].as_str().unwrap();
    let receipts = std::fs::read_to_string(root.join(format!(
        ".control-room/audit/sessions/{session}/tool_receipts.jsonl"
    )))
    .unwrap();
    let gates: Vec<Value> = receipts
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|receipt| receipt["tool"] == "review_gates")
        .collect();
    assert_eq!(gates.len(), 2);
    assert_eq!(gates[0]["output"]["passed"], false);
    assert_eq!(gates[1]["output"]["passed"], true);
    let report = report(root, &run);
    assert!(report.contains("## Review"), "{report}");
    assert!(
        report.contains("2 drafts (at most 3); outcome: **approved**"),
        "{report}"
    );
    assert!(
        report.contains("failed the continuity gate | not reviewed"),
        "{report}"
    );
    // The steps after the loop read the draft that passed: `draft` is draft 2.
    let polish = &bodies_of(&server, &step_marker("polish", "editor"))[0];
    assert!(!polish.contains("Hold the gate"), "{polish}");
    let cache = read_json(&root.join(format!(".control-room/runs/{run}/cache.json")));
    assert_eq!(cache["draft"], cache["draft#2"]);
    assert!(
        cache["draft#1"]["text"]
            .as_str()
            .unwrap()
            .contains("Hold the gate")
    );
}

#[test]
fn a_reviewer_approving_with_a_violation_is_refused_by_validation() {
    let dir = support::example_copy("review-valid");
    let root = dir.path();
    let server = FakeModelServer::start();
    serve(
        &server,
        &[clean_draft()],
        vec![
            Answer::text(verdict("approved", None, Some("voices"), "Fine as it is.").to_string()),
            Answer::text(verdict("approved", None, None, "Fine as it is.").to_string()),
        ],
    );
    lsp_client::editor::configure(root, &server.url);

    let output = draft(root);
    assert!(output.status.success(), "{}", output_text(&output));
    let reviews = bodies_of(&server, "(reviewer)</current_step>");
    assert_eq!(reviews.len(), 2, "asked again after the invalid verdict");
    assert!(
        reviews[1].contains("the rule is violated, so the verdict cannot be `approved`"),
        "{}",
        reviews[1]
    );
    let (run, manifest) = run_json(root);
    assert_eq!(manifest["status"], "done");
    assert_eq!(manifest["review"]["iterations"], 1);
    // The reviewer's receipt records the refused attempt and the validation.
    let receipts = root.join(format!(".control-room/audit/issues/{run}"));
    let mut found = false;
    for entry in walk(&receipts) {
        let text = std::fs::read_to_string(&entry).unwrap();
        if entry.to_string_lossy().contains("__receipt__") && text.contains("review_validation") {
            assert!(text.contains("cannot be `approved`"), "{text}");
            found = true;
        }
    }
    assert!(
        found,
        "no receipt of the review step under {}",
        receipts.display()
    );
}

#[test]
fn fixable_feedback_loops_once_and_then_passes() {
    let dir = support::example_copy("review-fix");
    let root = dir.path();
    let server = FakeModelServer::start();
    let revised = clean_draft().replace("Iria spoke first, and badly.", REVISED);
    assert_ne!(revised, clean_draft());
    serve(
        &server,
        &[clean_draft(), revised],
        vec![
            Answer::text(
                verdict(
                    "rejected",
                    Some("fixable"),
                    Some("voices"),
                    "Show Iria speaking badly instead of saying she did.",
                )
                .to_string(),
            ),
            Answer::text(verdict("approved", None, None, "Iria's stumble now shows.").to_string()),
        ],
    );
    lsp_client::editor::configure(root, &server.url);

    let output = draft(root);
    assert!(output.status.success(), "{}", output_text(&output));
    assert_eq!(
        steps_asked(&server)[..5],
        [
            "brief (planner)",
            "draft (writer)",
            "review (reviewer)",
            "draft#2 (writer)",
            "review#2 (reviewer)"
        ]
    );
    let again = &bodies_of(&server, &step_marker("draft#2", "writer"))[0];
    assert!(again.contains("Show Iria speaking badly"), "{again}");
    assert!(
        again.contains("voices: Iria's bad speech is told, not shown"),
        "{again}"
    );
    let second_review = &bodies_of(&server, &step_marker("review#2", "reviewer"))[0];
    assert!(
        second_review.contains("stumbling over the word"),
        "{second_review}"
    );

    let (run, manifest) = run_json(root);
    assert_eq!(manifest["status"], "done");
    assert_eq!(manifest["review"]["iterations"], 2);
    let report = report(root, &run);
    assert!(report.contains("| 1 ("), "{report}");
    assert!(
        report.contains("rejected (fixable) | 0.85 | Show Iria speaking badly"),
        "{report}"
    );
    assert!(
        report.contains("approved | 0.85 | Iria's stumble now shows."),
        "{report}"
    );
}

#[test]
fn an_unsure_reviewer_leaves_the_draft_to_the_writer() {
    let dir = support::example_copy("review-unsure");
    let root = dir.path();
    let server = FakeModelServer::start();
    let mut unsure: Value = verdict("approved", None, None, "It may work; I cannot tell.");
    unsure["confidence"] = json!(0.55);
    serve(
        &server,
        &[clean_draft()],
        vec![Answer::text(unsure.to_string())],
    );
    lsp_client::editor::configure(root, &server.url);

    let output = draft(root);
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    let (run, manifest) = run_json(root);
    assert_eq!(manifest["status"], "failed");
    assert_eq!(manifest["review"]["outcome"], "escalated");
    let error = manifest["error"].as_str().unwrap();
    assert!(error.contains("confidence (0.55) is below 0.70"), "{error}");
    assert!(error.contains("for you to judge"), "{error}");
    // Nothing after the loop ran; the report keeps the draft for the writer.
    assert!(bodies_of(&server, &step_marker("polish", "editor")).is_empty());
    let report = report(root, &run);
    assert!(report.contains("outcome: **left to you**"), "{report}");
    assert!(
        report.contains("The tide had left the yard strewn with wrack"),
        "{report}"
    );
}

#[test]
fn in_a_plan_misscoped_goes_back_to_scoping_and_too_big_splits_the_task() {
    let dir = support::example_copy("review-plan");
    let root = dir.path();
    let server = FakeModelServer::start();
    let mut big: Value = verdict(
        "rejected",
        Some("too_big"),
        Some("beats"),
        "Two scenes in one.",
    );
    big["subtasks"] = json!([
        "Draft scene SCN-the-reckoning with review: the garrison's judgement",
        "Draft scene SCN-the-reckoning with review: Kael takes the road"
    ]);
    serve(
        &server,
        &[clean_draft()],
        vec![
            Answer::text(
                verdict(
                    "rejected",
                    Some("misscoped"),
                    Some("beats"),
                    "The outline gives this scene two turns; decide which one it ends on.",
                )
                .to_string(),
            ),
            Answer::text(big.to_string()),
        ],
    );
    lsp_client::editor::configure(root, &server.url);
    let output = control_room(
        root,
        &[
            "plan",
            "new",
            "Draft scene SCN-the-reckoning with review",
            "Check consistency of SCN-the-reckoning",
            "--dep",
            "2:1",
        ],
    );
    assert!(output.status.success(), "{}", output_text(&output));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let plan_json = || read_json(&root.join(format!(".control-room/sessions/{id}/plan.json")));
    assert_eq!(plan_json()["tasks"][0]["recipe_id"], REVIEWED);

    // Misscoped: the task needs scoping, with the reviewer's reason.
    let output = control_room(root, &["plan", "run", &id]);
    let plan = plan_json();
    assert_eq!(
        plan["tasks"][0]["status"],
        "needs_scoping",
        "{}",
        output_text(&output)
    );
    let question = plan["tasks"][0]["scoping_question"].as_str().unwrap();
    assert!(
        question.contains("judged the task misscoped: The outline gives this scene two turns"),
        "{question}"
    );
    let md =
        std::fs::read_to_string(root.join(format!(".control-room/sessions/{id}/plan.md"))).unwrap();
    assert!(
        md.contains("  - question: the reviewer judged the task misscoped"),
        "{md}"
    );

    // The writer answers: rewords the task and sets it pending again. Now
    // the reviewer finds it too big.
    let md = md
        .replace("  - status: needs_scoping", "  - status: pending")
        .replace(
            "1. Draft scene SCN-the-reckoning with review\n",
            "1. Draft scene SCN-the-reckoning with review, ending on the road\n",
        );
    std::fs::write(
        root.join(format!(".control-room/sessions/{id}/plan.md")),
        &md,
    )
    .unwrap();
    let output = control_room(root, &["plan", "run", &id]);
    let plan = plan_json();
    let tasks = plan["tasks"].as_array().unwrap();
    let ids: Vec<u64> = tasks.iter().map(|t| t["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [3, 4, 2], "{}\n{plan:#}", output_text(&output));
    assert_eq!(tasks[0]["split_from"], 1);
    assert_eq!(
        tasks[0]["description"],
        "Draft scene SCN-the-reckoning with review: the garrison's judgement"
    );
    assert_eq!(tasks[1]["deps"], json!([3]));
    assert_eq!(
        tasks[2]["deps"],
        json!([4]),
        "the consistency check now waits on the last part"
    );
    assert_eq!(tasks[0]["recipe_id"], REVIEWED);
    let md =
        std::fs::read_to_string(root.join(format!(".control-room/sessions/{id}/plan.md"))).unwrap();
    assert!(
        md.contains("3. Draft scene SCN-the-reckoning with review: the garrison's judgement\n"),
        "{md}"
    );
    assert!(md.contains("  - from: 1"), "{md}");
    assert!(!md.contains("ending on the road"), "{md}");
    // A part judged too big again is not split again: the writer decides.
    assert_eq!(tasks[0]["status"], "needs_scoping");
    assert!(
        tasks[0]["scoping_question"]
            .as_str()
            .unwrap()
            .contains("split once already"),
        "{plan:#}"
    );
}

/// A run stopped at any write inside the loop (a full disk stands for a
/// crash between any two writes) resumes where the loop was: the same steps
/// in the same order, draft 2 approved, nothing asked twice that finished.
#[test]
fn a_run_stopped_anywhere_in_the_loop_resumes_where_it_was() {
    use control_room::llm::model::{Model, ScriptedModel};
    use control_room::runs::store::Disk;
    use std::sync::Arc;
    use tokio_util::sync::CancellationToken;

    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("reviewed.json");
    let mut replies: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples/scripted/draft-the-reckoning.json"),
        )
        .unwrap(),
    )
    .unwrap();
    replies["draft"] = json!(format!("{}\n{TOMAS}\n", clean_draft().trim_end()));
    replies["draft#2"] = json!(clean_draft());
    replies["review#2"] = json!(verdict("approved", None, None, "It lands.").to_string());
    std::fs::write(&script, replies.to_string()).unwrap();
    let model: Arc<dyn Model> = Arc::new(ScriptedModel::load(&script).unwrap());
    let runner = |root: &Path, disk: Disk| support::runner(root, disk, model.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut args = serde_json::Map::new();
    args.insert("scene_id".into(), json!("SCN-the-reckoning"));
    let mut stopped = 0;
    for writes in 0..80 {
        let dir = support::example_copy("review-resume");
        let root = dir.path();
        let full = runner(root, Disk::failing_after_writes(writes));
        let Ok(run) = full.create(REVIEWED, "draft with review", args.clone(), None) else {
            continue;
        };
        match runtime.block_on(full.execute(&run.run_id, CancellationToken::new())) {
            Ok(manifest) if manifest.status.as_str() == "done" => break,
            Ok(manifest) => panic!("after {writes} writes: {manifest:?}"),
            Err(error) => assert!(error.to_string().contains("No space left"), "{error}"),
        }
        stopped += 1;
        let done = runtime
            .block_on(runner(root, Disk::default()).execute(&run.run_id, CancellationToken::new()))
            .unwrap_or_else(|error| panic!("resume after {writes} writes: {error}"));
        assert_eq!(
            done.status.as_str(),
            "done",
            "after {writes} writes: {done:?}"
        );
        let review = done.review.as_ref().expect("the loop's state");
        assert_eq!(review.iterations, 2, "after {writes} writes");
        assert_eq!(
            step_ids(root, &run.run_id),
            AFTER_A_FAILED_GATE,
            "after {writes} writes"
        );
        let cache = read_json(&root.join(format!(".control-room/runs/{}/cache.json", run.run_id)));
        assert_eq!(cache["draft"], cache["draft#2"], "after {writes} writes");
        assert_eq!(cache["review"], cache["review#2"], "after {writes} writes");
    }
    assert!(stopped >= 40, "only {stopped} write points were exercised");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

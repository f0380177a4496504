//! Task packets sent to agents, and receipts as replies (prompt-hardening's
//! task boundary rule, PH-3): the real binary runs `analytical_scene_validate`
//! against the fake model server; its `compare` step's contract is a receipt.
//! Every agent step is sent its packet; a receipt reply is validated, asked
//! again at most twice with the error quoted, then stopped with STOP_HOOK;
//! a receipt citing a file it was not given stops at once; an agent's own
//! STOP_HOOK stops the step with its reason.

use crate::support;
use crate::support::model_server;

use std::path::Path;
use std::process::Output;

use model_server::{Answer, FakeModelServer, finding_step, step_marker};
use serde_json::{Value, json};
use support::{agent_receipt, control_room, only_run, output_text};
use tempfile::TempDir;

const VALIDATE: [&str; 4] = [
    "run",
    "analytical_scene_validate",
    "--arg",
    "scene_id=SCN-the-vigil",
];
const SCENE: &str = "Story/Scenes/SCN-the-vigil.md";

fn example(server: &FakeModelServer) -> TempDir {
    let dir = support::example_copy("control-room-packets-");
    std::fs::write(
        dir.path().join("control-room.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"llama3.1:8b\"\nmax_retries = 1\n",
            server.url
        ),
    )
    .unwrap();
    dir
}

/// A receipt reply as a good agent writes it.
fn good_receipt() -> Value {
    json!({
        "reasoning_summary": "The vigil delivers the waiting and the oath, not the bargain the beat names.",
        "decisions": ["verdict: partly", "recommendation: revise the scene"],
        "checks_performed": [{"check": "cast", "passed": true, "detail": "Kael and Iria, as the beat says"}],
        "assumptions": [],
        "risks": ["the bargain is missing"],
        "next_recommended_action": "Add the bargain before the dawn.",
        "stop_hook": false,
        "stop_reason": null,
        "citations": [SCENE, "\u{201c}the lamp burned low\u{201d}"],
        "report_excerpt": "Partly: the vigil keeps its oath but not its bargain."
    })
}

fn serve(server: &FakeModelServer, compare: Vec<Answer>) {
    server.on(&step_marker("compare", "planner"), compare);
    server.on(
        &step_marker("continuity", "continuity"),
        vec![finding_step(r#"{"pass": true, "findings": []}"#)],
    );
}

fn requests_for(server: &FakeModelServer, step: &str, archetype: &str) -> Vec<String> {
    let marker = step_marker(step, archetype);
    server
        .received()
        .into_iter()
        .map(|request| request.body.to_string())
        .filter(|body| body.contains(&marker))
        .collect()
}

/// The ways `receipt`, its version field left out, breaks receipt v0.1.
fn v0_1_errors(receipt: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/schemas/receipt.v0.1.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut receipt = receipt.clone();
    receipt.as_object_mut().unwrap().remove("version");
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(&receipt)
        .map(|error| error.to_string())
        .collect()
}

fn validate(root: &Path) -> Output {
    control_room(root, &VALIDATE)
}

#[test]
fn every_agent_step_is_sent_its_packet_and_a_receipt_steps_reply_is_its_receipt() {
    let server = FakeModelServer::start();
    serve(&server, vec![Answer::text(good_receipt().to_string())]);
    let dir = example(&server);
    let root = dir.path();
    let output = validate(root);
    assert!(output.status.success(), "{}", output_text(&output));
    let run_id = only_run(root);

    // Each step's message closes with its packet: the contract, the files.
    let compare = &requests_for(&server, "compare", "planner")[0];
    let continuity = &requests_for(&server, "continuity", "continuity")[0];
    for body in [compare, continuity] {
        assert!(body.contains("<task_packet>"), "{body}");
        assert!(body.contains("expected_artifacts"), "{body}");
        assert!(body.contains(SCENE), "{body}");
    }
    assert!(
        compare.contains("schemas/receipt_reply.v0.1.json"),
        "{compare}"
    );
    assert!(compare.contains("reply with your receipt for this packet"));
    // At t1 the continuity step is asked in micro-steps, the triage first.
    assert!(
        continuity.contains("schemas/micro_triage.json"),
        "{continuity}"
    );
    // The receipt is the next step's input.
    assert!(continuity.contains("verdict: partly"), "{continuity}");

    // The runner completed the agent's receipt, signed it, and it is a v0.1
    // receipt with the agent's own decisions, checks and citations.
    let receipt = agent_receipt(root, &run_id, "compare");
    assert_eq!(v0_1_errors(&receipt), Vec::<String>::new());
    assert_eq!(
        receipt["decisions"],
        json!(["verdict: partly", "recommendation: revise the scene"])
    );
    assert_eq!(
        receipt["reasoning_summary"],
        good_receipt()["reasoning_summary"]
    );
    assert_eq!(receipt["report_excerpt"], good_receipt()["report_excerpt"]);
    assert_eq!(
        receipt["next_recommended_action"],
        "Add the bargain before the dawn."
    );
    let checks: Vec<&str> = receipt["checks_performed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| check["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"receipt_schema"), "{checks:?}");
    assert!(checks.contains(&"agent/cast"), "{checks:?}");
    assert!(
        receipt["risks"]
            .to_string()
            .contains("the bargain is missing")
    );
    assert!(receipt["citations"].to_string().contains(SCENE));
    assert_eq!(receipt["stop_hook"], false);
    assert_eq!(receipt["attempts"], 1);
    assert!(
        receipt["actor"]["model"]
            .as_str()
            .is_some_and(|model| model.starts_with("llama3.1:8b")),
        "{receipt:#}"
    );
    assert!(receipt["signature"].as_str().is_some_and(|s| !s.is_empty()));

    // The run's report gives the receipt as the writer reads it.
    let report =
        std::fs::read_to_string(root.join(format!(".control-room/runs/{run_id}/report.md")))
            .unwrap();
    assert!(
        report.contains("Partly: the vigil keeps its oath but not its bargain.\n\nDecisions:\n\n- verdict: partly"),
        "{report}"
    );
    assert!(
        report.contains("- cast (held): Kael and Iria, as the beat says"),
        "{report}"
    );
    assert!(
        report.contains("Next: Add the bargain before the dawn."),
        "{report}"
    );

    // A JSON step's receipt records its verdict as a decision.
    let continuity = agent_receipt(root, &run_id, "continuity");
    assert_eq!(continuity["decisions"], json!(["pass: true (0 findings)"]));
    assert_eq!(v0_1_errors(&continuity), Vec::<String>::new());
}

#[test]
fn a_receipt_missing_its_decisions_is_asked_again_with_the_error_quoted() {
    let server = FakeModelServer::start();
    let mut missing = good_receipt();
    missing.as_object_mut().unwrap().remove("decisions");
    serve(
        &server,
        vec![
            Answer::text(missing.to_string()),
            Answer::text(good_receipt().to_string()),
        ],
    );
    let dir = example(&server);
    let root = dir.path();
    let output = validate(root);
    assert!(output.status.success(), "{}", output_text(&output));
    let requests = requests_for(&server, "compare", "planner");
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].contains("is not a receipt as prompts/schemas/receipt_reply.v0.1.json asks")
            && requests[1].contains("decisions"),
        "{}",
        requests[1]
    );
    let receipt = agent_receipt(root, &only_run(root), "compare");
    assert_eq!(receipt["attempts"], 2);
    assert_eq!(receipt["stop_hook"], false);
    assert_eq!(receipt["decisions"][0], "verdict: partly");
}

#[test]
fn a_receipt_step_answered_in_prose_three_times_stops_with_stop_hook() {
    let server = FakeModelServer::start();
    serve(
        &server,
        vec![Answer::text(
            "Verdict: partly. The vigil keeps its oath but not its bargain.",
        )],
    );
    let dir = example(&server);
    let root = dir.path();
    let output = validate(root);
    let shown = output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("step `compare` (agent planner) stopped (STOP_HOOK)"),
        "{shown}"
    );
    let requests = requests_for(&server, "compare", "planner");
    assert_eq!(requests.len(), 3);
    assert!(requests[2].contains("This is attempt 3 of 3"));
    assert!(requests_for(&server, "continuity", "continuity").is_empty());
    let receipt = agent_receipt(root, &only_run(root), "compare");
    assert_eq!(receipt["stop_hook"], true);
    assert_eq!(receipt["attempts"], 3);
    assert!(
        receipt["stop_reason"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert_eq!(v0_1_errors(&receipt), Vec::<String>::new());
}

#[test]
fn a_receipt_citing_a_file_it_was_not_given_stops_at_once() {
    let server = FakeModelServer::start();
    let mut made_up = good_receipt();
    made_up["citations"] = json!(["Story/Scenes/SCN-made-up.md"]);
    serve(&server, vec![Answer::text(made_up.to_string())]);
    let dir = example(&server);
    let root = dir.path();
    let output = validate(root);
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    assert_eq!(requests_for(&server, "compare", "planner").len(), 1);
    let receipt = agent_receipt(root, &only_run(root), "compare");
    assert_eq!(receipt["stop_hook"], true);
    assert!(
        receipt["stop_reason"].as_str().unwrap().contains(
            "`Story/Scenes/SCN-made-up.md`, which is not among the step's expected artifacts"
        ),
        "{receipt:#}"
    );
}

#[test]
fn an_agent_whose_receipt_says_stop_stops_the_step_with_its_reason() {
    let server = FakeModelServer::start();
    let mut stop = good_receipt();
    stop["stop_hook"] = json!(true);
    stop["stop_reason"] = json!("the validation shows none of the scene's text");
    stop["decisions"] = json!(["verdict: cannot judge"]);
    serve(&server, vec![Answer::text(stop.to_string())]);
    let dir = example(&server);
    let root = dir.path();
    let output = validate(root);
    let shown = output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("the planner stopped: the validation shows none of the scene's text"),
        "{shown}"
    );
    // Asking again would not give the agent what it lacks.
    assert_eq!(requests_for(&server, "compare", "planner").len(), 1);
    assert!(requests_for(&server, "continuity", "continuity").is_empty());
    let receipt = agent_receipt(root, &only_run(root), "compare");
    assert_eq!(receipt["stop_hook"], true);
    assert_eq!(receipt["decisions"], json!(["verdict: cannot judge"]));
    assert_eq!(receipt["outputs_produced"], json!([]));
    assert_eq!(v0_1_errors(&receipt), Vec::<String>::new());
}

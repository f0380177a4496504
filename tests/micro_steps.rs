//! Tier-sized steps (execution-modes.md): the real binary drafts a scene
//! with `creative_draft_scene` against the fake model server. Given a t1
//! model, its continuity step runs as a triage, then one finding per
//! problem, then one quote per finding, each a small JSON reply with its own
//! packet, assembled into the step's reply; given a t3 model it is one
//! request. Each test also prints the contract-failure rate of its run
//! (replies that broke their contract, of all replies), the figure
//! `tests/real_model.rs` measures per tier on a real model.

use crate::support;
use crate::support::model_server;

use std::path::Path;
use std::sync::{Arc, Mutex};

use model_server::{Answer, FakeModelServer, Reply, serve_draft_scene};
use serde_json::{Value, json};
use support::{agent_receipt, control_room, only_run, output_text, read_json};
use tempfile::TempDir;

const DRAFT: [&str; 4] = [
    "run",
    "creative_draft_scene",
    "--arg",
    "scene_id=SCN-the-reckoning",
];
const CONTINUITY: &str = "<current_step>continuity (continuity)</current_step>";
const BLUE: &str = "Ysolde's eyes are blue here; her card says grey.";

fn example(server: &FakeModelServer, tier: Option<&str>) -> TempDir {
    let dir = support::example_copy("control-room-micro-");
    std::fs::write(
        dir.path().join("control-room.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"llama3.1:8b\"\nmax_retries = 1\n{}",
            server.url,
            tier.map(|tier| format!("tier = \"{tier}\"\n"))
                .unwrap_or_default()
        ),
    )
    .unwrap();
    dir
}

/// Answers the continuity step's micro-steps by what each asks: `triage`,
/// then `finding` for a problem, then `evidence` in turn for the finding.
fn continuity(triage: Value, findings: Vec<(&'static str, Value)>, evidence: Vec<Value>) -> Answer {
    let evidence = Arc::new(Mutex::new(evidence));
    Answer::With(Reply(Arc::new(move |body: &str| {
        let reply = if body.contains("schemas/micro_triage.json") {
            triage.clone()
        } else if body.contains("schemas/micro_finding.json") {
            findings
                .iter()
                .find(|(problem, _)| body.contains(problem))
                .map(|(_, finding)| finding.clone())
                .expect("a finding asked for a problem of the triage")
        } else if body.contains("schemas/micro_evidence.json") {
            let mut evidence = evidence.lock().unwrap();
            if evidence.len() > 1 {
                evidence.remove(0)
            } else {
                evidence[0].clone()
            }
        } else {
            panic!("the continuity step was asked in one request at t1: {body}")
        };
        Answer::Text(reply.to_string())
    })))
}

fn continuity_bodies(server: &FakeModelServer) -> Vec<String> {
    server
        .received()
        .into_iter()
        .map(|request| request.body.to_string())
        .filter(|body| body.contains(CONTINUITY))
        .collect()
}

fn packets(root: &Path, run_id: &str) -> Vec<Value> {
    let dir = root.join(format!(".control-room/audit/issues/{run_id}"));
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains("__packet__"))
        .map(|path| read_json(&path))
        .collect()
}

fn check_names(receipt: &Value) -> Vec<String> {
    receipt["checks_performed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| {
            format!(
                "{}:{}",
                check["check"].as_str().unwrap(),
                if check["passed"] == true {
                    "passed"
                } else {
                    "failed"
                }
            )
        })
        .collect()
}

/// The replies of a run that broke their contract, and all its replies, as
/// `runs show` counts them.
fn contract_failures(root: &Path, run_id: &str) -> (u64, u64) {
    let output = control_room(root, &["runs", "show", run_id]);
    assert!(output.status.success(), "{}", output_text(&output));
    let shown: Value = serde_json::from_slice(&output.stdout).unwrap();
    let contracts = &shown["contracts"];
    (
        contracts["broken"].as_u64().unwrap(),
        contracts["replies"].as_u64().unwrap(),
    )
}

#[test]
fn at_t1_the_continuity_step_runs_as_triage_then_findings_then_evidence() {
    let server = FakeModelServer::start();
    server.on(
        CONTINUITY,
        vec![continuity(
            json!({"problems": [BLUE, "Tomas is alive in the yard"]}),
            vec![
                (
                    BLUE,
                    json!({"severity": "warning", "message": BLUE, "canon": "Compendium/Characters/CHAR-ysolde-harrow.md"}),
                ),
                (
                    "Tomas is alive in the yard",
                    json!({"severity": "none", "message": "Tomas is not in the scene."}),
                ),
            ],
            // A quote made up, then one copied from the draft.
            vec![
                json!({"quote": "her blue eyes shone in the lamplight"}),
                json!({"quote": "Ysolde Harrow stood beside it alone"}),
            ],
        )],
    );
    serve_draft_scene(&server, "");
    let dir = example(&server, None);
    let root = dir.path();
    let output = control_room(root, &DRAFT);
    assert!(output.status.success(), "{}", output_text(&output));
    let run_id = only_run(root);

    // A triage, a finding per problem, evidence for the one that stands,
    // asked again once with the made-up quote named.
    let bodies = continuity_bodies(&server);
    assert_eq!(bodies.len(), 5, "{bodies:#?}");
    assert!(bodies[0].contains("schemas/micro_triage.json"));
    assert!(bodies[1].contains("schemas/micro_finding.json") && bodies[1].contains(BLUE));
    assert!(bodies[2].contains("Tomas is alive in the yard"));
    assert!(bodies[3].contains("schemas/micro_evidence.json"));
    assert!(
        bodies[4].contains("her blue eyes shone in the lamplight")
            && bodies[4].contains("is not in the text"),
        "{}",
        bodies[4]
    );

    // The step's reply, assembled, is what one reply would have been.
    let cache = read_json(&root.join(format!(".control-room/runs/{run_id}/cache.json")));
    let report: Value =
        serde_json::from_str(cache["continuity_report"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        report,
        json!({"pass": true, "findings": [{
            "severity": "warning",
            "message": BLUE,
            "canon": "Compendium/Characters/CHAR-ysolde-harrow.md",
            "quote": "Ysolde Harrow stood beside it alone"
        }]})
    );

    // One receipt for the step, with every micro-step's checks.
    let receipt = agent_receipt(root, &run_id, "continuity");
    assert_eq!(receipt["attempts"], 5);
    assert_eq!(receipt["stop_hook"], false);
    assert_eq!(receipt["decisions"], json!(["pass: true (1 finding)"]));
    let checks = check_names(&receipt);
    for expected in [
        "triage/json_schema:passed",
        "finding 2:passed",
        "evidence 1/attempt_1:failed",
        "evidence 1/quote:passed",
        "assembled/json_schema:passed",
        "assembled/path_guard:passed",
    ] {
        assert!(
            checks.contains(&expected.to_owned()),
            "{expected} in {checks:?}"
        );
    }
    // Each micro-step was sent a packet of its own, a child of the step's.
    let packets = packets(root, &run_id);
    let step = packets
        .iter()
        .find(|p| p["handoff"]["step_id"] == "continuity" && p["parent_packet_id"].is_null())
        .unwrap();
    let children: Vec<&Value> = packets
        .iter()
        .filter(|p| p["parent_packet_id"] == step["packet_id"])
        .collect();
    assert_eq!(children.len(), 4, "a triage, two findings, one evidence");
    assert!(
        children
            .iter()
            .any(|p| p["output_contract"]["schema"] == "prompts/schemas/micro_evidence.json")
    );
    let (failed, replies) = contract_failures(root, &run_id);
    eprintln!("t1, micro-steps: {failed} of {replies} replies broke their contract");
    assert_eq!(
        (failed, replies),
        (1, 11),
        "brief, draft, polish, 5 + 3 micro-steps"
    );
}

#[test]
fn at_t3_the_same_step_is_one_request() {
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    let dir = example(&server, Some("medium"));
    let root = dir.path();
    let output = control_room(root, &DRAFT);
    assert!(output.status.success(), "{}", output_text(&output));
    let bodies = continuity_bodies(&server);
    assert_eq!(bodies.len(), 1);
    assert!(bodies[0].contains("schemas/check_continuity.json"));
    let run_id = only_run(root);
    let receipt = agent_receipt(root, &run_id, "continuity");
    assert_eq!(receipt["attempts"], 1);
    assert!(!check_names(&receipt).iter().any(|c| c.contains('/')));
    let (failed, replies) = contract_failures(root, &run_id);
    eprintln!("t3, one step: {failed} of {replies} replies broke their contract");
    assert_eq!((failed, replies), (0, 5));
}

#[test]
fn a_triage_that_never_keeps_its_contract_stops_the_step() {
    let server = FakeModelServer::start();
    server.on(
        CONTINUITY,
        vec![Answer::text("The scene is consistent with the cards.")],
    );
    serve_draft_scene(&server, "");
    let dir = example(&server, None);
    let root = dir.path();
    let output = control_room(root, &DRAFT);
    let shown = output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("step `continuity` (agent continuity) stopped (STOP_HOOK): triage: the reply broke its contract 3 times"),
        "{shown}"
    );
    assert_eq!(continuity_bodies(&server).len(), 3);
    let run_id = only_run(root);
    let receipt = agent_receipt(root, &run_id, "continuity");
    assert_eq!(receipt["stop_hook"], true);
    assert_eq!(receipt["attempts"], 3);
    // Brief, draft and polish kept theirs; the three triages broke theirs.
    assert_eq!(contract_failures(root, &run_id), (3, 6));
}

#[test]
fn a_finding_whose_evidence_never_comes_is_left_out_and_the_receipt_says_so() {
    let server = FakeModelServer::start();
    server.on(
        CONTINUITY,
        vec![continuity(
            json!({"problems": [BLUE]}),
            vec![(BLUE, json!({"severity": "error", "message": BLUE}))],
            vec![json!({"quote": "her blue eyes shone in the lamplight"})],
        )],
    );
    serve_draft_scene(&server, "");
    let dir = example(&server, None);
    let root = dir.path();
    let output = control_room(root, &DRAFT);
    // With its only finding unfounded, the draft passes and lands.
    assert!(output.status.success(), "{}", output_text(&output));
    assert_eq!(continuity_bodies(&server).len(), 1 + 1 + 3);
    let run_id = only_run(root);
    let cache = read_json(&root.join(format!(".control-room/runs/{run_id}/cache.json")));
    let report: Value =
        serde_json::from_str(cache["continuity_report"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(report, json!({"pass": true, "findings": []}));
    let receipt = agent_receipt(root, &run_id, "continuity");
    assert!(
        receipt["risks"]
            .to_string()
            .contains("a finding was left out, for its evidence never came"),
        "{receipt:#}"
    );
    assert!(root.join("Story/Scenes/SCN-the-reckoning.md").exists());
}

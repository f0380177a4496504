//! The report's test: its result, receipts, tokens and each finding's line.

use super::*;
use crate::runs::findings::{Finding, FindingSeverity};
use crate::runs::store::RunTask;
use serde_json::json;

#[test]
fn the_report_links_results_receipts_and_notes_each_findings_line() {
    let mut args = serde_json::Map::new();
    args.insert("scene_id".into(), json!("SCN-a"));
    let manifest = RunManifest {
        run_id: "run_1".into(),
        recipe_id: "creative_draft_scene".into(),
        session_id: "sess_1".into(),
        status: RunStatus::Done,
        created_at: "t0".into(),
        updated_at: "t1".into(),
        completed_at: Some("t1".into()),
        task: RunTask {
            description: "draft scene SCN-a".into(),
            session_plan_task_id: None,
            initial_args: args,
        },
        current_step_index: 3,
        total_steps: 3,
        phase: None,
        error: None,
        review: None,
        scene: None,
        fresh: false,
    };
    let artifact = |text: &str| CacheSlot::Artifact {
        agent_id: "x".into(),
        text: text.into(),
        sha256: String::new(),
        summary: String::new(),
    };
    let cache: Cache = [
        ("scene_brief".to_owned(), artifact("POV: Kael.\nBeats: one.")),
        ("draft".to_owned(), artifact("Kael waited by the gate.")),
        (
            "continuity_report".to_owned(),
            artifact(
                r#"{"pass": false, "findings": [{"severity": "warning", "quote": "by the gate", "message": "Which gate?"}, {"severity": "error", "quote": "invented words", "message": "Nope"}]}"#,
            ),
        ),
    ]
    .into_iter()
    .collect();
    let step = |index: usize, id: &str, slot: &str, agent: &str| StepRecord {
        agent_archetype: Some(agent.into()),
        receipt_id: Some(format!("rcpt_{id}")),
        completed_at: "t".into(),
        ..StepRecord::for_tests(index, id, slot)
    };
    let usage = |prompt, reply, cached, calls, estimated| crate::llm::model::Usage {
        prompt,
        reply,
        cached,
        calls,
        estimated,
    };
    let steps = [
        StepRecord {
            tokens: Some(usage(1631, 20, None, 1, 0)),
            ..step(0, "brief", "scene_brief", "planner")
        },
        StepRecord {
            tokens: Some(usage(9194, 1261, Some(4096), 5, 5)),
            ..step(1, "draft", "draft", "writer")
        },
        step(2, "continuity", "continuity_report", "continuity"),
    ];
    let mut findings = RunFindings {
        version: 1,
        run_id: "run_1".into(),
        recipe_id: "creative_draft_scene".into(),
        scene_path: Some("Story/Scenes/SCN-a.md".into()),
        completed_at: None,
        findings: vec![Finding {
            id: "run_1:continuity:1".into(),
            run_id: "run_1".into(),
            step_id: "continuity".into(),
            receipt_id: Some("rcpt_continuity".into()),
            file: "Story/Scenes/SCN-a.md".into(),
            severity: FindingSeverity::Warning,
            quote: "by the gate".into(),
            message: "Which gate?".into(),
            suggestion: None,
            canon: None,
            report_line: None,
        }],
        dropped: vec![crate::runs::findings::DroppedFinding {
            step_id: "continuity".into(),
            quote: "invented words".into(),
            message: "Nope".into(),
            reason: "the quote is not in Story/Scenes/SCN-a.md".into(),
        }],
    };
    let receipts = [(
        "rcpt_brief".to_owned(),
        "brief".to_owned(),
        ".control-room/audit/issues/run_1/x__receipt__pkt.json".to_owned(),
    )];
    let text = render(
        &ReportInput {
            manifest: &manifest,
            recipe: None,
            steps: &steps,
            cache: &cache,
            delivery: &Delivery::Scene("Story/Scenes/SCN-a.md".into()),
            result_slot: Some("draft"),
            agent_receipts: &receipts,
            dod_issue: None,
            attempts: &[],
        },
        &mut findings,
    );
    let line = findings.findings[0].report_line.unwrap() as usize;
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[line].contains("“by the gate”: Which gate?"),
        "{}",
        lines[line]
    );
    assert!(text.contains("- Result: [Story/Scenes/SCN-a.md](../../../Story/Scenes/SCN-a.md)"));
    assert!(text.contains("The final draft (5 words) is the result above."));
    assert!(
        !text.contains("Kael waited by the gate."),
        "the draft is not repeated"
    );
    assert!(text.contains("POV: Kael.\nBeats: one."));
    assert!(text.contains("Passes: **no**"));
    assert!(text.contains("| 1,631 in, 20 out |"), "{text}");
    assert!(
        text.contains("| 9,194 in (4,096 from the cache), 1,261 out in 5 calls, estimated |"),
        "{text}"
    );
    assert!(
        text.contains("The model calls cost 10,825 in (4,096 from the cache), 1,281 out in 6 calls, partly estimated."),
        "{text}"
    );
    assert!(text.contains("*(not shown: see below)*"));
    assert!(text.contains("(*the quote is not in Story/Scenes/SCN-a.md*)"));
    assert!(text.contains(
        "[`rcpt_brief`](../../../.control-room/audit/issues/run_1/x__receipt__pkt.json)"
    ));
    assert!(
        text.contains("| `rcpt_draft` |"),
        "an agent receipt not on disk is named, not linked"
    );
}

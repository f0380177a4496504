//! The review loop's schedule: which step follows which, for every way a
//! gate or a verdict can go.

use serde_json::{Value, json};

use super::*;
use crate::runs::recipe::{AgentStep, GateSettings, ReviewRule};

fn recipe(max_iterations: u32) -> Recipe {
    let agent = |id: &str, archetype: &str, slot: &str| AgentStep {
        step_id: id.into(),
        agent_archetype: archetype.into(),
        input_slots: Vec::new(),
        output_slot: slot.into(),
        prompt_type: "draft_scene".into(),
    };
    Recipe {
        recipe_id: "reviewed".into(),
        label: "Reviewed".into(),
        task_patterns: Vec::new(),
        phase_a: Vec::new(),
        phase_b: vec![
            agent("draft", "writer", "draft"),
            agent("polish", "editor", "edited"),
        ],
        dod: Vec::new(),
        review: Some(Review {
            after: "draft".into(),
            step_id: "review".into(),
            agent_archetype: "reviewer".into(),
            prompt_type: "review_draft".into(),
            input_slots: Vec::new(),
            output_slot: "review".into(),
            gates: GateSettings::default(),
            rules: vec![ReviewRule {
                id: "beats".into(),
                rule: "Every beat happens.".into(),
                applies_when: None,
            }],
            max_iterations,
            confidence_threshold: 0.7,
        }),
    }
}

fn gates(passed: bool) -> Value {
    json!({"passed": passed, "words": 10, "target": null, "gates": [
        {"gate": "continuity", "passed": passed, "failures": if passed { json!([]) } else { json!(["dead-character: “Kael”: Kael is dead"]) }}
    ]})
}

fn verdict(verdict: &str, kind: Option<&str>, confidence: f64) -> Value {
    json!({"verdict": verdict, "rejection_type": kind, "sop_review": [], "confidence": confidence,
           "feedback": "Slow the ending.", "subtasks": ["Draft the quarrel", "Draft the parting"]})
}

#[test]
fn a_recipe_without_review_runs_its_steps_in_order() {
    let mut plain = recipe(3);
    plain.review = None;
    let schedule = Schedule::new(&plain);
    assert_eq!(schedule.first(), Some(Stage::Recipe(0)));
    assert_eq!(
        schedule.after(Stage::Recipe(0), &Value::Null),
        Next::Stage(Stage::Recipe(1))
    );
    assert_eq!(schedule.after(Stage::Recipe(1), &Value::Null), Next::End);
    assert_eq!(schedule.total(1), 2);
    assert_eq!(schedule.alias(Stage::Recipe(0)), None);
}

#[test]
fn each_iteration_has_its_own_ids_and_slots() {
    let recipe = recipe(3);
    let schedule = Schedule::new(&recipe);
    assert_eq!(schedule.first(), Some(Stage::Writer(1)));
    let ids = |stage| {
        let planned = schedule.planned(stage);
        (planned.id().to_owned(), planned.slot().to_owned())
    };
    assert_eq!(ids(Stage::Writer(1)), ("draft".into(), "draft#1".into()));
    assert_eq!(ids(Stage::Writer(2)), ("draft#2".into(), "draft#2".into()));
    assert_eq!(ids(Stage::Gates(2)), ("gates#2".into(), "gates#2".into()));
    assert_eq!(ids(Stage::Review(1)), ("review".into(), "review#1".into()));
    assert_eq!(schedule.alias(Stage::Writer(2)).as_deref(), Some("draft"));
    assert_eq!(schedule.alias(Stage::Review(2)).as_deref(), Some("review"));
    assert_eq!(schedule.planned(Stage::Review(1)).actor(), "reviewer");
    assert_eq!(schedule.total(2), 6);
}

#[test]
fn a_draft_failing_a_gate_goes_back_to_the_writer_not_the_reviewer() {
    let recipe = recipe(3);
    let schedule = Schedule::new(&recipe);
    assert_eq!(
        schedule.after(Stage::Writer(1), &Value::Null),
        Next::Stage(Stage::Gates(1))
    );
    assert_eq!(
        schedule.after(Stage::Gates(1), &gates(false)),
        Next::Stage(Stage::Writer(2))
    );
    assert_eq!(
        schedule.after(Stage::Gates(2), &gates(true)),
        Next::Stage(Stage::Review(2))
    );
    let Next::Stop(stop) = schedule.after(Stage::Gates(3), &gates(false)) else {
        panic!("the third failure ends the loop")
    };
    assert_eq!(stop.outcome, Outcome::Escalated);
    assert!(stop.reason.contains("after 3 drafts"), "{}", stop.reason);
    assert!(stop.reason.contains("dead-character"), "{}", stop.reason);
}

#[test]
fn verdicts_route_the_loop() {
    let recipe = recipe(2);
    let schedule = Schedule::new(&recipe);
    let after = |k, value: Value| schedule.after(Stage::Review(k), &value);
    assert_eq!(
        after(1, verdict("approved", None, 0.9)),
        Next::Stage(Stage::Recipe(1))
    );
    assert_eq!(
        after(1, verdict("rejected", Some("fixable"), 0.9)),
        Next::Stage(Stage::Writer(2))
    );
    let stop = |next: Next| match next {
        Next::Stop(stop) => stop,
        other => panic!("expected a stop, got {other:?}"),
    };
    let last = stop(after(2, verdict("rejected", Some("fixable"), 0.9)));
    assert_eq!(last.outcome, Outcome::Escalated);
    let low = stop(after(1, verdict("approved", None, 0.5)));
    assert_eq!(low.outcome, Outcome::Escalated);
    assert!(low.reason.contains("0.50"), "{}", low.reason);
    let scope = stop(after(1, verdict("rejected", Some("architectural"), 0.9)));
    assert_eq!(scope.outcome, Outcome::NeedsScoping);
    assert!(scope.reason.contains("architectural: Slow the ending."));
    let split = stop(after(1, verdict("rejected", Some("too_big"), 0.9)));
    assert_eq!(split.outcome, Outcome::Split);
    assert_eq!(split.subtasks, ["Draft the quarrel", "Draft the parting"]);
}

#[test]
fn the_state_follows_the_loop() {
    let recipe = recipe(3);
    let schedule = Schedule::new(&recipe);
    let mut state = ReviewState::new();
    let mut stage = Stage::Writer(1);
    for value in [
        Value::Null,
        gates(false),
        Value::Null,
        gates(true),
        verdict("approved", None, 0.8),
    ] {
        let next = schedule.after(stage, &value);
        state.note(stage, &next);
        match next {
            Next::Stage(next) => stage = next,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(stage, Stage::Recipe(1));
    assert_eq!(state.iterations, 2);
    assert_eq!(state.outcome, Outcome::Approved);
}

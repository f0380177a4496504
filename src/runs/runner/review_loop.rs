//! What the review loop adds to the step loop: the writer's revision
//! request and the reviewer's draft and rules as made-up slots, the gates
//! as a tool-like step, and the verdict held to the loop's rules as part of
//! the reviewer's contract.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::tool::tool_step_output;
use super::{RunScope, StageRun, StepFailure, StepOutput};
use crate::index::Workspace;
use crate::llm::model::Message;
use crate::receipts::Check;
use crate::runs::contract;
use crate::runs::recipe::ReviewRule;
use crate::runs::review::{self, Next, Schedule, Stage};
use crate::runs::store::RunManifest;
use crate::tools::{self, sha256_hex};

/// What an agent step gets besides its recipe inputs: the review loop's.
#[derive(Default)]
pub(super) struct AgentExtras {
    /// Slots made for the step (`draft`, `review_rules` for the reviewer).
    pub(super) slots: Vec<(String, String)>,
    /// Messages after the assembled prompt (the writer's revision request).
    pub(super) follow_up: Vec<Message>,
    /// The rules a reviewer's verdict is validated against.
    pub(super) review: Option<VerdictCheck>,
    /// The step after this one, for the packet's handoff.
    pub(super) next_step_id: Option<String>,
}

/// What a reviewer's verdict is held to: the rules that apply to the
/// draft, every rule of the loop, and the draft its evidence must quote.
pub(super) struct VerdictCheck {
    applicable: Vec<ReviewRule>,
    all: Vec<ReviewRule>,
    draft: String,
}

/// What the review loop adds to an agent step: the reviewer's draft,
/// rules and verdict check; the writer's revision request.
pub(super) fn agent_extras(
    workspace: &Workspace,
    schedule: &Schedule,
    stage: Stage,
    values: &HashMap<String, Value>,
) -> AgentExtras {
    let next_step_id = match stage {
        Stage::Review(_) => None,
        _ => match schedule.after(stage, &Value::Null) {
            Next::Stage(next) => Some(schedule.planned(next).id().to_owned()),
            _ => None,
        },
    };
    let mut extras = AgentExtras {
        next_step_id,
        ..AgentExtras::default()
    };
    let Some((review, writer)) = schedule.review() else {
        return extras;
    };
    match stage {
        Stage::Writer(k) if k > 1 => {
            if let Some((draft, why)) =
                review::revision_request(values, &writer.output_slot, &review.output_slot, k - 1)
            {
                extras.follow_up = vec![
                    Message::assistant(draft),
                    Message::user(format!(
                        "{why}\n\nReply with the whole revised text, as before, and nothing else."
                    )),
                ];
            }
        }
        Stage::Review(k) => {
            let draft = values
                .get(&review::iteration_slot(&writer.output_slot, k))
                .map(|value| {
                    value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_owned)
                })
                .unwrap_or_default();
            let applicable: Vec<ReviewRule> =
                review::verdict::applicable(&review.rules, workspace, &draft)
                    .into_iter()
                    .cloned()
                    .collect();
            let listed: Vec<&ReviewRule> = applicable.iter().collect();
            extras.slots = vec![
                ("draft".to_owned(), draft.clone()),
                (
                    "review_rules".to_owned(),
                    review::verdict::rules_text(&listed),
                ),
            ];
            extras.review = Some(VerdictCheck {
                applicable,
                all: review.rules.clone(),
                draft,
            });
        }
        _ => {}
    }
    extras
}

/// The review loop's gates on iteration `k`'s draft, as a step with a
/// signed receipt like a tool's.
pub(super) fn gates(
    workspace: &Workspace,
    scope: &RunScope<'_>,
    run: &StageRun<'_>,
    manifest: &RunManifest,
    values: &HashMap<String, Value>,
) -> Result<StepOutput, StepFailure> {
    let (Stage::Gates(k), Some((review, writer))) = (run.stage, run.schedule.review()) else {
        return Err(StepFailure::Failed(
            "the gates run only in a review loop".into(),
        ));
    };
    let draft_slot = review::iteration_slot(&writer.output_slot, k);
    let draft = values
        .get(&draft_slot)
        .and_then(Value::as_str)
        .ok_or_else(|| StepFailure::Failed(format!("slot `{draft_slot}` holds no draft")))?;
    let brief = scope
        .recipe
        .phase_b
        .iter()
        .find(|step| step.prompt_type == "refine_brief")
        .and_then(|step| values.get(&step.output_slot))
        .and_then(Value::as_str);
    let args = &manifest.task.initial_args;
    let report = review::gates::run(
        workspace,
        &review.gates,
        &review::gates::DraftScene {
            scene_path: args.get("scene_path").and_then(Value::as_str),
            scene_id: args.get("scene_id").and_then(Value::as_str),
            brief,
            args,
        },
        draft,
    );
    let data = serde_json::to_value(&report).map_err(|e| StepFailure::Failed(e.to_string()))?;
    let mut call_args = Map::new();
    call_args.insert("draft_slot".into(), draft_slot.clone().into());
    call_args.insert("draft_sha256".into(), sha256_hex(draft.as_bytes()).into());
    call_args.insert(
        "gates".into(),
        serde_json::to_value(&review.gates).unwrap_or_default(),
    );
    let output = tools::ToolOutput {
        data,
        summary: report.summary(),
        file_refs: Vec::new(),
    };
    Ok(tool_step_output(
        scope.key,
        run,
        manifest,
        review::GATES_TOOL,
        (call_args, output, vec![draft_slot]),
    ))
}

/// Why a reviewer's verdict breaks the loop's rules: every reason, for the
/// reviewer to hear when it is asked again.
#[derive(Debug, thiserror::Error)]
#[error("the verdict is not valid: {}", .0.join("; "))]
pub(super) struct InvalidVerdict(Vec<String>);

/// A reviewer's verdict held to the loop's rules (a check in its receipt);
/// the reasons it fails, for the reviewer to hear when asked again.
pub(super) fn check_verdict(
    check: Option<&VerdictCheck>,
    accepted: &contract::Accepted,
    checks: &mut Vec<Check>,
) -> Result<(), InvalidVerdict> {
    let Some(check) = check else {
        return Ok(());
    };
    let applicable: Vec<&ReviewRule> = check.applicable.iter().collect();
    match review::verdict::validate(&accepted.value, &applicable, &check.all, &check.draft) {
        Ok(_) => {
            checks.push(Check {
                check: "review_validation".into(),
                passed: true,
                detail: format!(
                    "every applicable rule ({}) is reviewed with evidence quoted from the draft",
                    applicable
                        .iter()
                        .map(|rule| rule.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
            Ok(())
        }
        Err(errors) => Err(InvalidVerdict(errors)),
    }
}

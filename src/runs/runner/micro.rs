//! Micro-steps for the smallest models (execution-modes.md, tier-based step
//! sizing): a finding step whose prompt type has `micro_steps`, given to a
//! t1 model, runs as a triage (the problems, one line each), then one small
//! reply per problem (its finding, or `none`), then one per finding (the
//! exact words it is about, which must be in the text given). Each reply
//! is its own small JSON contract, sent with its own task packet (a child
//! of the step's), asked again at most twice with the error quoted. A
//! triage or finding that never keeps its contract stops the step
//! (STOP_HOOK); a finding whose evidence never comes is left out, and the
//! receipt says so. The runner assembles the step's own reply from them and
//! holds it to the step's schema, so what follows reads it as if one reply
//! had given it. t3 and t5 models keep one step.

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::prompted::Agents;
use super::prompted::{Asked, Holding, Prompted};
use super::receipt::ReceiptDraft;
use super::reuse::ReuseEntry;
use super::review_loop::AgentExtras;
use super::slots::slot_texts;
use super::{StepFailure, StepOutput, new_id, now};
use crate::llm::model::{Model, ModelRequest};
use crate::receipts::Check;
use crate::receipts::audit::{self, Packet, ReceiptActor};
use crate::runs::contract::{self, Violation};
use crate::runs::prompts::{
    MicroSteps, Output, PromptInputs, PromptStep, SlotKind, SlotText, Variant,
};
use crate::runs::recipe::AgentStep;
use crate::runs::store::{Cache, RunManifest};
use crate::tools::sha256_hex;

/// The most problems a triage may raise that are argued.
const MOST_PROBLEMS: usize = 5;

/// One micro-step's place: its kind, its number among its kind, and the
/// slots it adds to the step's.
struct Micro<'a> {
    prompt_type: &'a str,
    label: String,
    extra: Vec<(&'static str, String)>,
    /// Where an evidence's quote must be (the descriptor's `evidence_in`).
    evidence_in: &'a [String],
}

/// What the micro-steps of a step have done so far, for its one receipt.
#[derive(Default)]
struct Tally {
    checks: Vec<Check>,
    attempts: u32,
    actor: Option<ReceiptActor>,
    risks: Vec<String>,
}

impl Tally {
    fn add(&mut self, label: &str, actor: ReceiptActor, checks: Vec<Check>, attempts: u32) {
        self.checks.extend(checks.into_iter().map(|check| Check {
            check: format!("{label}/{}", check.check),
            ..check
        }));
        self.attempts += attempts;
        self.actor = Some(actor);
    }
}

/// A step's place in its run, for its micro-steps.
pub(super) struct MicroRun<'a> {
    pub(super) index: usize,
    pub(super) step: &'a AgentStep,
    pub(super) manifest: &'a RunManifest,
    pub(super) cache: &'a Cache,
    pub(super) prompted: &'a Prompted,
    pub(super) packet: &'a Packet,
    /// Where the assembled reply is kept for reuse, when the step has a target.
    pub(super) reuse_key: Option<String>,
}

impl Agents<'_> {
    /// The micro-steps `step` runs as: when its model's tier is t1 and its
    /// prompt type has them. A step of the review loop keeps one step.
    pub(super) fn micro_steps(
        &self,
        step: &AgentStep,
        prompted: &Prompted,
        extras: &AgentExtras,
    ) -> Option<MicroSteps> {
        if prompted.assembly.profile.variant != Variant::T1
            || extras.review.is_some()
            || !extras.slots.is_empty()
            || !extras.follow_up.is_empty()
        {
            return None;
        }
        self.prompts.contract(&step.prompt_type).micro_steps
    }

    /// Runs a step as its micro-steps and assembles its reply.
    pub(super) async fn run_micro_steps(
        &self,
        model: &dyn Model,
        micro: &MicroSteps,
        run: MicroRun<'_>,
        draft: &mut ReceiptDraft<'_>,
        cancel: &CancellationToken,
    ) -> Result<StepOutput, StepFailure> {
        let mut tally = Tally::default();
        let triage = Micro {
            prompt_type: &micro.triage,
            label: "triage".into(),
            extra: Vec::new(),
            evidence_in: &micro.evidence_in,
        };
        let triage = match self
            .ask_micro(model, &run, triage, &mut tally, cancel)
            .await?
        {
            Ok(value) => value,
            Err(unkept) => return Err(stop(draft, tally, &unkept.to_string())),
        };
        let mut problems: Vec<String> = Vec::new();
        for problem in triage["problems"].as_array().into_iter().flatten() {
            if let Some(problem) = problem.as_str().map(str::trim)
                && !problem.is_empty()
                && !problems.iter().any(|p| p.eq_ignore_ascii_case(problem))
            {
                problems.push(problem.to_owned());
            }
        }
        problems.truncate(MOST_PROBLEMS);
        let mut findings: Vec<(String, Map<String, Value>)> = Vec::new();
        for (n, problem) in problems.iter().enumerate() {
            let ask = Micro {
                prompt_type: &micro.finding,
                label: format!("finding {}", n + 1),
                extra: vec![("problem", problem.clone())],
                evidence_in: &micro.evidence_in,
            };
            let finding = match self.ask_micro(model, &run, ask, &mut tally, cancel).await? {
                Ok(value) => value,
                Err(unkept) => return Err(stop(draft, tally, &unkept.to_string())),
            };
            let Value::Object(finding) = finding else {
                continue;
            };
            if finding.get("severity").and_then(Value::as_str) == Some("none") {
                tally.checks.push(check(
                    &format!("finding {}", n + 1),
                    true,
                    format!("“{problem}” is not a problem after all"),
                ));
                continue;
            }
            findings.push((problem.clone(), finding));
        }
        let mut grounded = Vec::new();
        for (n, (problem, mut finding)) in findings.into_iter().enumerate() {
            let message = finding
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let ask = Micro {
                prompt_type: &micro.evidence,
                label: format!("evidence {}", n + 1),
                extra: vec![("problem", problem), ("finding", message.clone())],
                evidence_in: &micro.evidence_in,
            };
            match self.ask_micro(model, &run, ask, &mut tally, cancel).await? {
                Ok(evidence) => {
                    finding.insert("quote".into(), evidence["quote"].clone());
                    grounded.push(Value::Object(finding));
                }
                Err(why) => tally.risks.push(format!(
                    "a finding was left out, for its evidence never came: “{}” ({why})",
                    crate::text::clip(&message, 120)
                )),
            }
        }
        self.assembled(micro, triage, grounded, run, draft, tally)
    }

    /// The step's reply assembled from its micro-steps, held to the step's
    /// own contract, with the step's receipt.
    fn assembled(
        &self,
        micro: &MicroSteps,
        triage: Value,
        findings: Vec<Value>,
        run: MicroRun<'_>,
        draft: &mut ReceiptDraft<'_>,
        mut tally: Tally,
    ) -> Result<StepOutput, StepFailure> {
        let mut reply = match triage {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        reply.remove("problems");
        if let Some(verdict) = &micro.verdict {
            let error = findings
                .iter()
                .any(|finding| finding["severity"] == "error");
            reply.insert(verdict.clone(), Value::Bool(!error));
        }
        reply.insert(micro.findings.clone(), Value::Array(findings));
        let mut checks = Vec::new();
        let held = contract::check_reply(
            &Value::Object(reply).to_string(),
            Output::Json,
            run.prompted.assembly.schema.as_ref(),
            &run.prompted.guard,
            &mut checks,
        );
        tally.checks.extend(checks.into_iter().map(|check| Check {
            check: format!("assembled/{}", check.check),
            ..check
        }));
        match held {
            Ok(accepted) => {
                draft.extend_risks(std::mem::take(&mut tally.risks));
                let actor = tally.actor.take().unwrap_or_else(|| draft.no_actor());
                let receipt =
                    draft.finish(actor, tally.checks, tally.attempts, None, Ok(&accepted));
                let reusable = run.reuse_key.map(|key| {
                    (
                        key,
                        ReuseEntry {
                            receipt_id: receipt.receipt_id.clone(),
                            run_id: run.manifest.run_id.clone(),
                            step_id: run.step.step_id.clone(),
                            sha256: sha256_hex(accepted.text.as_bytes()),
                            text: accepted.text.clone(),
                        },
                    )
                });
                Ok(self.agent_output(run.index, run.step, accepted, receipt, reusable))
            }
            Err(violation) => Err(stop(
                draft,
                tally,
                &format!(
                    "the reply assembled from the micro-steps breaks the step's contract: {}",
                    violation.message()
                ),
            )),
        }
    }

    /// Asks one micro-step, with its own packet: `Ok` with its JSON, or
    /// `Err` with why it never kept its contract.
    async fn ask_micro(
        &self,
        model: &dyn Model,
        run: &MicroRun<'_>,
        micro: Micro<'_>,
        tally: &mut Tally,
        cancel: &CancellationToken,
    ) -> Result<Result<Value, Unkept>, StepFailure> {
        let MicroRun {
            index,
            step,
            manifest,
            cache,
            prompted,
            packet,
            ..
        } = *run;
        let (mut slots, _) = slot_texts(step, cache)?;
        let given = evidence_text(&slots, micro.evidence_in);
        for (name, text) in &micro.extra {
            slots.push(SlotText {
                name,
                text: text.clone(),
                kind: SlotKind::Artifact,
            });
        }
        let contract = self.prompts.contract(micro.prompt_type);
        let child = child_packet(packet, &micro, contract.schema.clone());
        audit::write_packet(self.root(), self.disk, &child).map_err(StepFailure::Io)?;
        let sent = child.sent();
        let inputs = PromptInputs {
            packet: Some(&sent),
            ..PromptInputs::for_target(
                &manifest.task.description,
                &manifest.task.initial_args,
                slots,
                prompted.target.as_ref(),
                Some(self.workspace),
            )
        };
        let assembly = self
            .prompts
            .build(
                PromptStep {
                    step_id: &step.step_id,
                    agent_archetype: &step.agent_archetype,
                    prompt_type: micro.prompt_type,
                },
                &inputs,
            )
            .map_err(|error| StepFailure::Failed(format!("{}: {error}", micro.label)))?;
        let base = ModelRequest {
            step_id: step.step_id.clone(),
            agent_archetype: step.agent_archetype.clone(),
            prompt_type: micro.prompt_type.to_owned(),
            messages: assembly.messages.clone(),
            json_reply: true,
            schema: assembly.schema.as_ref().map(|(_, schema)| schema.clone()),
            reply_limit: Some(assembly.reply_limit()),
            context_window: Some(assembly.window()),
            model: None,
        };
        let evidence = micro.extra.iter().any(|(name, _)| *name == "finding");
        let quoted = |accepted: &contract::Accepted, checks: &mut Vec<Check>| {
            if evidence {
                hold_quote(accepted, &given, checks)
            } else {
                Ok(())
            }
        };
        let holding = Holding {
            output: Output::Json,
            schema: assembly.schema.as_ref(),
            guard: &prompted.guard,
            extra: &quoted,
        };
        let asked = self
            .ask_until_kept(
                model,
                (index, step, &manifest.run_id),
                holding,
                base,
                cancel,
            )
            .await?;
        Ok(match asked {
            Asked::Kept {
                accepted,
                actor,
                checks,
                attempts,
            } => {
                tally.add(&micro.label, actor, checks, attempts);
                Ok(accepted.value)
            }
            Asked::Broken {
                message,
                actor,
                checks,
                attempts,
            } => {
                tally.add(&micro.label, actor, checks, attempts);
                Err(Unkept {
                    label: micro.label.clone(),
                    message,
                })
            }
        })
    }
}

/// A micro-step that never kept its contract: its label and why.
#[derive(Debug, thiserror::Error)]
#[error("{label}: {message}")]
struct Unkept {
    label: String,
    message: String,
}

/// The text an evidence's quote must be in: the first of `wanted` the step
/// has, else every slot that is not JSON (never another agent's reply).
fn evidence_text(slots: &[SlotText<'_>], wanted: &[String]) -> String {
    if let Some(slot) = wanted
        .iter()
        .find_map(|name| slots.iter().find(|slot| slot.name == name))
    {
        return slot.text.clone();
    }
    slots
        .iter()
        .filter(|slot| contract::stored_json(&slot.text).is_none())
        .map(|slot| slot.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// An evidence reply's quote must be in the text the step was given.
fn hold_quote(
    accepted: &contract::Accepted,
    given: &str,
    checks: &mut Vec<Check>,
) -> Result<(), Violation> {
    let quote = accepted.value["quote"].as_str().unwrap_or_default();
    let shown = crate::text::clip(quote, 120);
    if found_in(quote, given) {
        checks.push(check("quote", true, "found in the text given"));
        return Ok(());
    }
    checks.push(check(
        "quote",
        false,
        format!("“{shown}” is not in the text given"),
    ));
    Err(Violation::Contract(format!(
        "“{shown}” is not in the text: copy the words exactly as they are written in the text above"
    )))
}

/// The step stopped (STOP_HOOK), with the receipt of its micro-steps.
fn stop(draft: &mut ReceiptDraft<'_>, mut tally: Tally, message: &str) -> StepFailure {
    draft.extend_risks(std::mem::take(&mut tally.risks));
    let actor = tally.actor.take().unwrap_or_else(|| draft.no_actor());
    let receipt = draft.finish(actor, tally.checks, tally.attempts, None, Err(message));
    StepFailure::Stopped(message.to_owned(), Box::new(receipt))
}

fn check(name: &str, passed: bool, detail: impl Into<String>) -> Check {
    Check {
        check: name.to_owned(),
        passed,
        detail: detail.into(),
    }
}

/// A micro-step's packet: the step's, narrowed to this one reply.
fn child_packet(parent: &Packet, micro: &Micro<'_>, schema: Option<String>) -> Packet {
    let mut child = parent.clone();
    child.packet_id = new_id("pkt_");
    child.parent_packet_id = Some(parent.packet_id.clone());
    child.scope = match micro.extra.first() {
        Some((_, problem)) => format!("{} ({}: {problem})", parent.scope, micro.label),
        None => format!("{} ({})", parent.scope, micro.label),
    };
    child.output_contract.kind = "json".into();
    child.output_contract.schema = schema;
    if let Some(constraint) = child.constraints.last_mut() {
        *constraint = "reply with one small JSON object that follows the schema".into();
    }
    child.timestamp = now();
    child
}

/// Whether `quote` is in `text`, whitespace and quotation marks aside.
fn found_in(quote: &str, text: &str) -> bool {
    fn plain(text: &str) -> String {
        text.chars()
            .map(|c| match c {
                '\u{2018}' | '\u{2019}' => '\'',
                '\u{201c}' | '\u{201d}' => '"',
                other => other,
            })
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
    let quote = plain(quote);
    let quote = quote.trim_matches(|c: char| c == '"' || c == '\'' || c.is_whitespace());
    quote.chars().count() >= 6 && plain(text).contains(quote)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quote_is_found_whatever_its_quotation_marks_and_line_breaks() {
        let text = "He said, \u{201c}the gate\nheld\u{201d} and left.";
        assert!(found_in("the gate held", text));
        assert!(found_in("\"the gate held\"", text));
        assert!(found_in("said, \"the gate held\"", text));
        assert!(!found_in("the gate fell", text));
        assert!(!found_in("gate", text), "too short to ground anything");
    }

    #[test]
    fn evidence_is_sought_in_the_text_under_review_never_in_another_agents_reply() {
        let slot = |name: &'static str, text: &str| SlotText {
            name,
            text: text.to_owned(),
            kind: SlotKind::Artifact,
        };
        let slots = [
            slot(
                "validation",
                "Kael keeps the lamp burning through the night.",
            ),
            slot("beat_comparison", r#"{"decisions": ["verdict: partly"]}"#),
            slot("canon_context", "Kael Maren has grey eyes."),
        ];
        let wanted = ["edited_draft".to_owned(), "validation".to_owned()];
        assert_eq!(
            evidence_text(&slots, &wanted),
            "Kael keeps the lamp burning through the night."
        );
        // Without a list: every slot but the JSON ones.
        let all = evidence_text(&slots, &[]);
        assert!(all.contains("grey eyes") && !all.contains("verdict"));
    }

    #[test]
    fn a_childs_packet_names_its_parent_and_its_own_contract() {
        let parent = Packet {
            version: Some(audit::CONTRACT_VERSION.into()),
            packet_id: "pkt_parent".into(),
            parent_issue_id: "run_1".into(),
            parent_packet_id: None,
            intent: "analyze".into(),
            target: audit::Target {
                file: None,
                scene_id: None,
            },
            scope: "Check the reckoning".into(),
            inputs: Vec::new(),
            constraints: vec!["reply with one JSON object that follows the schema".into()],
            output_contract: audit::OutputContract {
                kind: "json".into(),
                schema: Some("schemas/check_continuity.json".into()),
                expected_artifacts: vec!["Story/Scenes/SCN-a.md".into()],
            },
            handoff: audit::Handoff {
                from: "step_runner".into(),
                to: "continuity".into(),
                step_id: "continuity".into(),
                next_step_id: None,
            },
            timestamp: now(),
            requested_by: "step_runner".into(),
            choices: None,
        };
        let micro = Micro {
            prompt_type: "check_continuity_finding",
            label: "finding 2".into(),
            extra: vec![("problem", "Tomas speaks".into())],
            evidence_in: &[],
        };
        let child = child_packet(&parent, &micro, Some("schemas/micro_finding.json".into()));
        assert_eq!(child.parent_packet_id.as_deref(), Some("pkt_parent"));
        assert_ne!(child.packet_id, parent.packet_id);
        assert_eq!(child.scope, "Check the reckoning (finding 2: Tomas speaks)");
        assert_eq!(
            child.output_contract.schema.as_deref(),
            Some("schemas/micro_finding.json")
        );
        assert_eq!(
            child.output_contract.expected_artifacts,
            parent.output_contract.expected_artifacts
        );
        assert!(child.sent().contains("finding 2: Tomas speaks"));
    }
}

//! The agent step: the prompt assembled from the step's input slots, the
//! task packet written before the model is asked, the model call, the
//! reply held to its output contract (asked again at most
//! [`CONTRACT_RETRIES`] times with the error quoted, then STOP_HOOK), and
//! the signed agent receipt.
//! Reuse of finished steps is beside it, in `reuse`.

use super::reuse::{ReuseEntry, reuse_key};
use super::review_loop::{AgentExtras, VerdictCheck, check_verdict};
use super::slots::{slot_texts, summary_line};
use super::{Runner, StepFailure, StepOutput, StepReceipt, new_id, now};
use crate::engine::audit::{
    self, AgentReceipt, Handoff, InputRef, OutputContract, OutputRef, Packet, ReceiptActor,
};
use crate::engine::contract::{self, Check, PathGuard, Violation};
use crate::engine::events::RunEvent;
use crate::engine::model::{Message, Model, ModelReply, ModelRequest, ModelTarget, Written};
use crate::engine::prompts::{Assembly, Output, PromptInputs, SlotKind, SlotText};
use crate::engine::receipts::{self, SigningKey};
use crate::engine::recipe::AgentStep;
use crate::engine::store::{Cache, CacheSlot, RunManifest};
use crate::engine::tools::sha256_hex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How many times a reply that breaks its contract is asked for again.
const CONTRACT_RETRIES: u32 = 2;

/// An agent step's prompt and what its reply is held to, settled before
/// the model is asked.
pub(super) struct Prompted {
    pub(super) assembly: Assembly,
    /// Where the step goes; `None` when the model names no target for it.
    pub(super) target: Option<ModelTarget>,
    pub(super) inputs_used: Vec<InputRef>,
    /// The files the reply may name.
    pub(super) guard: PathGuard,
    /// Whether the reply is JSON against a schema rather than prose.
    pub(super) json: bool,
}

impl Runner {
    /// Runs an agent step: its prompt, its packet (written before the model
    /// call, so a step that never returns still says what it was asked), a
    /// finished identical request's artifact when reuse is on, else the
    /// model until a reply keeps its contract.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_agent(
        &self,
        index: usize,
        step: &AgentStep,
        manifest: &RunManifest,
        cache: &Cache,
        key: &SigningKey,
        started_at: &str,
        cancel: &CancellationToken,
        extras: AgentExtras,
    ) -> Result<StepOutput, StepFailure> {
        let model = self.model.as_ref().ok_or_else(|| {
            StepFailure::Failed(
                "no model is configured: pass --model scripted:FILE to dry-run the recipe".into(),
            )
        })?;
        model.calibrate(&step.agent_archetype).await;
        let prompted = self.prompt_agent(step, manifest, cache, &extras, model.as_ref())?;
        let packet = agent_packet(step, manifest, &prompted, extras.next_step_id.clone());
        audit::write_packet(self.root(), &self.disk, &packet).map_err(StepFailure::Io)?;
        let mut messages = prompted.assembly.messages.clone();
        messages.extend(extras.follow_up.iter().cloned());
        let base = ModelRequest {
            step_id: step.step_id.clone(),
            agent_archetype: step.agent_archetype.clone(),
            prompt_type: step.prompt_type.clone(),
            messages,
            json_reply: prompted.json,
            schema: prompted
                .assembly
                .schema
                .as_ref()
                .map(|(_, schema)| schema.clone()),
            reply_limit: Some(prompted.assembly.reply_limit()),
            context_window: Some(prompted.assembly.window()),
            model: None,
        };
        let mut draft = ReceiptDraft::new(step, manifest, &packet, &prompted, started_at, key);
        let reuse_key = prompted
            .target
            .as_ref()
            .map(|target| reuse_key(target, &base));
        // A run started with `--fresh` asks the model again when resumed too.
        if self.reuse
            && !manifest.fresh
            && let Some(reuse_key) = &reuse_key
            && let Some(output) = self.reuse_finished(
                index,
                step,
                reuse_key,
                &prompted,
                extras.review.as_ref(),
                &mut draft,
            )
        {
            return Ok(output);
        }
        let asking = Asking {
            index,
            step,
            manifest,
            prompted: &prompted,
            review: extras.review.as_ref(),
            reuse_key,
        };
        self.ask_until_accepted(model.as_ref(), asking, base, &mut draft, cancel)
            .await
    }

    /// The step's prompt from its input slots and the review loop's made-up
    /// ones, for the model the step goes to, and the files its reply may name.
    fn prompt_agent(
        &self,
        step: &AgentStep,
        manifest: &RunManifest,
        cache: &Cache,
        extras: &AgentExtras,
        model: &dyn Model,
    ) -> Result<Prompted, StepFailure> {
        let (mut slots, inputs_used) = slot_texts(step, cache)?;
        for (name, text) in &extras.slots {
            slots.retain(|slot| slot.name != name);
            slots.push(SlotText {
                name,
                text: text.clone(),
                kind: SlotKind::Artifact,
            });
        }
        let target = model.target(&step.agent_archetype);
        let assembly = self
            .prompts
            .build(
                step.prompt_step(),
                &PromptInputs {
                    task_description: &manifest.task.description,
                    task_args: &manifest.task.initial_args,
                    slots,
                    model: target.as_ref().map(|target| target.model.as_str()),
                    max_tokens: target.as_ref().and_then(|target| target.max_tokens),
                    tier: target.as_ref().and_then(|target| target.tier.as_deref()),
                    context_window: target.as_ref().and_then(|target| target.context_window),
                    chars_per_token: target.as_ref().and_then(|target| target.chars_per_token),
                    workspace: Some(&self.workspace),
                    history: &[],
                },
            )
            .map_err(|error| StepFailure::Failed(error.to_string()))?;
        let json = assembly.output == Output::Json;
        let guard = PathGuard::new(self.expected_artifacts(step, manifest, cache));
        Ok(Prompted {
            assembly,
            target,
            inputs_used,
            guard,
            json,
        })
    }

    /// Asks the model until a reply keeps its contract (and, for a reviewer,
    /// the loop's rules). A broken reply is asked again with the error
    /// quoted, at most [`CONTRACT_RETRIES`] times; past that, or when the
    /// reply names a path it must not, the step stops with its receipt.
    async fn ask_until_accepted(
        &self,
        model: &dyn Model,
        asking: Asking<'_>,
        base: ModelRequest,
        draft: &mut ReceiptDraft<'_>,
        cancel: &CancellationToken,
    ) -> Result<StepOutput, StepFailure> {
        let Asking {
            index,
            step,
            manifest,
            prompted,
            review,
            reuse_key,
        } = asking;
        let assembly = &prompted.assembly;
        let mut messages = base.messages.clone();
        let mut attempts = 0;
        let mut retried: Vec<Check> = Vec::new();
        loop {
            attempts += 1;
            let request = ModelRequest {
                messages: messages.clone(),
                ..base.clone()
            };
            let writing = |written: Written<'_>| {
                self.emit(RunEvent::writing(
                    &manifest.run_id,
                    index,
                    &step.step_id,
                    written,
                ));
            };
            let reply: ModelReply = tokio::select! {
                reply = model.complete_streaming(&request, &writing) => reply.map_err(|error| StepFailure::Failed(error.to_string()))?,
                () = cancel.cancelled() => return Err(StepFailure::Cancelled),
            };
            let mut checks = retried.clone();
            let verdict = contract::finished(&reply, &mut checks)
                .and_then(|()| {
                    contract::check_reply(
                        &reply.text,
                        assembly.output,
                        assembly.schema.as_ref(),
                        &prompted.guard,
                        &mut checks,
                    )
                })
                .and_then(|accepted| {
                    let echo = match assembly.output {
                        Output::Prose => {
                            contract::echo_of_prompt(&accepted.text, &request.messages)
                        }
                        Output::Json => None,
                    };
                    if let Some(message) = echo {
                        checks.push(Check {
                            check: "prose".into(),
                            passed: false,
                            detail: message.clone(),
                        });
                        return Err(Violation::Contract(message));
                    }
                    check_verdict(review, &accepted, &mut checks)
                        .map(|()| accepted)
                        .map_err(|invalid| Violation::Contract(invalid.to_string()))
                });
            let actor = ReceiptActor::of(&step.agent_archetype, &reply);
            match verdict {
                Ok(accepted) => {
                    let receipt = draft.finish(actor, checks, attempts, None, Ok(&accepted));
                    let reusable = reuse_key.map(|key| {
                        (
                            key,
                            ReuseEntry {
                                receipt_id: receipt.receipt_id.clone(),
                                run_id: manifest.run_id.clone(),
                                step_id: step.step_id.clone(),
                                sha256: sha256_hex(accepted.text.as_bytes()),
                                text: accepted.text.clone(),
                            },
                        )
                    });
                    return Ok(self.agent_output(index, step, accepted, receipt, reusable));
                }
                Err(Violation::Contract(message)) if attempts <= CONTRACT_RETRIES => {
                    retried.push(Check {
                        check: format!("attempt_{attempts}"),
                        passed: false,
                        detail: message.clone(),
                    });
                    // A runaway reply is not sent back whole: its start
                    // shows the model what it did at a fraction of the room.
                    messages.push(Message::assistant(if reply.cut_off {
                        format!("{} […]", crate::text::clip(&reply.text, 400))
                    } else {
                        reply.text.clone()
                    }));
                    messages.push(Message::user(stricter_prompt(
                        &message,
                        prompted.json,
                        attempts + 1,
                    )));
                }
                Err(violation) => {
                    let message = match &violation {
                        Violation::Contract(message) => format!(
                            "the reply broke its contract {attempts} times; the last time: {message}{}",
                            if reply.cut_off {
                                " (for you: raise max_tokens under [llm] in control-room.toml, or ask for less)"
                            } else {
                                ""
                            }
                        ),
                        Violation::Path(message) => message.clone(),
                    };
                    let receipt = draft.finish(actor, checks, attempts, None, Err(&message));
                    return Err(StepFailure::Stopped(message, Box::new(receipt)));
                }
            }
        }
    }

    /// A finished agent step: its artifact slot and its signed receipt.
    pub(super) fn agent_output(
        &self,
        index: usize,
        step: &AgentStep,
        accepted: contract::Accepted,
        receipt: AgentReceipt,
        reusable: Option<(String, ReuseEntry)>,
    ) -> StepOutput {
        let sha256 = sha256_hex(accepted.text.as_bytes());
        let slot = CacheSlot::Artifact {
            agent_id: format!("{}-{:03}", step.agent_archetype, index + 1),
            summary: summary_line(&accepted.text),
            text: accepted.text.clone(),
            sha256,
        };
        StepOutput {
            slot,
            value: accepted.value,
            receipt: StepReceipt::Agent(Box::new(receipt)),
            input_slot_refs: step.input_slots.clone(),
            text: accepted.text,
            reusable,
            actions: accepted.actions,
        }
    }

    /// The files an agent step may name: the task's scene and canon cards,
    /// and every file the tools read for the step's input slots.
    fn expected_artifacts(
        &self,
        step: &AgentStep,
        manifest: &RunManifest,
        cache: &Cache,
    ) -> Vec<String> {
        let args = &manifest.task.initial_args;
        let mut expected: Vec<String> = Vec::new();
        if let Some(path) = args.get("scene_path").and_then(Value::as_str) {
            expected.push(path.to_owned());
        }
        if let Some(Value::Array(paths)) = args.get("canon_paths") {
            expected.extend(paths.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        let cited: std::collections::HashSet<&str> = step
            .input_slots
            .iter()
            .filter_map(|name| match cache.get(name) {
                Some(CacheSlot::Pointer { receipt_id, .. }) => Some(receipt_id.as_str()),
                _ => None,
            })
            .collect();
        if !cited.is_empty() {
            for receipt in receipts::load(self.root(), &manifest.session_id) {
                if cited.contains(receipt.receipt_id.as_str()) {
                    expected.extend(receipt.file_refs.into_iter().map(|file| file.path));
                }
            }
        }
        expected
    }
}

/// What the model call of an agent step needs besides the request itself.
struct Asking<'a> {
    index: usize,
    step: &'a AgentStep,
    manifest: &'a RunManifest,
    prompted: &'a Prompted,
    review: Option<&'a VerdictCheck>,
    /// Where an accepted reply is kept for reuse, when the step has a target.
    reuse_key: Option<String>,
}

/// The task packet of an agent step: what it is asked, on which
/// inputs, under which constraints and contract, and who gets it next.
fn agent_packet(
    step: &AgentStep,
    manifest: &RunManifest,
    prompted: &Prompted,
    next_step_id: Option<String>,
) -> Packet {
    let Prompted {
        assembly,
        inputs_used,
        guard,
        json,
        ..
    } = prompted;
    let json = *json;
    let args = &manifest.task.initial_args;
    let arg = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
    Packet {
        version: Some(audit::CONTRACT_VERSION.to_owned()),
        packet_id: new_id("pkt_"),
        parent_issue_id: manifest.run_id.clone(),
        parent_packet_id: None,
        intent: audit::intent(&step.prompt_type, json, assembly.mode.as_deref()).to_owned(),
        target: audit::Target {
            file: arg("scene_path"),
            scene_id: arg("scene_id"),
        },
        scope: manifest.task.description.clone(),
        inputs: inputs_used.clone(),
        constraints: vec![
            "use no tools; rely only on the inputs given".into(),
            "name no file outside the expected artifacts".into(),
            if json {
                "reply with one JSON object that follows the schema".into()
            } else {
                "reply with the prose; reasoning stays in <thinking>".into()
            },
        ],
        output_contract: OutputContract {
            kind: if json { "json" } else { "prose" }.into(),
            schema: assembly.schema.as_ref().map(|(source, _)| source.clone()),
            expected_artifacts: guard.expected().map(str::to_owned).collect(),
        },
        handoff: Handoff {
            from: "step_runner".into(),
            to: step.agent_archetype.clone(),
            step_id: step.step_id.clone(),
            next_step_id,
        },
        timestamp: now(),
        requested_by: "step_runner".into(),
        choices: None,
    }
}

/// The message that asks again after a reply broke its contract.
fn stricter_prompt(error: &str, json: bool, attempt: u32) -> String {
    let total = CONTRACT_RETRIES + 1;
    let shape = if json {
        "exactly one JSON object that follows the schema, and nothing else: no prose, no code fences, no XML"
    } else {
        "the prose itself, or the prose inside <content_update target=\"…\">…</content_update>; reasoning only inside <thinking>"
    };
    format!(
        "Your reply could not be used: {error}\n\nReply again with {shape}. Quote text exactly as it is written, and name only the files you were given. This is attempt {attempt} of {total}."
    )
}

/// What an agent receipt is built from, gathered before the model answers.
pub(super) struct ReceiptDraft<'a> {
    step: &'a AgentStep,
    manifest: &'a RunManifest,
    packet: &'a Packet,
    inputs_used: Vec<InputRef>,
    started_at: &'a str,
    key: &'a SigningKey,
    risks: Vec<String>,
    assumptions: Vec<String>,
}

impl<'a> ReceiptDraft<'a> {
    /// The draft of a step's receipt, with what its prompt already tells:
    /// the parts trimmed to fit the model, and a model missing from the
    /// capability matrix.
    fn new(
        step: &'a AgentStep,
        manifest: &'a RunManifest,
        packet: &'a Packet,
        prompted: &Prompted,
        started_at: &'a str,
        key: &'a SigningKey,
    ) -> ReceiptDraft<'a> {
        let assembly = &prompted.assembly;
        ReceiptDraft {
            step,
            manifest,
            packet,
            inputs_used: prompted.inputs_used.clone(),
            started_at,
            key,
            risks: assembly
                .trimmed
                .iter()
                .map(|part| {
                    format!("the prompt was trimmed to fit the model: {part} left out or cut")
                })
                .collect(),
            assumptions: match &assembly.profile.matched {
                Some(_) => Vec::new(),
                None => vec![format!(
                    "{} is not in the capability matrix; its prompt was assembled for tier `{}`",
                    prompted
                        .target
                        .as_ref()
                        .map_or("the model", |target| target.model.as_str()),
                    assembly.profile.tier
                )],
            },
        }
    }
}

impl ReceiptDraft<'_> {
    /// The signed receipt of the step: `Ok` with what it produced, or `Err`
    /// with why it stopped (STOP_HOOK).
    pub(super) fn finish(
        &mut self,
        actor: ReceiptActor,
        checks: Vec<Check>,
        attempts: u32,
        reused_from: Option<String>,
        outcome: Result<&contract::Accepted, &str>,
    ) -> AgentReceipt {
        let step = self.step;
        let next = self.packet.handoff.next_step_id.as_deref().map_or_else(
            || "evaluate the Definition of Done".to_owned(),
            |next| format!("run step `{next}`"),
        );
        let (outputs, excerpt, summary, stop_reason, next_action) = match outcome {
            Ok(accepted) => {
                let words = accepted.text.split_whitespace().count();
                let excerpt = format!(
                    "The {} answered `{}` in {attempts} attempt{}: {words} words into slot `{}`. It begins: {}",
                    step.agent_archetype,
                    step.prompt_type,
                    if attempts == 1 { "" } else { "s" },
                    step.output_slot,
                    summary_line(&accepted.text)
                );
                (
                    vec![OutputRef {
                        slot: step.output_slot.clone(),
                        sha256: sha256_hex(accepted.text.as_bytes()),
                        chars: accepted.text.chars().count(),
                        path: None,
                    }],
                    excerpt,
                    accepted.message.clone().unwrap_or_else(|| {
                        "The agent gave no message beside its output.".to_owned()
                    }),
                    None,
                    next,
                )
            }
            Err(reason) => (
                Vec::new(),
                format!(
                    "STOP_HOOK: the {} step `{}` stopped and nothing was written. {reason}",
                    step.agent_archetype, step.step_id
                ),
                "The step stopped before its output was accepted.".to_owned(),
                Some(reason.to_owned()),
                format!(
                    "the writer decides: fix the inputs or the prompt, then `control-room runs resume {}`",
                    self.manifest.run_id
                ),
            ),
        };
        let decisions =
            outcome.map_or_else(|_| Vec::new(), |accepted| decision_lines(&accepted.actions));
        let mut risks = std::mem::take(&mut self.risks);
        if let Ok(accepted) = outcome {
            risks.extend(
                accepted
                    .warnings
                    .iter()
                    .map(|w| format!("XML protocol: {w}")),
            );
        }
        let mut receipt = AgentReceipt {
            version: Some(audit::CONTRACT_VERSION.to_owned()),
            receipt_id: new_id("arcpt_"),
            packet_id: self.packet.packet_id.clone(),
            issue_id: self.manifest.run_id.clone(),
            run_id: self.manifest.run_id.clone(),
            session_id: self.manifest.session_id.clone(),
            step_id: step.step_id.clone(),
            actor,
            started_at: self.started_at.to_owned(),
            finished_at: now(),
            inputs_used: self.inputs_used.clone(),
            outputs_produced: outputs,
            reasoning_summary: summary,
            decisions,
            checks_performed: checks,
            assumptions: std::mem::take(&mut self.assumptions),
            risks,
            next_recommended_action: next_action,
            stop_hook: stop_reason.is_some(),
            stop_reason,
            citations: self
                .inputs_used
                .iter()
                .filter_map(|input| input.receipt_id.clone())
                .collect(),
            report_excerpt: excerpt,
            attempts,
            reused_from,
            signature: String::new(),
        };
        receipt.sign(self.key);
        receipt
    }
}

/// The decisions an agent took (its `save_decision` actions the knowledge
/// base keeps), as its receipt records them.
fn decision_lines(actions: &[crate::engine::protocol::Action]) -> Vec<String> {
    crate::engine::prompts::state::decisions_from_actions(actions, "", None, "")
        .into_iter()
        .map(|decision| format!("{}/{}: {}", decision.category, decision.key, decision.value))
        .collect()
}

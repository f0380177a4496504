//! The agent step: the prompt assembled from the step's input slots, the
//! task packet written before the model is asked, the model call, the
//! reply held to its output contract (asked again at most
//! [`CONTRACT_RETRIES`] times with the error quoted, then STOP_HOOK), and
//! the signed agent receipt.
//! Reuse of finished steps is beside it, in `reuse`.

use super::micro::MicroRun;
use super::prompted::{Agents, Asked, Holding, Prompted};
use super::receipt::ReceiptDraft;
use super::reuse::{ReuseEntry, reuse_key};
use super::review_loop::{AgentExtras, VerdictCheck, check_verdict};
use super::slots::{slot_texts, summary_line};
use super::{RunScope, StageRun, StepFailure, StepOutput, StepReceipt, new_id, now};
use crate::llm::model::{Message, Metered, Model, ModelReply, ModelRequest, Written};
use crate::receipts::Check;
use crate::receipts::audit::{
    self, AgentReceipt, Handoff, InputRef, OutputContract, Packet, ReceiptActor,
};
use crate::runs::contract::{self, PathGuard, Violation};
use crate::runs::events::RunEvent;
use crate::runs::prompts::{Contract, Output, PromptInputs, SlotKind, SlotText};
use crate::runs::recipe::AgentStep;
use crate::runs::store::{Cache, CacheSlot, RunManifest};
use crate::tools::sha256_hex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How many times a reply that breaks its contract is asked for again.
const CONTRACT_RETRIES: u32 = 2;

impl Agents<'_> {
    /// Runs an agent step: its prompt, its packet (written before the model
    /// call, so a step that never returns still says what it was asked), a
    /// finished identical request's artifact when reuse is on, else the
    /// model until a reply keeps its contract.
    pub(super) async fn run(
        &self,
        scope: &RunScope<'_>,
        stage: &StageRun<'_>,
        step: &AgentStep,
        manifest: &RunManifest,
        cache: &Cache,
        extras: AgentExtras,
    ) -> Result<StepOutput, StepFailure> {
        let (index, key, cancel) = (stage.index, scope.key, scope.cancel);
        let started_at = stage.started_at.as_str();
        let model = self.model.as_ref().ok_or_else(|| {
            StepFailure::Failed(
                "no model is configured: pass --model scripted:FILE to dry-run the recipe".into(),
            )
        })?;
        model.calibrate(&step.agent_archetype).await;
        let (prompted, packet) =
            self.prompt_agent(step, manifest, cache, &extras, model.as_ref())?;
        audit::write_packet(self.root(), self.disk, &packet).map_err(StepFailure::Io)?;
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
        let micro = self.micro_steps(step, &prompted, &extras);
        // A step answered in micro-steps is kept apart from one answered at
        // once, and from one split another way.
        let reuse_key = prompted.target.as_ref().map(|target| {
            let key = reuse_key(target, &base);
            match &micro {
                Some(micro) => sha256_hex(format!("{key} micro-steps {micro:?}").as_bytes()),
                None => key,
            }
        });
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
        if let Some(micro) = micro {
            // The assembled reply is kept for reuse under the step's own
            // request, as one reply would be.
            let run = MicroRun {
                index,
                step,
                manifest,
                cache,
                prompted: &prompted,
                packet: &packet,
                reuse_key,
            };
            let metered = Metered::new(model.as_ref());
            let answered = self
                .run_micro_steps(&metered, &micro, run, &mut draft, cancel)
                .await;
            return answered.map(|output| output.with_tokens(metered.total()));
        }
        let asking = Asking {
            index,
            step,
            manifest,
            prompted: &prompted,
            review: extras.review.as_ref(),
            reuse_key,
        };
        // What each of its calls cost, retries included, goes with the step.
        let metered = Metered::new(model.as_ref());
        let answered = self
            .ask_until_accepted(&metered, asking, base, &mut draft, cancel)
            .await;
        answered.map(|output| output.with_tokens(metered.total()))
    }

    /// The step's task packet, and its prompt from its input slots and the
    /// review loop's made-up ones, for the model the step goes to, closed
    /// by the packet as sent, with the files its reply may name.
    fn prompt_agent(
        &self,
        step: &AgentStep,
        manifest: &RunManifest,
        cache: &Cache,
        extras: &AgentExtras,
        model: &dyn Model,
    ) -> Result<(Prompted, Packet), StepFailure> {
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
        let args = &manifest.task.initial_args;
        let guard =
            PathGuard::new(self.expected_artifacts(step, args, Some(&manifest.session_id), cache));
        let packet = agent_packet(
            step,
            (&manifest.run_id, &manifest.task.description, args),
            &self.prompts.contract(&step.prompt_type),
            &inputs_used,
            &guard,
            extras.next_step_id.clone(),
        );
        let sent = packet.sent();
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
                    workspace: Some(self.workspace),
                    history: &[],
                    follow_up: &[],
                    graph: Some(self.graph),
                    packet: Some(&sent),
                },
            )
            .map_err(|error| StepFailure::Failed(error.to_string()))?;
        let json = assembly.output.is_json();
        let prompted = Prompted {
            assembly,
            target,
            inputs_used,
            guard,
            json,
        };
        Ok((prompted, packet))
    }

    /// Asks the model until a reply keeps its contract (and, for a reviewer,
    /// the loop's rules); past that, or when the reply names a path it must
    /// not, the step stops with its receipt. A receipt step's reply that
    /// says the agent cannot go on stops it too.
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
        let verdict = |accepted: &contract::Accepted, checks: &mut Vec<Check>| {
            check_verdict(review, accepted, checks)
                .map_err(|invalid| Violation::Contract(invalid.to_string()))
        };
        let holding = Holding {
            output: prompted.assembly.output,
            schema: prompted.assembly.schema.as_ref(),
            guard: &prompted.guard,
            extra: &verdict,
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
        let (accepted, actor, checks, attempts) = match asked {
            Asked::Kept {
                accepted,
                actor,
                checks,
                attempts,
            } => (accepted, actor, checks, attempts),
            Asked::Broken {
                message,
                actor,
                checks,
                attempts,
            } => {
                let receipt = draft.finish(actor, checks, attempts, None, Err(&message));
                return Err(StepFailure::Stopped(message, Box::new(receipt)));
            }
        };
        if let Some(reply) = draft.receipt_reply(&accepted).filter(|r| r.stop_hook) {
            // The agent's own receipt says it cannot do the task: the step
            // stops with its reason, for asking again would not give it
            // what it lacks.
            let message = format!(
                "the {} stopped: {}",
                step.agent_archetype,
                reply.stop_reason.as_deref().unwrap_or_default().trim()
            );
            draft.agent = Some(reply);
            let receipt = draft.finish(actor, checks, attempts, None, Err(&message));
            return Err(StepFailure::Stopped(message, Box::new(receipt)));
        }
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
        Ok(self.agent_output(index, step, accepted, receipt, reusable))
    }

    /// Asks the model until a reply keeps what `holding` holds it to. A
    /// broken reply is asked again with the error quoted, at most
    /// [`CONTRACT_RETRIES`] times; a path it must not name ends the asking
    /// at once. Every attempt's reply streams to the run's listeners.
    pub(super) async fn ask_until_kept(
        &self,
        model: &dyn Model,
        (index, step, run_id): (usize, &AgentStep, &str),
        holding: Holding<'_>,
        base: ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<Asked, StepFailure> {
        let json = holding.output.is_json();
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
                self.emit(RunEvent::writing(run_id, index, &step.step_id, written));
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
                        holding.output,
                        holding.schema,
                        holding.guard,
                        &mut checks,
                    )
                })
                .and_then(|accepted| {
                    let echo = match holding.output {
                        Output::Prose | Output::Foreman => {
                            contract::echo_of_prompt(&accepted.text, &request.messages)
                        }
                        Output::Json | Output::Receipt => None,
                    };
                    if let Some(message) = echo {
                        checks.push(Check {
                            check: "prose".into(),
                            passed: false,
                            detail: message.clone(),
                        });
                        return Err(Violation::Contract(message));
                    }
                    (holding.extra)(&accepted, &mut checks).map(|()| accepted)
                });
            let actor = ReceiptActor::of(&step.agent_archetype, &reply);
            match verdict {
                Ok(accepted) => {
                    return Ok(Asked::Kept {
                        accepted,
                        actor,
                        checks,
                        attempts,
                    });
                }
                Err(Violation::Contract(message)) if attempts <= CONTRACT_RETRIES => {
                    let kept = self.keep_attempt(run_id, &step.step_id, attempts, &message, &reply);
                    retried.push(Check {
                        check: format!("attempt_{attempts}"),
                        passed: false,
                        detail: format!("{message}{kept}"),
                    });
                    // A runaway reply is not sent back whole: its start
                    // shows the model what it did at a fraction of the room.
                    messages.push(Message::assistant(if reply.cut_off {
                        format!("{} […]", crate::text::clip(&reply.text, 400))
                    } else {
                        reply.text.clone()
                    }));
                    messages.push(Message::user(stricter_prompt(&message, json, attempts + 1)));
                }
                Err(violation) => {
                    // A reply that reaches for a path it must not is not
                    // kept anywhere: what it holds goes nowhere.
                    let kept = match &violation {
                        Violation::Contract(message) => {
                            self.keep_attempt(run_id, &step.step_id, attempts, message, &reply)
                        }
                        Violation::Path(_) => String::new(),
                    };
                    let message = match &violation {
                        Violation::Contract(message) => format!(
                            "the reply broke its contract {attempts} times; the last time: {message}{}. What the model wrote each time is kept in {}/",
                            if reply.cut_off {
                                " (for you: raise max_tokens under [llm] in control-room.toml, or ask for less)"
                            } else {
                                ""
                            },
                            attempts_folder(run_id)
                        ),
                        Violation::Path(message) => format!("{message}{kept}"),
                    };
                    // Every reply that broke its contract has its
                    // `attempt_N` check, the last one too.
                    checks.push(Check {
                        check: format!("attempt_{attempts}"),
                        passed: false,
                        detail: format!("{}{kept}", violation.message()),
                    });
                    return Ok(Asked::Broken {
                        message,
                        actor,
                        checks,
                        attempts,
                    });
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
            tokens: None,
        }
    }

    /// The files an agent step may name: the task's scene and canon cards,
    /// and every file the tools read for the step's input slots.
    pub(super) fn expected_artifacts(
        &self,
        step: &AgentStep,
        args: &serde_json::Map<String, Value>,
        session_id: Option<&str>,
        cache: &Cache,
    ) -> Vec<String> {
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
        if !cited.is_empty()
            && let Some(session_id) = session_id
        {
            expected.extend(self.cited.files(self.root(), session_id, &cited));
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
pub(super) fn agent_packet(
    step: &AgentStep,
    (run_id, description, args): (&str, &str, &serde_json::Map<String, Value>),
    contract: &Contract,
    inputs_used: &[InputRef],
    guard: &PathGuard,
    next_step_id: Option<String>,
) -> Packet {
    let json = contract.output.is_json();
    let arg = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
    Packet {
        version: Some(audit::CONTRACT_VERSION.to_owned()),
        packet_id: new_id("pkt_"),
        parent_issue_id: run_id.to_owned(),
        parent_packet_id: None,
        intent: audit::intent(&step.prompt_type, json, contract.mode.as_deref()).to_owned(),
        target: audit::Target {
            file: arg("scene_path"),
            scene_id: arg("scene_id"),
        },
        scope: description.to_owned(),
        inputs: inputs_used.to_vec(),
        constraints: vec![
            "use no tools; rely only on the inputs given".into(),
            "name no file outside the expected artifacts".into(),
            match contract.output {
                Output::Json => "reply with one JSON object that follows the schema".into(),
                Output::Receipt => "reply with your receipt for this packet and nothing else: the agent's part of a receipt v0.1, as the schema gives it".into(),
                Output::Prose | Output::Foreman => "reply with the prose; reasoning stays in <thinking>".into(),
            },
        ],
        output_contract: OutputContract {
            kind: if json { "json" } else { "prose" }.into(),
            schema: contract.schema.clone(),
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
/// Where a run's broken attempts are kept, relative to the root.
fn attempts_folder(run_id: &str) -> String {
    format!("{}/{run_id}/attempts", crate::runs::store::RUNS_DIR)
}

impl Agents<'_> {
    /// Keeps what the model wrote in a reply that broke its contract, in
    /// the run's folder (never in the manuscript), so the writer can read
    /// it; answers " (kept in PATH)", or nothing when it could not be kept.
    fn keep_attempt(
        &self,
        run_id: &str,
        step_id: &str,
        attempt: u32,
        why: &str,
        reply: &ModelReply,
    ) -> String {
        let name: String = step_id
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let relative = format!("{}/{name}.{attempt}.md", attempts_folder(run_id));
        let path = self.workspace.root().join(&relative);
        let text = format!(
            "<!-- Attempt {attempt} of step `{step_id}` in run {run_id}: not used, because {why}. What the model wrote follows, as it wrote it. -->\n\n{}\n",
            reply.text
        );
        let kept = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| self.disk.write_atomic(&path, text.as_bytes()));
        match kept {
            Ok(()) => format!(" (kept in {relative})"),
            Err(_) => String::new(),
        }
    }
}

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

//! Phase 1, the Chief's turn: it calls tools through the strict envelope
//! under the round's tool policy; each accepted call runs the tool on the
//! index, leaves a signed receipt in the round's buffer and adds an item to
//! the evidence that phase 2 injects.

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::envelope::{self, Policy};
use super::{
    CallOutcome, Conference, ConferenceError, Event, Request, Round, ToolCall, artifact,
    ask_as_it_comes, check,
};
use crate::llm::model::{Message, ModelReply, ModelRequest, Written};
use crate::receipts::ToolReceipt;
use crate::runs::recipe::AgentStep;
use crate::runs::runner::{new_id, now};
use crate::tools::{self, ToolContext, ToolError, sha256_hex};

/// A prompt's reply limit and the context window it was fitted to.
type Limits = (u32, u32);

/// What the Chief's turn has gathered so far.
#[derive(Default)]
struct Turn {
    /// Bytes of tool output injected.
    spent: usize,
    /// Whether any tool ran.
    ran_any: bool,
    /// The evidence items, in order.
    evidence: String,
}

impl Conference {
    /// The Chief's turn; returns the evidence to inject in phase 2.
    pub(super) async fn phase_one(
        &self,
        request: &Request,
        round: &mut Round,
        events: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<String, ConferenceError> {
        let policy = &request.policy;
        let nonce = new_id("nonce_");
        let (step, mut messages, (reply_limit, window)) = self.chief_prompt(request, &nonce)?;
        let mut turn = Turn::default();
        for number in 1..=policy.max_steps {
            events(Event::ChiefStep {
                step: number,
                max: policy.max_steps,
            });
            let step_id = format!("tools_{number}");
            let model_request = ModelRequest {
                step_id: step_id.clone(),
                agent_archetype: "chief".into(),
                prompt_type: step.prompt_type.clone(),
                messages: messages.clone(),
                json_reply: true,
                schema: None,
                reply_limit: Some(reply_limit),
                context_window: Some(window),
                model: None,
            };
            let writing = |written: Written<'_>| {
                events(Event::Writing {
                    agent: "chief".into(),
                    words: written.words,
                    tail: written.tail.to_owned(),
                });
            };
            let asked = ask_as_it_comes(&*self.model, &model_request, &writing, cancel).await?;
            let reply_text = match &asked.reply {
                // A runaway reply costs the Chief a step, as a malformed
                // envelope does, and only its start is sent back.
                Ok(reply) if reply.cut_off => {
                    format!("{} […]", crate::text::clip(&reply.text, 400))
                }
                Ok(reply) => reply.text.clone(),
                Err(error) => {
                    let failed = format!("the Chief's step {number} failed: {error}");
                    if !turn.ran_any {
                        return Err(ConferenceError::ChiefFailed(failed));
                    }
                    // Evidence was gathered: the agents get what there is.
                    round.chief_note = Some(failed);
                    self.record(round, &step_id, "chief", &asked, None, vec![]);
                    break;
                }
            };
            let cut_off = asked
                .reply
                .as_ref()
                .ok()
                .and_then(ModelReply::cut_off_message);
            let mut request_read = match cut_off {
                Some(message) => envelope::Request::Rejected {
                    tool: None,
                    reason: format!("{message}: reply with one short JSON object"),
                },
                None => envelope::read(&reply_text, &nonce, policy),
            };
            if let envelope::Request::Done { .. } = request_read
                && number == 1
                && policy.require_tool_first
                && !turn.ran_any
            {
                request_read = envelope::Request::Rejected {
                    tool: None,
                    reason: "a tool call is required on the first step".to_owned(),
                };
            }
            let (call, answer) = match request_read {
                envelope::Request::Done { note } => {
                    round.chief_note = Some(note);
                    let checks = vec![check("envelope", true, "the Chief ended its turn")];
                    self.record(round, &step_id, "chief", &asked, Some(&reply_text), checks);
                    break;
                }
                envelope::Request::Rejected { tool, reason } => {
                    rejected(number, tool, None, reason)
                }
                envelope::Request::Call { tool, args } => {
                    self.call(round, number, tool, args, policy, &mut turn)
                }
            };
            events(Event::ToolCall {
                step: number,
                tool: call.tool.clone(),
            });
            let passed = matches!(call.outcome, CallOutcome::Ran { .. });
            let detail = match &call.outcome {
                CallOutcome::Ran { receipt_id, .. } => format!("the call ran: {receipt_id}"),
                CallOutcome::Rejected { reason } => reason.clone(),
            };
            let checks = vec![check("envelope", passed, &detail)];
            self.record(round, &step_id, "chief", &asked, Some(&reply_text), checks);
            round.calls.push(call);
            let left = policy.max_steps - number;
            messages.push(Message::assistant(reply_text));
            messages.push(Message::user(format!(
                "{answer}\n\n{left} step{} left. Call another tool with nonce {nonce}, or reply {{\"done\": \"…\"}}.",
                if left == 1 { "" } else { "s" }
            )));
        }
        if turn.evidence.is_empty() {
            turn.evidence = "(no tool produced evidence in this round)".to_owned();
        }
        Ok(turn.evidence)
    }

    /// The Chief's step, the first messages of its turn, and its reply limit
    /// and context window.
    fn chief_prompt(
        &self,
        request: &Request,
        nonce: &str,
    ) -> Result<(AgentStep, Vec<Message>, Limits), ConferenceError> {
        let policy = &request.policy;
        let step = AgentStep {
            step_id: "tools".into(),
            agent_archetype: "chief".into(),
            input_slots: vec![],
            output_slot: "evidence".into(),
            prompt_type: "conference_tools".into(),
        };
        let catalog = tool_catalog(&policy.allowed_tools);
        let described = policy.describe();
        let assembly = self.prompt(
            &step,
            request,
            vec![
                artifact("tool_catalog", &catalog),
                artifact("policy", &described),
                artifact("nonce", nonce),
            ],
        )?;
        let limit = (assembly.reply_limit(), assembly.window());
        Ok((step, assembly.messages, limit))
    }

    /// A call the envelope accepted: run within what is left of the turn's
    /// budget, or rejected when the budget is spent.
    fn call(
        &self,
        round: &mut Round,
        number: usize,
        tool: String,
        args: Map<String, Value>,
        policy: &Policy,
        turn: &mut Turn,
    ) -> (ToolCall, String) {
        let remaining = policy.turn_bytes.saturating_sub(turn.spent);
        if remaining == 0 {
            let reason = format!(
                "the turn's tool-output budget ({} bytes) is spent",
                policy.turn_bytes
            );
            return rejected(number, Some(tool), Some(Value::Object(args)), reason);
        }
        let (call, answer, injected) =
            self.run_tool(round, number, &tool, args, policy.step_bytes.min(remaining));
        if let Some(injected) = injected {
            turn.spent += injected.0;
            turn.ran_any = true;
            turn.evidence.push_str(&injected.1);
        }
        (call, answer)
    }

    /// Runs an accepted call; returns its record, the answer for the Chief,
    /// and (bytes injected, the evidence item) when it ran.
    fn run_tool(
        &self,
        round: &mut Round,
        number: usize,
        tool: &str,
        args: Map<String, Value>,
        budget: usize,
    ) -> (ToolCall, String, Option<(usize, String)>) {
        let started_at = now();
        let result = tools::run(
            tool,
            &ToolContext {
                workspace: &self.workspace,
            },
            &args,
        );
        let output = match result {
            Ok(output) => output,
            Err(error) => {
                let reason = match error {
                    ToolError::BadArgument { .. } => format!("invalid args: {error}"),
                    other => format!("the tool failed: {other}"),
                };
                let (call, answer) = rejected(
                    number,
                    Some(tool.to_owned()),
                    Some(Value::Object(args)),
                    reason,
                );
                return (call, answer, None);
            }
        };
        let output_text = serde_json::to_string(&output.data).unwrap_or_default();
        let mut receipt = ToolReceipt {
            version: Some(crate::receipts::TOOL_RECEIPT_VERSION),
            receipt_id: new_id("rcpt_"),
            run_id: round.request.conference_id.clone(),
            session_id: round.request.conference_id.clone(),
            step_id: format!("tools_{number}"),
            tool: tool.to_owned(),
            args: Value::Object(args.clone()),
            output: output.data.clone(),
            output_sha256: sha256_hex(output_text.as_bytes()),
            output_size: output_text.len(),
            summary: output.summary.clone(),
            file_refs: output.file_refs.clone(),
            started_at,
            finished_at: now(),
            signature: String::new(),
        };
        receipt.sign(&self.key);
        let shown = envelope::cut(&output_text, budget);
        let cut_note = if shown.len() < output_text.len() {
            format!(
                "\n[cut to {} of {} bytes by the tool policy]",
                shown.len(),
                output_text.len()
            )
        } else {
            String::new()
        };
        let answer = format!(
            "Result of `{tool}` (receipt_id: {}):\n{}\n\n{shown}{cut_note}",
            receipt.receipt_id,
            output.summary.trim()
        );
        let mut item = format!(
            "\n### {} · `{tool}` {}\n{}\n",
            receipt.receipt_id,
            serde_json::to_string(&args).unwrap_or_default(),
            output.summary.trim()
        );
        if !output.file_refs.is_empty() {
            item.push_str("\nFiles read:\n");
            for file in &output.file_refs {
                item.push_str(&format!(
                    "- {} lines {}–{}: \"{}\"\n",
                    file.path,
                    file.start_line,
                    file.end_line,
                    tools::one_line(&file.excerpt)
                ));
            }
        }
        item.push_str(&format!("\nOutput:\n{shown}{cut_note}\n"));
        let call = ToolCall {
            step: number,
            tool: Some(tool.to_owned()),
            args: Some(Value::Object(args)),
            outcome: CallOutcome::Ran {
                receipt_id: receipt.receipt_id.clone(),
                summary: tools::one_line(&output.summary),
                bytes: output_text.len(),
                injected: shown.len(),
            },
        };
        round.receipts.push(receipt);
        (call, answer, Some((shown.len(), item)))
    }
}

/// The allowed tools with their arguments, as the Chief's prompt lists them.
fn tool_catalog(allowed: &[String]) -> String {
    allowed
        .iter()
        .map(|tool| format!("- `{tool}`: {}", tools::describe(tool)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A rejected step's record and the answer that tells the Chief why.
fn rejected(
    number: usize,
    tool: Option<String>,
    args: Option<Value>,
    reason: String,
) -> (ToolCall, String) {
    let answer = format!("Rejected: {reason}.");
    let call = ToolCall {
        step: number,
        tool,
        args,
        outcome: CallOutcome::Rejected { reason },
    };
    (call, answer)
}

//! An agent step's receipt: drafted before the model answers (what the
//! prompt already tells: parts trimmed, a model the matrix does not know),
//! finished with the reply (its decisions, the checks it passed, the agent's
//! own part when its reply is its receipt) or with why the step stopped
//! (STOP_HOOK), and signed.

use serde_json::Value;

use super::prompted::Prompted;
use super::slots::summary_line;
use super::{new_id, now};
use crate::llm::model::ModelTarget;
use crate::receipts::Check;
use crate::receipts::SigningKey;
use crate::receipts::audit::{self, AgentReceipt, InputRef, OutputRef, Packet, ReceiptActor};
use crate::runs::contract::{self, ReceiptReply};
use crate::runs::prompts::Output;
use crate::runs::recipe::AgentStep;
use crate::runs::store::RunManifest;
use crate::tools::sha256_hex;

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
    /// Whether the step's reply is its receipt.
    receipt_step: bool,
    /// The model the step goes to, when known.
    target: Option<ModelTarget>,
    /// The agent's part of the receipt, when its reply was one.
    pub(super) agent: Option<ReceiptReply>,
}

impl<'a> ReceiptDraft<'a> {
    /// The draft of a step's receipt, with what its prompt already tells:
    /// the parts trimmed to fit the model, and a model missing from the
    /// capability matrix.
    pub(super) fn new(
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
            receipt_step: assembly.output == Output::Receipt,
            target: prompted.target.clone(),
            agent: None,
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
    /// Adds what the receipt should warn of.
    pub(super) fn extend_risks(&mut self, risks: Vec<String>) {
        self.risks.extend(risks);
    }

    /// The actor of a step no reply came from: the agent, and the model it
    /// was to be asked.
    pub(super) fn no_actor(&self) -> ReceiptActor {
        ReceiptActor {
            agent: self.step.agent_archetype.clone(),
            provider: self
                .target
                .as_ref()
                .map_or(String::new(), |t| t.provider.clone()),
            model: self
                .target
                .as_ref()
                .map_or(String::new(), |t| t.model.clone()),
            requested_model: None,
            decoding: audit::DecodingPair {
                requested: Default::default(),
                effective: Default::default(),
            },
        }
    }

    /// The agent's part of its receipt, when the step's reply is one.
    pub(super) fn receipt_reply(&self, accepted: &contract::Accepted) -> Option<ReceiptReply> {
        self.receipt_step
            .then(|| ReceiptReply::of(accepted))
            .flatten()
    }

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
                    "The {} answered `{}` in {attempts} repl{}: {words} words into slot `{}`. It begins: {}",
                    step.agent_archetype,
                    step.prompt_type,
                    if attempts == 1 { "y" } else { "ies" },
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
        let decisions = outcome.map_or_else(|_| Vec::new(), decision_lines);
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
        let agent = self.agent.take().or_else(|| {
            outcome
                .ok()
                .and_then(|accepted| self.receipt_reply(accepted))
        });
        if let Some(agent) = agent {
            with_agents_part(&mut receipt, agent);
        }
        receipt.sign(self.key);
        receipt
    }
}

/// The receipt completed with the agent's own part of it: what it found,
/// decided, checked (each check named `agent/…`), assumed and fears, what
/// it recommends, and the files and quotes it cites.
fn with_agents_part(receipt: &mut AgentReceipt, agent: ReceiptReply) {
    receipt.reasoning_summary = agent.reasoning_summary;
    receipt.decisions.splice(0..0, agent.decisions);
    receipt
        .checks_performed
        .extend(agent.checks_performed.into_iter().map(|check| Check {
            check: format!("agent/{}", check.check),
            ..check
        }));
    receipt.assumptions.extend(agent.assumptions);
    receipt.risks.extend(agent.risks);
    receipt.next_recommended_action = agent.next_recommended_action;
    receipt.citations.extend(agent.citations);
    if !receipt.stop_hook {
        receipt.report_excerpt = agent.report_excerpt;
    }
}

/// The decisions an accepted reply took, as its receipt records them: a
/// JSON reply's verdict (`verdict`, or `pass` with its findings), and the
/// settled decisions (`save_decision` actions) the knowledge base keeps.
fn decision_lines(accepted: &contract::Accepted) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(verdict) = accepted.value.get("verdict").and_then(Value::as_str) {
        lines.push(format!("verdict: {verdict}"));
    }
    if let Some(pass) = accepted.value.get("pass").and_then(Value::as_bool) {
        let findings = accepted
            .value
            .get("findings")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        lines.push(format!(
            "pass: {pass} ({findings} finding{})",
            if findings == 1 { "" } else { "s" }
        ));
    }
    lines.extend(
        crate::runs::prompts::state::decisions_from_actions(&accepted.actions, "", None, "")
            .into_iter()
            .map(|decision| format!("{}/{}: {}", decision.category, decision.key, decision.value)),
    );
    lines
}

//! The audit records of a round: the packet and signed receipt of each
//! agent step, the Chief's and every opinion alike, buffered in the round
//! until it is closed.

use super::{Asked, Conference, Round};
use crate::llm::model::Decoding;
use crate::receipts::Check;
use crate::receipts::audit::{
    self, AgentReceipt, DecodingPair, Handoff, OutputContract, OutputRef, Packet, ReceiptActor,
};
use crate::runs::runner::new_id;
use crate::tools::{self, sha256_hex};

impl Conference {
    /// The packet and signed receipt of one agent step, kept in the round.
    pub(super) fn record(
        &self,
        round: &mut Round,
        step_id: &str,
        agent: &str,
        asked: &Asked,
        text: Option<&str>,
        checks: Vec<Check>,
    ) {
        let chief = agent == "chief";
        let packet = Packet {
            version: Some(audit::CONTRACT_VERSION.to_owned()),
            packet_id: new_id("pkt_"),
            parent_issue_id: round.request.conference_id.clone(),
            parent_packet_id: None,
            intent: if chief { "analyze" } else { "review" }.into(),
            target: audit::Target {
                file: round.request.passage.as_ref().map(|p| p.path.clone()),
                scene_id: None,
            },
            scope: round.request.question.clone(),
            inputs: vec![],
            constraints: if chief {
                vec![
                    "call tools only through the envelope, with the turn's nonce".into(),
                    format!(
                        "allowed tools: {}",
                        round.request.policy.allowed_tools.join(", ")
                    ),
                ]
            } else {
                vec![
                    "use no tools; rely only on the evidence injected".into(),
                    "reply with exactly one Evidence line, or ABSTAIN".into(),
                ]
            },
            output_contract: OutputContract {
                kind: if chief { "json" } else { "prose" }.into(),
                schema: None,
                expected_artifacts: vec![],
            },
            handoff: Handoff {
                from: "conference".into(),
                to: agent.into(),
                step_id: step_id.into(),
                next_step_id: None,
            },
            timestamp: asked.started_at.clone(),
            requested_by: "conference".into(),
            choices: None,
        };
        let (actor, stop_reason) = match &asked.reply {
            Ok(reply) => (ReceiptActor::of(agent, reply), None),
            Err(error) => (
                ReceiptActor {
                    agent: agent.into(),
                    provider: String::new(),
                    model: String::new(),
                    requested_model: None,
                    decoding: DecodingPair {
                        requested: Decoding::default(),
                        effective: Decoding::default(),
                    },
                },
                Some(error.to_string()),
            ),
        };
        let excerpt = match (text, &stop_reason) {
            (_, Some(error)) => format!("The {agent}'s step {step_id} failed: {error}"),
            (Some(text), None) => format!(
                "The {agent} answered in conference {}: {}",
                round.request.conference_id,
                tools::one_line(text).chars().take(200).collect::<String>()
            ),
            (None, None) => format!("The {agent} answered."),
        };
        let mut receipt = AgentReceipt {
            version: Some(audit::CONTRACT_VERSION.to_owned()),
            receipt_id: new_id("arcpt_"),
            packet_id: packet.packet_id.clone(),
            issue_id: round.request.conference_id.clone(),
            run_id: round.request.conference_id.clone(),
            session_id: round.request.conference_id.clone(),
            step_id: step_id.into(),
            actor,
            started_at: asked.started_at.clone(),
            finished_at: asked.finished_at.clone(),
            inputs_used: vec![],
            outputs_produced: text
                .map(|text| OutputRef {
                    slot: step_id.into(),
                    sha256: sha256_hex(text.as_bytes()),
                    chars: text.chars().count(),
                    path: None,
                })
                .into_iter()
                .collect(),
            reasoning_summary: "Reasoning is not kept; the reply is in the transcript.".into(),
            decisions: vec![],
            checks_performed: checks,
            assumptions: vec![],
            risks: vec![],
            next_recommended_action: "the writer reads the transcript".into(),
            stop_hook: stop_reason.is_some(),
            stop_reason,
            citations: round
                .receipts
                .iter()
                .map(|r| r.receipt_id.clone())
                .collect(),
            report_excerpt: excerpt,
            attempts: 1,
            reused_from: None,
            signature: String::new(),
        };
        receipt.sign(&self.key);
        round.agent_records.push((packet, receipt));
    }
}

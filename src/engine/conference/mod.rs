//! Conference rounds (Mode A of the execution-modes spec): parallel, grounded
//! opinions on shared evidence.
//!
//! Phase 1: the Chief calls tools through the strict envelope under the tool
//! policy ([`envelope`]); each accepted call runs the tool on the index and
//! leaves a signed receipt, buffered for the round. Phase 2: every
//! participating agent gets the same injected evidence, no tools, and no
//! sight of the others' replies; they are asked at once, at most
//! `concurrency` at a time, and each reply is validated by
//! [`crate::evidence`] against the round's receipts and the current text.
//! Closing the round writes the receipts (the session log, the agents'
//! packets and receipts) and then the transcript,
//! `.control-room/issues/CONF-<id>.md`; the buffer is dropped with the
//! [`Round`].

pub mod envelope;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use self::envelope::Policy;
use super::audit::{
    self, AgentReceipt, DecodingPair, Handoff, OutputContract, OutputRef, Packet, ReceiptActor,
};
use super::contract::Check;
use super::model::{Decoding, Message, Model, ModelReply, ModelRequest};
use super::prompts::{PromptBuilder, PromptInputs, SlotKind, SlotText};
use super::protocol;
use super::receipts::{self, SigningKey, ToolReceipt};
use super::recipe::AgentStep;
use super::runner::{new_id, now};
use super::store::Disk;
use super::tools::{self, ToolContext, ToolError, sha256_hex};
use crate::evidence::{self, ReceiptBook, Validator, Verdict, WorkspaceSources, transcript};
use crate::index::Workspace;

/// The agents that may take part in phase 2, in the order they are listed.
pub const AGENTS: &[&str] = &[
    "planner",
    "writer",
    "editor",
    "continuity",
    "critic",
    "librarian",
];

/// The question asked of a passage when the writer gives none.
pub const DEFAULT_QUESTION: &str = "What do you think of this passage?";

/// How many phase 2 agents are asked at once, unless configured.
pub const DEFAULT_CONCURRENCY: usize = 6;

/// The passage the question is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passage {
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub text: String,
}

/// What a round is asked to do.
#[derive(Clone, Debug)]
pub struct Request {
    /// The round's id (`conf_` and 12 hex digits), known before it starts.
    pub conference_id: String,
    pub question: String,
    pub passage: Option<Passage>,
    pub agents: Vec<String>,
    pub policy: Policy,
    pub concurrency: usize,
}

impl Request {
    pub fn new(question: impl Into<String>) -> Request {
        Request {
            conference_id: new_id("conf_"),
            question: question.into(),
            passage: None,
            agents: AGENTS.iter().map(|agent| (*agent).to_owned()).collect(),
            policy: Policy::default(),
            concurrency: DEFAULT_CONCURRENCY,
        }
    }

    /// Sets the participants; an unknown agent is an error naming them.
    pub fn with_agents(mut self, agents: &[String]) -> Result<Request, String> {
        if agents.is_empty() {
            return Ok(self);
        }
        let mut chosen = Vec::new();
        for agent in agents {
            let agent = agent.trim().to_ascii_lowercase();
            if !AGENTS.contains(&agent.as_str()) {
                return Err(format!(
                    "unknown agent `{agent}`; the agents are {}",
                    AGENTS.join(", ")
                ));
            }
            if !chosen.contains(&agent) {
                chosen.push(agent);
            }
        }
        self.agents = chosen;
        Ok(self)
    }
}

/// What a round reports while it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The Chief's step `step` of at most `max` is asked for.
    ChiefStep { step: usize, max: usize },
    /// A tool call ran (or was rejected).
    ToolCall { step: usize, tool: Option<String> },
    /// Phase 2: `done` of `total` replies are in.
    Opinions { done: usize, total: usize },
}

/// One step of the Chief's turn.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub step: usize,
    pub tool: Option<String>,
    pub args: Option<Value>,
    pub outcome: CallOutcome,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CallOutcome {
    Ran {
        receipt_id: String,
        summary: String,
        /// Bytes of the tool's output, and how many were injected.
        bytes: usize,
        injected: usize,
    },
    Rejected {
        reason: String,
    },
}

/// One agent's answer in phase 2.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub agent: String,
    pub outcome: ReplyOutcome,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ReplyOutcome {
    /// The reply's text (reasoning removed) and its verdict.
    Answered { text: String, verdict: Verdict },
    /// The model failed; nothing to validate.
    Failed { error: String },
}

/// A finished round, before it is closed.
#[derive(Clone, Debug)]
pub struct Round {
    /// What the round was asked to do.
    pub request: Request,
    pub calls: Vec<ToolCall>,
    /// What the Chief said when it stopped calling tools, or why it stopped.
    pub chief_note: Option<String>,
    pub replies: Vec<Reply>,
    /// The round's tool receipts, signed, not yet written.
    pub receipts: Vec<ToolReceipt>,
    /// Each agent step's packet and receipt, not yet written.
    agent_records: Vec<(Packet, AgentReceipt)>,
    pub started_at: String,
    pub finished_at: String,
    /// How long phase 2 took.
    pub phase2_ms: u128,
}

#[derive(Debug, thiserror::Error)]
pub enum ConferenceError {
    #[error("the conference was cancelled")]
    Cancelled,
    #[error("{0}")]
    Prompt(String),
}

/// Everything a round needs.
pub struct Conference {
    pub workspace: Arc<Workspace>,
    pub prompts: Arc<dyn PromptBuilder>,
    pub model: Arc<dyn Model>,
    pub key: SigningKey,
}

/// A model call's timing and outcome, for its receipt.
struct Asked {
    started_at: String,
    finished_at: String,
    reply: Result<ModelReply, String>,
}

impl Conference {
    /// Runs a round: phase 1, phase 2, validation. Nothing is written; see
    /// [`close`].
    pub async fn convene(
        &self,
        request: Request,
        events: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Round, ConferenceError> {
        let started_at = now();
        let mut round = Round {
            request: request.clone(),
            calls: Vec::new(),
            chief_note: None,
            replies: Vec::new(),
            receipts: Vec::new(),
            agent_records: Vec::new(),
            started_at,
            finished_at: String::new(),
            phase2_ms: 0,
        };
        let evidence = self.phase_one(&request, &mut round, events, cancel).await?;
        let began = Instant::now();
        self.phase_two(&request, &mut round, &evidence, events, cancel)
            .await?;
        round.phase2_ms = began.elapsed().as_millis();
        round.finished_at = now();
        Ok(round)
    }

    fn passage_text(request: &Request) -> String {
        match &request.passage {
            Some(passage) => format!(
                "From {} (lines {}–{}):\n\n{}",
                passage.path, passage.start_line, passage.end_line, passage.text
            ),
            None => "(none: the question is about the manuscript)".to_owned(),
        }
    }

    fn task_args(request: &Request) -> Map<String, Value> {
        let mut args = Map::new();
        if let Some(passage) = &request.passage {
            args.insert("scene_path".into(), Value::String(passage.path.clone()));
        }
        args
    }

    /// The Chief's turn; returns the evidence to inject in phase 2.
    async fn phase_one(
        &self,
        request: &Request,
        round: &mut Round,
        events: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<String, ConferenceError> {
        let policy = &request.policy;
        let nonce = new_id("nonce_");
        let step = AgentStep {
            step_id: "tools".into(),
            agent_archetype: "chief".into(),
            input_slots: vec![],
            output_slot: "evidence".into(),
            prompt_type: "conference_tools".into(),
        };
        let catalog = tool_catalog(&policy.allowed_tools);
        let passage = Self::passage_text(request);
        let described = policy.describe();
        let args = Self::task_args(request);
        let assembly = self.prompt(
            &step,
            request,
            &args,
            vec![
                artifact("question", &request.question),
                artifact("context", &passage),
                artifact("tool_catalog", &catalog),
                artifact("policy", &described),
                artifact("nonce", &nonce),
            ],
        )?;
        let mut messages = assembly.messages.clone();
        let mut spent = 0usize;
        let mut ran_any = false;
        let mut evidence = String::new();
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
            };
            let asked = ask(&*self.model, &model_request, cancel).await?;
            let reply_text = match &asked.reply {
                Ok(reply) => reply.text.clone(),
                Err(error) => {
                    round.chief_note = Some(format!("the Chief's step {number} failed: {error}"));
                    round.agent_records.push(self.records(
                        round,
                        &step_id,
                        "chief",
                        &asked,
                        None,
                        vec![],
                    ));
                    break;
                }
            };
            let mut request_read = envelope::read(&reply_text, &nonce, policy);
            if let envelope::Request::Done { .. } = request_read
                && number == 1
                && policy.require_tool_first
                && !ran_any
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
                    round.agent_records.push(self.records(
                        round,
                        &step_id,
                        "chief",
                        &asked,
                        Some(&reply_text),
                        checks,
                    ));
                    break;
                }
                envelope::Request::Rejected { tool, reason } => (
                    ToolCall {
                        step: number,
                        tool,
                        args: None,
                        outcome: CallOutcome::Rejected {
                            reason: reason.clone(),
                        },
                    },
                    format!("Rejected: {reason}."),
                ),
                envelope::Request::Call { tool, args } => {
                    let remaining = policy.turn_bytes.saturating_sub(spent);
                    if remaining == 0 {
                        let reason = format!(
                            "the turn's tool-output budget ({} bytes) is spent",
                            policy.turn_bytes
                        );
                        (
                            ToolCall {
                                step: number,
                                tool: Some(tool),
                                args: Some(Value::Object(args)),
                                outcome: CallOutcome::Rejected {
                                    reason: reason.clone(),
                                },
                            },
                            format!("Rejected: {reason}."),
                        )
                    } else {
                        let (call, answer, injected) = self.run_tool(
                            round,
                            number,
                            &tool,
                            args,
                            policy.step_bytes.min(remaining),
                        );
                        if let Some(injected) = injected {
                            spent += injected.0;
                            ran_any = true;
                            evidence.push_str(&injected.1);
                        }
                        (call, answer)
                    }
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
            round.agent_records.push(self.records(
                round,
                &step_id,
                "chief",
                &asked,
                Some(&reply_text),
                checks,
            ));
            round.calls.push(call);
            let left = policy.max_steps - number;
            messages.push(Message::assistant(reply_text));
            messages.push(Message::user(format!(
                "{answer}\n\n{left} step{} left. Call another tool with nonce {nonce}, or reply {{\"done\": \"…\"}}.",
                if left == 1 { "" } else { "s" }
            )));
        }
        if evidence.is_empty() {
            evidence = "(no tool produced evidence in this round)".to_owned();
        }
        Ok(evidence)
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
                let call = ToolCall {
                    step: number,
                    tool: Some(tool.to_owned()),
                    args: Some(Value::Object(args)),
                    outcome: CallOutcome::Rejected {
                        reason: reason.clone(),
                    },
                };
                return (call, format!("Rejected: {reason}."), None);
            }
        };
        let output_text = serde_json::to_string(&output.data).unwrap_or_default();
        let mut receipt = ToolReceipt {
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

    /// Every agent at once (at most `concurrency` at a time), then each reply validated.
    async fn phase_two(
        &self,
        request: &Request,
        round: &mut Round,
        evidence: &str,
        events: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<(), ConferenceError> {
        let passage = Self::passage_text(request);
        let args = Self::task_args(request);
        let semaphore = Arc::new(Semaphore::new(request.concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        for (index, agent) in request.agents.iter().enumerate() {
            let step = AgentStep {
                step_id: format!("opinion_{agent}"),
                agent_archetype: agent.clone(),
                input_slots: vec![],
                output_slot: format!("opinion_{agent}"),
                prompt_type: "conference_opinion".into(),
            };
            let sources = evidence::role_sources(agent).map_or("any workspace file", |(_, s)| s);
            let assembly = self.prompt(
                &step,
                request,
                &args,
                vec![
                    artifact("question", &request.question),
                    artifact("context", &passage),
                    SlotText {
                        name: "evidence",
                        text: evidence.to_owned(),
                        kind: SlotKind::Pointer,
                    },
                    artifact("sources", sources),
                ],
            )?;
            let model_request = ModelRequest {
                step_id: step.step_id.clone(),
                agent_archetype: agent.clone(),
                prompt_type: step.prompt_type.clone(),
                messages: assembly.messages,
                json_reply: false,
                schema: None,
            };
            let model = self.model.clone();
            let semaphore = semaphore.clone();
            let cancel = cancel.clone();
            tasks.spawn(async move {
                let _permit = semaphore.acquire_owned().await;
                (index, ask(&*model, &model_request, &cancel).await)
            });
        }
        let total = request.agents.len();
        let mut answers: Vec<Option<Asked>> = (0..total).map(|_| None).collect();
        let mut done = 0;
        events(Event::Opinions { done, total });
        while let Some(joined) = tasks.join_next().await {
            let (index, asked) = match joined {
                Ok((index, Ok(asked))) => (index, asked),
                Ok((_, Err(error))) => {
                    tasks.abort_all();
                    return Err(error);
                }
                Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                Err(_) => return Err(ConferenceError::Cancelled),
            };
            answers[index] = Some(asked);
            done += 1;
            events(Event::Opinions { done, total });
        }
        // The round's receipts, and those on disk so that a receipt of
        // another round, or a tampered one, is told apart from an unknown one.
        let mut book = ReceiptBook::with_receipts(&self.key, &round.receipts);
        book.refresh(self.workspace.root());
        let sources = WorkspaceSources {
            workspace: &self.workspace,
        };
        let validator = Validator::new(&sources, &book);
        for (agent, asked) in request.agents.iter().zip(answers) {
            let asked = asked.expect("every task answered");
            let step_id = format!("opinion_{agent}");
            let (outcome, text, checks) = match &asked.reply {
                Ok(reply) => {
                    let text = protocol::parse(&reply.text).prose().trim().to_owned();
                    let verdict = validator.reply(&text, agent, &round.request.conference_id);
                    let checks = vec![check(
                        "evidence",
                        !matches!(verdict, Verdict::Rejected { .. }),
                        &verdict.describe(),
                    )];
                    (
                        ReplyOutcome::Answered {
                            text: text.clone(),
                            verdict,
                        },
                        Some(text),
                        checks,
                    )
                }
                Err(error) => (
                    ReplyOutcome::Failed {
                        error: error.clone(),
                    },
                    None,
                    vec![],
                ),
            };
            let records = self.records(round, &step_id, agent, &asked, text.as_deref(), checks);
            round.agent_records.push(records);
            round.replies.push(Reply {
                agent: agent.clone(),
                outcome,
            });
        }
        Ok(())
    }

    /// The messages of `step` from the prompt registry, for the model its
    /// agent goes to.
    fn prompt(
        &self,
        step: &AgentStep,
        request: &Request,
        args: &Map<String, Value>,
        slots: Vec<SlotText>,
    ) -> Result<super::prompts::Assembly, ConferenceError> {
        let target = self.model.target(&step.agent_archetype);
        self.prompts
            .build(
                step,
                &PromptInputs {
                    task_description: &request.question,
                    task_args: args,
                    slots,
                    model: target.as_ref().map(|t| t.model.as_str()),
                    max_tokens: target.as_ref().and_then(|t| t.max_tokens),
                    tier: None,
                    workspace: Some(&self.workspace),
                },
            )
            .map_err(|error| {
                ConferenceError::Prompt(format!("the {}'s prompt: {error}", step.agent_archetype))
            })
    }

    /// The packet and signed receipt of one agent step.
    fn records(
        &self,
        round: &Round,
        step_id: &str,
        agent: &str,
        asked: &Asked,
        text: Option<&str>,
        checks: Vec<Check>,
    ) -> (Packet, AgentReceipt) {
        let chief = agent == "chief";
        let packet = Packet {
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
                Some(error.clone()),
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
        (packet, receipt)
    }
}

async fn ask(
    model: &dyn Model,
    request: &ModelRequest,
    cancel: &CancellationToken,
) -> Result<Asked, ConferenceError> {
    let started_at = now();
    let reply = tokio::select! {
        reply = model.complete(request) => reply.map_err(|error| error.to_string()),
        () = cancel.cancelled() => return Err(ConferenceError::Cancelled),
    };
    Ok(Asked {
        started_at,
        finished_at: now(),
        reply,
    })
}

fn artifact<'a>(name: &'a str, text: &str) -> SlotText<'a> {
    SlotText {
        name,
        text: text.to_owned(),
        kind: SlotKind::Artifact,
    }
}

fn check(name: &str, passed: bool, detail: &str) -> Check {
    Check {
        check: name.to_owned(),
        passed,
        detail: detail.to_owned(),
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

/// The transcript's path, relative to the root.
pub fn transcript_path(conference_id: &str) -> String {
    let hex = conference_id.strip_prefix("conf_").unwrap_or(conference_id);
    format!("{}/CONF-{hex}.md", evidence::ISSUES_DIR)
}

/// Writes what the round buffered: its tool receipts to the session log,
/// then each agent step's packet and receipt. Called before the transcript
/// is written, so the transcript never cites a receipt that is not on disk.
pub fn write_receipts(root: &Path, disk: &Disk, round: &Round) -> std::io::Result<()> {
    for receipt in &round.receipts {
        receipts::append(root, disk, receipt)?;
    }
    for (packet, receipt) in &round.agent_records {
        audit::write_packet(root, disk, packet)?;
        audit::write_receipt(root, disk, receipt)?;
    }
    Ok(())
}

/// Closes a round from the command line: receipts, then the transcript
/// (atomically). Returns the transcript's path relative to the root.
pub fn close(root: &Path, disk: &Disk, round: Round) -> std::io::Result<String> {
    write_receipts(root, disk, &round)?;
    let path = transcript_path(&round.request.conference_id);
    let full = root.join(&path);
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent)?;
    }
    disk.write_atomic(&full, transcript(&round).as_bytes())?;
    Ok(path)
    // `round`, the in-memory buffer, is dropped here.
}

/// The transcript: question, tool calls with their receipt ids, each reply
/// with its verdict, the receipts linked.
pub fn transcript(round: &Round) -> String {
    let yaml = |text: &str| serde_json::to_string(text).unwrap_or_default();
    let mut out = String::new();
    out.push_str("---\n");
    out.push_str(&format!(
        "{}: {}\n",
        transcript::ID_KEY,
        round.request.conference_id
    ));
    out.push_str("type: conference\n");
    out.push_str(&format!("question: {}\n", yaml(&round.request.question)));
    out.push_str(&format!("agents: [{}]\n", round.request.agents.join(", ")));
    out.push_str(&format!("started_at: {}\n", round.started_at));
    out.push_str(&format!("finished_at: {}\n", round.finished_at));
    out.push_str("---\n\n");
    out.push_str(&format!(
        "# Conference: {}\n\n",
        tools::one_line(&round.request.question)
    ));
    out.push_str("## Question\n\n");
    out.push_str(round.request.question.trim());
    out.push_str("\n\n");
    if let Some(passage) = &round.request.passage {
        let lines = if passage.start_line == passage.end_line {
            format!("line {}", passage.start_line)
        } else {
            format!("lines {}–{}", passage.start_line, passage.end_line)
        };
        out.push_str(&format!(
            "About `{}`, {lines}:\n\n{}\n",
            passage.path,
            transcript::quote(&passage.text)
        ));
    }
    out.push_str("## Tool calls\n\n");
    let policy = &round.request.policy;
    out.push_str(&format!(
        "The Chief's turn: allowed tools {}; {}at most {} steps, {} bytes per step, {} per turn.\n\n",
        policy.allowed_tools.join(", "),
        if policy.require_tool_first {
            "a tool call required first; "
        } else {
            ""
        },
        policy.max_steps,
        policy.step_bytes,
        policy.turn_bytes
    ));
    if round.calls.is_empty() {
        out.push_str("No tool was called.\n");
    }
    for call in &round.calls {
        let tool = call
            .tool
            .as_deref()
            .map_or_else(|| "(no tool)".to_owned(), |tool| format!("`{tool}`"));
        let args = call
            .args
            .as_ref()
            .map_or(String::new(), |args| format!(" `{args}`"));
        match &call.outcome {
            CallOutcome::Ran {
                receipt_id,
                summary,
                bytes,
                injected,
            } => out.push_str(&format!(
                "{}. {tool}{args} → {receipt_id}: {summary} ({bytes} bytes{})\n",
                call.step,
                if injected < bytes {
                    format!(", {injected} injected")
                } else {
                    String::new()
                }
            )),
            CallOutcome::Rejected { reason } => {
                out.push_str(&format!("{}. {tool}{args} rejected: {reason}\n", call.step))
            }
        }
    }
    if let Some(note) = &round.chief_note {
        out.push_str(&format!("\nThe Chief: {}\n", tools::one_line(note)));
    }
    out.push('\n');
    out.push_str(transcript::REPLIES_HEADING);
    out.push_str("\n\nEach agent saw the same evidence and none of the other replies.\n");
    for reply in &round.replies {
        match &reply.outcome {
            ReplyOutcome::Answered { text, verdict } => {
                let word = match verdict {
                    Verdict::Accepted { .. } => "accepted",
                    Verdict::Abstained => "abstained",
                    Verdict::Rejected { .. } => "rejected",
                };
                out.push_str(&format!("\n### {} — {word}\n\n", reply.agent));
                if !matches!(verdict, Verdict::Abstained)
                    && !matches!(verdict, Verdict::Accepted { warnings } if warnings.is_empty())
                {
                    out.push_str(&format!("Verdict: {}\n\n", verdict.describe()));
                }
                if text.is_empty() {
                    out.push_str(">\n");
                } else {
                    out.push_str(&transcript::quote(text));
                }
            }
            ReplyOutcome::Failed { error } => {
                out.push_str(&format!(
                    "\n### {} — failed\n\nThe model failed: {}\n",
                    reply.agent,
                    tools::one_line(error)
                ));
            }
        }
    }
    out.push_str("\n## Receipts\n\n");
    let log = format!(
        "../audit/sessions/{}/tool_receipts.jsonl",
        round.request.conference_id
    );
    if round.receipts.is_empty() {
        out.push_str("No tool receipts.\n");
    }
    for receipt in &round.receipts {
        out.push_str(&format!(
            "- {} `{}` (step {}): [session log]({log})\n",
            receipt.receipt_id, receipt.tool, receipt.step_id
        ));
    }
    out.push_str(&format!(
        "- Agent packets and receipts: [audit/issues/{0}](../audit/issues/{0}/)\n",
        round.request.conference_id
    ));
    out
}

/// What the round's replies came to, in a line.
pub fn summary(round: &Round) -> String {
    let count = |wanted: fn(&ReplyOutcome) -> bool| {
        round
            .replies
            .iter()
            .filter(|reply| wanted(&reply.outcome))
            .count()
    };
    let accepted =
        count(|o| matches!(o, ReplyOutcome::Answered { verdict, .. } if verdict.is_accepted()));
    let abstained = count(|o| {
        matches!(
            o,
            ReplyOutcome::Answered {
                verdict: Verdict::Abstained,
                ..
            }
        )
    });
    let rejected = count(|o| {
        matches!(
            o,
            ReplyOutcome::Answered {
                verdict: Verdict::Rejected { .. },
                ..
            }
        )
    });
    let failed = count(|o| matches!(o, ReplyOutcome::Failed { .. }));
    let mut parts = vec![format!("{accepted} accepted")];
    if rejected > 0 {
        parts.push(format!("{rejected} rejected"));
    }
    if abstained > 0 {
        parts.push(format!("{abstained} abstained"));
    }
    if failed > 0 {
        parts.push(format!("{failed} failed"));
    }
    parts.join(", ")
}

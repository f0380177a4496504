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
//!
//! ## Parts
//!
//! `conference/` Mode A: the Chief's tool turns, then each agent, validated by `evidence`.

pub mod envelope;

mod chief;
mod closing;
mod opinions;
mod records;

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use self::envelope::Policy;
use crate::evidence::Verdict;
use crate::index::Workspace;
use crate::llm::model::{Model, ModelError, ModelReply, ModelRequest, OnText};
use crate::receipts::Check;
use crate::receipts::audit::{AgentReceipt, Packet};
use crate::receipts::{SigningKey, ToolReceipt};
use crate::runs::prompts::{PromptBuilder, PromptInputs, SlotKind, SlotText};
use crate::runs::recipe::{ARCHETYPES, AgentStep};
use crate::runs::runner::{new_id, now};

pub use closing::{answered, close, summary, transcript, transcript_path, write_receipts};

/// The agents that may take part in phase 2, in the order they are listed:
/// the archetypes of the recipes, less the Chief, who leads the round's
/// phase 1, and the reviewer, who judges drafts rather than passages.
pub const AGENTS: &[&str] = match ARCHETYPES {
    [_chief, agents @ .., _reviewer] => agents,
    _ => panic!("the archetypes begin with the Chief and end with the reviewer"),
};

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
    pub fn with_agents(mut self, agents: &[String]) -> Result<Request, UnknownAgent> {
        if agents.is_empty() {
            return Ok(self);
        }
        let mut chosen = Vec::new();
        for agent in agents {
            let agent = agent.trim().to_ascii_lowercase();
            if !AGENTS.contains(&agent.as_str()) {
                return Err(UnknownAgent(agent));
            }
            if !chosen.contains(&agent) {
                chosen.push(agent);
            }
        }
        self.agents = chosen;
        Ok(self)
    }
}

/// An agent asked to take part that is not one of [`AGENTS`]; the message
/// lists those that are.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown agent `{0}`; the agents are {agents}", agents = AGENTS.join(", "))]
pub struct UnknownAgent(pub String);

/// What a round reports while it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The Chief's step `step` of at most `max` is asked for.
    ChiefStep { step: usize, max: usize },
    /// A tool call ran (or was rejected).
    ToolCall { step: usize, tool: Option<String> },
    /// Phase 2: `done` of `total` replies are in.
    Opinions { done: usize, total: usize },
    /// `agent` (the Chief, or an agent of phase 2) has written `words`
    /// words of its reply so far, the last of them `tail` (told at most
    /// every 16 ms, where the model streams).
    Writing {
        agent: String,
        words: usize,
        tail: String,
    },
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
    #[error("the {agent}'s prompt: {error}")]
    Prompt {
        agent: String,
        #[source]
        error: crate::runs::prompts::PromptError,
    },
    /// The Chief's model call failed before any tool ran: the agents would
    /// have no evidence, so they are not asked.
    #[error("{0}; the agents were not asked, for they would have had no evidence")]
    ChiefFailed(String),
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
    reply: Result<ModelReply, ModelError>,
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

    /// The messages of `step` from the prompt registry, for the model its
    /// agent goes to. Every agent of a round is given the question and the
    /// passage first, then `slots`.
    fn prompt(
        &self,
        step: &AgentStep,
        request: &Request,
        slots: Vec<SlotText>,
    ) -> Result<crate::runs::prompts::Assembly, ConferenceError> {
        let passage = Self::passage_text(request);
        let mut given = vec![
            artifact("question", &request.question),
            artifact("context", &passage),
        ];
        given.extend(slots);
        let args = Self::task_args(request);
        let target = self.model.target(&step.agent_archetype);
        self.prompts
            .build(
                step.prompt_step(),
                &PromptInputs::for_target(
                    &request.question,
                    &args,
                    given,
                    target.as_ref(),
                    Some(&self.workspace),
                ),
            )
            .map_err(|error| ConferenceError::Prompt {
                agent: step.agent_archetype.clone(),
                error,
            })
    }
}

/// Asks `request`; a reply cut off at its limit is no answer.
async fn ask(
    model: &dyn Model,
    request: &ModelRequest,
    on_text: &OnText<'_>,
    cancel: &CancellationToken,
) -> Result<Asked, ConferenceError> {
    let mut asked = ask_as_it_comes(model, request, on_text, cancel).await?;
    asked.reply = asked.reply.and_then(|reply| match reply.cut_off_message() {
        Some(message) => Err(ModelError::failed(message)),
        None => Ok(reply),
    });
    Ok(asked)
}

/// Asks `request`, a reply cut off at its limit kept as it came.
async fn ask_as_it_comes(
    model: &dyn Model,
    request: &ModelRequest,
    on_text: &OnText<'_>,
    cancel: &CancellationToken,
) -> Result<Asked, ConferenceError> {
    let started_at = now();
    let reply = tokio::select! {
        reply = model.complete_streaming(request, on_text) => reply,
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

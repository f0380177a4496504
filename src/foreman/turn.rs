//! One turn at the Foreman's desk: the prompt (the Foreman's own layers,
//! framed by the project's mode, the conversation so far, the actions the
//! mode allows, the writer's message), the model's reply read through the
//! output protocol and held to the Foreman's contract ([`super::contract`]),
//! and each action validated and carried out with a signed receipt. When an
//! action answers a question (`query_notebook`, `run_health_check`) or is
//! refused, or the reply breaks the contract, the result goes back to the
//! model as a system message (never as the writer's words) for another
//! round, at most twice; then the turn ends with what was done, and a reply
//! still broken is refused on the desk with the reason.
//! Changes to the manuscript are not written here: the turn returns them
//! for the front end, merged per file against the text they were computed on.

use serde::Serialize;
use serde_json::{Map, Value};

use super::actions::effect::{ActionError, Change, Effect};
use super::actions::execute::{Context, execute};
use super::actions::{self, validate};
use super::contract;
use crate::index::Workspace;
use crate::kb::mode::Mode;
use crate::llm::model::{Listener, Message, Model, ModelRequest};
use crate::llm::protocol;
use crate::receipts::{SigningKey, canonical};
use crate::runs::output::changes::merge;
use crate::runs::prompts::{PromptBuilder, PromptInputs, Prompts, SlotKind, SlotText};
use crate::storage::{Disk, new_id, sha256_hex};

/// Where the actions' receipts are appended, relative to the root.
pub const RECEIPTS_FILE: &str = ".control-room/audit/foreman/receipts.jsonl";
/// Rounds after the first when an action's result goes back to the model.
const MAX_RETRIES: usize = 2;

/// What a turn works with.
pub struct Desk<'a> {
    pub workspace: &'a Workspace,
    pub prompts: &'a Prompts,
    pub model: &'a dyn Model,
    pub key: &'a SigningKey,
    pub disk: &'a Disk,
    pub at: &'a str,
}

/// What the model is asked in a round: the conversation before the
/// writer's message, the message, what followed it in this turn (the
/// model's earlier reply and the system's report on it), and the gate out
/// of the mode as the Foreman sees it ([`super::state::gate_block`], read
/// once a turn).
#[derive(Clone, Copy)]
pub struct Asked<'a> {
    pub history: &'a [Message],
    pub message: &'a str,
    pub follow_up: &'a [Message],
    pub gate: &'a str,
}

/// What a turn said and did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    /// The Foreman's message to the writer.
    pub message: String,
    /// What each carried-out action did, in a line.
    pub done: Vec<String>,
    /// Each refused action with why.
    pub refused: Vec<String>,
    /// Files to write, one change per file.
    pub changes: Vec<Change>,
    /// Recipe runs to start (a `write_scene`).
    pub runs: Vec<(String, Map<String, Value>)>,
    /// Voice tournaments to run (a `start_tournament`).
    pub tournaments: Vec<crate::voice::Tournament>,
    /// Moves between modes for the writer to confirm (an `advance_mode`).
    pub moves: Vec<super::actions::effect::ProposedMove>,
    /// How many times the model was asked.
    pub rounds: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("the Foreman's prompt: {0}")]
    Prompt(#[from] crate::runs::prompts::PromptError),
    #[error(transparent)]
    Model(#[from] crate::llm::model::ModelError),
    #[error("cannot write {RECEIPTS_FILE}: {0}")]
    Receipt(std::io::Error),
}

/// One line of [`RECEIPTS_FILE`], signed.
#[derive(Clone, Debug, Serialize)]
pub struct ActionReceipt {
    pub version: u32,
    pub id: String,
    pub turn: usize,
    pub action: String,
    pub params: Value,
    pub mode: &'static str,
    pub at: String,
    /// `done` or `refused`.
    pub status: &'static str,
    /// What it did, or why not.
    pub detail: String,
    /// The files it changes: path, and the hashes of the text before and after.
    pub files: Vec<Value>,
    pub signature: String,
}

/// The actions `mode` allows, one a line, for the prompt.
fn action_list(mode: Mode) -> String {
    actions::allowed_in(mode)
        .into_iter()
        .map(|spec| {
            let params: Vec<String> = spec.schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, _)| {
                    let required = spec.schema["required"]
                        .as_array()
                        .is_some_and(|list| list.iter().any(|r| r == name));
                    if required {
                        name.clone()
                    } else {
                        format!("{name}?")
                    }
                })
                .collect();
            format!(
                "- {} ({}): {}",
                spec.kind.id(),
                params.join(", "),
                spec.description
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Desk<'_> {
    /// Answers `message`, the writer's `turn`th, after `history`.
    pub async fn answer(
        &self,
        turn: usize,
        history: &[Message],
        message: &str,
        listener: Listener<'_>,
    ) -> Result<Reply, TurnError> {
        let mode = self
            .prompts
            .mode
            .as_ref()
            .map_or(Mode::Architect, |state| state.mode);
        let mut workspace = self.workspace.clone();
        let mut reply = Reply::default();
        // The rounds after the first: the model's reply, then the system's
        // report on it.
        let mut follow_up: Vec<Message> = Vec::new();
        let project = crate::kb::mode::ModeState {
            mode,
            ..self.prompts.mode.clone().unwrap_or_default()
        };
        let gate = super::state::gate_block(&workspace, &project);
        loop {
            let asked = Asked {
                history,
                message,
                follow_up: &follow_up,
                gate: &gate,
            };
            let request = self.request(&workspace, turn, reply.rounds, &asked, mode)?;
            let answer = self.model.ask(&request, listener).await?;
            if let Some(cut) = answer.cut_off_error() {
                return Err(TurnError::Model(cut));
            }
            let text = answer.text;
            reply.rounds += 1;
            let parsed = protocol::parse(&text);
            let mut results = Vec::new();
            for action in &parsed.actions {
                let result = self.act(&mut workspace, turn, mode, action, &mut reply)?;
                results.extend(result);
            }
            let broken = contract::check(&parsed, mode).err();
            match &broken {
                None if !parsed.message.trim().is_empty() => {
                    reply.message = parsed.message.trim().to_owned();
                }
                None => {}
                Some(broken) => results.push(format!("- Your reply was not accepted: {broken}.")),
            }
            if results.is_empty() || reply.rounds > MAX_RETRIES {
                if let Some(broken) = broken {
                    reply.message = format!(
                        "(The Foreman's reply was refused: {broken}. Ask again, or in other words.)"
                    );
                }
                break;
            }
            follow_up.push(Message::assistant(text));
            follow_up.push(Message::system(format!(
                "What your reply and its actions gave:\n{}\n\nAnswer the writer's message with this, in <message>…</message>; correct a refused action only if it is still needed.",
                results.join("\n")
            )));
        }
        Ok(reply)
    }

    /// The request for round `round` of the writer's `turn`th message.
    pub fn request(
        &self,
        workspace: &Workspace,
        turn: usize,
        round: usize,
        asked: &Asked<'_>,
        mode: Mode,
    ) -> Result<ModelRequest, TurnError> {
        let Asked {
            history,
            message,
            follow_up,
            gate,
        } = *asked;
        let target = self.model.target("foreman");
        let args = Map::new();

        let assembly = self.prompts.build(
            crate::runs::prompts::PromptStep {
                step_id: "foreman",
                agent_archetype: "foreman",
                prompt_type: "foreman",
            },
            &PromptInputs {
                history,
                follow_up,
                ..PromptInputs::for_target(
                    message,
                    &args,
                    vec![
                        SlotText {
                            name: "actions",
                            text: action_list(mode),
                            kind: SlotKind::Artifact,
                        },
                        SlotText {
                            name: "gate",
                            text: gate.to_owned(),
                            kind: SlotKind::Pointer,
                        },
                        SlotText {
                            name: "message",
                            text: message.to_owned(),
                            kind: SlotKind::Artifact,
                        },
                    ],
                    target.as_ref(),
                    Some(workspace),
                )
            },
        )?;
        let step_id = match round {
            0 => format!("turn-{turn}"),
            retry => format!("turn-{turn}.retry-{retry}"),
        };
        Ok(assembly.request(step_id, "foreman", "foreman"))
    }

    /// Validates and carries out one action, with its receipt; returns what
    /// goes back to the model, if anything.
    fn act(
        &self,
        workspace: &mut Workspace,
        turn: usize,
        mode: Mode,
        action: &protocol::Action,
        reply: &mut Reply,
    ) -> Result<Option<String>, TurnError> {
        let params = Value::Array(
            action
                .params
                .iter()
                .map(|(name, value)| Value::Array(vec![name.clone().into(), value.clone().into()]))
                .collect(),
        );
        let outcome = validate(action, mode)
            .map_err(|refusal| refusal.to_string())
            .and_then(|valid| {
                let cx = Context {
                    workspace,
                    root: workspace.root(),
                    disk: self.disk,
                    at: self.at,
                    source: "the Foreman",
                };
                execute(&valid, &cx).map_err(|error: ActionError| error.to_string())
            });
        let (status, detail, files, back) = match outcome {
            Err(reason) => {
                reply.refused.push(format!("{}: {reason}", action.kind));
                (
                    "refused",
                    reason.clone(),
                    Vec::new(),
                    Some(format!("- {} was refused: {reason}", action.kind)),
                )
            }
            Ok(outcome) => {
                reply.done.push(outcome.summary.clone());
                let mut files = Vec::new();
                let back = match outcome.effect {
                    Effect::Answer(answer) => Some(format!("- {}: {answer}", action.kind)),
                    Effect::Saved(_) => None,
                    Effect::Run { recipe, args } => {
                        reply.runs.push((recipe, args));
                        None
                    }
                    Effect::Tournament(tournament) => {
                        reply.tournaments.push(*tournament);
                        None
                    }
                    Effect::Move(proposed) => {
                        reply.moves.push(proposed);
                        None
                    }
                    Effect::Changes(changes) => {
                        for change in changes {
                            files.push(serde_json::json!({
                                "path": change.path.to_string(),
                                "before": change.before.as_deref().map(|text| sha256_hex(text.as_bytes())),
                                "after": sha256_hex(change.after.as_bytes()),
                            }));
                            merge(workspace, &mut reply.changes, change);
                        }
                        None
                    }
                };
                ("done", outcome.summary, files, back)
            }
        };
        let mut receipt = ActionReceipt {
            version: 1,
            id: new_id("act"),
            turn,
            action: action.kind.clone(),
            params,
            mode: mode.id(),
            at: self.at.to_owned(),
            status,
            detail,
            files,
            signature: String::new(),
        };
        receipt.signature = self.key.sign(&canonical(&receipt));
        let mut line = serde_json::to_vec(&receipt).expect("a receipt serialises");
        line.push(b'\n');
        let path = workspace.root().join(RECEIPTS_FILE);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(TurnError::Receipt)?;
        }
        self.disk
            .append_line(&path, &line)
            .map_err(TurnError::Receipt)?;
        Ok(back)
    }
}

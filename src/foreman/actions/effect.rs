//! What an action does: its effect (an answer, a decision saved, files to
//! write, a run or a tournament for the front end to start), its outcome,
//! and why one valid as written could not be carried out.

use serde_json::{Map, Value};

use super::ActionKind;
use crate::kb::Decision;
use crate::storage::PathError;
use crate::tools::ToolError;
use crate::voice::VoiceError;
use crate::voice::contestant::ContestantError;

pub use crate::runs::output::changes::Change;

/// What an action did or asks the front end to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// What it found, for the model's next turn and the writer.
    Answer(String),
    /// A decision, already in the knowledge base.
    Saved(Decision),
    /// Files to write.
    Changes(Vec<Change>),
    /// A recipe run to start.
    Run {
        recipe: String,
        args: Map<String, Value>,
    },
    /// A voice tournament to run (it drafts with the model: the front end
    /// runs it with progress and creates its file).
    Tournament(Box<crate::voice::Tournament>),
    /// A move between modes for the writer to confirm: the front end asks,
    /// and only their yes moves the project.
    Move(ProposedMove),
}

/// A move between modes the Foreman proposes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposedMove {
    pub from: crate::kb::mode::Mode,
    pub to: crate::kb::mode::Mode,
    /// The writer's reason to pass a shut gate; `None` where none is shut.
    pub because: Option<String>,
}

impl ProposedMove {
    /// The question the writer is asked.
    pub fn question(&self) -> String {
        match &self.because {
            Some(because) => format!(
                "The Foreman proposes moving the project from {} to {} past a shut gate, for your reason: “{because}”.",
                self.from.label(),
                self.to.label()
            ),
            None => format!(
                "The Foreman proposes moving the project from {} to {}.",
                self.from.label(),
                self.to.label()
            ),
        }
    }
}

/// An executed action.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub kind: ActionKind,
    /// One line for the conversation and the receipt.
    pub summary: String,
    pub effect: Effect,
}

/// Why an action, valid as written, could not be carried out: each
/// reason a kind of its own, said to the model and the writer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ActionError {
    #[error("notebook `{name}`: {error}")]
    Notebook {
        name: String,
        #[source]
        error: PathError,
    },
    #[error("query_notebook: {0}")]
    Search(#[source] ToolError),
    /// `action` names a scene id the outline does not list.
    #[error("{action}: `{id}` is not in the outline; {what} only the outline's scenes")]
    NotInOutline {
        action: &'static str,
        id: String,
        what: &'static str,
    },
    #[error(transparent)]
    Voice(#[from] VoiceError),
    #[error("start_tournament: {0}")]
    Contestant(#[from] ContestantError),
    #[error("run_health_check: `{0}` is neither a scene id nor a file")]
    UnknownScope(String),
    #[error("apply_edit: `{path}`: {error}")]
    Path {
        path: String,
        #[source]
        error: PathError,
    },
    #[error("advance_mode: {0}")]
    Mode(String),
    #[error("apply_edit: `{0}` is not a file of the manuscript")]
    NotAFile(String),
    #[error("apply_edit: {0} is not a scene; apply_edit revises scenes' prose")]
    NotAScene(String),
    #[error("apply_edit: the passage to replace is not in {0} as it is now; quote it exactly")]
    PassageNotFound(String),
    #[error(
        "apply_edit: the passage is in {path} {times} times; quote more of it so it is there once"
    )]
    PassageAmbiguous { path: String, times: usize },
    #[error("apply_edit: the passage is in {0}'s front matter; apply_edit revises prose")]
    PassageInFrontMatter(String),
    #[error("write_template: `{key}` is not a part of the {template}; its parts are {}", .parts.join(", "))]
    NotAPart {
        key: String,
        template: &'static str,
        parts: Vec<&'static str>,
    },
    #[error(
        "write_template: {part} is a placeholder (“{text}”); write it, or leave it out until it is decided"
    )]
    Placeholder { part: &'static str, text: String },
    /// A template marked complete that misses required parts.
    #[error("the {template} cannot be complete: it misses {}", .missing.join(", "))]
    Incomplete {
        template: &'static str,
        missing: Vec<&'static str>,
    },
    #[error(
        "update_status: there is no {template} yet ({path}); write it with write_template first"
    )]
    NoTemplate {
        template: &'static str,
        path: String,
    },
    #[error(
        "generate_scaffold: {0} exists and is the writer's; edit it, or delete it for a new one"
    )]
    ScaffoldExists(String),
    #[error("no scaffold for {0}")]
    NoScaffold(String),
    /// The action the system asked for itself was refused.
    #[error("{0}")]
    Invalid(super::Refusal),
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
}

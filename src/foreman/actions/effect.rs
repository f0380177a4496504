//! What an action does: its effect (an answer, a decision saved, files to
//! write, a run or a tournament for the front end to start), its outcome,
//! and why one valid as written could not be carried out.

use serde_json::{Map, Value};

use super::ActionKind;
use crate::kb::Decision;

pub use crate::runs::changes::Change;

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
}

/// An executed action.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub kind: ActionKind,
    /// One line for the conversation and the receipt.
    pub summary: String,
    pub effect: Effect,
}

/// Why an action, valid as written, could not be carried out.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ActionError {
    #[error("{0}")]
    Refused(String),
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
}

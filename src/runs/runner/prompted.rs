//! What an agent step's parts share: its prompt and what its reply is held
//! to, settled before the model is asked (`Prompted`), what one reply is
//! held to (`Holding`), and how asking for a reply ended (`Asked`). The
//! agent step, its micro-steps, its receipt and its reuse all read them.

use serde_json::Value;

use crate::llm::model::ModelTarget;
use crate::receipts::Check;
use crate::receipts::audit::{InputRef, ReceiptActor};
use crate::runs::contract::{self, PathGuard, Violation};
use crate::runs::prompts::{Assembly, Output};

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

/// A step's own check of an accepted reply (its receipt's checks gain
/// what it looked at).
pub(super) type ExtraCheck<'a> =
    dyn Fn(&contract::Accepted, &mut Vec<Check>) -> Result<(), Violation> + Sync + 'a;

/// What one reply is held to: its output (and schema), the files it may
/// name, and a check of the step's own beyond them (a reviewer's rules, a
/// quote found in the text).
pub(super) struct Holding<'a> {
    pub(super) output: Output,
    pub(super) schema: Option<&'a (String, Value)>,
    pub(super) guard: &'a PathGuard,
    pub(super) extra: &'a ExtraCheck<'a>,
}

/// How asking for a reply ended, with who answered, what was checked and
/// in how many attempts.
pub(super) enum Asked {
    Kept {
        accepted: contract::Accepted,
        actor: ReceiptActor,
        checks: Vec<Check>,
        attempts: u32,
    },
    /// Broken past its retries, or naming a path it must not: why, in words.
    Broken {
        message: String,
        actor: ReceiptActor,
        checks: Vec<Check>,
        attempts: u32,
    },
}

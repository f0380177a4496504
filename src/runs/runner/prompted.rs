//! What an agent step's parts share: what asking a model needs (`Agents`),
//! its prompt and what its reply is held to, settled before the model is
//! asked (`Prompted`), what one reply is held to (`Holding`), and how asking
//! for a reply ended (`Asked`). The agent step, its micro-steps, its receipt
//! and its reuse all read them.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{CitedFiles, Runner, emit};
use crate::index::Workspace;
use crate::kb::graph::GraphCache;
use crate::llm::model::Model;
use crate::runs::events::{RunEvent, RunSink};
use crate::runs::prompts::PromptBuilder;
use crate::runs::store::Disk;

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

/// The run's agent steps: what asking a model for a step needs (the
/// workspace and its story graph, the prompts, the model, the disk its
/// packets go to, the files the run's tools cited, whether finished steps
/// are reused, who hears of its writing) and nothing of the run's loop or
/// journal, which stay the [`Runner`]'s.
pub(super) struct Agents<'a> {
    pub(super) workspace: &'a Arc<Workspace>,
    pub(super) prompts: &'a Arc<dyn PromptBuilder>,
    /// `None` when no model is configured: the step then fails clearly.
    pub(super) model: &'a Option<Arc<dyn Model>>,
    pub(super) disk: &'a Disk,
    pub(super) graph: &'a GraphCache,
    pub(super) cited: &'a CitedFiles,
    pub(super) reuse: bool,
    pub(super) sinks: &'a [Arc<dyn RunSink>],
}

impl<'a> Agents<'a> {
    /// The agent steps of `runner`'s runs.
    pub(super) fn of(runner: &'a Runner) -> Agents<'a> {
        Agents {
            workspace: &runner.workspace,
            prompts: &runner.prompts,
            model: &runner.model,
            disk: &runner.disk,
            graph: &runner.graph,
            cited: &runner.cited,
            reuse: runner.reuse,
            sinks: &runner.sinks,
        }
    }

    pub(super) fn root(&self) -> &Path {
        self.workspace.root()
    }

    pub(super) fn emit(&self, event: RunEvent) {
        emit(self.sinks, &event);
    }
}

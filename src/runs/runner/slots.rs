//! The slots of a run as its steps see them: the values `$ref` paths and
//! the Definition of Done read, the texts an agent's input slots inject into
//! its prompt, and the short previews `steps.jsonl` and receipts keep.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::StepFailure;
use crate::receipts::audit::InputRef;
use crate::runs::contract;
use crate::runs::prompts::{PromptBuilder, SlotKind, SlotText};
use crate::runs::recipe::AgentStep;
use crate::runs::refs::RefScope;
use crate::runs::review::Planned;
use crate::runs::store::{Cache, CacheSlot, RunManifest};

/// Characters of an output kept as its preview.
const PREVIEW_CHARS: usize = 200;

pub(super) fn preview(text: &str) -> String {
    text.chars().take(PREVIEW_CHARS).collect()
}

/// The slots' values during a run: a tool's full output, an agent's reply
/// (parsed when it is JSON).
pub(super) struct Slots<'a> {
    pub(super) task: &'a Value,
    pub(super) values: &'a HashMap<String, Value>,
}

/// What `$ref` paths starting with `task.` see.
pub(super) fn task_value(manifest: &RunManifest) -> Value {
    json!({
        "description": manifest.task.description,
        "args": manifest.task.initial_args,
        "initial_args": manifest.task.initial_args,
        "session_plan_task_id": manifest.task.session_plan_task_id,
    })
}

impl RefScope for Slots<'_> {
    fn root(&self, name: &str) -> Option<&Value> {
        if name == "task" {
            Some(self.task)
        } else {
            self.values.get(name)
        }
    }
}

/// An agent slot's value for `$ref`: its JSON when the step answers JSON.
pub(super) fn artifact_value(prompts: &dyn PromptBuilder, step: &Planned, text: &str) -> Value {
    if let Planned::Agent(agent) = step
        && prompts.output(&agent.prompt_type).is_json()
        && let Some(value) = contract::stored_json(text)
    {
        return value;
    }
    Value::String(text.to_owned())
}

/// The first non-empty line, shortened.
pub(super) fn summary_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    preview(line)
}

/// The texts a step's input slots inject, and what the packet records of them.
pub(super) fn slot_texts<'s>(
    step: &'s AgentStep,
    cache: &Cache,
) -> Result<(Vec<SlotText<'s>>, Vec<InputRef>), StepFailure> {
    let mut slots = Vec::new();
    let mut inputs_used = Vec::new();
    for name in &step.input_slots {
        let slot = cache
            .get(name)
            .ok_or_else(|| StepFailure::Failed(format!("input slot `{name}` is empty")))?;
        let (text, kind, input) = match slot {
            CacheSlot::Pointer {
                summary,
                receipt_id,
                sha256,
            } => (
                summary.clone(),
                SlotKind::Pointer,
                InputRef {
                    slot: name.clone(),
                    kind: "pointer".into(),
                    sha256: sha256.clone(),
                    receipt_id: Some(receipt_id.clone()),
                },
            ),
            CacheSlot::Artifact { text, sha256, .. } => (
                text.clone(),
                SlotKind::Artifact,
                InputRef {
                    slot: name.clone(),
                    kind: "artifact".into(),
                    sha256: sha256.clone(),
                    receipt_id: None,
                },
            ),
        };
        slots.push(SlotText {
            name: name.as_str(),
            text,
            kind,
        });
        inputs_used.push(input);
    }
    Ok((slots, inputs_used))
}

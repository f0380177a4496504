//! Phase B prompts from templates (appendix F of the execution-modes spec, in
//! its minimal form): `prompts/templates/<prompt_type>.md` bundled in the
//! binary, shadowed by `.control-room/prompts/templates/<prompt_type>.md`.
//!
//! A template's `{{name}}` placeholders are filled with the step's input slots
//! (a tool slot's summary, an agent slot's full text) and `{{task.description}}`
//! or `{{task.args.NAME}}`. A placeholder that names nothing the step was given
//! fails the step, naming the template and the placeholder. The model issue
//! extends [`PromptBuilder`] with tiers and the full context sandwich.

use std::collections::BTreeMap;
use std::path::Path;

use super::model::Message;
use super::recipe::AgentStep;

/// Where project templates live, relative to the workspace root.
pub const PROJECT_DIR: &str = ".control-room/prompts/templates";

macro_rules! bundled {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../prompts/templates/", $name, ".md")))),*]
    };
}

/// The templates that ship with the binary: (prompt type, text).
pub const BUNDLED: &[(&str, &str)] = bundled![
    "refine_brief",
    "draft_scene",
    "polish_draft",
    "check_continuity",
    "evaluate_reader_experience",
    "review_consistency",
    "propose_continuity_fixes",
    "revise_prose",
    "audit_foreshadowing",
    "plan_foreshadowing",
    "draft_foreshadowing",
    "compare_scene_to_beat",
    "extract_canon_facts",
    "update_canon",
    "restructure_outline",
    "evaluate_outline",
];

/// Prompt types whose reply is JSON (agent-outputs.md); the others are prose.
pub const JSON_REPLIES: &[&str] = &[
    "check_continuity",
    "evaluate_reader_experience",
    "review_consistency",
    "evaluate_outline",
];

/// A template: where it came from and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub source: String,
    pub text: String,
}

/// The templates a workspace can use.
#[derive(Clone, Debug, Default)]
pub struct PromptTemplates {
    templates: BTreeMap<String, Template>,
}

impl PromptTemplates {
    /// The bundled templates only.
    pub fn bundled() -> PromptTemplates {
        let mut templates = PromptTemplates::default();
        for (name, text) in BUNDLED {
            templates.templates.insert(
                (*name).to_owned(),
                Template {
                    source: format!("prompts/templates/{name}.md"),
                    text: (*text).to_owned(),
                },
            );
        }
        templates
    }

    /// Bundled templates shadowed by the workspace's own.
    pub fn load(root: &Path) -> PromptTemplates {
        let mut templates = PromptTemplates::bundled();
        let Ok(entries) = std::fs::read_dir(root.join(PROJECT_DIR)) else {
            return templates;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(name) = path
                .file_name()
                .and_then(|name| name.to_str())
                .and_then(|name| name.strip_suffix(".md"))
            else {
                continue;
            };
            if let Ok(text) = std::fs::read_to_string(&path) {
                templates.templates.insert(
                    name.to_owned(),
                    Template {
                        source: format!("{PROJECT_DIR}/{name}.md"),
                        text,
                    },
                );
            }
        }
        templates
    }

    pub fn has(&self, prompt_type: &str) -> bool {
        self.templates.contains_key(prompt_type)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.templates.keys().map(String::as_str)
    }

    pub fn get(&self, prompt_type: &str) -> Option<&Template> {
        self.templates.get(prompt_type)
    }
}

/// What a prompt may draw on.
pub struct PromptInputs<'a> {
    pub task_description: &'a str,
    pub task_args: &'a serde_json::Map<String, serde_json::Value>,
    /// The step's input slots with the text to inject for each.
    pub slots: Vec<(&'a str, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    #[error("no prompt template `{0}`")]
    NoTemplate(String),
    #[error(
        "{template}: placeholder `{{{{{placeholder}}}}}` names nothing this step is given ({available})"
    )]
    UnknownPlaceholder {
        template: String,
        placeholder: String,
        available: String,
    },
}

/// Builds the messages of a phase B step.
pub trait PromptBuilder: Send + Sync {
    fn build(&self, step: &AgentStep, inputs: &PromptInputs) -> Result<Vec<Message>, PromptError>;
}

impl PromptBuilder for PromptTemplates {
    fn build(&self, step: &AgentStep, inputs: &PromptInputs) -> Result<Vec<Message>, PromptError> {
        let template = self
            .get(&step.prompt_type)
            .ok_or_else(|| PromptError::NoTemplate(step.prompt_type.clone()))?;
        let user = fill(template, inputs)?;
        let reply = if JSON_REPLIES.contains(&step.prompt_type.as_str()) {
            "Reply with one JSON object and nothing else."
        } else {
            "Reply with the text asked for and nothing else."
        };
        let system = format!(
            "You are the {} in a novelist's workbench. You see only what this message gives \
             you; use no tools. Ground every claim in the material given. {reply}",
            step.agent_archetype
        );
        Ok(vec![Message::system(system), Message::user(user)])
    }
}

/// Replaces `{{name}}` placeholders in `template`.
pub fn fill(template: &Template, inputs: &PromptInputs) -> Result<String, PromptError> {
    let text = &template.text;
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let name = after[..close].trim();
        out.push_str(&value(template, name, inputs)?);
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn value(template: &Template, name: &str, inputs: &PromptInputs) -> Result<String, PromptError> {
    if name == "task.description" {
        return Ok(inputs.task_description.to_owned());
    }
    if let Some(arg) = name.strip_prefix("task.args.")
        && let Some(value) = inputs.task_args.get(arg)
    {
        return Ok(match value {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        });
    }
    if let Some((_, text)) = inputs.slots.iter().find(|(slot, _)| *slot == name) {
        return Ok(text.clone());
    }
    let mut available: Vec<String> = inputs
        .slots
        .iter()
        .map(|(slot, _)| slot.to_string())
        .collect();
    available.push("task.description".into());
    available.extend(
        inputs
            .task_args
            .keys()
            .map(|key| format!("task.args.{key}")),
    );
    Err(PromptError::UnknownPlaceholder {
        template: template.source.clone(),
        placeholder: name.to_owned(),
        available: available.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(prompt_type: &str) -> AgentStep {
        AgentStep {
            step_id: "brief".into(),
            agent_archetype: "planner".into(),
            input_slots: vec!["outline_beat".into(), "canon_context".into()],
            output_slot: "scene_brief".into(),
            prompt_type: prompt_type.into(),
        }
    }

    #[test]
    fn every_bundled_template_fills_from_its_inputs() {
        let templates = PromptTemplates::bundled();
        assert_eq!(templates.names().count(), BUNDLED.len());
        let args = serde_json::Map::new();
        let inputs = PromptInputs {
            task_description: "Draft SCN-the-gate",
            task_args: &args,
            slots: vec![
                ("outline_beat", "BEAT TEXT".into()),
                ("canon_context", "CANON TEXT".into()),
            ],
        };
        let messages = templates.build(&step("refine_brief"), &inputs).unwrap();
        assert_eq!(messages.len(), 2);
        assert!(messages[0].content.contains("planner"));
        let user = &messages[1].content;
        assert!(
            user.contains("Draft SCN-the-gate")
                && user.contains("BEAT TEXT")
                && user.contains("CANON TEXT"),
            "{user}"
        );
        assert!(!user.contains("{{"), "{user}");
    }

    #[test]
    fn an_unknown_placeholder_names_the_template() {
        let templates = PromptTemplates::bundled();
        let args = serde_json::Map::new();
        let inputs = PromptInputs {
            task_description: "x",
            task_args: &args,
            slots: vec![("outline_beat", "b".into())],
        };
        let error = templates.build(&step("refine_brief"), &inputs).unwrap_err();
        assert_eq!(
            error.to_string(),
            "prompts/templates/refine_brief.md: placeholder `{{canon_context}}` names nothing this step is given (outline_beat, task.description)"
        );
    }
}

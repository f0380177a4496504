//! Placeholder filling: a template's `{{slot}}` placeholders replaced by a
//! tool slot's summary, an agent slot's full text, `{{task.description}}` or
//! `{{task.args.NAME}}`, the first given of `{{a | b}}`.

use serde_json::Value;

use super::{PromptError, PromptFile, PromptInputs, SlotText};

/// The placeholders of a template, as written between the braces.
pub fn placeholders(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            break;
        };
        found.push(after[..close].trim().to_owned());
        rest = &after[close + 2..];
    }
    found
}

/// Replaces `{{name}}` placeholders in `template` (`{{a | b}}` takes the
/// first alternative given).
pub fn fill(
    template: &PromptFile,
    inputs: &PromptInputs,
    slots: &[SlotText],
) -> Result<String, PromptError> {
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
        // `{{a | b}}`: the first of the alternatives the step is given, so
        // one template serves recipes that feed it different slots.
        let spec = after[..close].trim();
        let alternatives: Vec<&str> = spec.split('|').map(str::trim).collect();
        let found = alternatives
            .iter()
            .find_map(|name| value(name, inputs, slots));
        match found {
            Some(text) => out.push_str(&text),
            None => return Err(unknown_placeholder(template, spec, inputs, slots)),
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out.trim().to_owned())
}

fn value(name: &str, inputs: &PromptInputs, slots: &[SlotText]) -> Option<String> {
    if name == "task.description" {
        return Some(inputs.task_description.to_owned());
    }
    if let Some(arg) = name.strip_prefix("task.args.") {
        return inputs.task_args.get(arg).map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        });
    }
    slots
        .iter()
        .find(|slot| slot.name == name)
        .map(|slot| slot.text.clone())
}

fn unknown_placeholder(
    template: &PromptFile,
    spec: &str,
    inputs: &PromptInputs,
    slots: &[SlotText],
) -> PromptError {
    let mut available: Vec<String> = slots.iter().map(|slot| slot.name.to_owned()).collect();
    available.push("task.description".into());
    available.extend(
        inputs
            .task_args
            .keys()
            .map(|key| format!("task.args.{key}")),
    );
    PromptError::UnknownPlaceholder {
        template: template.source.clone(),
        placeholder: spec.to_owned(),
        available: available.join(", "),
    }
}

//! The Foreman's actions (the eleven of §8 of the agent-instruction spec,
//! and `advance_mode`, which proposes a move between modes): each
//! with its JSON Schema, the modes that allow it and whether it changes the
//! manuscript (`prompts/schemas/actions.json`, bundled).
//!
//! An agent writes an action in XML (`<action type="save_decision">
//! <key>…</key>…</action>`). Its parameters are read into the schema's shape
//! (a number where it asks for one, a list from JSON, `<item>`s or lines, an
//! object from JSON or child elements), then validated against the schema,
//! then against the mode's permissions, in the spec's order. A refusal says
//! why in words that are quoted back to the model, so that it can try again.

mod coerce;
pub mod effect;
pub mod execute;
pub mod scaffold;
mod template;

use std::fmt;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use crate::kb::mode::Mode;
use crate::llm::protocol::Action;
use crate::llm::protocol::schema::validator_errors;
use crate::runs::prompts::registry::bundled_text;

/// One action kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActionKind {
    QueryNotebook,
    SaveDecision,
    WriteTemplate,
    UpdateStatus,
    StartTournament,
    SelectWinner,
    GenerateBundle,
    GenerateScaffold,
    WriteScene,
    RunHealthCheck,
    ApplyEdit,
    AdvanceMode,
}

impl ActionKind {
    pub const ALL: [ActionKind; 12] = [
        ActionKind::QueryNotebook,
        ActionKind::SaveDecision,
        ActionKind::WriteTemplate,
        ActionKind::UpdateStatus,
        ActionKind::StartTournament,
        ActionKind::SelectWinner,
        ActionKind::GenerateBundle,
        ActionKind::GenerateScaffold,
        ActionKind::WriteScene,
        ActionKind::RunHealthCheck,
        ActionKind::ApplyEdit,
        ActionKind::AdvanceMode,
    ];

    pub fn id(self) -> &'static str {
        match self {
            ActionKind::QueryNotebook => "query_notebook",
            ActionKind::SaveDecision => "save_decision",
            ActionKind::WriteTemplate => "write_template",
            ActionKind::UpdateStatus => "update_status",
            ActionKind::StartTournament => "start_tournament",
            ActionKind::SelectWinner => "select_winner",
            ActionKind::GenerateBundle => "generate_bundle",
            ActionKind::GenerateScaffold => "generate_scaffold",
            ActionKind::WriteScene => "write_scene",
            ActionKind::RunHealthCheck => "run_health_check",
            ActionKind::ApplyEdit => "apply_edit",
            ActionKind::AdvanceMode => "advance_mode",
        }
    }

    pub fn parse(name: &str) -> Option<ActionKind> {
        ActionKind::ALL
            .into_iter()
            .find(|kind| kind.id() == name.trim())
    }

    /// The action's entry in the bundled registry.
    pub fn spec(self) -> &'static ActionSpec {
        &REGISTRY[ActionKind::ALL
            .iter()
            .position(|kind| *kind == self)
            .expect("every kind is listed")]
    }
}

/// An action's schema and permissions.
pub struct ActionSpec {
    pub kind: ActionKind,
    pub description: String,
    pub modes: Vec<Mode>,
    pub changes_manuscript: bool,
    pub schema: Value,
    validator: jsonschema::Validator,
}

impl ActionSpec {
    pub fn allows(&self, mode: Mode) -> bool {
        self.modes.contains(&mode)
    }
}

/// The registry, read once from `prompts/schemas/actions.json`.
static REGISTRY: LazyLock<Vec<ActionSpec>> = LazyLock::new(|| {
    let text = bundled_text("schemas/actions.json").expect("actions.json is bundled");
    let registry: Value = serde_json::from_str(text).expect("actions.json parses");
    ActionKind::ALL
        .into_iter()
        .map(|kind| {
            let entry = &registry[kind.id()];
            let schema = entry["params"].clone();
            ActionSpec {
                kind,
                description: entry["description"].as_str().unwrap_or_default().to_owned(),
                modes: entry["modes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|mode| mode.as_str().and_then(Mode::parse))
                    .collect(),
                changes_manuscript: entry["changes_manuscript"].as_bool().unwrap_or(true),
                validator: jsonschema::validator_for(&schema)
                    .unwrap_or_else(|error| panic!("actions.json: {}: {error}", kind.id())),
                schema,
            }
        })
        .collect()
});

/// An action that may be executed: its kind and its parameters, valid.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidAction {
    pub kind: ActionKind,
    pub params: Map<String, Value>,
}

impl ValidAction {
    /// A string parameter.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.params.get(name).and_then(Value::as_str)
    }
}

/// Why an action was not executed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    Unknown {
        name: String,
    },
    Schema {
        kind: ActionKind,
        errors: Vec<String>,
    },
    Mode {
        kind: ActionKind,
        mode: Mode,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unknown { name } => write!(
                f,
                "`{name}` is not an action; the actions are {}",
                ActionKind::ALL.map(ActionKind::id).join(", ")
            ),
            Refusal::Schema { kind, errors } => write!(
                f,
                "the {} action's parameters break its schema: {}",
                kind.id(),
                errors.join("; ")
            ),
            Refusal::Mode { kind, mode } => {
                let allowed: Vec<&str> =
                    kind.spec().modes.iter().map(|mode| mode.label()).collect();
                write!(
                    f,
                    "{} is not allowed in {} mode (only in {})",
                    kind.id(),
                    mode.label(),
                    allowed.join(", ")
                )
            }
        }
    }
}

/// Reads `action` into a valid action for `mode`, or says why not: its
/// schema first, then the mode's permission (§8.3).
pub fn validate(action: &Action, mode: Mode) -> Result<ValidAction, Refusal> {
    let kind = ActionKind::parse(&action.kind).ok_or_else(|| Refusal::Unknown {
        name: action.kind.clone(),
    })?;
    let spec = kind.spec();
    let params = coerce::params(&action.params, &spec.schema);
    let value = Value::Object(params);
    let errors: Vec<String> = validator_errors(&spec.validator, &value)
        .into_iter()
        .map(|error| with_choices(&spec.schema, &value, error))
        .collect();
    if !errors.is_empty() {
        return Err(Refusal::Schema { kind, errors });
    }
    if !spec.allows(mode) {
        return Err(Refusal::Mode { kind, mode });
    }
    let Value::Object(params) = value else {
        unreachable!("an object was built")
    };
    Ok(ValidAction { kind, params })
}

/// An error about a choice (`at /status: … is not one of …`) with every
/// choice spelt out, which the validator's own message abbreviates.
fn with_choices(schema: &Value, value: &Value, error: String) -> String {
    let Some((at, _)) = error
        .strip_prefix("at /")
        .and_then(|rest| rest.split_once(": "))
    else {
        return error;
    };
    let Some(choices) = schema["properties"][at]["enum"].as_array() else {
        return error;
    };
    if !error.contains("is not one of") {
        return error;
    }
    let given = value.get(at).map_or_else(String::new, Value::to_string);
    let names: Vec<String> = choices
        .iter()
        .map(|choice| {
            choice
                .as_str()
                .map_or_else(|| choice.to_string(), str::to_owned)
        })
        .collect();
    format!("at /{at}: {given} is not one of {}", names.join(", "))
}

/// The actions `mode` allows, for the mode's rules in a prompt.
pub fn allowed_in(mode: Mode) -> Vec<&'static ActionSpec> {
    ActionKind::ALL
        .into_iter()
        .map(ActionKind::spec)
        .filter(|spec| spec.allows(mode))
        .collect()
}

#[cfg(test)]
mod tests;

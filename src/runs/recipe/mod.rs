//! Recipes as data (appendix B of the execution-modes spec): the bundled
//! defaults in `recipes/*.json`, embedded in the binary, shadowed by
//! `.control-room/recipes/*.json` with the same `recipe_id`.
//!
//! Every recipe is validated on load; an error names the file, the JSON
//! pointer of the offending value and the rule it breaks, so the CLI can print
//! it and the server can show it as a diagnostic on the open recipe file.

mod file;
mod pattern;
mod registry;
mod rules;
mod validate;

use std::fmt;

use serde_json::Value;

use crate::text::{LineIndex, TextRange, json_pointer};

use crate::runs::prompts::Prompts;
use validate::Validator;

pub use file::{
    AgentStep, DodCheck, GATES_STEP, GateSettings, Recipe, Review, ReviewRule, Step, ToolStep,
};
pub use pattern::{PatternError, TaskPattern};
pub use registry::Registry;
pub use rules::RecipeRule;

/// The recipes that ship with the binary: (file name, text).
pub const BUNDLED: &[(&str, &str)] = &[
    (
        "creative_draft_scene.json",
        include_str!("../../../recipes/creative_draft_scene.json"),
    ),
    (
        "creative_draft_scene_reviewed.json",
        include_str!("../../../recipes/creative_draft_scene_reviewed.json"),
    ),
    (
        "analytical_consistency.json",
        include_str!("../../../recipes/analytical_consistency.json"),
    ),
    (
        "analytical_prose.json",
        include_str!("../../../recipes/analytical_prose.json"),
    ),
    (
        "analytical_foreshadow.json",
        include_str!("../../../recipes/analytical_foreshadow.json"),
    ),
    (
        "analytical_scene_validate.json",
        include_str!("../../../recipes/analytical_scene_validate.json"),
    ),
    (
        "analytical_story_health.json",
        include_str!("../../../recipes/analytical_story_health.json"),
    ),
    (
        "structural_canon.json",
        include_str!("../../../recipes/structural_canon.json"),
    ),
    (
        "structural_outline.json",
        include_str!("../../../recipes/structural_outline.json"),
    ),
];

/// Where project recipes live, relative to the workspace root.
pub const PROJECT_DIR: &str = ".control-room/recipes";

/// The roles a phase B step may give an agent (`[llm.agents.<role>]` may
/// give each an endpoint of its own).
pub use crate::llm::model::ARCHETYPES;

/// The Definition of Done checks.
pub const DOD_CHECKS: &[&str] = &[
    "slot_not_null",
    "slot_field_equals",
    "slot_min_words",
    "file_exists",
];

/// The fields of `task` that a `$ref` may start with.
pub const TASK_FIELDS: &[&str] = &[
    "description",
    "args",
    "initial_args",
    "session_plan_task_id",
];

/// A broken recipe: where and which rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipeError {
    /// The file as a user knows it: `recipes/x.json` (bundled) or the
    /// workspace-relative project path.
    pub file: String,
    /// RFC 6901 pointer to the offending value ("" for the whole document).
    pub pointer: String,
    /// A short rule name: `unknown-tool`, `duplicate-step-id`, `unknown-slot`…
    /// (the code of a [`RecipeRule`]).
    pub rule: &'static str,
    pub message: String,
    /// For invalid JSON: the 1-based line and column serde reported.
    pub line_column: Option<(usize, usize)>,
}

impl RecipeError {
    /// Where the error belongs in `text`, the recipe file's content: the
    /// place serde stopped for invalid JSON; otherwise the pointer's value
    /// when it is a scalar, its key when it is an object or array (so a
    /// whole step is not underlined), the key for an unknown field.
    pub fn range(&self, text: &str) -> TextRange {
        if let Some((line, column)) = self.line_column {
            let index = LineIndex::new(text);
            let Some(start) = index.line_start(line.saturating_sub(1) as u32) else {
                return TextRange::empty(text.len());
            };
            let mut offset = (start + column.saturating_sub(1)).min(text.len());
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            let end = text[offset..]
                .chars()
                .next()
                .map_or(offset, |ch| offset + ch.len_utf8());
            return TextRange::new(offset, end);
        }
        let Some(span) = json_pointer::locate(text, &self.pointer) else {
            return TextRange::empty(0);
        };
        let scalar = !matches!(span.value.slice(text).as_bytes().first(), Some(b'{' | b'['));
        match span.key {
            Some(key) if self.rule == RecipeRule::UnknownField.code() || !scalar => key,
            _ if scalar => span.value,
            // The whole document or an array element: its opening bracket.
            _ => TextRange::new(span.value.start, span.value.start + 1),
        }
    }
}

impl fmt::Display for RecipeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line_column {
            Some((line, column)) => write!(f, "{}:{line}:{column}", self.file)?,
            None => write!(f, "{}", self.file)?,
        }
        if !self.pointer.is_empty() {
            write!(f, " at {}", self.pointer)?;
        }
        write!(f, ": {} [{}]", self.message, self.rule)
    }
}

impl std::error::Error for RecipeError {}

/// Parses and validates one recipe file. `templates` decides which
/// `prompt_type`s exist.
pub fn parse(file: &str, text: &str, templates: &Prompts) -> Result<Recipe, Vec<RecipeError>> {
    let value: Value = serde_json::from_str(text).map_err(|error| {
        vec![RecipeError {
            file: file.to_owned(),
            pointer: String::new(),
            rule: RecipeRule::InvalidJson.code(),
            message: format!("not valid JSON: {error}"),
            line_column: Some((error.line(), error.column())),
        }]
    })?;
    let errors = Validator::new(file).recipe(&value, templates);
    if !errors.is_empty() {
        return Err(errors);
    }
    serde_json::from_value(value).map_err(|error| {
        vec![RecipeError {
            file: file.to_owned(),
            pointer: String::new(),
            rule: RecipeRule::WrongType.code(),
            message: error.to_string(),
            line_column: None,
        }]
    })
}

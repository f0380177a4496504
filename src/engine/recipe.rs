//! Recipes as data (appendix B of the execution-modes spec): the bundled
//! defaults in `recipes/*.json`, embedded in the binary, shadowed by
//! `.control-room/recipes/*.json` with the same `recipe_id`.
//!
//! Every recipe is validated on load; an error names the file, the JSON
//! pointer of the offending value and the rule it breaks, so the CLI can print
//! it and the server can show it as a diagnostic on the open recipe file.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::prompts::Prompts;
use super::refs::RefPath;
use super::tools::TOOLS;
use crate::text::{LineIndex, TextRange, json_pointer};

/// The recipes that ship with the binary: (file name, text).
pub const BUNDLED: &[(&str, &str)] = &[
    (
        "creative_draft_scene.json",
        include_str!("../../recipes/creative_draft_scene.json"),
    ),
    (
        "creative_draft_scene_reviewed.json",
        include_str!("../../recipes/creative_draft_scene_reviewed.json"),
    ),
    (
        "analytical_consistency.json",
        include_str!("../../recipes/analytical_consistency.json"),
    ),
    (
        "analytical_prose.json",
        include_str!("../../recipes/analytical_prose.json"),
    ),
    (
        "analytical_foreshadow.json",
        include_str!("../../recipes/analytical_foreshadow.json"),
    ),
    (
        "analytical_scene_validate.json",
        include_str!("../../recipes/analytical_scene_validate.json"),
    ),
    (
        "structural_canon.json",
        include_str!("../../recipes/structural_canon.json"),
    ),
    (
        "structural_outline.json",
        include_str!("../../recipes/structural_outline.json"),
    ),
];

/// Where project recipes live, relative to the workspace root.
pub const PROJECT_DIR: &str = ".control-room/recipes";

/// The roles a phase B step may give an agent.
pub const ARCHETYPES: &[&str] = &[
    "chief",
    "planner",
    "writer",
    "editor",
    "continuity",
    "critic",
    "librarian",
    "reviewer",
];

/// The Definition of Done checks.
pub const DOD_CHECKS: &[&str] = &["slot_not_null", "slot_field_equals", "file_exists"];

/// The fields of `task` that a `$ref` may start with.
pub const TASK_FIELDS: &[&str] = &[
    "description",
    "args",
    "initial_args",
    "session_plan_task_id",
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    pub recipe_id: String,
    pub label: String,
    #[serde(default)]
    pub task_patterns: Vec<String>,
    #[serde(default)]
    pub phase_a: Vec<ToolStep>,
    #[serde(default)]
    pub phase_b: Vec<AgentStep>,
    #[serde(default)]
    pub dod: Vec<DodCheck>,
    /// The writer → gates → reviewer loop after one agent step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
}

/// A recipe's `review` block (the adversarial roles of ADR-003, for prose):
/// after the `after` step (the writer), deterministic gates judge its draft;
/// only a draft that passes them goes to the reviewer, whose verdict sends it
/// on, back to the writer with feedback, or out of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// The phase B step whose output is reviewed (the writer).
    pub after: String,
    #[serde(default = "default_review_id")]
    pub step_id: String,
    #[serde(default = "default_reviewer")]
    pub agent_archetype: String,
    #[serde(default = "default_review_prompt")]
    pub prompt_type: String,
    /// Slots the reviewer reads besides the draft (the brief, the canon).
    #[serde(default)]
    pub input_slots: Vec<String>,
    /// Where the accepted verdict goes (each iteration's in `{slot}#N`).
    #[serde(default = "default_review_id")]
    pub output_slot: String,
    #[serde(default)]
    pub gates: GateSettings,
    pub rules: Vec<ReviewRule>,
    /// Drafts the writer may make, the first included.
    #[serde(default = "default_iterations")]
    pub max_iterations: u32,
    /// A verdict less confident than this goes to the writer (the person).
    #[serde(default = "default_confidence")]
    pub confidence_threshold: f64,
}

/// The deterministic gates, each on unless turned off.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GateSettings {
    /// No `dead-character`, `attribute-mismatch`, `name-typo` or
    /// `unknown-reference` in the draft.
    pub continuity: bool,
    /// No phrase of the anti-pattern sheets.
    pub anti_patterns: bool,
    /// Within `word_tolerance` of the scene's `words:` target, when it has one.
    pub word_count: bool,
    pub word_tolerance: f64,
    /// Told in the same person as the point-of-view character's other
    /// scenes, and naming that character when told in the third.
    pub pov: bool,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            continuity: true,
            anti_patterns: true,
            word_count: true,
            word_tolerance: 0.2,
            pov: true,
        }
    }
}

/// One rule the reviewer must judge (an SOP of the ADR, for prose).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewRule {
    pub id: String,
    pub rule: String,
    /// When the rule applies: `always` (the default), `dialogue` (the draft
    /// has dialogue), or a card's name (the draft names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies_when: Option<String>,
}

fn default_review_id() -> String {
    "review".to_owned()
}

fn default_reviewer() -> String {
    "reviewer".to_owned()
}

fn default_review_prompt() -> String {
    "review_draft".to_owned()
}

fn default_iterations() -> u32 {
    3
}

fn default_confidence() -> f64 {
    0.7
}

/// The id of the gates step of a review loop, and its slot.
pub const GATES_STEP: &str = "gates";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolStep {
    pub step_id: String,
    pub tool: String,
    #[serde(default)]
    pub args: Map<String, Value>,
    pub output_slot: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentStep {
    pub step_id: String,
    pub agent_archetype: String,
    #[serde(default)]
    pub input_slots: Vec<String>,
    pub output_slot: String,
    pub prompt_type: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DodCheck {
    pub check: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Value>,
}

/// One step of either phase, as the runner walks them.
#[derive(Clone, Copy, Debug)]
pub enum Step<'a> {
    Tool(&'a ToolStep),
    Agent(&'a AgentStep),
}

impl<'a> Step<'a> {
    pub fn id(&self) -> &'a str {
        match self {
            Step::Tool(step) => &step.step_id,
            Step::Agent(step) => &step.step_id,
        }
    }

    pub fn output_slot(&self) -> &'a str {
        match self {
            Step::Tool(step) => &step.output_slot,
            Step::Agent(step) => &step.output_slot,
        }
    }

    /// `"a"` or `"b"`, as run.json and steps.jsonl write it.
    pub fn phase(&self) -> &'static str {
        match self {
            Step::Tool(_) => "a",
            Step::Agent(_) => "b",
        }
    }
}

impl Recipe {
    /// Phase A then phase B, in order.
    pub fn steps(&self) -> impl Iterator<Item = Step<'_>> {
        self.phase_a
            .iter()
            .map(Step::Tool)
            .chain(self.phase_b.iter().map(Step::Agent))
    }

    pub fn step_count(&self) -> usize {
        self.phase_a.len() + self.phase_b.len()
    }

    pub fn step(&self, index: usize) -> Option<Step<'_>> {
        self.steps().nth(index)
    }
}

/// A broken recipe: where and which rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipeError {
    /// The file as a user knows it: `recipes/x.json` (bundled) or the
    /// workspace-relative project path.
    pub file: String,
    /// RFC 6901 pointer to the offending value ("" for the whole document).
    pub pointer: String,
    /// A short rule name: `unknown-tool`, `duplicate-step-id`, `unknown-slot`…
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
            Some(key) if self.rule == "unknown-field" || !scalar => key,
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
            rule: "invalid-json",
            message: format!("not valid JSON: {error}"),
            line_column: Some((error.line(), error.column())),
        }]
    })?;
    let mut validator = Validator {
        file,
        errors: Vec::new(),
    };
    validator.recipe(&value, templates);
    if !validator.errors.is_empty() {
        return Err(validator.errors);
    }
    serde_json::from_value(value).map_err(|error| {
        vec![RecipeError {
            file: file.to_owned(),
            pointer: String::new(),
            rule: "wrong-type",
            message: error.to_string(),
            line_column: None,
        }]
    })
}

struct Validator<'a> {
    file: &'a str,
    errors: Vec<RecipeError>,
}

/// Escapes a key for a JSON pointer.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl Validator<'_> {
    fn error(
        &mut self,
        pointer: impl Into<String>,
        rule: &'static str,
        message: impl Into<String>,
    ) {
        self.errors.push(RecipeError {
            file: self.file.to_owned(),
            pointer: pointer.into(),
            rule,
            message: message.into(),
            line_column: None,
        });
    }

    fn object<'v>(
        &mut self,
        value: &'v Value,
        pointer: &str,
        what: &str,
    ) -> Option<&'v Map<String, Value>> {
        match value.as_object() {
            Some(object) => Some(object),
            None => {
                self.error(pointer, "wrong-type", format!("{what} must be an object"));
                None
            }
        }
    }

    fn fields(&mut self, object: &Map<String, Value>, pointer: &str, allowed: &[&str]) {
        for key in object.keys() {
            if !allowed.contains(&key.as_str()) {
                self.error(
                    format!("{pointer}/{}", escape(key)),
                    "unknown-field",
                    format!(
                        "unknown field `{key}`; expected one of {}",
                        allowed.join(", ")
                    ),
                );
            }
        }
    }

    fn string<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        pointer: &str,
        key: &str,
    ) -> Option<&'v str> {
        match object.get(key) {
            None => {
                self.error(pointer, "missing-field", format!("missing `{key}`"));
                None
            }
            Some(Value::String(text)) if !text.trim().is_empty() => Some(text),
            Some(_) => {
                self.error(
                    format!("{pointer}/{key}"),
                    "wrong-type",
                    format!("`{key}` must be non-empty text"),
                );
                None
            }
        }
    }

    fn array<'v>(
        &mut self,
        object: &'v Map<String, Value>,
        pointer: &str,
        key: &str,
    ) -> &'v [Value] {
        match object.get(key) {
            None => &[],
            Some(Value::Array(items)) => items,
            Some(_) => {
                self.error(
                    format!("{pointer}/{key}"),
                    "wrong-type",
                    format!("`{key}` must be a list"),
                );
                &[]
            }
        }
    }

    fn recipe(&mut self, value: &Value, templates: &Prompts) {
        let Some(top) = self.object(value, "", "a recipe") else {
            return;
        };
        self.fields(
            top,
            "",
            &[
                "recipe_id",
                "label",
                "task_patterns",
                "phase_a",
                "phase_b",
                "dod",
                "review",
            ],
        );
        if let Some(id) = self.string(top, "", "recipe_id")
            && !id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            self.error(
                "/recipe_id",
                "bad-id",
                format!("recipe id `{id}` must be lowercase letters, digits and `_`"),
            );
        }
        self.string(top, "", "label");
        for (index, pattern) in self.array(top, "", "task_patterns").iter().enumerate() {
            let pointer = format!("/task_patterns/{index}");
            match pattern.as_str() {
                None => self.error(pointer, "wrong-type", "a task pattern must be text"),
                Some(text) => {
                    if let Err(reason) = super::router::TaskPattern::new(text) {
                        self.error(
                            pointer,
                            "bad-pattern",
                            format!("task pattern `{text}` is not usable: {reason}"),
                        );
                    }
                }
            }
        }
        // Slots produced so far, in step order; step ids seen.
        let mut produced: Vec<String> = Vec::new();
        let mut step_ids: HashSet<String> = HashSet::new();
        for (index, step) in self.array(top, "", "phase_a").iter().enumerate() {
            let pointer = format!("/phase_a/{index}");
            let Some(step) = self.object(step, &pointer, "a phase A step") else {
                continue;
            };
            self.fields(step, &pointer, &["step_id", "tool", "args", "output_slot"]);
            self.step_id(step, &pointer, &mut step_ids);
            if let Some(tool) = self.string(step, &pointer, "tool")
                && !TOOLS.contains(&tool)
            {
                self.error(
                    format!("{pointer}/tool"),
                    "unknown-tool",
                    format!(
                        "unknown tool `{tool}`{}; known tools: {}",
                        suggestion(tool, TOOLS),
                        TOOLS.join(", ")
                    ),
                );
            }
            match step.get("args") {
                None => {}
                Some(Value::Object(args)) => {
                    for (key, value) in args {
                        self.refs(value, &format!("{pointer}/args/{}", escape(key)), &produced);
                    }
                }
                Some(_) => self.error(
                    format!("{pointer}/args"),
                    "wrong-type",
                    "`args` must be an object",
                ),
            }
            self.output_slot(step, &pointer, &mut produced);
        }
        let review = top.get("review");
        let review_after = review.and_then(|r| r.get("after")).and_then(Value::as_str);
        // The slots produced up to the reviewed step, which the reviewer may read.
        let mut before_review: Option<Vec<String>> = None;
        for (index, step) in self.array(top, "", "phase_b").iter().enumerate() {
            let pointer = format!("/phase_b/{index}");
            let Some(step) = self.object(step, &pointer, "a phase B step") else {
                continue;
            };
            self.fields(
                step,
                &pointer,
                &[
                    "step_id",
                    "agent_archetype",
                    "input_slots",
                    "output_slot",
                    "prompt_type",
                ],
            );
            self.step_id(step, &pointer, &mut step_ids);
            if let Some(archetype) = self.string(step, &pointer, "agent_archetype")
                && !ARCHETYPES.contains(&archetype)
            {
                self.error(
                    format!("{pointer}/agent_archetype"),
                    "unknown-archetype",
                    format!(
                        "unknown agent archetype `{archetype}`{}; known: {}",
                        suggestion(archetype, ARCHETYPES),
                        ARCHETYPES.join(", ")
                    ),
                );
            }
            for (slot_index, slot) in self.array(step, &pointer, "input_slots").iter().enumerate() {
                let slot_pointer = format!("{pointer}/input_slots/{slot_index}");
                match slot.as_str() {
                    Some(slot) if produced.iter().any(|p| p == slot) => {}
                    Some(slot) => self.error(
                        slot_pointer,
                        "unknown-slot",
                        format!(
                            "input slot `{slot}` is not produced by an earlier step{}",
                            slot_hint(&produced)
                        ),
                    ),
                    None => self.error(slot_pointer, "wrong-type", "an input slot must be text"),
                }
            }
            if let Some(prompt_type) = step.get("prompt_type").and_then(Value::as_str) {
                let given: Vec<&str> = self
                    .array(step, &pointer, "input_slots")
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                self.placeholders_fed(&pointer, prompt_type, &given, templates);
            }
            if let Some(prompt_type) = self.string(step, &pointer, "prompt_type")
                && !templates.has(prompt_type)
            {
                let known: Vec<&str> = templates.names().collect();
                self.error(
                    format!("{pointer}/prompt_type"),
                    "unknown-prompt-type",
                    format!(
                        "no prompt template `{prompt_type}`{}; add {}/templates/{prompt_type}.md or use one of: {}",
                        suggestion(prompt_type, &known),
                        super::prompts::PROJECT_DIR,
                        known.join(", ")
                    ),
                );
            }
            self.output_slot(step, &pointer, &mut produced);
            if review_after.is_some() && step.get("step_id").and_then(Value::as_str) == review_after
            {
                before_review = Some(produced.clone());
                // The loop's slots: later steps and the DoD may read them.
                produced.push(GATES_STEP.to_owned());
                let slot = review
                    .and_then(|r| r.get("output_slot"))
                    .and_then(Value::as_str)
                    .map_or_else(default_review_id, str::to_owned);
                if !produced.contains(&slot) {
                    produced.push(slot);
                }
            }
        }
        if let Some(review) = review {
            self.review(review, before_review.as_deref(), &step_ids, templates);
        }
        for (index, check) in self.array(top, "", "dod").iter().enumerate() {
            let pointer = format!("/dod/{index}");
            let Some(check) = self.object(check, &pointer, "a DoD check") else {
                continue;
            };
            self.fields(
                check,
                &pointer,
                &["check", "slot", "field", "expected", "path"],
            );
            let Some(kind) = self.string(check, &pointer, "check") else {
                continue;
            };
            match kind {
                "slot_not_null" | "slot_field_equals" => {
                    if let Some(slot) = self.string(check, &pointer, "slot")
                        && !produced.iter().any(|p| p == slot)
                    {
                        self.error(
                            format!("{pointer}/slot"),
                            "unknown-slot",
                            format!(
                                "DoD slot `{slot}` is not produced by any step{}",
                                slot_hint(&produced)
                            ),
                        );
                    }
                    if kind == "slot_field_equals" {
                        if let Some(field) = self.string(check, &pointer, "field")
                            && let Err(error) = RefPath::parse(&format!("x.{field}"))
                        {
                            self.error(format!("{pointer}/field"), "bad-ref", error.to_string());
                        }
                        if !check.contains_key("expected") {
                            self.error(&pointer, "missing-field", "missing `expected`");
                        }
                    }
                }
                "file_exists" => match check.get("path") {
                    None => self.error(&pointer, "missing-field", "missing `path`"),
                    Some(path) => self.refs(path, &format!("{pointer}/path"), &produced),
                },
                other => self.error(
                    format!("{pointer}/check"),
                    "unknown-dod-check",
                    format!(
                        "unknown DoD check `{other}`{}; known: {}",
                        suggestion(other, DOD_CHECKS),
                        DOD_CHECKS.join(", ")
                    ),
                ),
            }
        }
    }

    /// Every placeholder of every variant of `prompt_type` must be fed by
    /// `given` (or the task).
    fn placeholders_fed(
        &mut self,
        pointer: &str,
        prompt_type: &str,
        given: &[&str],
        templates: &Prompts,
    ) {
        let Some(entry) = templates.library.template(prompt_type) else {
            return;
        };
        let mut missing: Vec<(String, String)> = Vec::new();
        for (_, file) in entry.variants.files() {
            for spec in super::prompts::placeholders(&file.text) {
                let fed = spec.split('|').map(str::trim).any(|name| {
                    name == "task.description"
                        || name.starts_with("task.args.")
                        || given.contains(&name)
                });
                if !fed && !missing.iter().any(|(s, _)| *s == spec) {
                    missing.push((spec, file.source.clone()));
                }
            }
        }
        for (spec, source) in missing {
            self.error(
                format!("{pointer}/input_slots"),
                "unfed-placeholder",
                format!(
                    "the template `{prompt_type}` ({source}) injects `{{{{{spec}}}}}`, which none of this step's input slots provides"
                ),
            );
        }
    }

    fn step_id(&mut self, step: &Map<String, Value>, pointer: &str, seen: &mut HashSet<String>) {
        let Some(id) = self.string(step, pointer, "step_id") else {
            return;
        };
        if id.contains('#') {
            self.error(
                format!("{pointer}/step_id"),
                "bad-id",
                format!("step id `{id}` may not contain `#`, which marks a review iteration"),
            );
        }
        if id == GATES_STEP {
            self.error(
                format!("{pointer}/step_id"),
                "bad-id",
                format!("step id `{GATES_STEP}` is the review loop's"),
            );
        }
        if !seen.insert(id.to_owned()) {
            self.error(
                format!("{pointer}/step_id"),
                "duplicate-step-id",
                format!("step id `{id}` is used twice"),
            );
        }
    }

    /// The `review` block. `before` holds the slots produced up to the
    /// reviewed step, `None` when no phase B step has the `after` id.
    fn review(
        &mut self,
        value: &Value,
        before: Option<&[String]>,
        step_ids: &HashSet<String>,
        templates: &Prompts,
    ) {
        let Some(review) = self.object(value, "/review", "`review`") else {
            return;
        };
        self.fields(
            review,
            "/review",
            &[
                "after",
                "step_id",
                "agent_archetype",
                "prompt_type",
                "input_slots",
                "output_slot",
                "gates",
                "rules",
                "max_iterations",
                "confidence_threshold",
            ],
        );
        if let Some(after) = self.string(review, "/review", "after")
            && before.is_none()
        {
            self.error(
                "/review/after",
                "unknown-step",
                format!("`after` must name a phase B step (the writer); there is no `{after}`"),
            );
        }
        let text = |key: &str| {
            review
                .get(key)
                .map(|value| (value, format!("/review/{key}")))
        };
        if let Some((value, pointer)) = text("step_id") {
            match value.as_str() {
                Some(id) if !id.trim().is_empty() && !id.contains('#') => {
                    if step_ids.contains(id) || id == GATES_STEP {
                        self.error(
                            pointer,
                            "duplicate-step-id",
                            format!("step id `{id}` is already used"),
                        );
                    }
                }
                _ => self.error(
                    pointer,
                    "bad-id",
                    "`step_id` must be non-empty text without `#`",
                ),
            }
        } else if step_ids.contains("review") {
            self.error(
                "/review",
                "duplicate-step-id",
                "the reviewer's step id defaults to `review`, which a step already has; give `step_id`",
            );
        }
        if let Some((value, pointer)) = text("agent_archetype")
            && !value.as_str().is_some_and(|a| ARCHETYPES.contains(&a))
        {
            self.error(
                pointer,
                "unknown-archetype",
                format!("known agent archetypes: {}", ARCHETYPES.join(", ")),
            );
        }
        let prompt_type = match text("prompt_type") {
            Some((value, pointer)) => match value.as_str() {
                Some(name) => Some((name.to_owned(), pointer)),
                None => {
                    self.error(pointer, "wrong-type", "`prompt_type` must be text");
                    None
                }
            },
            None => Some((default_review_prompt(), "/review".to_owned())),
        };
        if let Some((name, pointer)) = &prompt_type {
            if !templates.has(name) {
                self.error(
                    pointer,
                    "unknown-prompt-type",
                    format!("no prompt template `{name}` for the reviewer"),
                );
            } else if super::prompts::PromptBuilder::output(templates, name)
                != super::prompts::Output::Json
            {
                self.error(
                    pointer,
                    "review-not-json",
                    format!("the reviewer's template `{name}` must answer JSON (the verdict)"),
                );
            }
        }
        let mut given = vec!["draft", "review_rules"];
        for (index, slot) in self
            .array(review, "/review", "input_slots")
            .iter()
            .enumerate()
        {
            let pointer = format!("/review/input_slots/{index}");
            match (slot.as_str(), before) {
                (Some(slot), Some(before)) if !before.iter().any(|p| p == slot) => self.error(
                    pointer,
                    "unknown-slot",
                    format!(
                        "input slot `{slot}` is not produced by the reviewed step or one before it{}",
                        slot_hint(before)
                    ),
                ),
                (Some(slot), _) => given.push(slot),
                (None, _) => self.error(pointer, "wrong-type", "an input slot must be text"),
            }
        }
        if let (Some((name, _)), Some(_)) = (&prompt_type, before) {
            self.placeholders_fed("/review", name, &given, templates);
        }
        if let Some((value, pointer)) = text("output_slot") {
            match value.as_str() {
                Some(slot) if !slot.trim().is_empty() && !slot.contains(['#', '.']) => {
                    if slot == "task"
                        || slot == GATES_STEP
                        || before.is_some_and(|b| b.iter().any(|p| p == slot))
                    {
                        self.error(
                            pointer,
                            "duplicate-output-slot",
                            format!("slot `{slot}` is already produced or reserved"),
                        );
                    }
                }
                _ => self.error(
                    pointer,
                    "bad-slot",
                    "`output_slot` must be non-empty text without `#` or `.`",
                ),
            }
        }
        if let Some((value, pointer)) = text("gates")
            && let Some(gates) = self.object(value, &pointer, "`gates`")
        {
            {
                self.fields(
                    gates,
                    &pointer,
                    &[
                        "continuity",
                        "anti_patterns",
                        "word_count",
                        "word_tolerance",
                        "pov",
                    ],
                );
                for (key, value) in gates {
                    let ok = match key.as_str() {
                        "word_tolerance" => value.as_f64().is_some_and(|t| t > 0.0 && t <= 1.0),
                        _ => value.is_boolean(),
                    };
                    if !ok {
                        self.error(
                            format!("{pointer}/{}", escape(key)),
                            "wrong-type",
                            if key == "word_tolerance" {
                                "`word_tolerance` must be a fraction above 0 and at most 1 (0.2 is ±20%)".to_owned()
                            } else {
                                format!("`{key}` must be true or false")
                            },
                        );
                    }
                }
            }
        }
        match review.get("rules") {
            Some(Value::Array(rules)) if !rules.is_empty() => {
                let mut ids = HashSet::new();
                for (index, rule) in rules.iter().enumerate() {
                    let pointer = format!("/review/rules/{index}");
                    let Some(rule) = self.object(rule, &pointer, "a review rule") else {
                        continue;
                    };
                    self.fields(rule, &pointer, &["id", "rule", "applies_when"]);
                    if let Some(id) = self.string(rule, &pointer, "id")
                        && !ids.insert(id.to_owned())
                    {
                        self.error(
                            format!("{pointer}/id"),
                            "duplicate-rule",
                            format!("rule id `{id}` is used twice"),
                        );
                    }
                    self.string(rule, &pointer, "rule");
                    if let Some(when) = rule.get("applies_when")
                        && when.as_str().is_none_or(|w| w.trim().is_empty())
                    {
                        self.error(
                            format!("{pointer}/applies_when"),
                            "wrong-type",
                            "`applies_when` is `always`, `dialogue` or a card's name",
                        );
                    }
                }
            }
            Some(_) => self.error(
                "/review/rules",
                "wrong-type",
                "`rules` must be a non-empty list: the reviewer judges the draft by them",
            ),
            None => self.error("/review", "missing-field", "missing `rules`"),
        }
        if let Some((value, pointer)) = text("max_iterations")
            && !value.as_u64().is_some_and(|n| (1..=5).contains(&n))
        {
            self.error(
                pointer,
                "wrong-type",
                "`max_iterations` must be a whole number from 1 to 5",
            );
        }
        if let Some((value, pointer)) = text("confidence_threshold")
            && !value.as_f64().is_some_and(|c| (0.0..=1.0).contains(&c))
        {
            self.error(
                pointer,
                "wrong-type",
                "`confidence_threshold` must be a number from 0 to 1",
            );
        }
    }

    fn output_slot(
        &mut self,
        step: &Map<String, Value>,
        pointer: &str,
        produced: &mut Vec<String>,
    ) {
        let Some(slot) = self.string(step, pointer, "output_slot") else {
            return;
        };
        if slot == "task" {
            self.error(
                format!("{pointer}/output_slot"),
                "bad-slot",
                "`task` is reserved for the task's own fields",
            );
        } else if produced.iter().any(|p| p == slot) {
            self.error(
                format!("{pointer}/output_slot"),
                "duplicate-output-slot",
                format!("slot `{slot}` is already produced by an earlier step"),
            );
        } else {
            produced.push(slot.to_owned());
        }
    }

    /// Checks every `{"$ref": …}` inside `value`.
    fn refs(&mut self, value: &Value, pointer: &str, produced: &[String]) {
        match value {
            Value::Object(object) if object.contains_key("$ref") => {
                let ref_pointer = format!("{pointer}/$ref");
                if object.len() != 1 {
                    self.error(pointer, "bad-ref", "a `$ref` object has no other keys");
                }
                let Some(path) = object["$ref"].as_str() else {
                    self.error(ref_pointer, "bad-ref", "`$ref` must be text");
                    return;
                };
                match RefPath::parse(path) {
                    Err(error) => self.error(ref_pointer, "bad-ref", error.to_string()),
                    Ok(parsed) => {
                        let root = parsed.root();
                        if root == "task" {
                            match parsed.field(1) {
                                Some(field) if TASK_FIELDS.contains(&field) => {}
                                _ => self.error(
                                    ref_pointer,
                                    "bad-ref",
                                    format!(
                                        "`{path}`: after `task.` comes one of {}",
                                        TASK_FIELDS.join(", ")
                                    ),
                                ),
                            }
                        } else if !produced.iter().any(|slot| slot == root) {
                            self.error(
                                ref_pointer,
                                "unknown-slot",
                                format!("`{path}` names slot `{root}`, which no earlier step produces{}", slot_hint(produced)),
                            );
                        }
                    }
                }
            }
            Value::Object(object) => {
                for (key, value) in object {
                    self.refs(value, &format!("{pointer}/{}", escape(key)), produced);
                }
            }
            Value::Array(items) => {
                for (index, value) in items.iter().enumerate() {
                    self.refs(value, &format!("{pointer}/{index}"), produced);
                }
            }
            _ => {}
        }
    }
}

fn slot_hint(produced: &[String]) -> String {
    if produced.is_empty() {
        " (no slot is produced before it)".to_owned()
    } else {
        format!(" (available: {})", produced.join(", "))
    }
}

/// " (did you mean `x`?)" for a close known name.
fn suggestion(name: &str, known: &[&str]) -> String {
    let name: Vec<char> = name.chars().collect();
    known
        .iter()
        .filter_map(|candidate| {
            let chars: Vec<char> = candidate.chars().collect();
            crate::index::names::edit_distance(&name, &chars, 2)
                .map(|distance| (distance, candidate))
        })
        .min()
        .map(|(_, candidate)| format!(" (did you mean `{candidate}`?)"))
        .unwrap_or_default()
}

/// The recipes a workspace can run: bundled ones shadowed by project ones.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    recipes: BTreeMap<String, Recipe>,
    errors: Vec<RecipeError>,
    /// Ids defined by the project's own recipe files.
    project: BTreeSet<String>,
}

impl Registry {
    /// Loads the bundled recipes and those under `root/.control-room/recipes`.
    pub fn load(root: &Path, templates: &Prompts) -> Registry {
        Registry::load_with_open(root, templates, &BTreeMap::new())
    }

    /// Like [`Registry::load`], but the text of recipe files open in an
    /// editor (keyed by workspace path, `.control-room/recipes/x.json`) wins
    /// over what is on disk, and open files not yet saved count too.
    pub fn load_with_open(
        root: &Path,
        templates: &Prompts,
        open: &BTreeMap<String, String>,
    ) -> Registry {
        let mut registry = Registry::default();
        for (name, text) in BUNDLED {
            registry.add(&format!("recipes/{name}"), text, templates);
        }
        let on_disk = std::fs::read_dir(root.join(PROJECT_DIR))
            .map(|entries| {
                entries
                    .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                    .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
                    .filter_map(|path| {
                        let name = path.file_name()?.to_str()?;
                        Some(format!("{PROJECT_DIR}/{name}"))
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let files: BTreeSet<String> = on_disk.into_iter().chain(open.keys().cloned()).collect();
        // Which project file defined each recipe id first.
        let mut defined_by: BTreeMap<String, String> = BTreeMap::new();
        for file in files {
            let text = match open.get(&file) {
                Some(text) => text.clone(),
                None => match std::fs::read_to_string(root.join(&file)) {
                    Ok(text) => text,
                    Err(error) => {
                        registry.errors.push(RecipeError {
                            file,
                            pointer: String::new(),
                            rule: "unreadable",
                            message: format!("cannot read: {error}"),
                            line_column: None,
                        });
                        continue;
                    }
                },
            };
            match parse(&file, &text, templates) {
                Ok(recipe) => match defined_by.get(&recipe.recipe_id) {
                    Some(first) => registry.errors.push(RecipeError {
                        message: format!(
                            "recipe id `{}` is already defined by {first}; this file is not loaded",
                            recipe.recipe_id
                        ),
                        file,
                        pointer: "/recipe_id".into(),
                        rule: "duplicate-recipe-id",
                        line_column: None,
                    }),
                    None => {
                        defined_by.insert(recipe.recipe_id.clone(), file);
                        registry.project.insert(recipe.recipe_id.clone());
                        registry.recipes.insert(recipe.recipe_id.clone(), recipe);
                    }
                },
                Err(errors) => registry.errors.extend(errors),
            }
        }
        registry
    }

    fn add(&mut self, file: &str, text: &str, templates: &Prompts) {
        match parse(file, text, templates) {
            Ok(recipe) => {
                self.recipes.insert(recipe.recipe_id.clone(), recipe);
            }
            Err(errors) => self.errors.extend(errors),
        }
    }

    pub fn get(&self, recipe_id: &str) -> Option<&Recipe> {
        self.recipes.get(recipe_id)
    }

    pub fn recipes(&self) -> impl Iterator<Item = &Recipe> {
        self.recipes.values()
    }

    /// Whether `recipe_id` is defined by a file of the project (new, or
    /// replacing a bundled recipe).
    pub fn is_project(&self, recipe_id: &str) -> bool {
        self.project.contains(recipe_id)
    }

    /// Problems in recipe files; those recipes were not loaded.
    pub fn errors(&self) -> &[RecipeError] {
        &self.errors
    }
}

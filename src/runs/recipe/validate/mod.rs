//! The validator: walks a recipe as a `serde_json::Value` before it is
//! deserialised, so that every broken rule is reported at once with the JSON
//! pointer of the value that breaks it, rather than only serde's first error.

use std::collections::HashSet;

use serde_json::{Map, Value};

mod review;

use super::file::{GATES_STEP, default_review_id};
use super::{ARCHETYPES, DOD_CHECKS, RecipeError, RecipeRule, TASK_FIELDS, TaskPattern};
use crate::runs::prompts::{self, Prompts};
use crate::runs::refs::RefPath;
use crate::tools::TOOLS;

/// Collects the errors of one recipe file.
pub(super) struct Validator<'a> {
    file: &'a str,
    errors: Vec<RecipeError>,
}

/// Escapes a key for a JSON pointer.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl<'a> Validator<'a> {
    pub(super) fn new(file: &'a str) -> Self {
        Validator {
            file,
            errors: Vec::new(),
        }
    }

    fn error(&mut self, pointer: impl Into<String>, rule: RecipeRule, message: impl Into<String>) {
        self.errors.push(RecipeError {
            file: self.file.to_owned(),
            pointer: pointer.into(),
            rule: rule.code(),
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
                self.error(
                    pointer,
                    RecipeRule::WrongType,
                    format!("{what} must be an object"),
                );
                None
            }
        }
    }

    fn fields(&mut self, object: &Map<String, Value>, pointer: &str, allowed: &[&str]) {
        for key in object.keys() {
            if !allowed.contains(&key.as_str()) {
                self.error(
                    format!("{pointer}/{}", escape(key)),
                    RecipeRule::UnknownField,
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
                self.error(
                    pointer,
                    RecipeRule::MissingField,
                    format!("missing `{key}`"),
                );
                None
            }
            Some(Value::String(text)) if !text.trim().is_empty() => Some(text),
            Some(_) => {
                self.error(
                    format!("{pointer}/{key}"),
                    RecipeRule::WrongType,
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
                    RecipeRule::WrongType,
                    format!("`{key}` must be a list"),
                );
                &[]
            }
        }
    }

    /// Every error of the recipe `value`, in document order; empty when it
    /// may be deserialised.
    pub(super) fn recipe(mut self, value: &Value, templates: &Prompts) -> Vec<RecipeError> {
        let Some(top) = self.object(value, "", "a recipe") else {
            return self.errors;
        };
        self.header(top);
        // Slots produced so far, in step order; step ids seen.
        let mut produced: Vec<String> = Vec::new();
        let mut step_ids: HashSet<String> = HashSet::new();
        for (index, step) in self.array(top, "", "phase_a").iter().enumerate() {
            self.tool_step(step, index, &mut produced, &mut step_ids);
        }
        let review = top.get("review");
        let review_after = review.and_then(|r| r.get("after")).and_then(Value::as_str);
        // The slots produced up to the reviewed step, which the reviewer may read.
        let mut before_review: Option<Vec<String>> = None;
        for (index, step) in self.array(top, "", "phase_b").iter().enumerate() {
            let Some(step) = self.agent_step(step, index, &mut produced, &mut step_ids, templates)
            else {
                continue;
            };
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
            self.dod_check(check, index, &produced);
        }
        self.errors
    }

    /// The recipe's own fields: its id, label and task patterns.
    fn header(&mut self, top: &Map<String, Value>) {
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
                RecipeRule::BadId,
                format!("recipe id `{id}` must be lowercase letters, digits and `_`"),
            );
        }
        self.string(top, "", "label");
        for (index, pattern) in self.array(top, "", "task_patterns").iter().enumerate() {
            let pointer = format!("/task_patterns/{index}");
            match pattern.as_str() {
                None => self.error(
                    pointer,
                    RecipeRule::WrongType,
                    "a task pattern must be text",
                ),
                Some(text) => {
                    if let Err(reason) = TaskPattern::new(text) {
                        self.error(
                            pointer,
                            RecipeRule::BadPattern,
                            format!("task pattern `{text}` is not usable: {reason}"),
                        );
                    }
                }
            }
        }
    }

    /// Phase A step number `index`: a tool, its arguments and its slot.
    fn tool_step(
        &mut self,
        step: &Value,
        index: usize,
        produced: &mut Vec<String>,
        step_ids: &mut HashSet<String>,
    ) {
        let pointer = format!("/phase_a/{index}");
        let Some(step) = self.object(step, &pointer, "a phase A step") else {
            return;
        };
        self.fields(step, &pointer, &["step_id", "tool", "args", "output_slot"]);
        self.step_id(step, &pointer, step_ids);
        if let Some(tool) = self.string(step, &pointer, "tool")
            && !TOOLS.contains(&tool)
        {
            self.error(
                format!("{pointer}/tool"),
                RecipeRule::UnknownTool,
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
                    self.refs(value, &format!("{pointer}/args/{}", escape(key)), produced);
                }
            }
            Some(_) => self.error(
                format!("{pointer}/args"),
                RecipeRule::WrongType,
                "`args` must be an object",
            ),
        }
        self.output_slot(step, &pointer, produced);
    }

    /// Phase B step number `index`: an agent, the slots it reads, its
    /// template and its slot. Returns the step when it is an object.
    fn agent_step<'v>(
        &mut self,
        step: &'v Value,
        index: usize,
        produced: &mut Vec<String>,
        step_ids: &mut HashSet<String>,
        templates: &Prompts,
    ) -> Option<&'v Map<String, Value>> {
        let pointer = format!("/phase_b/{index}");
        let step = self.object(step, &pointer, "a phase B step")?;
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
        self.step_id(step, &pointer, step_ids);
        if let Some(archetype) = self.string(step, &pointer, "agent_archetype")
            && !ARCHETYPES.contains(&archetype)
        {
            self.error(
                format!("{pointer}/agent_archetype"),
                RecipeRule::UnknownArchetype,
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
                    RecipeRule::UnknownSlot,
                    format!(
                        "input slot `{slot}` is not produced by an earlier step{}",
                        slot_hint(produced)
                    ),
                ),
                None => self.error(
                    slot_pointer,
                    RecipeRule::WrongType,
                    "an input slot must be text",
                ),
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
                    RecipeRule::UnknownPromptType,
                    format!(
                        "no prompt template `{prompt_type}`{}; add {}/templates/{prompt_type}.md or use one of: {}",
                        suggestion(prompt_type, &known),
                        prompts::PROJECT_DIR,
                        known.join(", ")
                    ),
                );
        }
        self.output_slot(step, &pointer, produced);
        Some(step)
    }

    /// Definition of Done check number `index`, which may read every slot
    /// in `produced`.
    fn dod_check(&mut self, check: &Value, index: usize, produced: &[String]) {
        let pointer = format!("/dod/{index}");
        let Some(check) = self.object(check, &pointer, "a DoD check") else {
            return;
        };
        self.fields(
            check,
            &pointer,
            &["check", "slot", "field", "expected", "path"],
        );
        let Some(kind) = self.string(check, &pointer, "check") else {
            return;
        };
        match kind {
            "slot_not_null" | "slot_field_equals" | "slot_min_words" => {
                if let Some(slot) = self.string(check, &pointer, "slot")
                    && !produced.iter().any(|p| p == slot)
                {
                    self.error(
                        format!("{pointer}/slot"),
                        RecipeRule::UnknownSlot,
                        format!(
                            "DoD slot `{slot}` is not produced by any step{}",
                            slot_hint(produced)
                        ),
                    );
                }
                if kind == "slot_field_equals" {
                    if let Some(field) = self.string(check, &pointer, "field")
                        && let Err(error) = RefPath::parse(&format!("x.{field}"))
                    {
                        self.error(
                            format!("{pointer}/field"),
                            RecipeRule::BadRef,
                            error.to_string(),
                        );
                    }
                    if !check.contains_key("expected") {
                        self.error(&pointer, RecipeRule::MissingField, "missing `expected`");
                    }
                }
                if kind == "slot_min_words" {
                    match check.get("expected") {
                        None => {
                            self.error(&pointer, RecipeRule::MissingField, "missing `expected`")
                        }
                        Some(Value::Number(n)) if n.as_u64().is_some() => {}
                        Some(_) => self.error(
                            format!("{pointer}/expected"),
                            RecipeRule::WrongType,
                            "`expected` is the least number of words, a whole number",
                        ),
                    }
                }
            }
            "file_exists" => match check.get("path") {
                None => self.error(&pointer, RecipeRule::MissingField, "missing `path`"),
                Some(path) => self.refs(path, &format!("{pointer}/path"), produced),
            },
            other => self.error(
                format!("{pointer}/check"),
                RecipeRule::UnknownDodCheck,
                format!(
                    "unknown DoD check `{other}`{}; known: {}",
                    suggestion(other, DOD_CHECKS),
                    DOD_CHECKS.join(", ")
                ),
            ),
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
            for spec in prompts::placeholders(&file.text) {
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
                RecipeRule::UnfedPlaceholder,
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
                RecipeRule::BadId,
                format!("step id `{id}` may not contain `#`, which marks a review iteration"),
            );
        }
        if id == GATES_STEP {
            self.error(
                format!("{pointer}/step_id"),
                RecipeRule::BadId,
                format!("step id `{GATES_STEP}` is the review loop's"),
            );
        }
        if !seen.insert(id.to_owned()) {
            self.error(
                format!("{pointer}/step_id"),
                RecipeRule::DuplicateStepId,
                format!("step id `{id}` is used twice"),
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
                RecipeRule::BadSlot,
                "`task` is reserved for the task's own fields",
            );
        } else if produced.iter().any(|p| p == slot) {
            self.error(
                format!("{pointer}/output_slot"),
                RecipeRule::DuplicateOutputSlot,
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
                    self.error(
                        pointer,
                        RecipeRule::BadRef,
                        "a `$ref` object has no other keys",
                    );
                }
                let Some(path) = object["$ref"].as_str() else {
                    self.error(ref_pointer, RecipeRule::BadRef, "`$ref` must be text");
                    return;
                };
                match RefPath::parse(path) {
                    Err(error) => self.error(ref_pointer, RecipeRule::BadRef, error.to_string()),
                    Ok(parsed) => {
                        let root = parsed.root();
                        if root == "task" {
                            match parsed.field(1) {
                                Some(field) if TASK_FIELDS.contains(&field) => {}
                                _ => self.error(
                                    ref_pointer,
                                    RecipeRule::BadRef,
                                    format!(
                                        "`{path}`: after `task.` comes one of {}",
                                        TASK_FIELDS.join(", ")
                                    ),
                                ),
                            }
                        } else if !produced.iter().any(|slot| slot == root) {
                            self.error(
                                ref_pointer,
                                RecipeRule::UnknownSlot,
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

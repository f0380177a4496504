//! Validation of a recipe's `review` block: the reviewer's step, template
//! and slots, the gates' settings, the rules it judges by and the loop's
//! limits. It is checked after phase B, once the reviewed step's slots are
//! known.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{Validator, escape, slot_hint};
use crate::runs::prompts::{self, Prompts};
use crate::runs::recipe::file::{GATES_STEP, default_review_prompt};
use crate::runs::recipe::{ARCHETYPES, RecipeRule};

/// The `review` block's field `key`, with its pointer.
fn review_field<'v>(review: &'v Map<String, Value>, key: &str) -> Option<(&'v Value, String)> {
    review
        .get(key)
        .map(|value| (value, format!("/review/{key}")))
}

impl Validator<'_> {
    /// The `review` block. `before` holds the slots produced up to the
    /// reviewed step, `None` when no phase B step has the `after` id.
    pub(super) fn review(
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
                RecipeRule::UnknownStep,
                format!("`after` must name a phase B step (the writer); there is no `{after}`"),
            );
        }
        self.review_step(review, step_ids);
        let prompt_type = self.review_prompt_type(review, templates);
        self.review_input_slots(review, before, prompt_type.as_deref(), templates);
        self.review_output_slot(review, before);
        self.review_gates(review);
        self.review_rules(review);
        self.review_limits(review);
    }

    /// The reviewer's step id and archetype.
    fn review_step(&mut self, review: &Map<String, Value>, step_ids: &HashSet<String>) {
        if let Some((value, pointer)) = review_field(review, "step_id") {
            match value.as_str() {
                Some(id) if !id.trim().is_empty() && !id.contains('#') => {
                    if step_ids.contains(id) || id == GATES_STEP {
                        self.error(
                            pointer,
                            RecipeRule::DuplicateStepId,
                            format!("step id `{id}` is already used"),
                        );
                    }
                }
                _ => self.error(
                    pointer,
                    RecipeRule::BadId,
                    "`step_id` must be non-empty text without `#`",
                ),
            }
        } else if step_ids.contains("review") {
            self.error(
                "/review",
                RecipeRule::DuplicateStepId,
                "the reviewer's step id defaults to `review`, which a step already has; give `step_id`",
            );
        }
        if let Some((value, pointer)) = review_field(review, "agent_archetype")
            && !value.as_str().is_some_and(|a| ARCHETYPES.contains(&a))
        {
            self.error(
                pointer,
                RecipeRule::UnknownArchetype,
                format!("known agent archetypes: {}", ARCHETYPES.join(", ")),
            );
        }
    }

    /// The reviewer's prompt type, checked to exist and to answer JSON; the
    /// default when none is given, `None` when it is not text.
    fn review_prompt_type(
        &mut self,
        review: &Map<String, Value>,
        templates: &Prompts,
    ) -> Option<String> {
        let prompt_type = match review_field(review, "prompt_type") {
            Some((value, pointer)) => match value.as_str() {
                Some(name) => Some((name.to_owned(), pointer)),
                None => {
                    self.error(pointer, RecipeRule::WrongType, "`prompt_type` must be text");
                    None
                }
            },
            None => Some((default_review_prompt(), "/review".to_owned())),
        };
        if let Some((name, pointer)) = &prompt_type {
            if !templates.has(name) {
                self.error(
                    pointer,
                    RecipeRule::UnknownPromptType,
                    format!("no prompt template `{name}` for the reviewer"),
                );
            } else if prompts::PromptBuilder::output(templates, name) != prompts::Output::Json {
                self.error(
                    pointer,
                    RecipeRule::ReviewNotJson,
                    format!("the reviewer's template `{name}` must answer JSON (the verdict)"),
                );
            }
        }
        prompt_type.map(|(name, _)| name)
    }

    /// The slots the reviewer reads besides the draft, which the reviewed
    /// step or one before it must produce, and which must feed every
    /// placeholder of its template.
    fn review_input_slots(
        &mut self,
        review: &Map<String, Value>,
        before: Option<&[String]>,
        prompt_type: Option<&str>,
        templates: &Prompts,
    ) {
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
                    RecipeRule::UnknownSlot,
                    format!(
                        "input slot `{slot}` is not produced by the reviewed step or one before it{}",
                        slot_hint(before)
                    ),
                ),
                (Some(slot), _) => given.push(slot),
                (None, _) => self.error(pointer, RecipeRule::WrongType, "an input slot must be text"),
            }
        }
        if let (Some(name), Some(_)) = (prompt_type, before) {
            self.placeholders_fed("/review", name, &given, templates);
        }
    }

    /// Where the accepted verdict goes: a new slot, not a reserved one.
    fn review_output_slot(&mut self, review: &Map<String, Value>, before: Option<&[String]>) {
        if let Some((value, pointer)) = review_field(review, "output_slot") {
            match value.as_str() {
                Some(slot) if !slot.trim().is_empty() && !slot.contains(['#', '.']) => {
                    if slot == "task"
                        || slot == GATES_STEP
                        || before.is_some_and(|b| b.iter().any(|p| p == slot))
                    {
                        self.error(
                            pointer,
                            RecipeRule::DuplicateOutputSlot,
                            format!("slot `{slot}` is already produced or reserved"),
                        );
                    }
                }
                _ => self.error(
                    pointer,
                    RecipeRule::BadSlot,
                    "`output_slot` must be non-empty text without `#` or `.`",
                ),
            }
        }
    }

    /// The gates' switches and the word count's tolerance.
    fn review_gates(&mut self, review: &Map<String, Value>) {
        if let Some((value, pointer)) = review_field(review, "gates")
            && let Some(gates) = self.object(value, &pointer, "`gates`")
        {
            self.fields(
                gates,
                &pointer,
                &[
                    "continuity",
                    "anti_patterns",
                    "word_count",
                    "word_tolerance",
                    "min_words",
                    "pov",
                ],
            );
            for (key, value) in gates {
                let ok = match key.as_str() {
                    "word_tolerance" => value.as_f64().is_some_and(|t| t > 0.0 && t <= 1.0),
                    "min_words" => value.as_u64().is_some_and(|n| n <= 100_000),
                    _ => value.is_boolean(),
                };
                if !ok {
                    self.error(
                            format!("{pointer}/{}", escape(key)),
                            RecipeRule::WrongType,
                            if key == "word_tolerance" {
                                "`word_tolerance` must be a fraction above 0 and at most 1 (0.2 is ±20%)".to_owned()
                            } else if key == "min_words" {
                                "`min_words` must be a whole number of words".to_owned()
                            } else {
                                format!("`{key}` must be true or false")
                            },
                        );
                }
            }
        }
    }

    /// The rules the reviewer judges by: a non-empty list, ids unique.
    fn review_rules(&mut self, review: &Map<String, Value>) {
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
                            RecipeRule::DuplicateRule,
                            format!("rule id `{id}` is used twice"),
                        );
                    }
                    self.string(rule, &pointer, "rule");
                    if let Some(when) = rule.get("applies_when")
                        && when.as_str().is_none_or(|w| w.trim().is_empty())
                    {
                        self.error(
                            format!("{pointer}/applies_when"),
                            RecipeRule::WrongType,
                            "`applies_when` is `always`, `dialogue` or a card's name",
                        );
                    }
                }
            }
            Some(_) => self.error(
                "/review/rules",
                RecipeRule::WrongType,
                "`rules` must be a non-empty list: the reviewer judges the draft by them",
            ),
            None => self.error("/review", RecipeRule::MissingField, "missing `rules`"),
        }
    }

    /// How many drafts the loop may make and how confident a verdict must be.
    fn review_limits(&mut self, review: &Map<String, Value>) {
        if let Some((value, pointer)) = review_field(review, "max_iterations")
            && !value.as_u64().is_some_and(|n| (1..=5).contains(&n))
        {
            self.error(
                pointer,
                RecipeRule::WrongType,
                "`max_iterations` must be a whole number from 1 to 5",
            );
        }
        if let Some((value, pointer)) = review_field(review, "confidence_threshold")
            && !value.as_f64().is_some_and(|c| (0.0..=1.0).contains(&c))
        {
            self.error(
                pointer,
                RecipeRule::WrongType,
                "`confidence_threshold` must be a number from 0 to 1",
            );
        }
    }
}

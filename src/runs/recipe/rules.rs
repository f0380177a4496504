//! The rules a recipe file can break, each with the short code that error
//! messages, the CLI and editor diagnostics show, so that every code is
//! written once and can be listed.

/// One rule of the recipe format. The error's message says what exactly is
/// wrong; the rule says which kind of wrong it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecipeRule {
    /// The file could not be read from disk.
    Unreadable,
    /// The file is not JSON at all.
    InvalidJson,
    /// A value has the wrong JSON type or is out of range.
    WrongType,
    /// An object has a field the format does not know.
    UnknownField,
    /// A required field is absent.
    MissingField,
    /// A recipe or step id is not spelt as ids must be.
    BadId,
    /// A task pattern cannot be compiled.
    BadPattern,
    /// A phase A step names a tool that does not exist.
    UnknownTool,
    /// A step names an agent archetype that does not exist.
    UnknownArchetype,
    /// A step reads a slot that no earlier step produces.
    UnknownSlot,
    /// A step names a prompt template that does not exist.
    UnknownPromptType,
    /// A Definition of Done check has an unknown kind.
    UnknownDodCheck,
    /// A `$ref` (or a DoD field path) is malformed or names no task field.
    BadRef,
    /// A template placeholder is fed by none of the step's input slots.
    UnfedPlaceholder,
    /// Two steps share an id.
    DuplicateStepId,
    /// Two steps, or a step and the review loop, produce the same slot.
    DuplicateOutputSlot,
    /// An output slot is reserved or not spelt as slots must be.
    BadSlot,
    /// The review block's `after` names no phase B step.
    UnknownStep,
    /// The reviewer's template does not answer JSON.
    ReviewNotJson,
    /// Two review rules share an id.
    DuplicateRule,
    /// Two project files define the same recipe id.
    DuplicateRecipeId,
}

impl RecipeRule {
    /// Every rule, in the order of the format's description.
    pub const ALL: [RecipeRule; 21] = [
        RecipeRule::Unreadable,
        RecipeRule::InvalidJson,
        RecipeRule::WrongType,
        RecipeRule::UnknownField,
        RecipeRule::MissingField,
        RecipeRule::BadId,
        RecipeRule::BadPattern,
        RecipeRule::UnknownTool,
        RecipeRule::UnknownArchetype,
        RecipeRule::UnknownSlot,
        RecipeRule::UnknownPromptType,
        RecipeRule::UnknownDodCheck,
        RecipeRule::BadRef,
        RecipeRule::UnfedPlaceholder,
        RecipeRule::DuplicateStepId,
        RecipeRule::DuplicateOutputSlot,
        RecipeRule::BadSlot,
        RecipeRule::UnknownStep,
        RecipeRule::ReviewNotJson,
        RecipeRule::DuplicateRule,
        RecipeRule::DuplicateRecipeId,
    ];

    /// The rule's code, as [`super::RecipeError::rule`] holds it and as
    /// messages show it in brackets: `unknown-tool`, `duplicate-step-id`…
    pub fn code(&self) -> &'static str {
        match self {
            RecipeRule::Unreadable => "unreadable",
            RecipeRule::InvalidJson => "invalid-json",
            RecipeRule::WrongType => "wrong-type",
            RecipeRule::UnknownField => "unknown-field",
            RecipeRule::MissingField => "missing-field",
            RecipeRule::BadId => "bad-id",
            RecipeRule::BadPattern => "bad-pattern",
            RecipeRule::UnknownTool => "unknown-tool",
            RecipeRule::UnknownArchetype => "unknown-archetype",
            RecipeRule::UnknownSlot => "unknown-slot",
            RecipeRule::UnknownPromptType => "unknown-prompt-type",
            RecipeRule::UnknownDodCheck => "unknown-dod-check",
            RecipeRule::BadRef => "bad-ref",
            RecipeRule::UnfedPlaceholder => "unfed-placeholder",
            RecipeRule::DuplicateStepId => "duplicate-step-id",
            RecipeRule::DuplicateOutputSlot => "duplicate-output-slot",
            RecipeRule::BadSlot => "bad-slot",
            RecipeRule::UnknownStep => "unknown-step",
            RecipeRule::ReviewNotJson => "review-not-json",
            RecipeRule::DuplicateRule => "duplicate-rule",
            RecipeRule::DuplicateRecipeId => "duplicate-recipe-id",
        }
    }

    /// What the rule asks of a recipe, in words (its line in [`crate::codes`]).
    pub fn description(&self) -> &'static str {
        crate::codes::find(crate::codes::Family::Recipe, self.code()).map_or("", |info| info.doc)
    }
}

#[cfg(test)]
mod tests {
    use super::RecipeRule;

    #[test]
    fn every_rule_is_listed_once_with_its_own_code() {
        let mut codes: Vec<&str> = RecipeRule::ALL.iter().map(RecipeRule::code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), RecipeRule::ALL.len());
        assert!(
            RecipeRule::ALL
                .iter()
                .all(|rule| !rule.description().is_empty())
        );
    }
}

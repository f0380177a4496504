//! Which variant of each prompt file a step gets: the tier a caller forces
//! or the model's capability profile picks, and the layer file of that
//! variant.

use super::capabilities::Profile;
use super::registry::Variant;
use super::{PromptError, PromptFile, PromptInputs, Prompts};
use crate::llm::model::Message;

impl Prompts {
    pub(super) fn profile(&self, inputs: &PromptInputs) -> Result<Profile, PromptError> {
        let mut profile = self.matrix_profile(inputs)?;
        if let Some(window) = inputs.context_window {
            profile.caps.context_window = window as usize;
        }
        Ok(profile)
    }

    fn matrix_profile(&self, inputs: &PromptInputs) -> Result<Profile, PromptError> {
        match inputs.tier {
            Some(tier) => self
                .capabilities
                .with_tier(inputs.model, tier)
                .ok_or_else(|| {
                    PromptError::UnknownTier(
                        tier.to_owned(),
                        self.capabilities
                            .tier_names()
                            .collect::<Vec<_>>()
                            .join(", "),
                    )
                }),
            None => Ok(self.capabilities.profile(inputs.model)),
        }
    }

    pub(super) fn layer(&self, profile: &Profile, name: &str) -> Option<&PromptFile> {
        self.library
            .layers
            .get(name)
            .and_then(|variants| variants.pick(profile.variant))
            .map(|(_, file)| file)
    }
}

/// The most turns of history each tier keeps (§4: a sliding window).
fn history_turns(variant: Variant) -> usize {
    match variant {
        Variant::T1 => 4,
        Variant::T3 => 12,
        Variant::T5 => 24,
    }
}

/// The last turns of `history` the tier keeps, less the `dropped` oldest
/// of them, starting with the writer's turn.
pub(super) fn history_window(history: &[Message], variant: Variant, dropped: usize) -> &[Message] {
    let mut from = history.len().saturating_sub(history_turns(variant)) + dropped;
    while from < history.len() && history[from].role != crate::llm::model::Role::User {
        from += 1;
    }
    &history[from.min(history.len())..]
}

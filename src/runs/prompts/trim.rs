//! Trimming a prompt to the model's context window less the reply's
//! reserve, one step at a time and in a fixed order: the conversation's
//! oldest turns, the process map, the
//! mode rules' long form, the session state's detail, the knowledge entries,
//! then the longest tool summaries (marked where cut). An agent's text is
//! never cut.

use super::capabilities::Profile;
use super::{Prompts, SlotKind, SlotText, TemplateEntry, Variant};

/// How far a prompt has been trimmed.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Trim {
    /// The conversation's oldest turns left out beyond the tier's window.
    pub(super) history_dropped: usize,
    pub(super) no_process_map: bool,
    pub(super) short_mode_rules: bool,
    pub(super) minimal_state: bool,
    pub(super) no_knowledge: bool,
}

impl Trim {
    /// Trims the next thing in order for a prompt `over` tokens too long:
    /// a layer (marked here, left out when the prompt is next assembled) or
    /// part of the longest tool summary in `slots`. Says what, in words;
    /// `None` when nothing is left to trim.
    pub(super) fn further(
        &mut self,
        prompts: &Prompts,
        profile: &Profile,
        entry: &TemplateEntry,
        slots: &mut [SlotText],
        over: usize,
        history: &[crate::llm::model::Message],
    ) -> Option<String> {
        let kept =
            super::tier::history_window(history, profile.variant, self.history_dropped).len();
        if kept > 1 {
            // A turn is the writer's message and the reply to it.
            self.history_dropped += 2;
            return Some("the conversation's oldest turn".to_owned());
        }
        if !self.no_process_map && prompts.layer(profile, "process_map").is_some() {
            self.no_process_map = true;
            Some("the process map".to_owned())
        } else if !self.short_mode_rules && profile.variant != Variant::T1 && entry.mode.is_some() {
            self.short_mode_rules = true;
            Some("the mode rules' long form".to_owned())
        } else if !self.minimal_state && profile.variant != Variant::T1 {
            self.minimal_state = true;
            Some("the session state's scene and voice detail".to_owned())
        } else if !self.no_knowledge && !prompts.decisions.is_empty() {
            self.no_knowledge = true;
            Some("the knowledge entries".to_owned())
        } else {
            cut_longest_pointer(slots, over)
        }
    }
}

/// Shortens the longest tool summary by what the prompt is over, plus room
/// for the marker; `None` when nothing more can be cut.
fn cut_longest_pointer(slots: &mut [SlotText], over_tokens: usize) -> Option<String> {
    const KEEP_AT_LEAST: usize = 400;
    let slot = slots
        .iter_mut()
        .filter(|slot| slot.kind == SlotKind::Pointer)
        .max_by_key(|slot| slot.text.chars().count())?;
    let chars = slot.text.chars().count();
    let cut = (over_tokens * 4 + 200).min(chars.saturating_sub(KEEP_AT_LEAST));
    if cut < 100 {
        return None;
    }
    let keep = chars - cut;
    let end = slot
        .text
        .char_indices()
        .nth(keep)
        .map_or(slot.text.len(), |(at, _)| at);
    // Cut at a line break where one is near, so no line is left half.
    let end = slot.text[..end]
        .rfind('\n')
        .filter(|at| *at > end / 2)
        .unwrap_or(end);
    let removed = slot.text[end..].chars().count();
    slot.text.truncate(end);
    slot.text.push_str(&format!(
        "\n[… {removed} characters of this context were cut to fit the model's context window …]"
    ));
    Some(format!("{removed} characters of `{}`", slot.name))
}

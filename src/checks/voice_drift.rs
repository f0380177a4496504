//! `voice-drift`: a scene's voice, measured as the gold standard's is
//! (`index::voice`: words per sentence of narration, the share of dialogue,
//! figures and verbs of thought per 1,000 words), is further from the gold
//! standard's than `[voice] drift` allows (1.0 by default: a difference a
//! reader hears). Each trait's distance is scaled so that 1.0 means the same
//! to all of them; the largest decides, and the message gives the figures
//! of every trait over the line. Scenes shorter than `[voice] min_words`
//! (300) are not measured, and nothing is said before a gold standard
//! exists. Information by default: a scene to reread, not an error.

use std::hash::{Hash, Hasher};

use super::{Code, Diagnostic, LazyProse, Severity};
use crate::index::{SourceFile, Workspace};
use crate::prose::voice::VoiceTraits;

/// The drift of a scene (`check_file` asks only of scenes).
pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    prose: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some((gold_file, gold)) = workspace.catalog().voice_gold() else {
        return;
    };
    let settings = &workspace.config().voice;
    // A passage too short to measure a voice by measures every scene as
    // drifting: it gives no line to drift from.
    if gold.traits.words < crate::index::voice::GOLD_MIN_WORDS
        || file
            .scene()
            .is_none_or(|scene| scene.word_count < settings.min_words as usize)
    {
        return;
    }
    let threshold = threshold(settings.drift);
    let traits = VoiceTraits::measure(&file.text, prose.get(), None);
    if (traits.words as u32) < settings.min_words {
        return;
    }
    let drift = traits.drift_from(&gold.traits);
    if drift.score <= threshold {
        return;
    }
    let over: Vec<String> = drift
        .over(threshold, &traits, &gold.traits)
        .into_iter()
        .map(|(_, shown)| shown)
        .collect();
    let related_range = gold.passage.unwrap_or_else(|| gold_file.head_range());
    diagnostics.push(
        Diagnostic::new(
            file,
            file.head_range(),
            Severity::Information,
            Code::VoiceDrift,
            format!(
                "the voice drifts from the gold standard ({:.1}, over {threshold}): {}",
                drift.score,
                over.join("; ")
            ),
        )
        .with_related(
            &gold_file.path,
            related_range,
            format!("the gold standard: {}", gold.traits.lines().join("; ")),
        ),
    );
}

/// The threshold as set, or the default where the setting is unusable
/// (the configuration reports it).
fn threshold(drift: f64) -> f64 {
    if drift.is_finite() && drift > 0.0 {
        drift
    } else {
        1.0
    }
}

/// The gold standard's traits and where it is, and the settings.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    if file.scene().is_none() {
        return;
    }
    let Some((gold_file, gold)) = workspace.catalog().voice_gold() else {
        return;
    };
    gold_file.path.hash(hasher);
    gold.passage.hash(hasher);
    let traits = &gold.traits;
    for value in [
        traits.narration_mean,
        traits.dialogue,
        traits.figures,
        traits.interiority,
    ] {
        value.to_bits().hash(hasher);
    }
    let settings = &workspace.config().voice;
    settings.drift.to_bits().hash(hasher);
    settings.min_words.hash(hasher);
}

//! A voice's measurable traits: how long its sentences run (the mean, the
//! median, the long ones), how much of it is dialogue, how often it reaches
//! for a figure ("like a…", "as if", "as though") and how often it goes into
//! a mind ("thought", "wondered", "remembered" in the narration, not in
//! dialogue). The voice bundle records the gold standard's traits; the
//! `voice-drift` check compares each scene's with them.
//!
//! The traits are counts over [`Prose`], so they are deterministic and cheap:
//! a 5,000-word scene is measured in well under a millisecond. They are a
//! voice's fingerprint at arm's length, not its soul: a scene flagged by them
//! is one to reread, which is why drift is information by default.

use std::fmt::Write as _;

use super::{Prose, TokenKind};
use crate::text::TextRange;

/// Words that open a figure of comparison when they follow "as".
const AS_FIGURES: &[&str] = &["if", "though"];
/// Words after "like" that make it a simile ("like a bell"), not a verb.
const LIKE_FIGURES: &[&str] = &[
    "a",
    "an",
    "the",
    "some",
    "his",
    "her",
    "its",
    "their",
    "my",
    "your",
    "our",
    "one",
    "two",
    "so",
    "that",
    "this",
    "something",
    "someone",
    "nothing",
];
/// Verbs of a mind at work, as narration uses them.
const INTERIORITY: &[&str] = &[
    "thought",
    "think",
    "thinks",
    "thinking",
    "wondered",
    "wonder",
    "wonders",
    "wondering",
    "knew",
    "felt",
    "feel",
    "feels",
    "remembered",
    "remember",
    "remembers",
    "recollected",
    "realised",
    "realized",
    "realises",
    "realizes",
    "supposed",
    "suppose",
    "hoped",
    "feared",
    "wished",
    "believed",
    "imagined",
    "doubted",
    "reflected",
    "considered",
    "suspected",
    "decided",
];

/// What a passage's voice measures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VoiceTraits {
    pub words: usize,
    pub sentences: usize,
    /// Words per sentence: the mean, the median and the 90th percentile.
    pub sentence_mean: f64,
    pub sentence_median: f64,
    pub sentence_p90: f64,
    /// Words per sentence of narration (sentences with no dialogue): the
    /// voice's own rhythm, which the drift compares, for dialogue runs
    /// short in any voice.
    pub narration_mean: f64,
    /// The share of words inside dialogue, 0 to 1.
    pub dialogue: f64,
    /// Figures of comparison per 1,000 words.
    pub figures: f64,
    /// Verbs of thought per 1,000 words of narration.
    pub interiority: f64,
}

/// How far one passage's traits are from another's, trait by trait, each
/// scaled so that 1.0 is a difference a reader hears.
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    /// The largest of the parts: what the check compares with the threshold.
    pub score: f64,
    /// `(trait, scaled distance)` for sentence length, dialogue, figures
    /// and interiority.
    pub parts: [(&'static str, f64); 4],
}

impl VoiceTraits {
    /// Measures the paragraphs of `prose` (headings are not prose), only
    /// those starting inside `within` when it is given.
    pub fn measure(text: &str, prose: &Prose, within: Option<TextRange>) -> VoiceTraits {
        let mut lengths = Vec::new();
        let (mut narration_words, mut narration_sentences) = (0usize, 0usize);
        let (mut words, mut quoted, mut figures, mut thoughts) = (0usize, 0usize, 0usize, 0usize);
        for sentence in &prose.sentences {
            if sentence.heading
                || within.is_some_and(|range| {
                    sentence.range.start < range.start || sentence.range.start >= range.end
                })
            {
                continue;
            }
            let tokens = prose.sentence_tokens(sentence);
            let mut length = 0;
            let mut spoken = 0;
            let mut previous: Option<String> = None;
            for token in tokens.iter().filter(|token| token.kind == TokenKind::Word) {
                let word = token.text(text).to_lowercase();
                length += 1;
                if token.quoted {
                    spoken += 1;
                } else if INTERIORITY.contains(&word.as_str()) {
                    thoughts += 1;
                }
                match previous.as_deref() {
                    Some("as") if AS_FIGURES.contains(&word.as_str()) => figures += 1,
                    Some("like") if LIKE_FIGURES.contains(&word.as_str()) => figures += 1,
                    _ => {}
                }
                previous = Some(word);
            }
            if length > 0 {
                lengths.push(length);
                words += length;
                quoted += spoken;
                if spoken == 0 {
                    narration_words += length;
                    narration_sentences += 1;
                }
            }
        }
        if words == 0 {
            return VoiceTraits::default();
        }
        lengths.sort_unstable();
        let at = |share: f64| {
            let index = ((lengths.len() - 1) as f64 * share).round() as usize;
            lengths[index] as f64
        };
        let narration = words - quoted;
        VoiceTraits {
            words,
            sentences: lengths.len(),
            sentence_mean: words as f64 / lengths.len() as f64,
            sentence_median: at(0.5),
            sentence_p90: at(0.9),
            narration_mean: if narration_sentences == 0 {
                0.0
            } else {
                narration_words as f64 / narration_sentences as f64
            },
            dialogue: quoted as f64 / words as f64,
            figures: figures as f64 * 1000.0 / words as f64,
            interiority: if narration == 0 {
                0.0
            } else {
                thoughts as f64 * 1000.0 / narration as f64
            },
        }
    }

    /// How far `self` (a scene) is from `gold`.
    pub fn drift_from(&self, gold: &VoiceTraits) -> Drift {
        // Sentence length by ratio: 1.0 when one runs 1.8 times the other.
        let length = if self.narration_mean > 0.0 && gold.narration_mean > 0.0 {
            (self.narration_mean / gold.narration_mean).ln().abs() / 1.8f64.ln()
        } else {
            0.0
        };
        // Dialogue by share: 1.0 at 75 points apart, for how much is said
        // aloud is as much the scene's as the voice's.
        let dialogue = (self.dialogue - gold.dialogue).abs() / 0.75;
        // Figures and thoughts by rate, with room for a rare voice's noise.
        let figures = (self.figures - gold.figures).abs() / (5.0 + gold.figures);
        let interiority = (self.interiority - gold.interiority).abs() / (15.0 + gold.interiority);
        let parts = [
            ("sentence length", length),
            ("dialogue", dialogue),
            ("figures", figures),
            ("interiority", interiority),
        ];
        let score = parts.iter().map(|(_, part)| *part).fold(0.0, f64::max);
        Drift { score, parts }
    }

    /// The traits as the bundle and a diagnostic show them, one per line.
    pub fn lines(&self) -> Vec<String> {
        vec![
            format!(
                "sentences: {:.1} words on average ({:.1} in the narration), median {:.0}, one in ten over {:.0} ({} sentences)",
                self.sentence_mean,
                self.narration_mean,
                self.sentence_median,
                self.sentence_p90,
                self.sentences
            ),
            format!("dialogue: {:.0}% of the words", self.dialogue * 100.0),
            format!(
                "figures (“like a…”, “as if”): {:.1} per 1,000 words",
                self.figures
            ),
            format!(
                "interiority (thought, wondered, remembered…): {:.1} per 1,000 words of narration",
                self.interiority
            ),
        ]
    }

    /// One sentence for a prompt that has room for no more (§6.3's
    /// `voice_summary` for the smallest models).
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let rhythm = match self.sentence_mean {
            mean if mean < 10.0 => "short, clipped sentences",
            mean if mean < 16.0 => "sentences of middling length",
            mean if mean < 24.0 => "long, flowing sentences",
            _ => "very long, periodic sentences",
        };
        let _ = write!(
            out,
            "{rhythm} (about {:.0} words, the longest near {:.0})",
            self.sentence_mean, self.sentence_p90
        );
        let dialogue = match self.dialogue {
            share if share < 0.1 => "almost no dialogue",
            share if share < 0.3 => "some dialogue",
            share if share < 0.55 => "much dialogue",
            _ => "mostly dialogue",
        };
        let _ = write!(out, "; {dialogue} ({:.0}%)", self.dialogue * 100.0);
        let figures = match self.figures {
            rate if rate < 1.5 => "plain, few figures",
            rate if rate < 5.0 => "an occasional figure",
            _ => "rich in figures",
        };
        let interiority = match self.interiority {
            rate if rate < 4.0 => "outward, little interiority",
            rate if rate < 12.0 => "some interiority",
            _ => "close, much interiority",
        };
        let _ = write!(out, "; {figures}; {interiority}.");
        out
    }
}

impl Drift {
    /// The parts over `threshold`, largest first, as "dialogue 62% against 20%".
    pub fn over(
        &self,
        threshold: f64,
        scene: &VoiceTraits,
        gold: &VoiceTraits,
    ) -> Vec<(f64, String)> {
        let mut over: Vec<(f64, String)> = self
            .parts
            .iter()
            .filter(|(_, part)| *part > threshold)
            .map(|(name, part)| {
                let shown = match *name {
                    "sentence length" => format!(
                        "{:.1} words a sentence in the narration against {:.1}",
                        scene.narration_mean, gold.narration_mean
                    ),
                    "dialogue" => format!(
                        "dialogue {:.0}% of the words against {:.0}%",
                        scene.dialogue * 100.0,
                        gold.dialogue * 100.0
                    ),
                    "figures" => format!(
                        "{:.1} figures per 1,000 words against {:.1}",
                        scene.figures, gold.figures
                    ),
                    _ => format!(
                        "{:.1} verbs of thought per 1,000 words of narration against {:.1}",
                        scene.interiority, gold.interiority
                    ),
                };
                (*part, shown)
            })
            .collect();
        over.sort_by(|a, b| b.0.total_cmp(&a.0));
        over
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::MarkdownParser;

    fn traits(text: &str) -> VoiceTraits {
        let syntax = MarkdownParser::parse_fresh(text);
        VoiceTraits::measure(text, &Prose::analyse(text, &syntax), None)
    }

    #[test]
    fn sentences_dialogue_figures_and_thoughts_are_counted() {
        let measured = traits(
            "# Heading words are not prose\n\nThe sea was like a bell. She thought of home.\n\n\
             “Come back,” he said. It rang as if it knew.\n",
        );
        assert_eq!(measured.sentences, 4);
        assert_eq!(measured.words, 6 + 4 + 4 + 6);
        assert!((measured.dialogue - 2.0 / 20.0).abs() < 1e-9);
        // "like a", "as if": two figures in 20 words.
        assert!((measured.figures - 2000.0 / 20.0).abs() < 1e-9);
        // "thought" and "knew" in 18 words of narration.
        assert!((measured.interiority - 2000.0 / 18.0).abs() < 1e-9);
        assert_eq!(measured.sentence_median, 6.0);
    }

    #[test]
    fn a_thought_said_aloud_is_dialogue_not_interiority() {
        let measured = traits("“I thought you knew,” she said.\n");
        assert_eq!(measured.interiority, 0.0);
    }

    #[test]
    fn a_passage_drifts_from_itself_by_nothing_and_from_its_opposite_by_much() {
        let terse = traits("He ran. She hid. The door shut. Rain fell. Nobody came.\n");
        let flowing = traits(
            "Though the evening had long since settled over the valley and the lamps were lit in \
             every window she could see from the ridge, she lingered, turning over in her mind \
             the words her mother had left unsaid, as if they might yet be spoken.\n",
        );
        assert_eq!(terse.drift_from(&terse).score, 0.0);
        let drift = flowing.drift_from(&terse);
        assert!(drift.score > 3.0, "{drift:?}");
        let over = drift.over(1.0, &flowing, &terse);
        assert_eq!(
            over.iter()
                .map(|(_, shown)| shown.as_str())
                .collect::<Vec<_>>(),
            [
                "45.0 words a sentence in the narration against 2.2",
                "22.2 figures per 1,000 words against 0.0"
            ]
        );
    }

    #[test]
    fn nothing_measured_is_all_zero() {
        assert_eq!(traits("# Only a heading\n"), VoiceTraits::default());
    }
}

//! The voice bundle's gold standard (`Compendium/Voice/gold-standard.md`, or
//! any file of `type: voice-gold-standard`): the passage the writer picked
//! as the book's voice, whether the voice is locked, the one-line summary a
//! small model is given instead of the passage, and the passage's measured
//! traits, which the `voice-drift` check compares each scene's with.
//!
//! The passage is the text under its `## Passage` heading (to the next
//! heading of that level or higher), or, when there is no such heading, the
//! body's paragraphs: the writer may rewrite it, and the traits follow.

use crate::prose::Prose;
use crate::prose::voice::VoiceTraits;
use crate::syntax::{BlockKind, FrontMatter, MarkdownSyntax};
use crate::text::TextRange;

use super::model::{FieldProblem, Fields};

/// The gold standard's file name in the voice folder.
pub const GOLD_STANDARD: &str = "gold-standard.md";
/// The `type:` that makes any file the gold standard.
pub const GOLD_TYPE: &str = "voice-gold-standard";
/// The fewest words of a gold standard's passage: fewer measure no voice
/// (a pick is refused; `voice-drift` does not measure against it).
pub const GOLD_MIN_WORDS: usize = 150;

/// What the gold standard says.
#[derive(Clone, Debug, PartialEq)]
pub struct VoiceGold {
    /// `locked: true`: the writer confirmed the voice (the gate to DIRECTOR).
    pub locked: bool,
    /// `summary:`, the writer's words for the voice, if given.
    pub summary: Option<String>,
    /// `tournament:` and `contestant:`, the version it was picked from.
    pub tournament: Option<String>,
    pub contestant: Option<String>,
    /// Where the passage is in the file.
    pub passage: Option<TextRange>,
    /// The passage's traits.
    pub traits: VoiceTraits,
}

// The traits are finite counts and ratios (never NaN), so equality is total.
impl Eq for VoiceGold {}

impl VoiceGold {
    /// The summary the prompts give a small model: the writer's, else the
    /// measured one.
    pub fn summary_or_measured(&self) -> String {
        self.summary
            .clone()
            .unwrap_or_else(|| self.traits.summary())
    }
}

/// Reads the gold standard from its text.
pub fn read_gold(
    text: &str,
    front: Option<&FrontMatter>,
    syntax: &MarkdownSyntax,
    problems: &mut Vec<FieldProblem>,
) -> VoiceGold {
    let mut fields = Fields {
        text,
        front,
        problems,
    };
    let locked = match fields.string("locked") {
        Some(value) => match value.text.trim() {
            "true" | "yes" => true,
            "false" | "no" | "" => false,
            other => {
                fields.problems.push(FieldProblem {
                    range: value.range,
                    message: format!("`locked: {other}` is neither true nor false"),
                });
                false
            }
        },
        None => false,
    };
    let summary = fields
        .string("summary")
        .map(|summary| summary.text.trim().to_owned())
        .filter(|summary| !summary.is_empty());
    let tournament = fields
        .string("tournament")
        .map(|t| t.text.trim().to_owned());
    let contestant = fields
        .string("contestant")
        .map(|c| c.text.trim().to_owned());
    let passage = passage_range(text, syntax);
    let prose = Prose::analyse(text, syntax);
    VoiceGold {
        locked,
        summary,
        tournament,
        contestant,
        passage,
        traits: VoiceTraits::measure(text, &prose, passage),
    }
}

/// The range under the `Passage` heading, if there is one.
fn passage_range(text: &str, syntax: &MarkdownSyntax) -> Option<TextRange> {
    let blocks = &syntax.blocks;
    let (at, level) = blocks.iter().enumerate().find_map(|(at, block)| {
        let BlockKind::Heading { level } = block.kind else {
            return None;
        };
        let title = block.inline.slice(text).trim().trim_end_matches(':');
        title.eq_ignore_ascii_case("passage").then_some((at, level))
    })?;
    let start = blocks[at].range.end;
    let end = blocks[at + 1..]
        .iter()
        .find(|block| matches!(block.kind, BlockKind::Heading { level: l } if l <= level))
        .map_or(text.len(), |block| block.range.start);
    Some(TextRange::new(start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{MarkdownParser, front_matter};

    fn read(text: &str) -> (VoiceGold, Vec<FieldProblem>) {
        let mut problems = Vec::new();
        let gold = read_gold(
            text,
            front_matter::parse(text).as_ref(),
            &MarkdownParser::parse_fresh(text),
            &mut problems,
        );
        (gold, problems)
    }

    #[test]
    fn the_passage_alone_is_measured_and_the_lock_is_read() {
        let (gold, problems) = read(
            "---\ntype: voice-gold-standard\nlocked: true\n---\n\n# Voice gold standard\n\n\
             ## Passage\n\nThe tide came in. She waited.\n\n\
             ## Why it works\n\nBecause these notes are long and should never count as the voice itself.\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert!(gold.locked);
        assert_eq!(gold.traits.words, 6);
        assert_eq!(gold.traits.sentences, 2);
        assert!(gold.summary_or_measured().starts_with("short, clipped"));
    }

    #[test]
    fn a_lock_that_is_not_true_or_false_is_a_problem_and_not_a_lock() {
        let (gold, problems) =
            read("---\nlocked: maybe\nsummary: Close third, wry.\n---\n\nPlain words here.\n");
        assert!(!gold.locked);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("locked: maybe"));
        assert_eq!(gold.summary.as_deref(), Some("Close third, wry."));
        assert_eq!(
            gold.traits.words, 3,
            "no Passage heading: the body is the passage"
        );
    }
}

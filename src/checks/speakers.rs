//! Who speaks each paragraph of dialogue: its attribution (`"…," Kael
//! said`), else an action beat (`Kael shrugged. "…"`), else turn-taking —
//! in an exchange between two speakers, an unattributed line falls to the
//! one who spoke before the last. A paragraph of narration alone, a heading,
//! or a line whose attribution is a memory ends the exchange, so
//! turn-taking never reaches across them. `dead-character`, `presence` and
//! `unknown-speaker` read the speakers from here.

use super::appearance::{Appearance, appearance, mention_tokens};
use super::speech;
use crate::index::{FilePath, Mention, SourceFile, Workspace};
use crate::prose::{self, Prose, dictionary};
use crate::syntax::BlockKind;
use crate::text::TextRange;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Speaker {
    /// A character with a card.
    Card(FilePath),
    /// A capitalised word in a speaker's place that is no name, no known
    /// word and no near miss of a name: someone without a card.
    Unknown(TextRange),
    /// Nobody the reading can name: the checks act on no one here.
    Nobody,
}

/// How a line's speaker was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// A speech verb names the speaker: `"…," Kael said`, `said Kael`.
    Attributed,
    /// The one character acting in the paragraph's narration.
    Beat,
    /// The exchange's other speaker: the one who spoke before the last.
    TurnTaking,
    /// Not found (or a line said in a memory, not here and now).
    Unfound,
}

impl How {
    /// The name `control-room speakers` and the editor's hints give it.
    pub fn as_str(self) -> &'static str {
        match self {
            How::Attributed => "attributed",
            How::Beat => "beat",
            How::TurnTaking => "turn",
            How::Unfound => "none",
        }
    }
}

/// One paragraph of dialogue and who speaks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The paragraph's first quotation mark.
    pub quote: TextRange,
    pub speaker: Speaker,
    pub how: How,
}

/// The speakers of a scene's dialogue, paragraph by paragraph.
pub(super) fn lines(workspace: &Workspace, file: &SourceFile, prose: &Prose) -> Vec<Line> {
    let text = &*file.text;
    let mentions = workspace.mentions(&file.path);
    let names = workspace.catalog().name_words();
    let mut found = Vec::new();
    // The last two distinct speakers of the exchange, the latest last.
    let mut exchange: Vec<FilePath> = Vec::new();
    for block in &file.syntax.blocks {
        if !matches!(block.kind, BlockKind::Paragraph) {
            exchange.clear();
            continue;
        }
        let tokens = prose.token_at(block.range.start)..prose.token_at(block.range.end);
        let Some(quote) = tokens.clone().find(|&at| prose.tokens[at].quoted) else {
            exchange.clear();
            continue;
        };
        let in_block: Vec<&Mention> = mentions
            .iter()
            .filter(|mention| block.range.contains_range(mention.range))
            .collect();
        let line = match attributed(text, prose, &in_block) {
            Attribution::Speaker(card) => Some((Speaker::Card(card), How::Attributed)),
            Attribution::Exempt => None,
            Attribution::None => unknown_speaker(text, prose, names, tokens.clone())
                .map(|word| (Speaker::Unknown(word), How::Attributed))
                .or_else(|| {
                    beat(text, prose, &in_block).map(|card| (Speaker::Card(card), How::Beat))
                })
                .or_else(|| match exchange.as_slice() {
                    [before, _last] => Some((Speaker::Card(before.clone()), How::TurnTaking)),
                    _ => None,
                }),
        };
        let (speaker, how) = line.unwrap_or((Speaker::Nobody, How::Unfound));
        match &speaker {
            Speaker::Card(card) => {
                if exchange.last() != Some(card) {
                    exchange.retain(|other| other != card);
                    exchange.push(card.clone());
                    if exchange.len() > 2 {
                        exchange.remove(0);
                    }
                }
            }
            Speaker::Unknown(_) | Speaker::Nobody => exchange.clear(),
        }
        found.push(Line {
            quote: prose.tokens[quote].range,
            speaker,
            how,
        });
    }
    found
}

enum Attribution {
    Speaker(FilePath),
    /// An attribution in a memory or a hypothesis: nobody speaks here and now.
    Exempt,
    None,
}

fn attributed(text: &str, prose: &Prose, mentions: &[&Mention]) -> Attribution {
    for mention in mentions {
        let Some((first, last)) = mention_tokens(prose, mention.range) else {
            continue;
        };
        if prose.tokens[first].quoted || !speech::is_speaker(text, prose, first, last) {
            continue;
        }
        return match appearance(text, prose, mention.range, mention.possessive) {
            Some(Appearance::Speaks) => Attribution::Speaker(mention.card.clone()),
            _ => Attribution::Exempt,
        };
    }
    Attribution::None
}

/// The character acting in the paragraph's narration: `Kael shrugged. "…"`.
fn beat(text: &str, prose: &Prose, mentions: &[&Mention]) -> Option<FilePath> {
    let mut acting = mentions.iter().filter(|mention| {
        matches!(
            appearance(text, prose, mention.range, mention.possessive),
            Some(Appearance::Acts(_))
        )
    });
    let first = acting.next()?;
    // Two characters acting: the line is not certainly either's.
    acting
        .all(|other| other.card == first.card)
        .then(|| first.card.clone())
}

/// A capitalised word in a speaker's place (`"…," Maud said`, `said Maud`)
/// that no card names, is no common word in lower case ("Mother", "Wren")
/// and is near no name.
fn unknown_speaker(
    text: &str,
    prose: &Prose,
    names: &crate::index::names::NameWords,
    tokens: std::ops::Range<usize>,
) -> Option<TextRange> {
    tokens.into_iter().find_map(|at| {
        let token = &prose.tokens[at];
        if !token.is_word() || token.quoted {
            return None;
        }
        let word = prose::strip_possessive(token.text(text));
        let unknown = prose::is_capitalised(word)
            && !word.contains(['-', '\'', '’'])
            && !names.is_known(word)
            && !dictionary::is_common_word(word)
            && names.nearest(word).is_empty();
        // "said Captain Rhys": a title before the name belongs to it.
        let titled = at
            .checked_sub(1)
            .filter(|&before| {
                let title = &prose.tokens[before];
                title.is_word()
                    && prose::is_capitalised(title.text(text))
                    && names.is_known(title.text(text))
            })
            .unwrap_or(at);
        (unknown && speech::is_speaker(text, prose, titled, at))
            .then(|| TextRange::new(token.range.start, token.range.start + word.len()))
    })
}

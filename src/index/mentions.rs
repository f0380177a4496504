//! Finding every occurrence of every card name and alias in prose.
//!
//! One Aho-Corasick automaton over all names and aliases (leftmost-longest,
//! so "Kael Maren" wins over "Kael") scans each file once. A match counts
//! when it stands on word boundaries and lies wholly in prose. Case rules:
//! names match as written, in capitals ("KAEL"), and an alias that starts
//! lower-case ("the Warden") also matches capitalised at a sentence start.
//! A name's words may be set apart by a space, a no-break space or a line
//! break: the automaton holds one spelling of each, and reads each gap of
//! the text as one space ([`Gaps`]).
//! A possessive ("Kael's", "Silas'") and a title before the name ("Mr.
//! Darcy" when only "Darcy" is a name) are recorded on the mention.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::syntax::MarkdownSyntax;
use crate::text::TextRange;

use super::file::FilePath;

/// One occurrence of a card's name or alias in prose.
///
/// A novel's index holds tens of thousands (4.6 MB of them and of near
/// names in the LSP bench's million words), so a mention is kept small: 40
/// bytes, not the 72 of two ranges and a `usize`
/// (`a_mention_takes_forty_bytes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The card's file.
    pub card: FilePath,
    /// The name as written, without title or possessive.
    pub range: TextRange,
    /// Which of the card's names matched: 0 is the name, 1.. the aliases.
    pub name_index: u16,
    pub possessive: bool,
    /// The courtesy title written before the name, by where it lies
    /// before it (see [`Mention::title`]).
    title: Option<TitleSpan>,
}

/// Where a title lies before its name: how many bytes before the name's
/// start it starts, and how long it is (one of [`TITLES`] and the one space
/// between: both fit a byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TitleSpan {
    back: u8,
    len: u8,
}

impl Mention {
    /// A courtesy title written before the name ("Mr.", "Lady").
    pub fn title(&self) -> Option<TextRange> {
        self.title.map(|title| {
            let start = self.range.start - usize::from(title.back);
            TextRange::new(start, start + usize::from(title.len))
        })
    }

    /// The same mention with its name at `range` (the title, which lies
    /// just before the name, moves with it).
    pub fn moved_to(&self, range: TextRange) -> Mention {
        Mention {
            range,
            ..self.clone()
        }
    }
}

/// The longest title and the widest space between it and the name (a
/// no-break space) fit a [`TitleSpan`].
const _: () = {
    let mut index = 0;
    while index < TITLES.len() {
        assert!(TITLES[index].len() + '\u{a0}'.len_utf8() <= u8::MAX as usize);
        index += 1;
    }
};

/// The most of `text` around a name that decides whether and how it is a
/// mention: the longest title with its space before it, a possessive and
/// the next character after it (see [`NameMatcher::find_in_prose`]).
pub(crate) const CONTEXT: usize = 32;

/// Titles recognised before a name.
pub(crate) const TITLES: &[&str] = &[
    "Mr.",
    "Mrs.",
    "Ms.",
    "Mr",
    "Mrs",
    "Ms",
    "Miss",
    "Dr.",
    "Dr",
    "Lady",
    "Lord",
    "Sir",
    "Dame",
    "Madam",
    "Master",
    "Mistress",
    "Captain",
    "Colonel",
    "Father",
    "Mother",
    "Sister",
    "Brother",
    "Aunt",
    "Uncle",
    "Professor",
    "King",
    "Queen",
    "Prince",
    "Princess",
    "Old",
    "Young",
];

/// The automaton over every name of every card.
#[derive(Clone, Debug, Default)]
pub struct NameMatcher {
    automaton: Option<AhoCorasick>,
    /// For each pattern, the card and which of its names.
    owners: Vec<(FilePath, u16)>,
}

impl NameMatcher {
    /// Builds the matcher from `(card, names)` pairs, the card's name first.
    pub fn new<'a>(cards: impl IntoIterator<Item = (FilePath, Vec<&'a str>)>) -> Self {
        let mut patterns: Vec<String> = Vec::new();
        let mut owners = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (card, names) in cards {
            for (name_index, name) in names.into_iter().enumerate() {
                // A card's names past the 65,536th are not looked for.
                let Ok(name_index) = u16::try_from(name_index) else {
                    break;
                };
                for spelling in spellings(name) {
                    // The first card to claim a spelling owns it; duplicates are
                    // reported by the duplicate-id check.
                    if seen.insert(spelling.clone(), patterns.len()).is_none() {
                        patterns.push(spelling);
                        owners.push((card.clone(), name_index));
                    }
                }
            }
        }
        if patterns.is_empty() {
            return Self::default();
        }
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .expect("names are short literals, well inside the automaton's limits");
        Self {
            automaton: Some(automaton),
            owners,
        }
    }

    /// The cards `text` names (all of it read as prose, whole words), in
    /// the order first named, each once: a decision's or a note's subjects.
    pub fn find_in(&self, text: &str) -> Vec<FilePath> {
        let Some(automaton) = &self.automaton else {
            return Vec::new();
        };
        let mut cards: Vec<FilePath> = Vec::new();
        let mut gaps = Gaps::default();
        let (read, offsets) = gaps.read(text.as_bytes());
        for found in automaton.find_iter(read) {
            let range =
                TextRange::new(offsets.in_text(found.start()), offsets.in_text(found.end()));
            let card = &self.owners[found.pattern().as_usize()].0;
            if on_word_boundaries(text, range) && !cards.contains(card) {
                cards.push(card.clone());
            }
        }
        cards
    }

    /// Every mention in the prose of `text`, in order.
    pub fn find(&self, text: &str, syntax: &MarkdownSyntax) -> Vec<Mention> {
        self.find_in_prose(text, &syntax.prose)
    }

    /// Every mention in the prose ranges `prose` of `text`, in order. What
    /// decides one reads at most [`CONTEXT`] bytes of `text` on either side
    /// of the name.
    pub fn find_in_prose(&self, text: &str, prose: &[TextRange]) -> Vec<Mention> {
        let Some(automaton) = &self.automaton else {
            return Vec::new();
        };
        let bytes = text.as_bytes();
        let mut mentions = Vec::new();
        let mut gaps = Gaps::default();
        for prose in prose {
            let (read, offsets) = gaps.read(&bytes[prose.start..prose.end]);
            for found in automaton.find_iter(read) {
                let range = TextRange::new(
                    prose.start + offsets.in_text(found.start()),
                    prose.start + offsets.in_text(found.end()),
                );
                if !on_word_boundaries(text, range) {
                    continue;
                }
                let (card, name_index) = &self.owners[found.pattern().as_usize()];
                mentions.push(Mention {
                    card: card.clone(),
                    range,
                    name_index: *name_index,
                    possessive: is_possessive(range.slice(text), &text[range.end..]),
                    title: title_before(text, range.start).and_then(|title| {
                        Some(TitleSpan {
                            back: u8::try_from(range.start - title.start).ok()?,
                            len: u8::try_from(title.len()).ok()?,
                        })
                    }),
                });
            }
        }
        mentions
    }
}

/// The spellings a name matches: as written, in capitals, and capitalised
/// when it starts lower-case, each with either apostrophe; each gap between
/// its words one space, as [`Gaps`] reads the text.
fn spellings(name: &str) -> Vec<String> {
    let name = name.trim();
    if name.is_empty() {
        return Vec::new();
    }
    let name = String::from_utf8(Gaps::default().read(name.as_bytes()).0.to_vec())
        .expect("gaps are read as spaces between whole characters");
    let upper = name.to_uppercase();
    let mut spellings = vec![name.clone()];
    if upper != name && name.chars().filter(|c| c.is_alphabetic()).count() > 1 {
        spellings.push(upper);
    }
    let mut chars = name.chars();
    if let Some(first) = chars.next()
        && first.is_lowercase()
    {
        spellings.push(first.to_uppercase().chain(chars).collect());
    }
    // A straight apostrophe on the card matches the prose's curly one, and
    // the other way ("Ma'am", "Ma’am").
    let other_apostrophes: Vec<String> = spellings
        .iter()
        .filter_map(|spelling| {
            if spelling.contains('\'') {
                Some(spelling.replace('\'', "’"))
            } else if spelling.contains('’') {
                Some(spelling.replace('’', "'"))
            } else {
                None
            }
        })
        .collect();
    spellings.extend(other_apostrophes);
    spellings
}

/// Typeset prose writes "Mr.\u{a0}Bennet", and hard-wrapped prose breaks a
/// name at the end of a line: the automaton reads each no-break space and
/// line break (`\n`, `\r\n`) of a stretch of text as one space, so one
/// spelling of a name matches however its words are set apart. A stretch
/// without them is read as it is.
#[derive(Debug, Default)]
struct Gaps {
    /// The stretch last read, its gaps as spaces; empty when it had none.
    read: Vec<u8>,
    /// Where `read` is shorter than the text: from each offset in `read`
    /// on, the bytes of the text left out before it.
    shifts: Vec<(usize, usize)>,
}

impl Gaps {
    /// `text` as the automaton reads it (`text` itself when it holds no
    /// gap), and where its offsets are in `text`.
    fn read<'a>(&'a mut self, text: &'a [u8]) -> (&'a [u8], Offsets<'a>) {
        let Gaps { read, shifts } = self;
        read.clear();
        shifts.clear();
        let mut copied = 0;
        let mut left_out = 0;
        for at in memchr::memchr2_iter(b'\n', 0xC2, text) {
            let (start, len) = match text[at] {
                b'\n' if at > copied && text[at - 1] == b'\r' => (at - 1, 2),
                b'\n' => (at, 1),
                _ if text.get(at + 1) == Some(&0xA0) => (at, 2),
                _ => continue,
            };
            read.extend_from_slice(&text[copied..start]);
            read.push(b' ');
            copied = start + len;
            if len > 1 {
                left_out += len - 1;
                shifts.push((read.len(), left_out));
            }
        }
        if copied == 0 {
            return (text, Offsets(shifts));
        }
        read.extend_from_slice(&text[copied..]);
        (read, Offsets(shifts))
    }
}

/// Where the offsets of what [`Gaps::read`] read are in the text.
struct Offsets<'a>(&'a [(usize, usize)]);

impl Offsets<'_> {
    /// The offset in the text of `at`, an offset in what was read.
    fn in_text(&self, at: usize) -> usize {
        let before = self.0.partition_point(|&(from, _)| from <= at);
        at + before.checked_sub(1).map_or(0, |last| self.0[last].1)
    }
}

fn on_word_boundaries(text: &str, range: TextRange) -> bool {
    let before = text[..range.start].chars().next_back();
    let after = text[range.end..].chars().next();
    !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// "Kael's", "Kael’s", and "Silas'" after a name ending in s.
fn is_possessive(name: &str, after: &str) -> bool {
    let apostrophe_len = if after.starts_with('\'') {
        1
    } else if after.starts_with('’') {
        '’'.len_utf8()
    } else {
        return false;
    };
    let rest = &after[apostrophe_len..];
    if let Some(rest) = rest.strip_prefix('s') {
        return !rest.chars().next().is_some_and(is_word_char);
    }
    name.ends_with('s') && !rest.chars().next().is_some_and(is_word_char)
}

fn title_before(text: &str, start: usize) -> Option<TextRange> {
    let before = text[..start].strip_suffix([' ', '\u{a0}', '\n'])?;
    TITLES.iter().find_map(|title| {
        let title_start = before.len().checked_sub(title.len())?;
        let candidate = before.get(title_start..)?;
        let boundary = !before[..title_start]
            .chars()
            .next_back()
            .is_some_and(is_word_char);
        (candidate == *title && boundary).then(|| TextRange::new(title_start, before.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::MarkdownParser;

    fn mentions(text: &str) -> Vec<(String, &str, bool, Option<&str>)> {
        let matcher = NameMatcher::new([
            (
                FilePath::from("CHAR-kael"),
                vec!["Kael Maren", "Kael", "the Warden"],
            ),
            (
                FilePath::from("CHAR-darcy"),
                vec!["Fitzwilliam Darcy", "Darcy"],
            ),
            (FilePath::from("CHAR-silas"), vec!["Silas"]),
        ]);
        let syntax = MarkdownParser::parse_fresh(text);
        matcher
            .find(text, &syntax)
            .into_iter()
            .map(|mention| {
                (
                    mention.card.to_string(),
                    mention.range.slice(text),
                    mention.possessive,
                    mention.title().map(|title| title.slice(text)),
                )
            })
            .collect()
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_mention_takes_forty_bytes() {
        assert_eq!(std::mem::size_of::<Mention>(), 40);
    }

    #[test]
    fn longest_name_wins_and_possessives_and_titles_are_noted() {
        let found =
            mentions("Kael Maren met Mr. Darcy. Kael's sword and Silas' hat. The Warden nodded.\n");
        assert_eq!(
            found,
            vec![
                ("CHAR-kael".into(), "Kael Maren", false, None),
                ("CHAR-darcy".into(), "Darcy", false, Some("Mr.")),
                ("CHAR-kael".into(), "Kael", true, None),
                ("CHAR-silas".into(), "Silas", true, None),
                ("CHAR-kael".into(), "The Warden", false, None),
            ]
        );
    }

    #[test]
    fn words_containing_a_name_and_non_prose_are_not_mentions() {
        assert!(mentions("Kaelan and Darcyish `Kael` <!-- Darcy --> kael\n").is_empty());
        assert_eq!(mentions("KAEL!\n").len(), 1);
    }

    #[test]
    fn a_name_typeset_with_a_no_break_space_or_wrapped_at_a_line_end_is_a_mention() {
        let found =
            mentions("Kael\u{a0}Maren met Mr.\u{a0}Darcy by the gate, and Kael\nMaren left.\n");
        assert_eq!(
            found,
            vec![
                ("CHAR-kael".into(), "Kael\u{a0}Maren", false, None),
                ("CHAR-darcy".into(), "Darcy", false, Some("Mr.")),
                ("CHAR-kael".into(), "Kael\nMaren", false, None),
            ]
        );
    }

    #[test]
    fn a_name_wrapped_at_a_windows_line_end_or_set_apart_by_mixed_gaps_is_a_mention() {
        let matcher = NameMatcher::new([(
            FilePath::from("CHAR-mary"),
            vec!["Mary Ann de Lacy Smith", "the Grey Lady"],
        )]);
        let text = "Mary\u{a0}Ann de\r\nLacy\nSmith waved. THE\u{a0}GREY\r\nLADY\u{a0}did not.\r\n\
                    The Grey\u{a0}Lady's hat.\r\n";
        let syntax = crate::syntax::MarkdownParser::parse_fresh(text);
        let found: Vec<(&str, u16, bool)> = matcher
            .find(text, &syntax)
            .iter()
            .map(|mention| {
                (
                    mention.range.slice(text),
                    mention.name_index,
                    mention.possessive,
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![
                ("Mary\u{a0}Ann de\r\nLacy\nSmith", 0, false),
                ("THE\u{a0}GREY\r\nLADY", 1, false),
                ("The Grey\u{a0}Lady", 1, true),
            ]
        );
        // The whole text, as a decision's subjects are found.
        assert_eq!(matcher.find_in(text), vec![FilePath::from("CHAR-mary")]);
    }

    #[test]
    fn gaps_are_read_as_one_space_and_offsets_map_back_to_the_text() {
        let text = "a\u{a0}b\r\nc\nd\re \u{ab}f\u{a0}";
        let mut gaps = Gaps::default();
        let (read, offsets) = gaps.read(text.as_bytes());
        assert_eq!(read, "a b c d\re \u{ab}f ".as_bytes());
        for (at_read, at_text) in [(0, 0), (2, 3), (4, 6), (6, 8), (12, 14), (13, 15), (14, 17)] {
            assert_eq!(offsets.in_text(at_read), at_text, "offset {at_read} read");
        }
        let plain = "no gaps \u{ab}here\u{bb}";
        let (read, offsets) = gaps.read(plain.as_bytes());
        assert_eq!(read, plain.as_bytes());
        assert_eq!(offsets.in_text(5), 5);
    }
}

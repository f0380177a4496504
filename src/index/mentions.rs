//! Finding every occurrence of every card name and alias in prose.
//!
//! One Aho-Corasick automaton over all names and aliases (leftmost-longest,
//! so "Kael Maren" wins over "Kael") scans each file once. A match counts
//! when it stands on word boundaries and lies wholly in prose. Case rules:
//! names match as written, in capitals ("KAEL"), and an alias that starts
//! lower-case ("the Warden") also matches capitalised at a sentence start.
//! A possessive ("Kael's", "Silas'") and a title before the name ("Mr.
//! Darcy" when only "Darcy" is a name) are recorded on the mention.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::syntax::MarkdownSyntax;
use crate::text::TextRange;

use super::file::FilePath;

/// One occurrence of a card's name or alias in prose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The card's file.
    pub card: FilePath,
    /// The name as written, without title or possessive.
    pub range: TextRange,
    /// Which of the card's names matched: 0 is the name, 1.. the aliases.
    pub name_index: usize,
    pub possessive: bool,
    /// A courtesy title written before the name ("Mr.", "Lady").
    pub title: Option<TextRange>,
}

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
    owners: Vec<(FilePath, usize)>,
}

impl NameMatcher {
    /// Builds the matcher from `(card, names)` pairs, the card's name first.
    pub fn new<'a>(cards: impl IntoIterator<Item = (FilePath, Vec<&'a str>)>) -> Self {
        let mut patterns: Vec<String> = Vec::new();
        let mut owners = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (card, names) in cards {
            for (name_index, name) in names.into_iter().enumerate() {
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
        for found in automaton.find_iter(text) {
            let range = TextRange::new(found.start(), found.end());
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
        for prose in prose {
            for found in automaton.find_iter(&bytes[prose.start..prose.end]) {
                let range = TextRange::new(prose.start + found.start(), prose.start + found.end());
                if !on_word_boundaries(text, range) {
                    continue;
                }
                let (card, name_index) = &self.owners[found.pattern().as_usize()];
                mentions.push(Mention {
                    card: card.clone(),
                    range,
                    name_index: *name_index,
                    possessive: is_possessive(range.slice(text), &text[range.end..]),
                    title: title_before(text, range.start),
                });
            }
        }
        mentions
    }
}

/// The spellings a name matches: as written, in capitals, and capitalised
/// when it starts lower-case.
fn spellings(name: &str) -> Vec<String> {
    let name = name.trim();
    if name.is_empty() {
        return Vec::new();
    }
    let mut spellings = vec![name.to_owned()];
    let upper = name.to_uppercase();
    if upper != name && name.chars().filter(|c| c.is_alphabetic()).count() > 1 {
        spellings.push(upper);
    }
    let mut chars = name.chars();
    if let Some(first) = chars.next()
        && first.is_lowercase()
    {
        spellings.push(first.to_uppercase().chain(chars).collect());
    }
    // Typeset prose writes "Mr.\u{a0}Bennet", and hard-wrapped prose breaks a
    // name at the end of a line: a space in a name matches either.
    let spaced: Vec<String> = spellings
        .iter()
        .filter(|spelling| spelling.contains(' '))
        .flat_map(|spelling| spaced_variants(spelling))
        .collect();
    spellings.extend(spaced);
    spellings
}

/// A name with each of its spaces written as a no-break space or a line
/// break (every combination up to three spaces; past that, all one way).
fn spaced_variants(spelling: &str) -> Vec<String> {
    const OTHERS: [char; 2] = ['\u{a0}', '\n'];
    let parts: Vec<&str> = spelling.split(' ').collect();
    let gaps = parts.len() - 1;
    if gaps > 3 {
        return OTHERS
            .iter()
            .map(|gap| parts.join(&gap.to_string()))
            .collect();
    }
    let mut variants = Vec::new();
    // Each gap is one of ' ', no-break space, newline: 3^gaps combinations.
    for combination in 1..3usize.pow(gaps as u32) {
        let mut code = combination;
        let mut variant = parts[0].to_owned();
        for part in &parts[1..] {
            variant.push(match code % 3 {
                0 => ' ',
                1 => OTHERS[0],
                _ => OTHERS[1],
            });
            code /= 3;
            variant.push_str(part);
        }
        variants.push(variant);
    }
    variants
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
                    mention.title.map(|title| title.slice(text)),
                )
            })
            .collect()
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
}

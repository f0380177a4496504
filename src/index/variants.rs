//! Other spellings of a name: capitalised words of the prose that are one or
//! two edits from a name word ("Philips" beside a card's "Phillips"), and
//! whether the manuscript uses one consistently.
//!
//! Each scene's near-name words are found once, with its mentions, and kept
//! per file ([`near_names`]); [`Variants`] sums them over the manuscript,
//! once per snapshot. A spelling the prose uses at least
//! [`CONSISTENT_USES`] times, and more often than the card's own word, is
//! the manuscript's spelling: the card disagrees with the book (one
//! diagnostic on the card, `card-spelling`), and no single use of it is a
//! typo (`name-typo` leaves it alone).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::file::{FilePath, SourceFile};
use super::mentions::Mention;
use super::names::NameWords;
use super::{FileContent, catalog::Catalog};
use crate::prose;
use crate::syntax::{BlockKind, MarkdownSyntax};
use crate::text::TextRange;

/// Fewest uses that make a spelling the manuscript's own.
pub const CONSISTENT_USES: usize = 3;

/// One word near a name, and where a file uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearName {
    pub word: Box<str>,
    pub ranges: Vec<TextRange>,
}

/// The capitalised words of a scene's prose that are no name, no common
/// word in lower case (a proper noun of the dictionary, "Philips", counts),
/// and near a name word; empty for other files.
pub fn near_names(file: &SourceFile, names: &NameWords) -> Vec<NearName> {
    if !matches!(file.content, FileContent::Scene(_)) {
        return Vec::new();
    }
    group(near_words(&file.text, names, prose_ranges(&file.syntax)))
}

/// The words of `ranges` (prose ranges of `text`, in order) that
/// [`near_names`] keeps, each where it is.
pub(super) fn near_words<'t>(
    text: &'t str,
    names: &NameWords,
    ranges: impl Iterator<Item = TextRange>,
) -> Vec<(&'t str, TextRange)> {
    let mut found = Vec::new();
    let mut judged: HashMap<&str, bool> = HashMap::new();
    for range in ranges {
        for word_range in words(text, range) {
            let word = prose::strip_possessive(word_range.slice(text));
            if !prose::is_capitalised(word)
                || word.contains(['-', '\'', '’'])
                || word.chars().any(char::is_numeric)
            {
                continue;
            }
            let near = *judged.entry(word).or_insert_with(|| {
                !names.is_known(word)
                    && !prose::dictionary::is_common_word(word)
                    && !names.nearest(word).is_empty()
            });
            if near {
                found.push((
                    word,
                    TextRange::new(word_range.start, word_range.start + word.len()),
                ));
            }
        }
    }
    found
}

/// Words and where each is, in the order of the text, as [`NearName`]s:
/// one per word, in the words' order, each with its ranges in order.
pub(super) fn group<'t>(words: impl IntoIterator<Item = (&'t str, TextRange)>) -> Vec<NearName> {
    let mut found: BTreeMap<&str, Vec<TextRange>> = BTreeMap::new();
    for (word, range) in words {
        found.entry(word).or_default().push(range);
    }
    found
        .into_iter()
        .map(|(word, mut ranges)| {
            // Kept for as long as the scene: most such words stand once, in
            // room grown for four.
            ranges.shrink_to_fit();
            NearName {
                word: word.into(),
                ranges,
            }
        })
        .collect()
}

/// The words of `file`'s paragraphs capitalised inside a sentence (after a
/// word, not after a sentence's end, a quotation mark, a colon or a dash),
/// and of its headings after their first, that are no ordinary word in
/// lower case: the names the prose uses, sorted, each once.
pub(super) fn names_in_prose(file: &SourceFile) -> Box<[Box<str>]> {
    let text = &*file.text;
    let mut found: Vec<Box<str>> = Vec::new();
    let blocks = file
        .syntax
        .blocks
        .iter()
        .filter(|block| matches!(block.kind, BlockKind::Paragraph | BlockKind::Heading { .. }));
    for block in blocks {
        let heading = matches!(block.kind, BlockKind::Heading { .. });
        for range in file.syntax.prose_in(block.range) {
            names_in_range(text, range, heading, &mut found);
        }
    }
    found.sort_unstable();
    found.dedup();
    found.into_boxed_slice()
}

/// [`names_in_prose`] of one prose range; in a heading, every capitalised
/// word after its first counts (a title capitalises its words).
fn names_in_range(text: &str, range: TextRange, heading: bool, found: &mut Vec<Box<str>>) {
    let mut after_word = false;
    let mut last = range.start;
    for word_range in words(text, range) {
        let between = &text[last..word_range.start];
        let inside = after_word
            && (heading
                || (!between.contains(['.', '!', '?', ':', '“', '”', '"', '—', '‘'])
                    && !between.contains("--")));
        after_word = true;
        last = word_range.end;
        let word = prose::strip_possessive(word_range.slice(text));
        if inside && prose::is_capitalised(word) && !prose::dictionary::is_common_word(word) {
            found.push(word.into());
        }
    }
}

pub(super) fn prose_ranges(syntax: &MarkdownSyntax) -> impl Iterator<Item = TextRange> + '_ {
    syntax
        .blocks
        .iter()
        .filter(|block| matches!(block.kind, BlockKind::Paragraph | BlockKind::Heading { .. }))
        .flat_map(|block| syntax.prose_in(block.range))
}

/// The words of one prose range: letters and digits with inner apostrophes
/// and hyphens, as `prose` reads them.
fn words(text: &str, range: TextRange) -> impl Iterator<Item = TextRange> + '_ {
    let slice = range.slice(text);
    let mut start = None;
    let mut out = Vec::new();
    let mut chars = slice.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        let inner = matches!(c, '\'' | '’' | '-')
            && start.is_some()
            && chars.peek().is_some_and(|(_, next)| next.is_alphanumeric());
        if c.is_alphanumeric() || inner {
            start.get_or_insert(offset);
            continue;
        }
        if let Some(begin) = start.take() {
            out.push(TextRange::new(range.start + begin, range.start + offset));
        }
    }
    if let Some(begin) = start {
        out.push(TextRange::new(range.start + begin, range.end));
    }
    out.into_iter()
}

/// A spelling of a name word that the manuscript uses consistently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The prose's spelling ("Philips").
    pub word: String,
    /// The card's word it stands for ("Phillips").
    pub name_word: String,
    pub card: FilePath,
    /// Every use of the prose's spelling, by file.
    pub uses: Vec<(FilePath, TextRange)>,
    /// How often the prose names the card with the card's word.
    pub name_uses: usize,
}

/// The manuscript's consistent spellings of name words, for one snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Variants {
    variants: Vec<Variant>,
    /// Words the manuscript uses consistently that are a name's plural or
    /// possessive, or another name ("France" beside "Frances"): no
    /// spelling of the card, and no typo.
    consistent_words: Vec<String>,
}

impl Variants {
    pub fn build(
        files: &super::file::Files,
        near: &super::file::ByFile<Arc<[NearName]>>,
        mentions: &super::file::ByFile<Arc<[Mention]>>,
        catalog: &Catalog,
    ) -> Variants {
        let mut uses: BTreeMap<&str, Vec<(FilePath, TextRange)>> = BTreeMap::new();
        for (path, words) in near {
            for near in words.iter() {
                let entry = uses.entry(&near.word).or_default();
                entry.extend(near.ranges.iter().map(|range| (path.clone(), *range)));
            }
        }
        let names = catalog.name_words();
        let mut variants = Vec::new();
        let mut consistent_words = Vec::new();
        for (word, mut found) in uses {
            if found.len() < CONSISTENT_USES {
                continue;
            }
            found.sort();
            for candidate in names.nearest(word) {
                if is_another_form(word, &candidate.word) {
                    // The manuscript's own word, but no spelling of the name.
                    consistent_words.push(word.to_owned());
                    continue;
                }
                let name_uses = name_word_uses(files, mentions, &candidate.card, &candidate.word);
                if found.len() > name_uses {
                    variants.push(Variant {
                        word: word.to_owned(),
                        name_word: candidate.word.clone(),
                        card: candidate.card.clone(),
                        uses: found.clone(),
                        name_uses,
                    });
                }
            }
        }
        Variants {
            variants,
            consistent_words,
        }
    }

    /// Whether the manuscript spells a name `word` consistently.
    pub fn is_consistent(&self, word: &str) -> bool {
        self.variants.iter().any(|variant| variant.word == word)
            || self.consistent_words.iter().any(|other| other == word)
    }

    /// The consistent spellings that disagree with `card`'s words.
    pub fn of_card<'a>(&'a self, card: &'a str) -> impl Iterator<Item = &'a Variant> + 'a {
        self.variants
            .iter()
            .filter(move |variant| &*variant.card == card)
    }

    /// A hash of every variant, for the checks' dependency keys.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.consistent_words.hash(&mut hasher);
        for variant in &self.variants {
            (
                &variant.word,
                &variant.card,
                variant.uses.len(),
                variant.name_uses,
            )
                .hash(&mut hasher);
        }
        hasher.finish()
    }
}

/// The mentions of `card` in scenes whose matched name holds `word`.
fn name_word_uses(
    files: &super::file::Files,
    mentions: &super::file::ByFile<Arc<[Mention]>>,
    card: &FilePath,
    word: &str,
) -> usize {
    mentions
        .iter()
        .filter(|(path, _)| {
            files
                .get(*path)
                .is_some_and(|file| matches!(file.content, FileContent::Scene(_)))
        })
        .map(|(path, found)| {
            let text = &files[path].text;
            found
                .iter()
                .filter(|mention| {
                    &mention.card == card
                        && mention
                            .range
                            .slice(text)
                            .split(|c: char| !c.is_alphanumeric())
                            .any(|part| part == word)
                })
                .count()
        })
        .sum()
}

/// Whether `word` is another form of the name word `name`, not a
/// spelling of it: the same but for case or apostrophes, its plural or
/// possessive ("the McBrydes" beside "McBryde"), or an English name one
/// "s" shorter ("France" beside "Frances", "William" beside "Williams").
fn is_another_form(word: &str, name: &str) -> bool {
    let plain = |word: &str| -> String {
        word.chars()
            .filter(|c| !matches!(c, '\'' | '’'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (plain_word, plain_name) = (plain(word), plain(name));
    plain_word == plain_name
        || plain_word.strip_prefix(&*plain_name) == Some("s")
        || (plain_name.strip_prefix(&*plain_word) == Some("s")
            && prose::dictionary::is_ordinary_word(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_of_the_prose_are_its_capitalised_words_inside_sentences_and_titles() {
        let text = "---\ntitle: x\n---\n\n# The Saltmaster\n\nTeh wind rose. Morwen came in,\nsaid Kael. \u{201c}Brannoc, come!\u{201d} Iria\u{2019}s cup fell.\n";
        let file = SourceFile::parse(
            "Story/Scenes/SCN-x.md".into(),
            text.into(),
            &Default::default(),
        );
        let found = names_in_prose(&file);
        let names: Vec<&str> = found.iter().map(|name| &**name).collect();
        assert_eq!(names, ["Kael", "Saltmaster"]);
    }

    #[test]
    fn a_plural_possessive_or_english_name_an_s_shorter_is_no_spelling_of_the_card() {
        assert!(is_another_form("McBrydes", "Mcbryde"));
        assert!(is_another_form("Mohammedans", "Mohammedan’s"));
        assert!(is_another_form("France", "Frances"));
        assert!(is_another_form("William", "Williams"));
        assert!(!is_another_form("Jenning", "Jennings"));
        assert!(!is_another_form("Brannock", "Brannoc"));
        assert!(!is_another_form("Philips", "Phillips"));
    }
}

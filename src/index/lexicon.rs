//! The manuscript's own words: what the spelling and grammar checks must
//! take as spelt the way the writer means them.
//!
//! They are every word of the cards' names and aliases ("Kael", "Maren",
//! "Ashfall", "the Veilborn"): characters, places and every other canon, the
//! names of the Story Bible's world rules ("**The Tidewright's Oath.**"), the
//! words of the writer's dictionary file (`[language] dictionary`, by
//! default `Compendium/dictionary.txt`: one word per line, `#` starts a
//! comment) and `[language] words` in `control-room.toml`. Found once per
//! change of the cards or the dictionary, compared in lower case. A card's
//! other values (`eyes: grey`) are not among them, so editing one re-checks
//! only the scenes that name the character.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashSet, FxHasher};

use super::catalog::Catalog;

#[derive(Clone, Debug, Default)]
pub struct Lexicon {
    /// Lower-case words.
    words: FxHashSet<String>,
    fingerprint: u64,
}

impl Lexicon {
    /// The words of the cards, of the dictionary file's text and of the
    /// configuration's list.
    pub fn build(catalog: &Catalog, dictionary: &str, configured: &[String]) -> Lexicon {
        let mut words = FxHashSet::default();
        let mut add = |text: &str| {
            for word in text
                .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
                .map(|word| word.trim_matches(|c| c == '\'' || c == '’'))
                .filter(|word| !word.is_empty())
            {
                words.insert(word.to_lowercase());
            }
        };
        for (_, card) in catalog.cards() {
            for name in card.names() {
                add(&name.text);
            }
        }
        if let Some(rules) = catalog.bible(super::BibleKind::WorldRules)
            && let Some(bible) = rules.bible()
        {
            for name in bible.rule_names(&rules.text) {
                add(&name.text);
            }
        }
        for line in dictionary_words(dictionary) {
            add(line);
        }
        for word in configured {
            add(word);
        }
        let mut sorted: Vec<&String> = words.iter().collect();
        sorted.sort_unstable();
        let mut hasher = FxHasher::default();
        sorted.hash(&mut hasher);
        Lexicon {
            fingerprint: hasher.finish(),
            words,
        }
    }

    /// Whether `word` (any case, a possessive's `'s` left off) is one of
    /// the manuscript's words.
    pub fn contains(&self, word: &str) -> bool {
        let bare = crate::prose::strip_possessive(word);
        if bare.chars().all(|c| !c.is_uppercase()) {
            return self.words.contains(bare);
        }
        self.words.contains(&bare.to_lowercase())
    }

    /// A hash of the words, for the caches of diagnostics.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The words, in lower case, in no order.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(String::as_str)
    }
}

/// The words of a dictionary file: one a line, blank lines and `#` comments
/// left out.
pub fn dictionary_words(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter(|line| !line.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_file_s_comments_and_blank_lines_are_not_words() {
        let text = "# invented words\nkethra\n\n  Veilborn  # the order\n";
        let words: Vec<&str> = dictionary_words(text).collect();
        assert_eq!(words, ["kethra", "Veilborn"]);
    }

    #[test]
    fn words_compare_in_any_case_and_without_a_possessive() {
        let lexicon = Lexicon::build(
            &Catalog::default(),
            "kethra\nVeilborn\n",
            &["sky-iron".to_owned()],
        );
        assert!(lexicon.contains("Kethra"));
        assert!(lexicon.contains("veilborn’s"));
        assert!(lexicon.contains("iron"));
        assert!(!lexicon.contains("kethras"));
        let other = Lexicon::build(&Catalog::default(), "kethra\n", &[]);
        assert_ne!(lexicon.fingerprint(), other.fingerprint());
    }
}

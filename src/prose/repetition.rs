//! Repetition in prose, as the echo check and the statistics of repeated
//! phrases read it: which words are common (function words and the most
//! frequent vocabulary, `data/common-words.txt`, never an echo), which are
//! dialogue tags, what makes two words "the same", and a file's words in
//! order with what each is.

use std::borrow::Cow;
use std::sync::OnceLock;

use rustc_hash::FxHashSet;

use super::{Prose, dictionary};
use crate::text::TextRange;

const COMMON: &str = include_str!("../../data/common-words.txt");

fn common() -> &'static FxHashSet<&'static str> {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        COMMON
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    })
}

/// Function words: what a phrase made only of is no phrase of its own
/// ("of the", "and then he").
pub const FUNCTION_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "it's",
    "i'm",
    "don't",
    "didn't",
    "couldn't",
    "wasn't",
    "won't",
    "he'd",
    "she'd",
    "i'd",
    "i'll",
    "you're",
    "we're",
    "they're",
    "that's",
    "there's",
];

/// Whether `lower` (a lowercase word) is a function word.
pub fn is_function_word(lower: &str) -> bool {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    let set = SET.get_or_init(|| FUNCTION_WORDS.iter().copied().collect());
    if lower.contains('’') {
        set.contains(lower.replace('’', "'").as_str())
    } else {
        set.contains(lower)
    }
}

/// Verbs of speech that tag dialogue ("she said", "he asked"), with their
/// forms; their repetition is expected and ignored unless asked for.
pub const DIALOGUE_TAGS: &[&str] = &[
    "said",
    "say",
    "says",
    "saying",
    "asked",
    "ask",
    "asks",
    "asking",
    "replied",
    "reply",
    "replies",
    "answered",
    "answer",
    "answers",
    "told",
    "tell",
    "tells",
    "whispered",
    "whisper",
    "whispers",
    "shouted",
    "shout",
    "shouts",
    "called",
    "call",
    "calls",
    "murmured",
    "muttered",
    "cried",
    "cry",
    "cries",
    "added",
    "continued",
    "repeated",
    "exclaimed",
    "returned",
    "observed",
    "remarked",
    "snapped",
    "sighed",
];

/// Whether `lower` (a lowercase word) is a dialogue tag.
pub fn is_dialogue_tag(lower: &str) -> bool {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| DIALOGUE_TAGS.iter().copied().collect())
        .contains(lower)
}

/// Whether `lower` (a lowercase word) is common: listed, or a regular
/// inflection of a listed word ("looked", "turning", "hands", "easily").
pub fn is_common(lower: &str) -> bool {
    let common = common();
    if common.contains(lower) {
        return true;
    }
    let stem = |suffix: &str| lower.strip_suffix(suffix).filter(|stem| stem.len() >= 2);
    let listed = |word: &str| common.contains(word);
    let doubled = |stem: &str| {
        let bytes = stem.as_bytes();
        bytes.len() >= 3 && bytes[bytes.len() - 1] == bytes[bytes.len() - 2]
    };
    if let Some(stem) = stem("ies").or_else(|| stem("ied")) {
        return listed(&format!("{stem}y"));
    }
    for suffix in ["s", "es", "ed", "d", "ly", "er", "est", "r", "n"] {
        if let Some(stem) = stem(suffix)
            && (listed(stem) || (doubled(stem) && listed(&stem[..stem.len() - 1])))
        {
            return true;
        }
    }
    if let Some(stem) = stem("ing") {
        return listed(stem)
            || listed(&format!("{stem}e"))
            || (doubled(stem) && listed(&stem[..stem.len() - 1]));
    }
    false
}

/// What makes two words the same for an echo: lowercase, without a
/// possessive, a plural's `s` dropped ("stones" and "stone's" are "stone").
pub fn echo_key(word: &str) -> String {
    key_of(word).into_owned()
}

/// [`echo_key`], borrowing from `word` where it can.
fn key_of(word: &str) -> Cow<'_, str> {
    let lower = super::lowercase(super::strip_possessive(word));
    let curly = if lower.contains('’') {
        Cow::Owned(lower.replace('’', "'"))
    } else {
        lower
    };
    let stem_len = curly
        .strip_suffix('s')
        .filter(|stem| stem.chars().count() >= 4 && !stem.ends_with('s') && !stem.ends_with('\''))
        .map(str::len);
    match (curly, stem_len) {
        (Cow::Borrowed(word), Some(len)) => Cow::Borrowed(&word[..len]),
        (Cow::Owned(mut word), Some(len)) => {
            word.truncate(len);
            Cow::Owned(word)
        }
        (curly, None) => curly,
    }
}

/// A word of a file's prose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word<'a> {
    pub range: TextRange,
    /// The word lowercased (borrowed from the text when it already was).
    pub lower: Cow<'a, str>,
    /// What it is the same as ([`echo_key`]).
    pub key: Cow<'a, str>,
    /// Not common, not a name, not a number: a word whose repetition shows.
    pub content: bool,
    /// A dialogue tag ([`DIALOGUE_TAGS`]).
    pub tag: bool,
    /// Inside dialogue.
    pub quoted: bool,
    /// A name: capitalised inside a sentence, a card's, or no ordinary word.
    pub name: bool,
    /// Index into [`Prose::sentences`].
    pub sentence: usize,
    /// Index into [`Prose::tokens`].
    pub token: usize,
}

/// The words of the prose of paragraphs (not headings), in order. A
/// capitalised word inside a sentence is a name and never content, nor is
/// one opening a sentence that is no ordinary word, nor one of `names`.
pub fn words<'a>(text: &'a str, prose: &Prose, is_name: impl Fn(&str) -> bool) -> Vec<Word<'a>> {
    let mut words = Vec::new();
    for (index, sentence) in prose.sentences.iter().enumerate() {
        if sentence.heading {
            continue;
        }
        for (token_index, token) in prose.tokens[sentence.tokens.clone()]
            .iter()
            .enumerate()
            .map(|(at, token)| (sentence.tokens.start + at, token))
        {
            if !token.is_word() {
                continue;
            }
            let raw = token.text(text);
            let bare = super::strip_possessive(raw);
            let lower = super::lowercase(bare);
            let capitalised = super::is_capitalised(bare);
            let name = is_name(bare)
                || (capitalised && !token.clause_start)
                || (capitalised && !dictionary::is_ordinary_word(&lower));
            let letters = lower.chars().filter(|c| c.is_alphabetic()).count();
            let tag = is_dialogue_tag(&lower);
            let content = !name && letters >= 4 && !tag && !is_common(&lower);
            words.push(Word {
                range: token.range,
                key: key_of(bare),
                tag,
                quoted: token.quoted,
                name,
                lower,
                content,
                sentence: index,
                token: token_index,
            });
        }
    }
    words
}

/// Whether a run of words is a phrase: one after the other in one
/// sentence, with no punctuation between them.
pub fn is_phrase(words: &[Word<'_>]) -> bool {
    words
        .windows(2)
        .all(|pair| pair[1].token == pair[0].token + 1 && pair[1].sentence == pair[0].sentence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::MarkdownParser;

    #[test]
    fn common_words_and_their_inflections_are_common() {
        for word in [
            "the", "looked", "turning", "hands", "stopped", "running", "carries", "said",
        ] {
            assert!(is_common(word) || is_dialogue_tag(word), "{word}");
        }
        for word in ["lantern", "lanterns", "glassy", "waystone", "crumbling"] {
            assert!(!is_common(word), "{word}");
        }
    }

    #[test]
    fn plurals_and_possessives_share_a_key() {
        assert_eq!(echo_key("stones"), "stone");
        assert_eq!(echo_key("stone's"), "stone");
        assert_eq!(echo_key("Stone’s"), "stone");
        assert_eq!(echo_key("glass"), "glass");
        assert_eq!(echo_key("was"), "was");
    }

    #[test]
    fn names_headings_and_common_words_are_not_content() {
        let text = "# Lantern heading\n\nThe lantern burned. Kael said the lantern was Iria's.\n";
        let syntax = MarkdownParser::parse_fresh(text);
        let prose = Prose::analyse(text, &syntax);
        let words = words(text, &prose, |word| word == "Kael");
        let content: Vec<&str> = words
            .iter()
            .filter(|word| word.content)
            .map(|word| &*word.lower)
            .collect();
        assert_eq!(content, ["lantern", "burned", "lantern"]);
        assert!(words.iter().any(|word| word.tag && word.lower == "said"));
    }
}

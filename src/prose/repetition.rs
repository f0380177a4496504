//! Repetition in prose, as the echo check and the statistics of repeated
//! phrases read it: which words are common (function words and the most
//! frequent vocabulary, `data/common-words.txt`, never an echo), which are
//! dialogue tags, what makes two words "the same", and a file's words in
//! order with what each is.

use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use rustc_hash::{FxHashSet, FxHasher};

use super::{Prose, dictionary};
use crate::text::TextRange;
use crate::text::line_memo::{LineMemo, by_line};

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

/// A word's lowercase or key: a part of the text, or a string of its own
/// (shared with the reading of its line that [`words_by_line`] keeps, so
/// reading a kept line copies no string).
#[derive(Clone, Debug)]
pub enum Spelling<'a> {
    Text(&'a str),
    Own(Arc<str>),
}

impl std::ops::Deref for Spelling<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Spelling::Text(text) => text,
            Spelling::Own(own) => own,
        }
    }
}

/// Spellings are equal by their text, wherever it is kept.
impl PartialEq for Spelling<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Spelling<'_> {}

impl<'a> From<Cow<'a, str>> for Spelling<'a> {
    fn from(cow: Cow<'a, str>) -> Spelling<'a> {
        match cow {
            Cow::Borrowed(text) => Spelling::Text(text),
            Cow::Owned(own) => Spelling::Own(own.into()),
        }
    }
}

/// A word of a file's prose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word<'a> {
    pub range: TextRange,
    /// The word lowercased (borrowed from the text when it already was).
    pub lower: Spelling<'a>,
    /// What it is the same as ([`echo_key`]).
    pub key: Spelling<'a>,
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
    in_order(prose)
        .map(|(token, sentence)| {
            let found = &prose.tokens[token];
            let (lower, key, class) = classify(found.text(text), found.clause_start, &is_name);
            word(found, lower.into(), key.into(), class, sentence, token)
        })
        .collect()
}

/// [`words`] of the file at `path`, each line's reading kept (by its text,
/// where its words are, which open a clause, and `names_key`, which must
/// change whenever `is_name` does): typing in a scene reads one line's
/// words again.
pub fn words_by_line<'a>(
    path: &str,
    text: &'a str,
    prose: &Prose,
    is_name: impl Fn(&str) -> bool,
    names_key: u64,
) -> Vec<Word<'a>> {
    static MEMO: LineMemo<Vec<Kept>> = LineMemo::new();
    let mut reading = MEMO.reading(path);
    let order: Vec<(usize, usize)> = in_order(prose).collect();
    let mut words = Vec::with_capacity(order.len());
    let lines = by_line(text, &order, |(token, _)| {
        let range = prose.tokens[*token].range;
        range.start..range.end
    });
    for (line_range, line) in lines {
        let line_start = line_range.start;
        let key = {
            let mut hasher = FxHasher::default();
            for (token, _) in line {
                let token = &prose.tokens[*token];
                (
                    token.range.start - line_start,
                    token.range.len(),
                    token.clause_start,
                )
                    .hash(&mut hasher);
            }
            names_key.hash(&mut hasher);
            hasher.finish()
        };
        let kept = reading.line(&text[line_range], key, || {
            line.iter()
                .map(|(token, _)| {
                    let token = &prose.tokens[*token];
                    let (lower, key, class) =
                        classify(token.text(text), token.clause_start, &is_name);
                    let slot = |cow: Cow<'_, str>| match cow {
                        Cow::Borrowed(part) => {
                            let start = part.as_ptr() as usize - text.as_ptr() as usize;
                            Slot::InLine(start - line_start, part.len())
                        }
                        Cow::Owned(owned) => Slot::Owned(owned.into()),
                    };
                    Kept {
                        lower: slot(lower),
                        key: slot(key),
                        class,
                    }
                })
                .collect()
        });
        let restore = |slot: &Slot| match slot {
            Slot::InLine(start, len) => {
                Spelling::Text(&text[line_start + start..line_start + start + len])
            }
            Slot::Owned(owned) => Spelling::Own(Arc::clone(owned)),
        };
        for (&(token, sentence), kept) in line.iter().zip(kept.iter()) {
            let lower = restore(&kept.lower);
            let key = restore(&kept.key);
            words.push(word(
                &prose.tokens[token],
                lower,
                key,
                kept.class,
                sentence,
                token,
            ));
        }
    }
    words
}

/// The word tokens outside headings, in order: (token, sentence) indices.
fn in_order(prose: &Prose) -> impl Iterator<Item = (usize, usize)> + '_ {
    prose
        .sentences
        .iter()
        .enumerate()
        .filter(|(_, sentence)| !sentence.heading)
        .flat_map(move |(index, sentence)| {
            sentence
                .tokens
                .clone()
                .filter(|token| prose.tokens[*token].is_word())
                .map(move |token| (token, index))
        })
}

/// What a word is beyond its spelling: a dialogue tag, content, a name.
#[derive(Clone, Copy, Debug)]
struct Class {
    tag: bool,
    content: bool,
    name: bool,
}

/// A line's word as [`words_by_line`] keeps it.
struct Kept {
    lower: Slot,
    key: Slot,
    class: Class,
}

/// A word's lowercase or key: a part of its line, or a string of its own.
enum Slot {
    InLine(usize, usize),
    Owned(Arc<str>),
}

/// A word's lowercase, key and class, from its text (`raw`), whether it
/// opens a clause, and the names.
fn classify<'a>(
    raw: &'a str,
    clause_start: bool,
    is_name: impl Fn(&str) -> bool,
) -> (Cow<'a, str>, Cow<'a, str>, Class) {
    let bare = super::strip_possessive(raw);
    let lower = super::lowercase(bare);
    let capitalised = super::is_capitalised(bare);
    let name = is_name(bare)
        || (capitalised && !clause_start)
        || (capitalised && !dictionary::is_ordinary_word(&lower));
    let letters = lower.chars().filter(|c| c.is_alphabetic()).count();
    let tag = is_dialogue_tag(&lower);
    let content = !name && letters >= 4 && !tag && !is_common(&lower);
    let key = key_of(bare);
    (lower, key, Class { tag, content, name })
}

fn word<'a>(
    token: &super::Token,
    lower: Spelling<'a>,
    key: Spelling<'a>,
    class: Class,
    sentence: usize,
    index: usize,
) -> Word<'a> {
    Word {
        range: token.range,
        lower,
        key,
        content: class.content,
        tag: class.tag,
        quoted: token.quoted,
        name: class.name,
        sentence,
        token: index,
    }
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

    /// The words read line by line through the memo are the words read
    /// afresh: on every scene of the example, read again from the memo,
    /// after typing moved the lines below, and with other names.
    #[test]
    fn words_kept_by_line_are_the_words_read_afresh() {
        let scenes = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/salt-road/Story/Scenes");
        let kael = |word: &str| word == "Kael";
        let ysolde = |word: &str| word == "Ysolde" || word == "Harrow";
        let mut read = 0;
        for entry in std::fs::read_dir(scenes).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let middle = text[..text.len() / 2].rfind("\n").unwrap() + 1;
            let typed = format!(
                "{}Kael’s lantern guttered. {}",
                &text[..middle],
                &text[middle..]
            );
            for text in [&text, &typed] {
                let syntax = MarkdownParser::parse_fresh(text);
                let prose = Prose::analyse(text, &syntax);
                let fresh = words(text, &prose, kael);
                assert_eq!(words_by_line("scene.md", text, &prose, kael, 1), fresh);
                assert_eq!(
                    words_by_line("scene.md", text, &prose, kael, 1),
                    fresh,
                    "from the memo"
                );
                assert_eq!(
                    words_by_line("scene.md", text, &prose, ysolde, 2),
                    words(text, &prose, ysolde)
                );
                read += fresh.len();
            }
        }
        assert!(read > 5_000, "{read} words");
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
        assert!(words.iter().any(|word| word.tag && &*word.lower == "said"));
    }
}

//! Prose as the continuity checks read it: words, dialogue and sentences.
//!
//! [`Prose::analyse`] walks the paragraphs and headings of a file (only their
//! prose ranges, so code, comments and link targets are never read) and
//! produces a flat list of [`Token`]s grouped into [`Sentence`]s. Each token
//! knows whether it stands inside dialogue and whether it opens a clause (a
//! sentence start, or the first word after an opening quote), which is what
//! tells "Crows wheeled" from "Kale said".
//!
//! This is a writer's-prose tokenizer, not a linguist's: it knows curly and
//! straight double quotes, `‘single’` dialogue, apostrophes inside words,
//! hyphenated compounds, and the abbreviations after which a full stop does
//! not end a sentence ("Mr.", "Dr.", initials).

pub mod dictionary;
pub mod repetition;
pub mod verbs;
pub mod voice;

/// Loads the common words the checks read, which are otherwise gathered on
/// their first use: a server calls it beside its index, so that the first
/// scene checked does not pay for them. (The ordinary English words need no
/// loading: [`dictionary`] reads them in place.)
pub fn warm_up() {
    repetition::is_common("warm");
}

use std::ops::Range;

use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;

use crate::syntax::{Block, BlockKind, MarkdownSyntax};
use crate::text::TextRange;
use crate::text::line_memo::LineMemo;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// Letters and digits, with inner apostrophes and hyphens ("didn't", "blue-grey").
    Word,
    /// A quotation mark that opens dialogue.
    OpenQuote,
    /// A quotation mark that closes dialogue.
    CloseQuote,
    /// Any other character that is not whitespace.
    Punct,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub range: TextRange,
    pub kind: TokenKind,
    /// Inside dialogue (between an opening and a closing quote).
    pub quoted: bool,
    /// The first word of a sentence or of a quotation.
    pub clause_start: bool,
}

impl Token {
    pub fn text<'a>(&self, text: &'a str) -> &'a str {
        self.range.slice(text)
    }

    pub fn is_word(&self) -> bool {
        self.kind == TokenKind::Word
    }

    /// Whether this is the single punctuation character `c`.
    pub fn is_punct(&self, text: &str, c: char) -> bool {
        self.kind == TokenKind::Punct && self.text(text).starts_with(c)
    }
}

/// A sentence: a run of tokens in one paragraph or heading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sentence {
    /// Indices into [`Prose::tokens`].
    pub tokens: Range<usize>,
    /// From the first token's start to the last token's end.
    pub range: TextRange,
    /// The sentence is (part of) a heading.
    pub heading: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prose {
    pub tokens: Vec<Token>,
    pub sentences: Vec<Sentence>,
}

/// Abbreviations after which a full stop does not end the sentence.
const ABBREVIATIONS: &[&str] = &[
    "Mr", "Mrs", "Ms", "Mx", "Dr", "St", "Jr", "Sr", "Col", "Capt", "Lt", "Gen", "Sgt", "Rev",
    "Prof", "Hon", "Gov", "Messrs", "Mme", "Mlle", "vs", "etc", "e.g", "i.e", "cf", "No",
];

impl Prose {
    /// Tokenizes the prose of every paragraph and heading of `text`.
    pub fn analyse(text: &str, syntax: &MarkdownSyntax) -> Prose {
        let mut prose = Prose::default();
        for (block, heading) in prose_blocks(syntax) {
            prose.analyse_block(text, syntax, block, heading);
        }
        prose
    }

    /// [`Prose::analyse`] of the file at `path`, which the writer is typing
    /// in: each block's tokens and sentences are kept by the block's text
    /// and all else its reading reads (whether it is a heading, where its
    /// prose is, the characters just outside it), so typing analyses again
    /// only the block it changed; the others are moved to where they are now.
    pub fn analyse_typed_in(path: &str, text: &str, syntax: &MarkdownSyntax) -> Prose {
        static MEMO: LineMemo<Prose> = LineMemo::new();
        let mut reading = MEMO.reading(path);
        let mut blocks = Vec::new();
        for (block, heading) in prose_blocks(syntax) {
            let start = block.range.start;
            let mut key = FxHasher::default();
            heading.hash(&mut key);
            text[..start].chars().next_back().hash(&mut key);
            text[block.range.end..].chars().next().hash(&mut key);
            for range in syntax.prose_in(block.range) {
                (range.start - start, range.end - start).hash(&mut key);
            }
            let alone = reading.line(block.range.slice(text), key.finish(), || {
                let mut alone = Prose::default();
                alone.analyse_block(text, syntax, block, heading);
                // Its offsets counted from the block's start.
                let from =
                    |range: TextRange| TextRange::new(range.start - start, range.end - start);
                for token in &mut alone.tokens {
                    token.range = from(token.range);
                }
                for sentence in &mut alone.sentences {
                    sentence.range = from(sentence.range);
                }
                alone
            });
            blocks.push((alone, start));
        }
        let mut prose = Prose {
            tokens: Vec::with_capacity(blocks.iter().map(|(block, _)| block.tokens.len()).sum()),
            sentences: Vec::with_capacity(
                blocks.iter().map(|(block, _)| block.sentences.len()).sum(),
            ),
        };
        for (block, start) in &blocks {
            prose.append_block(block, *start);
        }
        prose
    }

    /// Tokenizes one paragraph or heading onto the end.
    fn analyse_block(&mut self, text: &str, syntax: &MarkdownSyntax, block: &Block, heading: bool) {
        let mut builder = BlockBuilder::new(self, heading);
        for range in syntax.prose_in(block.range) {
            builder.feed(text, range);
        }
        builder.finish();
    }

    /// Appends `block`, a block's prose whose offsets count from the
    /// block's start, for the block at `start`.
    fn append_block(&mut self, block: &Prose, start: usize) {
        let first = self.tokens.len();
        let at = |range: TextRange| TextRange::new(range.start + start, range.end + start);
        self.tokens.extend(block.tokens.iter().map(|token| Token {
            range: at(token.range),
            ..*token
        }));
        self.sentences
            .extend(block.sentences.iter().map(|sentence| Sentence {
                tokens: sentence.tokens.start + first..sentence.tokens.end + first,
                range: at(sentence.range),
                heading: sentence.heading,
            }));
    }

    pub fn sentence_tokens(&self, sentence: &Sentence) -> &[Token] {
        &self.tokens[sentence.tokens.clone()]
    }

    /// The index of the sentence holding token `index`.
    pub fn sentence_of(&self, index: usize) -> Option<&Sentence> {
        let at = self
            .sentences
            .partition_point(|sentence| sentence.tokens.end <= index);
        self.sentences
            .get(at)
            .filter(|sentence| sentence.tokens.contains(&index))
    }

    /// The position in [`Prose::sentences`] of the sentence holding token `index`.
    pub fn sentence_index_of(&self, index: usize) -> Option<usize> {
        let at = self
            .sentences
            .partition_point(|sentence| sentence.tokens.end <= index);
        self.sentences
            .get(at)
            .is_some_and(|sentence| sentence.tokens.contains(&index))
            .then_some(at)
    }

    /// The index of the first token starting at or after `offset`.
    pub fn token_at(&self, offset: usize) -> usize {
        self.tokens
            .partition_point(|token| token.range.start < offset)
    }
}

/// The blocks whose prose is read, and whether each is a heading.
fn prose_blocks(syntax: &MarkdownSyntax) -> impl Iterator<Item = (&Block, bool)> {
    syntax.blocks.iter().filter_map(|block| match block.kind {
        BlockKind::Paragraph => Some((block, false)),
        BlockKind::Heading { .. } => Some((block, true)),
        _ => None,
    })
}

/// Tokenizes one block, cutting it into sentences.
struct BlockBuilder<'a> {
    prose: &'a mut Prose,
    heading: bool,
    sentence_start: usize,
    /// The quote character that opened the current dialogue, if any.
    open_quote: Option<char>,
    /// The next word opens a clause.
    at_clause_start: bool,
    /// A sentence ends before the next word if it starts with a capital.
    pending_end: bool,
}

impl<'a> BlockBuilder<'a> {
    fn new(prose: &'a mut Prose, heading: bool) -> Self {
        let sentence_start = prose.tokens.len();
        BlockBuilder {
            prose,
            heading,
            sentence_start,
            open_quote: None,
            at_clause_start: true,
            pending_end: false,
        }
    }

    fn feed(&mut self, text: &str, range: TextRange) {
        let slice = range.slice(text);
        let mut chars = slice.char_indices().peekable();
        while let Some((offset, c)) = chars.next() {
            let start = range.start + offset;
            if c.is_whitespace() {
                continue;
            }
            if c.is_alphanumeric() {
                // A word: alphanumerics with inner apostrophes and hyphens.
                let mut end = start + c.len_utf8();
                while let Some(&(next_offset, next)) = chars.peek() {
                    let at = range.start + next_offset;
                    if next.is_alphanumeric() {
                        end = at + next.len_utf8();
                        chars.next();
                        continue;
                    }
                    if matches!(next, '\'' | '’' | '-')
                        && text[at + next.len_utf8()..range.end]
                            .chars()
                            .next()
                            .is_some_and(char::is_alphanumeric)
                    {
                        end = at + next.len_utf8();
                        chars.next();
                        continue;
                    }
                    break;
                }
                self.word(text, TextRange::new(start, end));
                continue;
            }
            let token_range = TextRange::new(start, start + c.len_utf8());
            let before = text[..start].chars().next_back();
            let after = text[token_range.end..].chars().next();
            let kind = self.quote_kind(c, before, after);
            self.punct(text, token_range, kind, c);
        }
    }

    /// Whether `c` opens or closes dialogue here, or is plain punctuation.
    fn quote_kind(&self, c: char, before: Option<char>, after: Option<char>) -> TokenKind {
        let word_before = before.is_some_and(char::is_alphanumeric);
        let word_after = after.is_some_and(char::is_alphanumeric);
        match (c, self.open_quote) {
            ('“', None) | ('"', None) => TokenKind::OpenQuote,
            ('”', Some('“' | '"')) | ('"', Some('“' | '"')) => TokenKind::CloseQuote,
            // `“` inside dialogue: a nested or unclosed quote reopens.
            ('“', Some(_)) => TokenKind::OpenQuote,
            // Single quotes are dialogue only when they open at a word start.
            ('‘', None) | ('\'', None) if !word_before && word_after => TokenKind::OpenQuote,
            ('’', Some('‘' | '\'')) | ('\'', Some('‘' | '\'')) if !word_after => {
                TokenKind::CloseQuote
            }
            _ => TokenKind::Punct,
        }
    }

    fn word(&mut self, text: &str, range: TextRange) {
        if self.pending_end {
            self.pending_end = false;
            let starts_upper = range
                .slice(text)
                .chars()
                .next()
                .is_some_and(|c| c.is_uppercase() || c.is_numeric());
            if starts_upper {
                self.end_sentence();
            }
        }
        let clause_start = self.at_clause_start;
        self.at_clause_start = false;
        self.prose.tokens.push(Token {
            range,
            kind: TokenKind::Word,
            quoted: self.open_quote.is_some(),
            clause_start,
        });
    }

    fn punct(&mut self, text: &str, range: TextRange, kind: TokenKind, c: char) {
        let quoted = match kind {
            TokenKind::OpenQuote => {
                if self.pending_end {
                    // `…end." "Next` or `…end. "Next`: the quote starts a new sentence.
                    self.pending_end = false;
                    self.end_sentence();
                }
                self.open_quote = Some(c);
                self.at_clause_start = true;
                true
            }
            TokenKind::CloseQuote => {
                self.open_quote = None;
                true
            }
            _ => self.open_quote.is_some(),
        };
        let previous_word = self
            .prose
            .tokens
            .last()
            .filter(|token| token.is_word() && token.range.end == range.start)
            .map(|token| token.text(text));
        self.prose.tokens.push(Token {
            range,
            kind,
            quoted,
            clause_start: false,
        });
        match c {
            '.' if previous_word.is_some_and(is_abbreviation) => {}
            '.' | '!' | '?' | '…' => self.pending_end = true,
            _ => {}
        }
    }

    fn end_sentence(&mut self) {
        let end = self.prose.tokens.len();
        if end > self.sentence_start {
            let first = self.prose.tokens[self.sentence_start].range.start;
            let last = self.prose.tokens[end - 1].range.end;
            self.prose.sentences.push(Sentence {
                tokens: self.sentence_start..end,
                range: TextRange::new(first, last),
                heading: self.heading,
            });
        }
        self.sentence_start = end;
        self.at_clause_start = true;
    }

    fn finish(mut self) {
        self.end_sentence();
    }
}

fn is_abbreviation(word: &str) -> bool {
    ABBREVIATIONS.contains(&word)
        // An initial: "J. R. Tolkien".
        || (word.chars().count() == 1 && word.chars().all(char::is_uppercase))
}

/// `word` in lower case, borrowed when it already is (most words of prose
/// are): no allocation per word where a check only looks words up.
pub fn lowercase(word: &str) -> std::borrow::Cow<'_, str> {
    if word.is_ascii() && !word.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Borrowed(word)
    } else {
        std::borrow::Cow::Owned(word.to_lowercase())
    }
}

/// A word without a trailing possessive: "Kael's" → "Kael", "Bennets’" → "Bennets".
pub fn strip_possessive(word: &str) -> &str {
    for suffix in ["'s", "’s", "'S", "’S"] {
        if let Some(stem) = word.strip_suffix(suffix) {
            return stem;
        }
    }
    word
}

/// A word's range without its possessive ending.
pub fn without_possessive(text: &str, range: TextRange) -> TextRange {
    let word = range.slice(text);
    TextRange::new(range.start, range.start + strip_possessive(word).len())
}

/// Whether the word carries a possessive ending.
pub fn is_possessive(word: &str) -> bool {
    strip_possessive(word).len() != word.len()
}

/// Whether the word starts with a capital letter and is not in capitals throughout.
pub fn is_capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase) && chars.any(|c| c.is_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::MarkdownParser;

    fn sentences(text: &str) -> Vec<Vec<String>> {
        let syntax = MarkdownParser::parse_fresh(text);
        let prose = Prose::analyse(text, &syntax);
        prose
            .sentences
            .iter()
            .map(|sentence| {
                prose
                    .sentence_tokens(sentence)
                    .iter()
                    .map(|token| {
                        let mut word = token.text(text).to_owned();
                        if token.quoted {
                            word.insert(0, '~');
                        }
                        if token.clause_start {
                            word.insert(0, '^');
                        }
                        word
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn sentences_end_at_terminal_punctuation_before_a_capital() {
        let found = sentences("Mr. Darcy bowed. She left! Was it 3 p.m. then? Yes.\n");
        assert_eq!(
            found,
            vec![
                vec!["^Mr", ".", "Darcy", "bowed", "."],
                vec!["^She", "left", "!"],
                vec!["^Was", "it", "3", "p", ".", "m", ".", "then", "?"],
                vec!["^Yes", "."],
            ]
        );
    }

    #[test]
    fn dialogue_is_marked_and_opens_a_clause() {
        let found =
            sentences("“Then we go,” Kale said. ‘Crows,’ she said. Kael’s eyes didn't blink.\n");
        assert_eq!(
            found,
            vec![
                vec![
                    "~“", "^~Then", "~we", "~go", "~,", "~”", "Kale", "said", "."
                ],
                vec!["~‘", "^~Crows", "~,", "~’", "she", "said", "."],
                vec!["^Kael’s", "eyes", "didn't", "blink", "."],
            ]
        );
    }

    #[test]
    fn a_setext_heading_is_read_once() {
        let text = "The Gate\n========\n\nKael left.\n";
        let prose = Prose::analyse(text, &MarkdownParser::parse_fresh(text));
        let words: Vec<&str> = prose.tokens.iter().map(|token| token.text(text)).collect();
        assert_eq!(
            words.iter().filter(|word| **word == "Gate").count(),
            1,
            "{words:?}"
        );
        assert!(
            prose
                .tokens
                .windows(2)
                .all(|pair| pair[0].range.end <= pair[1].range.start),
            "tokens in order: {words:?}"
        );
    }

    #[test]
    fn paragraphs_and_headings_are_separate_and_code_is_skipped() {
        let found = sentences("# The Gate\n\nKael `code` left\nthe gate <!-- note. Here -->\n");
        assert_eq!(
            found,
            vec![vec!["^The", "Gate"], vec!["^Kael", "left", "the", "gate"]]
        );
    }

    #[test]
    fn possessives_and_capitals() {
        assert_eq!(strip_possessive("Kael’s"), "Kael");
        assert!(is_possessive("Darcy's"));
        assert!(!is_possessive("Bennets"));
        assert!(is_capitalised("Kael"));
        assert!(!is_capitalised("KAEL"));
        assert!(!is_capitalised("kael"));
    }

    /// The defect this pins would be a kept block read where it no longer
    /// reads the same: typed-in prose must equal a fresh analysis after
    /// every edit, whatever the edit makes of the blocks (a paragraph
    /// split or joined, a line made a heading or a quote, dialogue opened
    /// across a block's edge, links made and unmade).
    #[test]
    fn a_scene_typed_in_analyses_as_afresh_after_every_edit() {
        let mut text = String::from(
            "# One\n\nMr. Darcy bowed. “Come in,” she said. He did.\n\n\
             She left! Was it 3 p.m. then? Yes.\n\n> “A quote,” it said.\n\n\
             - a list item. Another.\n\nShe left! Was it 3 p.m. then? Yes.\n\n\
             By the [lamp](/light) she read.\n",
        );
        let pieces = [
            "The lamp guttered. ",
            "\n\n",
            "\n",
            "“",
            "”",
            "# ",
            "> ",
            "Mr. ",
            "x",
            "-",
            "\n===\n",
            "’tis ",
            "*",
            "`",
            "    ",
            "[lamp]",
            "](/x)",
            "\n\n[lamp]: /light\n\n",
        ];
        let mut seed: u64 = 0x5eed;
        let mut next = |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % below as u64) as usize
        };
        for edit in 0..300 {
            let boundary = |at: usize, text: &str| {
                (0..=at)
                    .rev()
                    .find(|&at| text.is_char_boundary(at))
                    .unwrap_or(0)
            };
            let at = boundary(next(text.len() + 1), &text);
            if next(3) == 0 {
                let end = boundary((at + next(12)).min(text.len()), &text);
                text.replace_range(at..end.max(at), "");
            } else {
                text.insert_str(at, pieces[next(pieces.len())]);
            }
            let syntax = MarkdownParser::parse_fresh(&text);
            let typed_in = Prose::analyse_typed_in("typed.md", &text, &syntax);
            assert_eq!(
                typed_in,
                Prose::analyse(&text, &syntax),
                "edit {edit}: {text:?}"
            );
        }
    }

    /// A block whose text is unchanged but whose reading is not (its prose
    /// elsewhere in it, made a heading, a letter just before its opening
    /// quote or just after its closing one) is read again: all its reading
    /// reads is in its key.
    #[test]
    fn a_kept_block_is_read_again_when_what_else_it_reads_changed() {
        let block = "‘Come in,’ she said. ‘Do.’";
        // The same block between spaces, then after a letter (its first
        // quote no longer opens dialogue), then before one (its last no
        // longer closes it).
        let spaced = format!(" {block} \n");
        let lettered = format!("x{block} \n");
        let followed = format!(" {block}x\n");
        let syntax = |text: &str| {
            let mut syntax = MarkdownParser::parse_fresh(text);
            let paragraph = syntax
                .blocks
                .iter_mut()
                .find(|block| block.kind == BlockKind::Paragraph)
                .unwrap();
            paragraph.range = TextRange::new(1, 1 + block.len());
            syntax.prose = vec![paragraph.range];
            syntax
        };
        let mut less_prose = syntax(&spaced);
        less_prose.prose = vec![TextRange::new(1, 12)];
        let mut heading = syntax(&spaced);
        heading.blocks[0].kind = BlockKind::Heading { level: 1 };
        // Each changed reading right after the one it differs from.
        for (text, syntax) in [
            (&spaced, syntax(&spaced)),
            (&spaced, less_prose),
            (&spaced, syntax(&spaced)),
            (&spaced, heading),
            (&spaced, syntax(&spaced)),
            (&lettered, syntax(&lettered)),
            (&spaced, syntax(&spaced)),
            (&followed, syntax(&followed)),
        ] {
            assert_eq!(
                Prose::analyse_typed_in("kept.md", text, &syntax),
                Prose::analyse(text, &syntax),
                "{text:?} {syntax:?}"
            );
        }
    }
}

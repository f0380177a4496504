//! `spelling`: a word of a scene's or a card's prose that is in no
//! dictionary: not in harper's, not an ordinary English word, not one of
//! the manuscript's own (the cards' names and terms, the writer's
//! dictionary file, `[language] words`).
//!
//! A capitalised word is read only at a sentence's start, and only when it
//! is no name: not the manuscript's own, not a proper noun of the
//! dictionary, not a word the prose capitalises inside a sentence anywhere
//! (`Workspace::is_name_in_prose`) or a scene's `characters`/`pov` gives,
//! and never in a heading; names have their own checks (`name-typo`,
//! `card-spelling`, `unknown-speaker`). A compound in no dictionary is read
//! part by part; a regular derivation of a known word is a word
//! ("gaieties", "slightingly", "unsubdued", "good-natured"); a word with an
//! accent is the writer's choice of a borrowing ("tête-à-tête", "rôle");
//! words with digits, single letters and, in dialogue, words clipped by an
//! apostrophe ("goin'", "'em") are the writer's. Up to three corrections
//! are offered (`speller::suggestions`: nearest first, then the likeliest
//! slip, then the most common word), and the editor offers "Add to
//! dictionary". Off with `[language] spelling = false`.

use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;

use super::{Code, Diagnostic, FileEdit, Fix, FixKind, LazyProse, Severity};
use crate::index::{Lexicon, SourceFile, Workspace};
use crate::language::speller;
use crate::prose::Token;
use crate::syntax::BlockKind;
use crate::text::TextRange;
use crate::text::line_memo::{LineMemo, Reading, by_line};

/// How many corrections a misspelling offers.
const SUGGESTIONS: usize = 3;

/// A word in no dictionary and the corrections offered for it.
type Misspelling = (TextRange, Vec<String>);

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    prose: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if !workspace.config().language.spelling || (file.scene().is_none() && file.card().is_none()) {
        return;
    }
    let lexicon = workspace.lexicon();
    // A name as the book uses it, one a scene's front matter gives
    // (`characters`, `pov`), or one a card's name is near (which `name-typo`
    // reports).
    let catalog = workspace.catalog();
    let names = catalog.name_words();
    let in_front_matter = |word: &str| {
        catalog.scenes().any(|(_, scene)| {
            scene.pov.iter().chain(&scene.characters).any(|name| {
                name.text
                    .split_whitespace()
                    .any(|part| part.trim_matches(|c: char| !c.is_alphanumeric()) == word)
            })
        })
    };
    let is_name = |word: &str| {
        workspace.is_name_in_prose(word) || in_front_matter(word) || !names.nearest(word).is_empty()
    };
    let text = &*file.text;
    // A heading's words are a title's, capitalised whatever they are: its
    // first word is read as any other, in lower case only.
    let headings: Vec<TextRange> = file
        .syntax
        .blocks
        .iter()
        .filter(|block| matches!(block.kind, BlockKind::Heading { .. }))
        .map(|block| block.range)
        .collect();
    let words = prose
        .get()
        .tokens
        .iter()
        .filter(|token| token.is_word())
        .map(|token| {
            let mut token = *token;
            if headings
                .iter()
                .any(|heading| heading.contains_range(token.range))
            {
                token.clause_start = false;
            }
            token
        });
    if !workspace.is_typed_in(&file.path) {
        for (range, suggested) in misspellings(text, words, lexicon, &is_name) {
            diagnostics.push(diagnostic(file, range, suggested));
        }
        return;
    }
    // The file being typed in is spelled line by line, each line's
    // misspellings kept: typing spells one line again. (A line's word at a
    // sentence's start that another file then makes a name stays flagged
    // until the line is touched or the file is checked afresh.)
    static MEMO: LineMemo<Vec<Misspelling>> = LineMemo::new();
    let mut reading = MEMO.reading(&file.path);
    let words: Vec<Token> = words.collect();
    for (line, words) in by_line(text, &words, |token| token.range.start..token.range.end) {
        let start = line.start;
        for (range, suggested) in
            line_misspellings(&mut reading, text, line, words, lexicon, &is_name).iter()
        {
            diagnostics.push(diagnostic(file, range.shifted(start), suggested.clone()));
        }
    }
}

/// The misspellings among `words` (ranges in `text`).
fn misspellings(
    text: &str,
    words: impl Iterator<Item = Token>,
    lexicon: &Lexicon,
    is_name: &dyn Fn(&str) -> bool,
) -> Vec<Misspelling> {
    let mut found = Vec::new();
    for token in words {
        if (token.quoted && is_clipped(text, token.range)) || in_identifier(text, token.range) {
            continue;
        }
        let whole = token.range.slice(text);
        if whole.contains('-') && speller::is_known(whole, lexicon) {
            // A compound the dictionary has is a word.
            continue;
        }
        for (index, part) in parts(text, token.range).enumerate() {
            let word = part.slice(text);
            let at_start = index == 0 && token.clause_start;
            let read = if at_start {
                !is_part_of_a_name(text, token.range) && is_checked_at_start(word)
            } else {
                is_checked(word)
            };
            // Whether the manuscript makes it a name is asked last: it
            // reads every file.
            if !read
                || !word.is_ascii()
                || speller::is_known(word, lexicon)
                || (at_start && is_name(word))
            {
                continue;
            }
            found.push((part, speller::suggestions(word, lexicon, SUGGESTIONS)));
        }
    }
    found
}

/// The misspellings of one line's `words`, relative to the line's start,
/// kept while the line, its words' dialogue marks and the manuscript's
/// words are as they were. (A word's neighbours, which the rules read, are
/// in its line or its line break.)
fn line_misspellings(
    reading: &mut Reading<'_, Vec<Misspelling>>,
    text: &str,
    line: std::ops::Range<usize>,
    words: &[Token],
    lexicon: &Lexicon,
    is_name: &dyn Fn(&str) -> bool,
) -> std::sync::Arc<Vec<Misspelling>> {
    let key = {
        let mut hasher = FxHasher::default();
        for token in words {
            (
                token.range.start - line.start,
                token.range.len(),
                token.quoted,
                token.clause_start,
            )
                .hash(&mut hasher);
        }
        lexicon.fingerprint().hash(&mut hasher);
        hasher.finish()
    };
    reading.line(&text[line.clone()], key, || {
        misspellings(text, words.iter().copied(), lexicon, is_name)
            .into_iter()
            .map(|(range, suggested)| {
                let relative = TextRange::new(range.start - line.start, range.end - line.start);
                (relative, suggested)
            })
            .collect()
    })
}

/// The diagnostic of a misspelling, with its corrections as fixes.
fn diagnostic(file: &SourceFile, range: TextRange, suggested: Vec<String>) -> Diagnostic {
    let word = range.slice(&file.text);
    let message = match suggested.first() {
        Some(first) => {
            format!("“{word}” is in no dictionary of the manuscript; did you mean “{first}”?")
        }
        None => format!("“{word}” is in no dictionary of the manuscript"),
    };
    let mut diagnostic =
        Diagnostic::new(file, range, Severity::Information, Code::Spelling, message);
    for suggestion in suggested {
        diagnostic = diagnostic.with_fix(Fix {
            title: format!("Change to “{suggestion}”"),
            edits: vec![FileEdit {
                path: file.path.clone(),
                range,
                new_text: suggestion,
            }],
            kind: FixKind::Correction,
        });
    }
    diagnostic
}

/// Whether a word at a sentence's start is read: a word that [`is_checked`]
/// in lower case, capitalised or not, and no proper noun of the dictionary
/// ("London"). (The manuscript's own words are known; a word the prose
/// capitalises inside a sentence anywhere is a name, asked last.)
fn is_checked_at_start(word: &str) -> bool {
    let mut chars = word.chars();
    let capitalised = chars.next().is_some_and(char::is_uppercase);
    if !capitalised {
        return is_checked(word);
    }
    !chars.any(char::is_uppercase)
        && is_checked(&word.to_lowercase())
        && !crate::prose::dictionary::is_common_word(word)
}

/// Whether a word at a sentence's start belongs to a longer name: a
/// compound with a capitalised later part ("Haye-Park"), or an abbreviation
/// before a name ("Edw. Gardiner", "St. Albans"; not "Teh. The").
fn is_part_of_a_name(text: &str, range: TextRange) -> bool {
    let capitalised = |word: &str| word.chars().next().is_some_and(char::is_uppercase);
    range.slice(text).split('-').skip(1).any(capitalised)
        || text[range.end..].strip_prefix(". ").is_some_and(|after| {
            let next = after
                .split(|c: char| !c.is_alphabetic())
                .next()
                .unwrap_or("");
            capitalised(next) && !crate::prose::dictionary::is_common_word(next)
        })
}

/// Whether a word is read at all: two letters or more, letters and
/// apostrophes only, in lower case.
fn is_checked(word: &str) -> bool {
    word.chars().nth(1).is_some()
        && word
            .chars()
            .all(|c| (c.is_alphabetic() && !c.is_uppercase()) || c == '\'' || c == '’')
}

/// A word of dialogue with an apostrophe for a dropped letter at either end.
fn is_clipped(text: &str, range: TextRange) -> bool {
    let apostrophe = |c: char| c == '\'' || c == '’';
    text[..range.start]
        .chars()
        .next_back()
        .is_some_and(apostrophe)
        || text[range.end..].chars().next().is_some_and(apostrophe)
}

/// A word that is part of an identifier, a path or an address
/// (`conf_3a`, `audit/issues`, `notes.md`, `x@y`): not prose.
fn in_identifier(text: &str, range: TextRange) -> bool {
    let before = text[..range.start].chars().next_back();
    let after = text[range.end..].chars().next();
    before.is_some_and(|c| matches!(c, '_' | '/' | '\\' | '@' | '#' | '.') || c.is_ascii_digit())
        || after.is_some_and(|c| matches!(c, '_' | '/' | '\\' | '@') || c.is_ascii_digit())
}

/// The parts of a hyphenated compound, each alone ("blue-grey").
fn parts(text: &str, range: TextRange) -> impl Iterator<Item = TextRange> + '_ {
    let word = range.slice(text);
    let mut start = range.start;
    word.split('-').map(move |part| {
        let range = TextRange::new(start, start + part.len());
        start += part.len() + 1;
        range
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lower_case_words_of_letters_are_read() {
        assert!(is_checked("recieve"));
        assert!(is_checked("didn’t"));
        for word in ["Kael", "SCN", "a", "3rd", "x2"] {
            assert!(!is_checked(word), "{word}");
        }
    }

    #[test]
    fn a_word_of_an_identifier_or_a_path_is_not_prose() {
        let text = "see conf_3a and audit/issues and notes.md, then stop.";
        let at = |word: &str| {
            let start = text.find(word).unwrap();
            TextRange::new(start, start + word.len())
        };
        for word in ["conf", "audit", "issues", "md"] {
            assert!(in_identifier(text, at(word)), "{word}");
        }
        for word in ["see", "notes", "stop"] {
            assert!(!in_identifier(text, at(word)), "{word}");
        }
    }

    #[test]
    fn a_compound_of_capitals_or_an_abbreviation_before_a_name_is_part_of_a_name() {
        let text = "Haye-Park it was. Edw. Gardiner wrote. Teh. The end. Blue-grey.";
        let at = |word: &str| {
            let start = text.find(word).unwrap();
            TextRange::new(start, start + word.len())
        };
        assert!(is_part_of_a_name(text, at("Haye-Park")));
        assert!(is_part_of_a_name(text, at("Edw")));
        assert!(!is_part_of_a_name(text, at("Teh")));
        assert!(!is_part_of_a_name(text, at("Blue-grey")));
    }

    #[test]
    fn a_compound_is_read_part_by_part() {
        let text = "a blue-grey stone";
        let found: Vec<&str> = parts(text, TextRange::new(2, 11))
            .map(|range| range.slice(text))
            .collect();
        assert_eq!(found, ["blue", "grey"]);
    }
}

//! Grammar's memo between runs: each paragraph's findings, kept by the hash
//! of its text and of the rules and dialect they were found under, in
//! [`MEMO_FILE`] beside the index's cache. A manuscript checked before is
//! checked again without loading harper (about 150 MB and a second) until a
//! paragraph the memo does not hold is met.
//!
//! The file is postcard: a header (the format, the build that wrote it,
//! whose harper and licences found the findings, and a SHA-256 of the
//! entries) and one entry per paragraph. Nothing in it is trusted: another
//! build's file, a checksum that does not match or bytes that do not decode
//! are ignored whole, and a finding whose range does not fit its paragraph
//! has that paragraph linted again (`grammar::cached`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::grammar::{self, GrammarLint, Replacement};
use crate::index::cache::{build_id, seal, unseal, write_in_cache_folder};
use crate::text::TextRange;

/// Where the memo lives, relative to the manuscript root.
pub const MEMO_FILE: &str = ".control-room/index/grammar.bin";

/// Bumped whenever what is saved, or how it is read, changes.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Paragraph {
    text: u128,
    settings: u64,
    lints: Vec<SavedLint>,
}

#[derive(Serialize, Deserialize)]
struct SavedLint {
    range: (u32, u32),
    rule: String,
    message: String,
    wrong_word: bool,
    replacements: Vec<((u32, u32), String)>,
}

/// Adds the memo saved under `root` to this process's; how many
/// paragraphs it held (none when there is no file, or one not to trust).
pub fn load(root: &Path) -> usize {
    let Some(paragraphs) = build_id().and_then(|build| {
        let bytes = std::fs::read(root.join(MEMO_FILE)).ok()?;
        unseal::<Vec<Paragraph>>(&bytes, FORMAT, build)
    }) else {
        return 0;
    };
    let count = paragraphs.len();
    for paragraph in paragraphs {
        let lints: Vec<GrammarLint> = paragraph.lints.into_iter().map(restore).collect();
        grammar::remember(paragraph.text, paragraph.settings, lints.into(), false);
    }
    count
}

/// Writes the paragraphs asked for in this process atomically, when harper
/// linted any (otherwise the file already holds them all, or the memo was
/// only read); whether it wrote.
pub fn save(root: &Path) -> std::io::Result<bool> {
    let Some(build) = build_id() else {
        return Ok(false);
    };
    if grammar::linted() == 0 {
        return Ok(false);
    }
    let paragraphs: Vec<Paragraph> = grammar::asked()
        .into_iter()
        .map(|((text, settings), findings)| Paragraph {
            text,
            settings,
            lints: findings.iter().map(keep).collect(),
        })
        .collect();
    write_in_cache_folder(root, MEMO_FILE, &seal(FORMAT, build, &paragraphs)?)?;
    Ok(true)
}

fn span(range: TextRange) -> (u32, u32) {
    let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
    (offset(range.start), offset(range.end))
}

fn range((start, end): (u32, u32)) -> TextRange {
    // An inverted range is one not to trust: it fits no paragraph.
    let (start, end) = (start as usize, end as usize);
    if start <= end {
        TextRange::new(start, end)
    } else {
        TextRange::new(usize::MAX, usize::MAX)
    }
}

fn keep(lint: &GrammarLint) -> SavedLint {
    SavedLint {
        range: span(lint.range),
        rule: lint.rule.clone(),
        message: lint.message.clone(),
        wrong_word: lint.wrong_word,
        replacements: lint
            .replacements
            .iter()
            .map(|replacement| (span(replacement.range), replacement.text.clone()))
            .collect(),
    }
}

fn restore(lint: SavedLint) -> GrammarLint {
    GrammarLint {
        range: range(lint.range),
        rule: lint.rule,
        message: lint.message,
        wrong_word: lint.wrong_word,
        replacements: lint
            .replacements
            .into_iter()
            .map(|(at, text)| Replacement {
                range: range(at),
                text,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::config::Dialect;
    use crate::language::grammar::cached;
    use crate::language::rules::Rules;

    /// A memo file under `root` holding one paragraph's finding, written as
    /// `save` writes it but for a finding no harper rule makes.
    fn write_memo(root: &Path, text: &str, range: (u32, u32)) -> Vec<u8> {
        let (text, settings) = grammar::memo_key(text, &Rules::default(), Dialect::American);
        let paragraphs = vec![Paragraph {
            text,
            settings,
            lints: vec![SavedLint {
                range,
                rule: "WrittenByTheTest".to_owned(),
                message: "Found in the saved memo.".to_owned(),
                wrong_word: false,
                replacements: vec![(range, "x".to_owned())],
            }],
        }];
        let bytes = seal(FORMAT, build_id().unwrap(), &paragraphs).unwrap();
        write_in_cache_folder(root, MEMO_FILE, &bytes).unwrap();
        bytes
    }

    #[test]
    fn a_saved_memo_answers_for_its_paragraphs_without_harper() {
        let dir = tempfile::tempdir().unwrap();
        let text = "The saved memo's own paragraph, read back without harper.";
        write_memo(dir.path(), text, (4, 9));
        assert_eq!(load(dir.path()), 1);
        let found = cached(text, &Rules::default(), Dialect::American).expect("the memo holds it");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, "WrittenByTheTest");
        assert_eq!(found[0].range.slice(text), "saved");
        // Never under other rules.
        let other = Rules {
            overrides: [("AnA".to_owned(), false)].into(),
        };
        assert!(cached(text, &other, Dialect::American).is_none());
    }

    #[test]
    fn a_corrupt_memo_is_ignored_and_a_finding_that_does_not_fit_is_linted_again() {
        let dir = tempfile::tempdir().unwrap();
        let text = "A paragraph whose saved finding runs past its end.";
        let mut bytes = write_memo(dir.path(), text, (40, 400));
        assert_eq!(load(dir.path()), 1);
        assert!(cached(text, &Rules::default(), Dialect::American).is_none());

        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(dir.path().join(MEMO_FILE), &bytes).unwrap();
        assert_eq!(load(dir.path()), 0);
        std::fs::write(dir.path().join(MEMO_FILE), b"not a memo").unwrap();
        assert_eq!(load(dir.path()), 0);
    }
}

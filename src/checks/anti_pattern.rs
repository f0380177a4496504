//! `anti-pattern`: a scene's prose contains a phrase from the anti-pattern
//! sheet (`Compendium/Voice/anti-patterns.md`). Phrases match whole words,
//! case-insensitively, across line breaks, with `'` and `’` alike; a comma or
//! other punctuation between the words breaks a match. Zero-tolerance
//! phrases are warnings, deduction phrases information; related information
//! points at the phrase on the sheet.

use std::hash::{Hash, Hasher};

use super::{Code, Diagnostic, LazyProse, Severity};
use crate::index::catalog::normalise_word;
use crate::index::model::Tolerance;
use crate::index::{SourceFile, Workspace};
use crate::text::TextRange;

/// The anti-patterns of a scene (`check_file` asks only of scenes).
pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    prose: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let catalog = workspace.catalog();
    let phrases = catalog.anti_phrases();
    if phrases.is_empty() {
        return;
    }
    let Some(sheet) = catalog.anti_patterns_file() else {
        return;
    };
    let patterns = catalog.anti_patterns();
    let text = &*file.text;
    let prose = prose.get();
    let tokens = &prose.tokens;

    let words: Vec<Option<String>> = tokens
        .iter()
        .map(|token| token.is_word().then(|| normalise_word(token.text(text))))
        .collect();
    let mut index = 0;
    while index < tokens.len() {
        let Some(word) = &words[index] else {
            index += 1;
            continue;
        };
        let matched = phrases.starting_with(word).iter().find(|(phrase, _)| {
            phrase.len() <= words.len() - index
                && phrase
                    .iter()
                    .zip(&words[index..])
                    .all(|(expected, found)| found.as_deref() == Some(expected.as_str()))
        });
        let Some((phrase, pattern_index)) = matched else {
            index += 1;
            continue;
        };
        let pattern = &patterns[*pattern_index];
        let last = index + phrase.len() - 1;
        // A phrase never runs from one sentence, heading or paragraph into the next.
        if !prose
            .sentence_of(index)
            .is_some_and(|sentence| sentence.tokens.contains(&last))
        {
            index += 1;
            continue;
        }
        let range = TextRange::new(tokens[index].range.start, tokens[last].range.end);
        let (severity, sheet_part) = match pattern.tolerance {
            Tolerance::Zero => (Severity::Warning, "zero tolerance"),
            Tolerance::Deduction => (Severity::Information, "deduction"),
        };
        diagnostics.push(
            Diagnostic::new(
                file,
                range,
                severity,
                Code::AntiPattern,
                format!(
                    "“{}” is on the anti-pattern sheet ({sheet_part}): say it in your own words",
                    range
                        .slice(text)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            )
            .with_related(
                &sheet.path,
                pattern.range,
                format!("anti-pattern: {}", pattern.phrase),
            ),
        );
        index = last + 1;
    }
}

/// The anti-pattern sheet's phrases, tolerances and lines.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    if file.scene().is_none() {
        return;
    }
    let catalog = workspace.catalog();
    catalog
        .anti_patterns_file()
        .map(|sheet| &sheet.path)
        .hash(hasher);
    catalog.anti_patterns().hash(hasher);
}

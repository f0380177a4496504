//! `card-spelling`: the manuscript spells a name one way, consistently, and
//! its card another (Pride and Prejudice writes "Philips" 33 times; a card
//! that says "Phillips" disagrees with the book, not the other way round).
//!
//! Said once, on the card, at the name or alias that holds the card's word,
//! with both spellings and the count. Two quick fixes: change the card, or
//! change every use in the prose. `name-typo` never flags a single use of
//! such a spelling (see `index::variants`).

use super::{Code, Diagnostic, FileEdit, Fix, FixKind, Severity};
use crate::index::{SourceFile, Workspace};
use crate::text::TextRange;

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(card) = file.card() else {
        return;
    };
    for variant in workspace.variants().of_card(&file.path) {
        // The card's word in each name or alias that holds it.
        let at: Vec<TextRange> = card
            .names()
            .filter_map(|name| {
                let start = name.range.start + word_in(&name.text, &variant.name_word)?;
                let range = TextRange::new(start, start + variant.name_word.len());
                (file.text.get(range.start..range.end) == Some(variant.name_word.as_str()))
                    .then_some(range)
            })
            .collect();
        let Some(&range) = at.first() else {
            continue;
        };
        let uses = variant.uses.len();
        let files = {
            let mut paths: Vec<_> = variant.uses.iter().map(|(path, _)| path).collect();
            paths.dedup();
            paths.len()
        };
        let message = format!(
            "The manuscript writes “{}” {uses} times in {files} {scenes} and “{}” {}; the card spells it “{}”",
            variant.word,
            variant.name_word,
            match variant.name_uses {
                0 => "never".to_owned(),
                1 => "once".to_owned(),
                n => format!("{n} times"),
            },
            variant.name_word,
            scenes = if files == 1 { "scene" } else { "scenes" },
        );
        let mut diagnostic = Diagnostic::new(
            file,
            range,
            Severity::Information,
            Code::CardSpelling,
            message,
        )
        .with_fix(Fix {
            title: format!("Change the card to “{}”", variant.word),
            edits: at
                .iter()
                .map(|range| FileEdit {
                    path: file.path.clone(),
                    range: *range,
                    new_text: variant.word.clone(),
                })
                .collect(),
            kind: FixKind::Correction,
        });
        diagnostic = diagnostic.with_fix(Fix {
            title: format!(
                "Change all {uses} “{}” in the prose to “{}”",
                variant.word, variant.name_word
            ),
            edits: variant
                .uses
                .iter()
                .map(|(path, range)| FileEdit {
                    path: path.clone(),
                    range: *range,
                    new_text: variant.name_word.clone(),
                })
                .collect(),
            kind: FixKind::Correction,
        });
        if let Some((path, range)) = variant.uses.first() {
            diagnostic = diagnostic.with_related(
                path,
                *range,
                format!("the first of {uses} “{}”", variant.word),
            );
        }
        diagnostics.push(diagnostic);
    }
}

/// The byte offset of `word` as a whole word in `text`.
fn word_in(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

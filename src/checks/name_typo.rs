//! `name-typo`: a capitalised word that is not a known name, alias, or
//! ordinary English word, and is one or two edits (Damerau-Levenshtein,
//! scaled by length: one edit up to seven letters, two from eight) from a
//! word of a character or location name ("Kale" for "Kael").
//!
//! Known: every word of every card's names and aliases, their plurals and
//! possessives ("the Bennets", "Darcy's"), and courtesy titles ("Miss").
//! An English word ("Crows", "Lady", "Kale", "Hallo") is a typo only where it can
//! only be a name: capitalised in mid-sentence and speaking (`"…," Kale
//! said`, `said Kale`), or at a sentence start introducing a quotation
//! (`Kale said, "…"`). Words in capitals throughout, with digits, or
//! hyphenated are left alone. Checked in scenes, the outline and cards.
//! A spelling the manuscript uses consistently is not a typo: `card-spelling`
//! says once, on the card, that the two disagree. Quick fix: replace the word
//! with the name.

use std::collections::HashMap;

use super::{Code, Diagnostic, FileEdit, Fix, FixKind, LazyProse, Severity, speech};
use crate::index::{FileContent, SourceFile, Workspace};
use crate::prose::{self, Prose, TokenKind, dictionary};

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    prose: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if !matches!(
        file.content,
        FileContent::Scene(_) | FileContent::Outline(_) | FileContent::Card(_)
    ) {
        return;
    }
    let names = workspace.catalog().name_words();
    let variants = workspace.variants();
    let text = &*file.text;
    let prose = prose.get();
    // Each distinct word is judged once per file.
    let mut nearest_of: HashMap<&str, Vec<String>> = HashMap::new();
    for (index, token) in prose.tokens.iter().enumerate() {
        if !token.is_word() {
            continue;
        }
        let word = prose::strip_possessive(token.text(text));
        if !prose::is_capitalised(word)
            || word.contains(['-', '\'', '’'])
            || word.chars().any(|c| c.is_numeric())
            || names.is_known(word)
            || variants.is_consistent(word)
        {
            continue;
        }
        // An English word ("Hallo", "All") is a typo only where only a name can stand.
        let english = dictionary::is_ordinary_word(word) || crate::language::words::contains(word);
        if english && !is_name_position(text, prose, index) {
            continue;
        }
        let nearest = nearest_of.entry(word).or_insert_with(|| {
            names
                .nearest(word)
                .into_iter()
                .map(|candidate| candidate.word.clone())
                .collect()
        });
        if nearest.is_empty() {
            continue;
        }
        let range = prose::without_possessive(text, token.range);
        let suggestion = nearest
            .iter()
            .map(|name| format!("“{name}”"))
            .collect::<Vec<_>>()
            .join(" or ");
        let mut diagnostic = Diagnostic::new(
            file,
            range,
            Severity::Warning,
            Code::NameTypo,
            format!("“{word}” is not a known name; did you mean {suggestion}?"),
        );
        for name in nearest.iter() {
            diagnostic = diagnostic.with_fix(Fix {
                title: format!("Replace with “{name}”"),
                edits: vec![FileEdit {
                    path: file.path.clone(),
                    range,
                    new_text: name.clone(),
                }],
                kind: FixKind::Correction,
            });
        }
        diagnostics.push(diagnostic);
    }
}

/// Whether the word at `index` can only be a name: the speaker of a
/// dialogue attribution in mid-sentence ("…,” Kale said", "said Kale"), or
/// a sentence start that introduces a quotation (`Kale said, "…"`).
fn is_name_position(text: &str, prose: &Prose, index: usize) -> bool {
    let token = &prose.tokens[index];
    // After a closing quote a capital does not start a new thought: `“Go?” Kale asked`.
    let after_quote = index
        .checked_sub(1)
        .is_some_and(|before| prose.tokens[before].kind == TokenKind::CloseQuote);
    if token.quoted {
        return false;
    }
    if token.clause_start && !after_quote {
        // At a sentence start only `Kale said, "…"` is certainly a name.
        return speech::introduces_quotation(text, prose, index);
    }
    speech::is_speaker(text, prose, index, index)
}

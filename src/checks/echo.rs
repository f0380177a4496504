//! `echo`: the same uncommon word, or the same phrase, again too soon in a
//! scene's narration: a word within `[echo] span` words (default 50) of its
//! last use in an earlier sentence, a phrase of three words (two of them
//! uncommon) within four times that. Repetition inside one sentence ("eleven
//! miles … eleven miles") and in dialogue (characters echo each other) is
//! taken as meant. Common words (`data/common-words.txt` and their inflections), words
//! under four letters, names (capitalised inside a sentence, or a card's)
//! and dialogue tags ("said", "asked"…, unless `dialogue_tags = true`) never
//! echo, nor anything on `[echo] ignore` (nor a phrase holding an ignored
//! word); headings are not read. "Stone" and
//! "stones" are the same word. A phrase that echoes is reported once, not
//! its words. The later use is the diagnostic, the earlier one its related
//! place; a hint by default.

use std::hash::{Hash, Hasher};

use rustc_hash::FxHashMap;

use super::{Code, Diagnostic, LazyProse, Severity};
use crate::index::{SourceFile, Workspace};
use crate::prose::repetition::{self, Word};
use crate::text::TextRange;

/// How many words a phrase has.
const PHRASE_WORDS: usize = 3;

/// How many times the word span a phrase's span is.
const PHRASE_SPAN_FACTOR: usize = 4;

/// The echoes of a scene (`check_file` asks only of scenes).
pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    prose: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let settings = &workspace.config().echo;
    let span = settings.span.max(2) as usize;
    let ignored: Vec<String> = settings
        .ignore
        .iter()
        .map(|entry| entry.trim().to_lowercase().replace('’', "'"))
        .filter(|entry| !entry.is_empty())
        .collect();
    let names = workspace.catalog().name_words();
    let text = &*file.text;
    let is_name = |word: &str| names.is_known(word);
    let words = if workspace.is_typed_in(&file.path) {
        // Typing reads one line's words again.
        let names_key = workspace.catalog().names_fingerprint();
        repetition::words_by_line(&file.path, text, prose.get(), is_name, names_key)
    } else {
        repetition::words(text, prose.get(), is_name)
    };
    let counts = |word: &Word<'_>| {
        !word.quoted
            && (word.content
                || (settings.dialogue_tags && word.tag && word.lower.chars().count() >= 4))
            && !is_ignored(&ignored, word)
    };
    let mut covered = vec![false; words.len()];
    phrase_echoes(
        file,
        &words,
        span * PHRASE_SPAN_FACTOR,
        &ignored,
        &mut covered,
        diagnostics,
    );
    let mut last: FxHashMap<&str, usize> = FxHashMap::default();
    for (index, word) in words.iter().enumerate() {
        if !counts(word) {
            continue;
        }
        if let Some(previous) = last.insert(&*word.key, index)
            && index - previous <= span
            && words[previous].sentence != word.sentence
            && !covered[index]
        {
            let earlier = &words[previous];
            diagnostics.push(
                Diagnostic::new(
                    file,
                    word.range,
                    Severity::Hint,
                    Code::Echo,
                    format!(
                        "“{}” again, {} words after “{}”: an echo the reader may hear",
                        word.range.slice(text),
                        index - previous,
                        earlier.range.slice(text)
                    ),
                )
                .with_related(&file.path, earlier.range, "used here"),
            );
        }
    }
}

/// Phrases of [`PHRASE_WORDS`] words ([`repetition::is_phrase`]), two of them
/// uncommon, used again within `span` words (overlapping echoes at the same
/// distance make one longer phrase); marks the words they cover.
fn phrase_echoes(
    file: &SourceFile,
    words: &[Word<'_>],
    span: usize,
    ignored: &[String],
    covered: &mut [bool],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let text = &*file.text;
    // Phrases by a hash of their words' keys: no string per phrase.
    let mut last: FxHashMap<u64, usize> = FxHashMap::default();
    // Echoing runs: (first word, last word, distance back).
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for start in 0..words.len().saturating_sub(PHRASE_WORDS - 1) {
        let phrase = &words[start..start + PHRASE_WORDS];
        if !repetition::is_phrase(phrase)
            || phrase.iter().any(|word| word.quoted)
            || phrase.iter().filter(|word| word.content).count() < 2
        {
            continue;
        }
        if !ignored.is_empty() {
            let joined = |part: for<'w> fn(&'w Word<'_>) -> &'w str| {
                phrase.iter().map(part).collect::<Vec<_>>().join(" ")
            };
            if phrase.iter().any(|word| is_ignored(ignored, word))
                || ignored.contains(&joined(|word| &word.key))
                || ignored.contains(&joined(|word| &word.lower))
            {
                continue;
            }
        }
        let key = {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            for word in phrase {
                word.key.hash(&mut hasher);
            }
            hasher.finish()
        };
        let Some(previous) = last.insert(key, start) else {
            continue;
        };
        let distance = start - previous;
        // Overlapping uses ("a b a b a") and uses in one sentence are meant.
        if distance < PHRASE_WORDS
            || distance > span
            || words[previous].sentence == phrase[0].sentence
        {
            continue;
        }
        let end = start + PHRASE_WORDS - 1;
        match runs.last_mut() {
            Some((_, run_end, run_distance)) if *run_distance == distance && start <= *run_end => {
                *run_end = end;
            }
            _ => runs.push((start, end, distance)),
        }
    }
    for (start, end, distance) in runs {
        let range = TextRange::new(words[start].range.start, words[end].range.end);
        let earlier = TextRange::new(
            words[start - distance].range.start,
            words[end - distance].range.end,
        );
        covered[start..=end].fill(true);
        diagnostics.push(
            Diagnostic::new(
                file,
                range,
                Severity::Hint,
                Code::Echo,
                format!(
                    "“{}” again, {distance} words after its last use: an echo the reader may hear",
                    range
                        .slice(text)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            )
            .with_related(&file.path, earlier, "used here"),
        );
    }
}

/// Whether `[echo] ignore` lists the word, as written or as its key.
fn is_ignored(ignored: &[String], word: &Word<'_>) -> bool {
    ignored
        .iter()
        .any(|entry| *entry == *word.lower || *entry == *word.key)
}

/// The echo settings.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    if file.scene().is_some() {
        workspace.config().echo.hash(hasher);
    }
}

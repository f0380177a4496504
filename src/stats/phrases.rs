//! The manuscript's most repeated phrases: runs of two to four words, one
//! after the other in a sentence (no punctuation between), counted over
//! every scene's prose, dialogue included. A phrase needs words of weight:
//! both words of a pair, and two words of a longer phrase, must be neither
//! function words ("of", "the", "he"), nor names, nor dialogue tags, so
//! "of the" and "Kael said" are no phrases. A phrase inside a longer one
//! used as often is left to the longer.

use std::collections::HashMap;

use serde::Serialize;

use crate::index::Workspace;
use crate::prose::repetition::{self, Word};

/// A phrase and how often it is used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Phrase {
    pub phrase: String,
    pub count: usize,
}

/// The shortest and longest phrases counted.
const SHORTEST: usize = 2;
const LONGEST: usize = 4;

/// A phrase counts from this many uses.
pub const MIN_USES: usize = 3;

fn weighty(word: &Word<'_>) -> bool {
    !word.name && !word.tag && !repetition::is_function_word(&word.lower)
}

/// The `limit` most repeated phrases of the manuscript's scenes, most used first.
pub fn most_repeated(workspace: &Workspace, limit: usize) -> Vec<Phrase> {
    let names = workspace.catalog().name_words();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (file, _) in workspace.catalog().scenes() {
        let prose = file.analyse_prose();
        let words = repetition::words(&file.text, &prose, |word| names.is_known(word));
        for length in SHORTEST..=LONGEST {
            for run in words.windows(length) {
                let heavy = run.iter().filter(|word| weighty(word)).count();
                if heavy < 2 || !repetition::is_phrase(run) {
                    continue;
                }
                let phrase = run
                    .iter()
                    .map(|word| word.lower.replace('’', "'"))
                    .collect::<Vec<_>>()
                    .join(" ");
                *counts.entry(phrase).or_default() += 1;
            }
        }
    }
    let mut candidates: Vec<Phrase> = counts
        .into_iter()
        .filter(|(_, count)| *count >= MIN_USES)
        .map(|(phrase, count)| Phrase { phrase, count })
        .collect();
    candidates.sort_by(|a, b| {
        (b.count, b.phrase.split(' ').count(), &a.phrase).cmp(&(
            a.count,
            a.phrase.split(' ').count(),
            &b.phrase,
        ))
    });
    let mut chosen: Vec<Phrase> = Vec::new();
    for candidate in candidates {
        let inside = chosen.iter().any(|longer| {
            longer.count >= candidate.count
                && format!(" {} ", longer.phrase).contains(&format!(" {} ", candidate.phrase))
        });
        if !inside {
            chosen.push(candidate);
        }
        if chosen.len() == limit {
            break;
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SourceFile;

    #[test]
    fn pet_phrases_count_and_function_words_and_names_do_not() {
        let mut workspace = Workspace::new(std::path::Path::new("/nowhere"));
        let paths = workspace.config().paths.clone();
        let scene = |name: &str, text: &str| {
            SourceFile::parse(
                format!("Story/Scenes/{name}.md").into(),
                text.into(),
                &paths,
            )
        };
        workspace.insert_files(vec![
            scene(
                "SCN-a",
                "For a long moment Kael said nothing. Of the sea, for a long moment, nothing.\n",
            ),
            scene(
                "SCN-b",
                "The salt road ran on. For a long moment the salt road was empty. Kael said so.\n",
            ),
            scene(
                "SCN-c",
                "Of the salt road, Kael said little. Of the wall, less.\n",
            ),
        ]);
        let found = most_repeated(&workspace, 10);
        assert_eq!(
            found,
            [
                Phrase {
                    phrase: "for a long moment".into(),
                    count: 3
                },
                Phrase {
                    phrase: "the salt road".into(),
                    count: 3
                },
            ],
            "“of the” and “kael said” are no phrases, “a long moment” and “salt road” are inside longer ones"
        );
    }
}

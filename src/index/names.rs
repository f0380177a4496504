//! The words names are made of, for telling a misspelt name from a new one.
//!
//! [`NameWords`] knows every word of every card's name and alias ("Kael",
//! "Maren", "Warden", "Mr", "Bennet"), and which of those words a misspelling
//! may be meant as: the capitalised words of character and location names,
//! four letters or longer. [`NameWords::nearest`] finds them by
//! Damerau-Levenshtein distance (optimal string alignment, so "Kale" is one
//! edit from "Kael"), allowing one edit up to seven letters and two from eight.

use rustc_hash::FxHashSet;

use super::file::FilePath;
use super::mentions::TITLES;
use super::model::CardKind;

/// A name word a misspelling may be meant as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The word as the card writes it ("Kael").
    pub word: String,
    /// The card it comes from.
    pub card: FilePath,
    lower: Vec<char>,
}

#[derive(Clone, Debug, Default)]
pub struct NameWords {
    known: FxHashSet<String>,
    candidates: Vec<Candidate>,
}

/// Shortest name word that a misspelling is looked for.
const MIN_CANDIDATE_CHARS: usize = 4;

/// Fewest letters of a name word that is an English word for it to draw typos.
const ENGLISH_CANDIDATE_CHARS: usize = 6;

impl NameWords {
    /// Collects the words of `(card, kind, names)`.
    pub fn new<'a>(cards: impl IntoIterator<Item = (FilePath, CardKind, Vec<&'a str>)>) -> Self {
        let mut known: FxHashSet<String> = TITLES
            .iter()
            .map(|title| title.trim_end_matches('.').to_owned())
            .collect();
        let mut candidates: Vec<Candidate> = Vec::new();
        for (card, kind, names) in cards {
            for name in names {
                for word in name_words(name) {
                    known.insert(word.to_owned());
                    let checked_kind = matches!(kind, CardKind::Character | CardKind::Location);
                    let capitalised = crate::prose::is_capitalised(word);
                    let long_enough = word.chars().count() >= MIN_CANDIDATE_CHARS;
                    let is_title = TITLES
                        .iter()
                        .any(|title| title.trim_end_matches('.') == word);
                    // A short name word that is an English word ("Hall" of
                    // "the Hall", "Hale") draws no typos: English words lie
                    // near it ("Hallo", "All"), and spelling reads them. A
                    // long one ("Fortress") has no such neighbours.
                    let english = word.chars().count() < ENGLISH_CANDIDATE_CHARS
                        && crate::prose::dictionary::is_common_word(word);
                    if checked_kind
                        && capitalised
                        && long_enough
                        && !is_title
                        && !english
                        && !candidates
                            .iter()
                            .any(|candidate| candidate.word == word && candidate.card == card)
                    {
                        candidates.push(Candidate {
                            word: word.to_owned(),
                            card: card.clone(),
                            lower: word.to_lowercase().chars().collect(),
                        });
                    }
                }
            }
        }
        NameWords { known, candidates }
    }

    /// Whether `word` is a name word, or the plural of one ("Bennets",
    /// "Lucases", "Bennets’" without its apostrophe).
    pub fn is_known(&self, word: &str) -> bool {
        if self.known.contains(word) {
            return true;
        }
        let plural_stems = [word.strip_suffix("es"), word.strip_suffix('s')];
        plural_stems
            .into_iter()
            .flatten()
            .any(|stem| self.known.contains(stem))
    }

    /// The name words nearest to `word` within the allowed edits, nearest first.
    /// Several candidates come back only when they are equally near.
    pub fn nearest(&self, word: &str) -> Vec<&Candidate> {
        let lower: Vec<char> = word.to_lowercase().chars().collect();
        if lower.len() < MIN_CANDIDATE_CHARS - 1 {
            return Vec::new();
        }
        let mut best: Vec<(usize, &Candidate)> = Vec::new();
        for candidate in &self.candidates {
            let allowed = max_edits(candidate.lower.len());
            let Some(distance) = edit_distance(&lower, &candidate.lower, allowed) else {
                continue;
            };
            if distance == 0 {
                // The same word in another case ("KAEL", "kael"): not a misspelling.
                return Vec::new();
            }
            match best.first() {
                Some((nearest, _)) if distance > *nearest => {}
                Some((nearest, _)) if distance < *nearest => best = vec![(distance, candidate)],
                _ => {
                    if !best.iter().any(|(_, other)| other.word == candidate.word) {
                        best.push((distance, candidate));
                    }
                }
            }
        }
        best.into_iter().map(|(_, candidate)| candidate).collect()
    }
}

/// The edits allowed for a misspelling of a name word of `chars` letters.
fn max_edits(chars: usize) -> usize {
    if chars >= 8 { 2 } else { 1 }
}

/// The words of a name: "Mr. Darcy" → "Mr", "Darcy"; "the Warden" → "the", "Warden".
fn name_words(name: &str) -> impl Iterator<Item = &str> {
    name.split(|c: char| c.is_whitespace() || c == ',')
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|word| !word.is_empty())
}

/// Damerau-Levenshtein distance (optimal string alignment) between `a` and
/// `b`, or `None` when it is above `max`.
pub fn edit_distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let width = b.len() + 1;
    let mut rows = vec![0usize; width * (a.len() + 1)];
    for (j, cell) in rows.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut value = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                value = value.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = value;
            row_min = row_min.min(value);
        }
        if row_min > max {
            return None;
        }
    }
    let distance = rows[a.len() * width + b.len()];
    (distance <= max).then_some(distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(a: &str, b: &str) -> Option<usize> {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        edit_distance(&a, &b, 2)
    }

    #[test]
    fn transpositions_are_one_edit() {
        assert_eq!(distance("kale", "kael"), Some(1));
        assert_eq!(distance("lydia", "lady"), None);
        assert_eq!(distance("maria", "mary"), Some(2));
        assert_eq!(distance("darcey", "darcy"), Some(1));
        assert_eq!(distance("elisabeth", "elizabeth"), Some(1));
        assert_eq!(distance("bingley", "darcy"), None);
    }

    fn words() -> NameWords {
        NameWords::new([
            (
                FilePath::from("CHAR-kael"),
                CardKind::Character,
                vec!["Kael Maren", "Kael", "the Warden"],
            ),
            (
                FilePath::from("CHAR-eliza"),
                CardKind::Character,
                vec!["Elizabeth Bennet", "Miss Eliza"],
            ),
            (
                FilePath::from("ITEM-sword"),
                CardKind::Other,
                vec!["Glimmer"],
            ),
        ])
    }

    #[test]
    fn name_words_plurals_and_titles_are_known() {
        let words = words();
        for known in [
            "Kael", "Maren", "Warden", "Bennets", "Miss", "Mr", "Glimmer",
        ] {
            assert!(words.is_known(known), "{known}");
        }
        assert!(!words.is_known("Kale"));
    }

    #[test]
    fn nearest_allows_more_edits_for_longer_names() {
        let words = words();
        let nearest = |word| {
            words
                .nearest(word)
                .iter()
                .map(|candidate| candidate.word.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(nearest("Kale"), vec!["Kael"]);
        assert_eq!(nearest("Marne"), vec!["Maren"]);
        assert_eq!(nearest("Elisabet"), vec!["Elizabeth"]);
        assert!(nearest("Keel").len() == 1);
        assert!(nearest("Kelp").is_empty());
        assert!(
            nearest("Glimmre").is_empty(),
            "other canon is not a candidate"
        );
        assert!(nearest("KAEL").is_empty());
    }
}

//! Whether a word is spelt as the writer means it, and what they may have
//! meant instead.

use std::sync::{Arc, OnceLock};

use harper_core::spell::FstDictionary;

use crate::index::Lexicon;
use crate::prose::dictionary::is_ordinary_word;

/// harper's curated dictionary with each word's grammar, loaded once per
/// process when grammar first runs (spelling reads [`super::words`]).
pub(crate) fn curated() -> &'static Arc<FstDictionary> {
    static CURATED: OnceLock<Arc<FstDictionary>> = OnceLock::new();
    CURATED.get_or_init(FstDictionary::curated)
}

/// The endings a contraction adds to a word ("wouldn't", "they'll").
const CONTRACTIONS: &[&str] = &["n't", "'s", "'re", "'ve", "'ll", "'d", "'m"];

/// Whether `word` is an English word, in harper's dictionary or in the
/// ordinary English words, or one of the manuscript's own or its plural, in
/// any case, with a possessive or a contraction's ending left off.
pub fn is_known(word: &str, lexicon: &Lexicon) -> bool {
    let straight;
    let word = if word.contains('’') {
        straight = word.replace('’', "'");
        straight.as_str()
    } else {
        word
    };
    let known = |word: &str| {
        is_ordinary_word(word) || lexicon.contains(word) || super::words::contains(word)
    };
    if known(word) {
        return true;
    }
    // The plural of one of the manuscript's own words ("waystones").
    let plural = ["es", "s"].iter().any(|ending| {
        word.strip_suffix(ending)
            .is_some_and(|stem| lexicon.contains(stem))
    });
    plural
        || CONTRACTIONS.iter().any(|ending| {
            let at = word.len().saturating_sub(ending.len());
            at > 0
                && word.is_char_boundary(at)
                && word[at..].eq_ignore_ascii_case(ending)
                && known(&word[..at])
        })
}

/// Up to `limit` words the writer may have meant by `word`, the closest
/// first: the manuscript's own words within two edits, then harper's, by
/// edit distance, the ordinary words before the rare, then the nearest in
/// length.
pub fn suggestions(word: &str, lexicon: &Lexicon, limit: usize) -> Vec<String> {
    let lower = word.to_lowercase();
    let mut found: Vec<String> = lexicon
        .words()
        .filter(|candidate| within_two_edits(&lower, candidate))
        .map(str::to_owned)
        .collect();
    found.sort();
    let mut english = super::words::near(&lower, 2);
    english.retain(|(candidate, _)| *candidate != lower);
    english.sort_by_cached_key(|(candidate, distance)| {
        (
            *distance,
            !is_ordinary_word(candidate),
            candidate.chars().count().abs_diff(lower.chars().count()),
            candidate.clone(),
        )
    });
    for (suggestion, _) in english {
        if found.len() >= limit {
            break;
        }
        if !found.contains(&suggestion) {
            found.push(suggestion);
        }
    }
    found.truncate(limit);
    found
}

/// Whether two words are at most two insertions, deletions, substitutions
/// or swaps of neighbours apart (optimal string alignment).
fn within_two_edits(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 || a == b {
        return false;
    }
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[a.len() * width + b.len()] <= 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Catalog;

    #[test]
    fn english_words_and_the_manuscript_s_words_are_known_in_any_case() {
        let lexicon = Lexicon::build(&Catalog::default(), "kethra\n", &[]);
        for word in [
            "receive",
            "Receive",
            "colour",
            "color",
            "wouldn't",
            "wouldn’t",
            "mother's",
            "kethra",
            "Kethra’s",
            "kethras",
        ] {
            assert!(is_known(word, &lexicon), "{word} is known");
        }
        for word in ["recieve", "teh", "kethrae", "wouldnt'"] {
            assert!(!is_known(word, &lexicon), "{word} is not known");
        }
    }

    #[test]
    fn suggestions_put_the_manuscript_s_own_words_first() {
        let lexicon = Lexicon::build(&Catalog::default(), "kethra\n", &[]);
        let suggested = suggestions("kehtra", &lexicon, 3);
        assert_eq!(suggested.first().map(String::as_str), Some("kethra"));
        let suggested = suggestions("recieve", &lexicon, 3);
        assert!(
            suggested.iter().any(|word| word == "receive"),
            "{suggested:?}"
        );
    }

    #[test]
    fn two_edits_count_a_swap_of_neighbours_as_one() {
        assert!(within_two_edits("kehtra", "kethra"));
        assert!(within_two_edits("kthra", "kethra"));
        assert!(!within_two_edits("kethra", "kethra"));
        assert!(!within_two_edits("kettle", "kethra"));
    }
}

//! Whether a word is spelt as the writer means it, and what they may have
//! meant instead.

use std::sync::{Arc, OnceLock};

use harper_core::spell::FstDictionary;

use crate::index::Lexicon;
use crate::prose::dictionary::is_ordinary_word;
use crate::prose::repetition::is_common;

/// harper's curated dictionary with each word's grammar, loaded once per
/// process when grammar first runs (spelling reads [`super::words`]).
pub(crate) fn curated() -> &'static Arc<FstDictionary> {
    static CURATED: OnceLock<Arc<FstDictionary>> = OnceLock::new();
    CURATED.get_or_init(FstDictionary::curated)
}

/// The endings a contraction adds to a word ("wouldn't", "they'll").
const CONTRACTIONS: &[&str] = &["n't", "'s", "'re", "'ve", "'ll", "'d", "'m"];

/// Endings that make a word of a known one, each with what it replaces:
/// plurals ("gaieties", "windings"), adverbs ("slightingly", "happily"),
/// nouns of quality ("discontentedness", "heaviness"), and adjectives of a
/// noun ("good-natured", "light-hearted"), `-d` after an `e`, else `-ed`.
const SUFFIXES: &[(&str, &str)] = &[
    ("ed", ""),
    ("d", ""),
    ("ies", "y"),
    ("es", ""),
    ("s", ""),
    ("ily", "y"),
    ("ly", ""),
    ("iness", "y"),
    ("ness", ""),
];

/// Prefixes that make a word of a known one ("unsubdued", "missent",
/// "overset", "indecorum").
const PREFIXES: &[&str] = &[
    "un", "in", "im", "dis", "mis", "non", "over", "under", "out", "re", "pre", "fore",
];

/// Fewest letters a word keeps without its prefix or ending: shorter
/// stems make a typo of nearly anything a derivation.
const STEM_LETTERS: usize = 4;

/// Whether `word` is an English word, in harper's dictionary or in the
/// ordinary English words, or one of the manuscript's own, in any case, with
/// a possessive or a contraction's ending left off; or made of a known word
/// by a regular ending or prefix (see [`SUFFIXES`], [`PREFIXES`]).
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
    // The plural of one of the manuscript's own words, however short
    // ("waystones", "orcs").
    let plural = ["es", "s"].iter().any(|ending| {
        word.strip_suffix(ending)
            .is_some_and(|stem| lexicon.contains(stem))
    });
    let lower = word.to_lowercase();
    if plural || is_derived(&lower, &known) {
        return true;
    }
    CONTRACTIONS.iter().any(|ending| {
        let at = word.len().saturating_sub(ending.len());
        at > 0
            && word.is_char_boundary(at)
            && word[at..].eq_ignore_ascii_case(ending)
            && known(&word[..at])
    })
}

/// Whether `word` (lower case) is a known word with one or two of
/// [`SUFFIXES`] ("naturedly"), one of [`PREFIXES`], or both.
fn is_derived(word: &str, known: &dyn Fn(&str) -> bool) -> bool {
    suffixed(word, known, 2)
        || PREFIXES.iter().any(|prefix| {
            word.strip_prefix(prefix).is_some_and(|rest| {
                rest.chars().count() >= STEM_LETTERS && (known(rest) || suffixed(rest, known, 2))
            })
        })
}

/// Whether `word` is a known word with at most `depth` of [`SUFFIXES`].
fn suffixed(word: &str, known: &dyn Fn(&str) -> bool, depth: u8) -> bool {
    depth > 0
        && SUFFIXES.iter().any(|(ending, replaced)| {
            word.strip_suffix(ending).is_some_and(|stem| {
                let regular = match *ending {
                    "d" => stem.ends_with('e'),
                    "ed" => !stem.ends_with('e'),
                    _ => true,
                };
                let whole = format!("{stem}{replaced}");
                regular
                    && stem.chars().count() >= STEM_LETTERS
                    && (known(&whole) || suffixed(&whole, known, depth - 1))
            })
        })
}

/// Up to `limit` words the writer may have meant by `word`, the closest
/// first: the manuscript's own words and harper's together, by edit
/// distance, then by the slip that would make the word of it ([`slip`]),
/// then by how common (fiction's most frequent words, the manuscript's own,
/// ordinary English, the rare). A capitalised word's are capitalised.
pub fn suggestions(word: &str, lexicon: &Lexicon, limit: usize) -> Vec<String> {
    let lower = word.to_lowercase();
    // How common a candidate is: fiction's most frequent words, then the
    // manuscript's own, then ordinary English, then the rest of harper's.
    let mut found: Vec<(String, u8, u8)> = lexicon
        .words()
        .filter_map(|candidate| {
            edits_within_two(&lower, candidate).map(|distance| (candidate.to_owned(), distance, 1))
        })
        .collect();
    for (candidate, distance) in super::words::near(&lower, 2) {
        if candidate != lower && !found.iter().any(|(have, ..)| *have == candidate) {
            let rank = if is_common(&candidate) {
                0
            } else if is_ordinary_word(&candidate) {
                2
            } else {
                3
            };
            found.push((candidate, distance, rank));
        }
    }
    found.sort_by_cached_key(|(candidate, distance, rank)| {
        (*distance, slip(&lower, candidate), *rank, candidate.clone())
    });
    let capitalised = word.chars().next().is_some_and(char::is_uppercase);
    found
        .into_iter()
        .take(limit)
        .map(|(candidate, ..)| {
            if capitalised {
                capitalise(&candidate)
            } else {
                candidate
            }
        })
        .collect()
}

/// How likely a typist's slip turns `candidate` into `word`, most likely
/// first: two letters swapped or one left out (0), one struck for another
/// (1), one too many (2).
fn slip(word: &str, candidate: &str) -> u8 {
    let (typed, meant) = (word.chars().count(), candidate.chars().count());
    let same_letters = || {
        let mut a: Vec<char> = word.chars().collect();
        let mut b: Vec<char> = candidate.chars().collect();
        a.sort_unstable();
        b.sort_unstable();
        a == b
    };
    if meant == typed + 1 || (meant == typed && same_letters()) {
        0
    } else if meant == typed {
        1
    } else {
        2
    }
}

/// `word` with its first letter in capitals.
fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// How many insertions, deletions, substitutions or swaps of neighbours
/// apart two different words are (optimal string alignment), when at most
/// two.
fn edits_within_two(a: &str, b: &str) -> Option<u8> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 || a == b {
        return None;
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
    u8::try_from(rows[a.len() * width + b.len()])
        .ok()
        .filter(|distance| *distance <= 2)
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
    fn a_regular_derivation_of_a_known_word_is_known_and_a_typo_is_not() {
        let lexicon = Lexicon::build(&Catalog::default(), "kethra\n", &[]);
        for word in [
            "gaieties",
            "regimentals",
            "slightingly",
            "perseveringly",
            "discontentedness",
            "unsubdued",
            "unfelt",
            "missent",
            "overhearings",
            "kethras",
        ] {
            assert!(is_known(word, &lexicon), "{word} is known");
        }
        // A short word of the manuscript's own still has its plural.
        let short = Lexicon::build(&Catalog::default(), "vek\n", &[]);
        assert!(is_known("veks", &short));
        for word in [
            "dissapear",
            "recieve",
            "unrecieved",
            "teh",
            "wehn",
            "howver",
        ] {
            assert!(!is_known(word, &lexicon), "{word} is not known");
        }
    }

    #[test]
    fn a_noun_made_an_adjective_is_known_and_an_irregular_ending_is_not() {
        let lexicon = Lexicon::build(&Catalog::default(), "", &[]);
        for word in ["natured", "hearted", "heartedness", "naturedly"] {
            assert!(is_known(word, &lexicon), "{word}");
        }
        for word in ["recieved", "walkd", "hopeed"] {
            assert!(!is_known(word, &lexicon), "{word}");
        }
    }

    #[test]
    fn suggestions_rank_by_distance_then_the_slip_then_commonness_and_keep_a_capital() {
        // "sea" is the manuscript's, two edits away; "the" is English, one.
        let lexicon = Lexicon::build(&Catalog::default(), "sea\nhold\n", &[]);
        assert_eq!(
            suggestions("teh", &lexicon, 3).first().map(String::as_str),
            Some("the")
        );
        assert_eq!(
            suggestions("Teh", &lexicon, 3).first().map(String::as_str),
            Some("The")
        );
        assert_eq!(
            suggestions("woud", &lexicon, 3).first().map(String::as_str),
            Some("would")
        );
        assert_eq!(
            suggestions("Howver", &lexicon, 3)
                .first()
                .map(String::as_str),
            Some("However")
        );
    }

    #[test]
    fn two_edits_count_a_swap_of_neighbours_as_one() {
        assert_eq!(edits_within_two("kehtra", "kethra"), Some(1));
        assert_eq!(edits_within_two("kthra", "kethra"), Some(1));
        assert_eq!(edits_within_two("kethra", "kethra"), None);
        assert_eq!(edits_within_two("kettle", "kethra"), None);
    }
}

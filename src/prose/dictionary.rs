//! Ordinary English words: the words of SCOWL's American and British lists
//! (`data/english-words.txt`, about 76,000 words with their inflections,
//! and 10,000 common proper nouns such as "June", "London" or "Jane" as
//! they are capitalised), compiled by `build.rs` into a perfect-hash table
//! (phf's) in the binary and read in place: nothing is built at start (a hash
//! set built from the list cost a cold start's first diagnostics about 20 ms
//! of CPU) and nothing kept on the heap (that set held 2.2 MB). A
//! finite-state set would be as cheap to load, but its lookups cost the
//! checks of twenty scenes about 40% more time.

// KEY, DISPLACEMENTS and OFFSETS: the hash's key and displacements, and where
// each slot's word starts in WORDS.
include!(concat!(env!("OUT_DIR"), "/english_words.rs"));

/// The words, in the order of their slots.
static WORDS: &str = include_str!(concat!(env!("OUT_DIR"), "/english_words.txt"));

/// Whether `word` is one of the list's words, as spelled.
fn is_listed(word: &str) -> bool {
    let hashes = phf_shared::hash(word, &KEY);
    let slot = phf_shared::get_index(&hashes, &DISPLACEMENTS, OFFSETS.len() - 1) as usize;
    WORDS.get(OFFSETS[slot] as usize..OFFSETS[slot + 1] as usize) == Some(word)
}

/// Whether `word` is an ordinary English word in any case ("kale", "Crows",
/// "grey") or a common proper noun as capitalised ("June", "London").
/// Invented names ("Kael", "Bennet") are not.
pub fn is_ordinary_word(word: &str) -> bool {
    if is_listed(word) {
        return true;
    }
    if word.chars().all(|c| c.is_lowercase() || !c.is_alphabetic()) {
        return false;
    }
    is_listed(&word.to_lowercase())
}

/// Whether `word`, in lower case, is an ordinary English word ("Crows",
/// "Kale"); a proper noun of the list ("Philips", "London") is not.
pub fn is_common_word(word: &str) -> bool {
    is_listed(&word.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_of_the_list_is_in_the_table_and_nothing_else() {
        let list = include_str!("../../data/english-words.txt");
        let mut count = 0;
        for word in list.lines().filter(|line| !line.is_empty()) {
            assert!(is_listed(word), "{word}");
            count += 1;
        }
        assert!(count > 70_000, "{count} words");
        for word in ["", "kael", "Kale", "colourx", "xcolour", "a b"] {
            assert!(!is_listed(word), "{word:?}");
        }
    }

    #[test]
    fn ordinary_words_in_any_case_and_names_are_not() {
        for word in [
            "kale",
            "Kale",
            "Crows",
            "grey",
            "colour",
            "neighbour",
            "Lady",
            "June",
        ] {
            assert!(is_ordinary_word(word), "{word}");
        }
        for word in ["Kael", "Iria", "Bennet", "Bingley", "june"] {
            assert!(!is_ordinary_word(word), "{word}");
        }
    }
}

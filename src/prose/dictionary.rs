//! Ordinary English words: the words of SCOWL's American and British lists
//! (`data/english-words.txt`, about 76,000 words with their inflections,
//! and 10,000 common proper nouns such as "June", "London" or "Jane" as
//! they are capitalised), compiled into the binary and loaded once on first
//! use (a server loads it beside its index: [`super::warm_up`]). A hash set:
//! a finite-state set would be built at no cost, but its lookups cost the
//! checks of twenty scenes about 40% more time.

use std::sync::OnceLock;

use rustc_hash::FxHashSet;

const WORDS: &str = include_str!("../../data/english-words.txt");

fn words() -> &'static FxHashSet<&'static str> {
    static WORDS_SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    WORDS_SET.get_or_init(|| WORDS.lines().filter(|line| !line.is_empty()).collect())
}

/// Whether `word` is an ordinary English word in any case ("kale", "Crows",
/// "grey") or a common proper noun as capitalised ("June", "London").
/// Invented names ("Kael", "Bennet") are not.
pub fn is_ordinary_word(word: &str) -> bool {
    let words = words();
    if words.contains(word) {
        return true;
    }
    if word.chars().all(|c| c.is_lowercase() || !c.is_alphabetic()) {
        return false;
    }
    words.contains(word.to_lowercase().as_str())
}

/// Whether `word`, in lower case, is an ordinary English word ("Crows",
/// "Kale"); a proper noun of the list ("Philips", "London") is not.
pub fn is_common_word(word: &str) -> bool {
    words().contains(word.to_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

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

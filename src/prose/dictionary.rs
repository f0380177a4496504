//! Ordinary English words: the words of SCOWL's American and British lists
//! (`data/english-words.txt`, about 76,000 words with their inflections,
//! and 10,000 common proper nouns such as "June", "London" or "Jane" as
//! they are capitalised), shipped in the binary as a finite-state set
//! (`data/english-words.fst`) read in place: nothing is built at start.

use std::sync::OnceLock;

use fst::Set;

static WORDS: &[u8] = include_bytes!("../../data/english-words.fst");

fn words() -> &'static Set<&'static [u8]> {
    static SET: OnceLock<Set<&'static [u8]>> = OnceLock::new();
    SET.get_or_init(|| Set::new(WORDS).expect("data/english-words.fst is a finite-state set"))
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
    words.contains(word.to_lowercase())
}

/// Whether `word`, in lower case, is an ordinary English word ("Crows",
/// "Kale"); a proper noun of the list ("Philips", "London") is not.
pub fn is_common_word(word: &str) -> bool {
    words().contains(word.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The set the list makes: its lines, sorted byte-wise, without blanks.
    fn from_list() -> Vec<u8> {
        let list = include_str!("../../data/english-words.txt");
        let mut words: Vec<&str> = list.lines().filter(|line| !line.is_empty()).collect();
        words.sort_unstable();
        words.dedup();
        let mut builder = fst::SetBuilder::memory();
        builder
            .extend_iter(words)
            .expect("sorted, deduplicated words build a set");
        builder.into_inner().expect("a set in memory")
    }

    #[test]
    fn the_shipped_set_is_the_word_list() {
        let made = from_list();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/english-words.fst");
        if std::env::var_os("UPDATE_ENGLISH_WORDS").is_some() {
            std::fs::write(path, &made).expect("data/ is writable");
            return;
        }
        assert!(
            made == WORDS,
            "data/english-words.fst is not data/english-words.txt: run this test with UPDATE_ENGLISH_WORDS=1"
        );
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

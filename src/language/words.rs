//! harper's curated English words, without harper: the lower-case form of
//! every word of its dictionary as one finite-state set shipped in the
//! binary (`data/harper-words.fst`, about 1 MB), read in place. Loading
//! harper's own dictionary costs about half a second and 140 MB at every
//! start (it keeps it with each word's grammar, three times over), which
//! spelling does not need; grammar, which does, loads it only when it runs.
//!
//! The set is made from harper's dictionary by `words::from_harper`;
//! `the_shipped_words_are_harpers` holds the file to the harper in use and
//! writes it anew with `UPDATE_HARPER_WORDS=1`.

use std::sync::OnceLock;

use fst::{IntoStreamer, Set, Streamer};
use levenshtein_automata::{Distance, LevenshteinAutomatonBuilder};

/// The shipped set.
static WORDS: &[u8] = include_bytes!("../../data/harper-words.fst");

fn words() -> &'static Set<&'static [u8]> {
    static SET: OnceLock<Set<&'static [u8]>> = OnceLock::new();
    SET.get_or_init(|| Set::new(WORDS).expect("data/harper-words.fst is a finite-state set"))
}

/// Whether harper's dictionary holds `word`, in any case.
pub fn contains(word: &str) -> bool {
    let set = words();
    set.contains(word) || set.contains(word.to_lowercase())
}

/// The words within `distance` edits (insertions, deletions, substitutions,
/// swaps of neighbours) of `word`, lower-case, with their distances.
pub fn near(word: &str, distance: u8) -> Vec<(String, u8)> {
    // A builder costs far more than the automata it builds: one per distance.
    static BUILDERS: OnceLock<[LevenshteinAutomatonBuilder; 3]> = OnceLock::new();
    let builders = BUILDERS
        .get_or_init(|| [0, 1, 2].map(|distance| LevenshteinAutomatonBuilder::new(distance, true)));
    let dfa = builders[usize::from(distance.min(2))].build_dfa(&word.to_lowercase());
    let mut stream = words().search_with_state(&dfa).into_stream();
    let mut found = Vec::new();
    while let Some((bytes, state)) = stream.next() {
        if let (Ok(word), Distance::Exact(distance)) =
            (std::str::from_utf8(bytes), dfa.distance(state))
        {
            found.push((word.to_owned(), distance));
        }
    }
    found
}

/// The set's bytes made from harper's curated dictionary: every word, lower-case.
pub fn from_harper() -> Vec<u8> {
    use harper_core::spell::{Dictionary, FstDictionary};
    let dictionary = FstDictionary::curated();
    let mut all: Vec<String> = dictionary
        .words_iter()
        .map(|word| word.iter().collect::<String>().to_lowercase())
        .collect();
    all.sort_unstable();
    all.dedup();
    let mut builder = fst::SetBuilder::memory();
    builder
        .extend_iter(all)
        .expect("sorted, deduplicated words build a set");
    builder.into_inner().expect("a set in memory")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_words_are_harpers() {
        let made = from_harper();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/harper-words.fst");
        if std::env::var_os("UPDATE_HARPER_WORDS").is_some() {
            std::fs::write(path, &made).expect("data/ is writable");
            return;
        }
        assert!(
            made == WORDS,
            "data/harper-words.fst is not the dictionary of the harper in use: run this test with UPDATE_HARPER_WORDS=1"
        );
    }

    #[test]
    fn words_are_found_in_any_case_and_near_ones_by_distance() {
        assert!(contains("receive") && contains("Receive") && contains("colour"));
        assert!(!contains("recieve"));
        let near = near("recieve", 2);
        assert!(near.contains(&("receive".to_owned(), 1)), "{near:?}");
        assert!(near.iter().all(|(_, distance)| *distance <= 2));
    }
}

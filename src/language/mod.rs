//! Spelling and grammar through harper-core, made to know the manuscript.
//!
//! - [`speller`] tells a word from a misspelling: harper's curated
//!   dictionary, the ordinary English words `prose::dictionary` already
//!   holds, and the manuscript's own words (`index::Lexicon`: the cards'
//!   names and terms, the writer's dictionary); it ranks harper's
//!   suggestions, the manuscript's own words among them.
//! - [`grammar`] runs harper's rules over one paragraph at a time, the
//!   rules a novelist wants (`rules`), each paragraph's findings kept by the
//!   hash of its text so that an edit lints only the paragraph it touched.
//! - [`licence`] tells the English a rule mistakes for an error ("an
//!   honour", "too short a stay") from the error.
//!
//! harper builds its rules once per process (about 0.4 s, on first use) and
//! lints at about 20 µs a word with the novelist's rules: too slow for every
//! scene of a long book at every start, which is why grammar is checked by
//! default only in the scenes open in the editor (`[language] grammar`).

pub mod grammar;
pub mod licence;
pub mod rules;
pub mod saved;
pub mod speller;
pub mod words;

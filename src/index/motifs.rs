//! The book's motifs, as the writer lists them in the theme
//! (`Story/Bible/theme.md`) under a heading "Motifs" (or "Symbols",
//! "Motifs and Symbols", "Images"): one list item a motif, its name first,
//! then after a colon or a dash the other words that carry it
//! (`- **Salt**: brine, crust`). A motif's words are found in the scenes'
//! prose as whole words, in any case of ASCII letters, with a plural `s` or
//! `es` or a possessive.

use std::hash::{Hash, Hasher};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::bible::{BibleKind, normalise_heading};
use super::{FilePath, SourceFile, Workspace};
use crate::text::TextRange;

/// Headings, normalised, that hold the motifs.
const HEADINGS: &[&str] = &[
    "motifs",
    "motif",
    "symbols",
    "motifs and symbols",
    "symbols and motifs",
    "images",
    "recurring images",
];

/// One motif and where the writer lists it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Motif {
    pub name: String,
    /// Its words, lower case, the name first.
    pub words: Vec<String>,
    /// The theme file, and the list item.
    pub path: FilePath,
    pub range: TextRange,
}

/// The motifs, and one automaton that finds all their words.
#[derive(Clone, Debug, Default)]
pub struct Motifs {
    pub list: Vec<Motif>,
    /// Items of the list not read as a motif (a name of more than four
    /// words, or none), with where they are, for the report to say so.
    pub skipped: Vec<(FilePath, TextRange)>,
    /// Every form of every word; pattern `i` is the motif `owner[i]`'s.
    finder: Option<AhoCorasick>,
    owner: Vec<usize>,
}

impl Motifs {
    /// The motifs of the theme, if it lists any.
    pub fn of(workspace: &Workspace) -> Motifs {
        let Some(file) = workspace.catalog().bible(BibleKind::Theme) else {
            return Motifs::default();
        };
        let Some(bible) = file.bible() else {
            return Motifs::default();
        };
        let mut list = Vec::new();
        let mut skipped = Vec::new();
        for item in bible
            .sections
            .iter()
            .filter(|section| HEADINGS.contains(&normalise_heading(&section.title).as_str()))
            .flat_map(|section| &section.items)
        {
            match motif(&file.path, &item.text, item.range) {
                Some(motif) => list.push(motif),
                None => skipped.push((file.path.clone(), item.range)),
            }
        }
        Motifs {
            skipped,
            ..Motifs::new(list)
        }
    }

    fn new(list: Vec<Motif>) -> Motifs {
        let mut patterns = Vec::new();
        let mut owner = Vec::new();
        for (at, motif) in list.iter().enumerate() {
            for word in &motif.words {
                for form in [word.clone(), format!("{word}s"), format!("{word}es")] {
                    patterns.push(form);
                    owner.push(at);
                }
            }
        }
        let finder = words_automaton(&patterns);
        Motifs {
            list,
            skipped: Vec::new(),
            finder,
            owner,
        }
    }

    /// How many times each motif's words occur in the file's prose (no
    /// comment, link or code counts), whole words only; a possessive
    /// (`bell's`) counts.
    pub fn count(&self, file: &SourceFile) -> Vec<usize> {
        let mut counts = vec![0; self.list.len()];
        let Some(finder) = &self.finder else {
            return counts;
        };
        for range in &file.syntax.prose {
            let prose = range.slice(&file.text);
            for found in finder.find_iter(prose) {
                let before = prose[..found.start()].chars().next_back();
                let after = &prose[found.end()..];
                if before.is_some_and(char::is_alphanumeric) || !ends_a_word(after) {
                    continue;
                }
                counts[self.owner[found.pattern().as_usize()]] += 1;
            }
        }
        counts
    }

    /// What the counts depend on: the motifs' words, in order.
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for motif in &self.list {
            motif.words.hash(&mut hasher);
        }
        hasher.finish()
    }
}

/// One automaton over `patterns`, in any case of ASCII letters, the
/// longest match winning; `None` without patterns.
pub fn words_automaton(patterns: &[String]) -> Option<AhoCorasick> {
    if patterns.is_empty() {
        return None;
    }
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostLongest)
        .build(patterns)
        .ok()
}

/// Whether a match followed by `after` ends on a word's end: nothing, a
/// character not of a word, or an apostrophe that is not inside a word
/// (a possessive `'s`, or a closing quote).
fn ends_a_word(after: &str) -> bool {
    let mut chars = after.chars();
    match chars.next() {
        None => true,
        Some('\'' | '’') => match chars.next() {
            Some('s') => !chars.next().is_some_and(char::is_alphanumeric),
            next => !next.is_some_and(char::is_alphanumeric),
        },
        Some(c) => !c.is_alphanumeric(),
    }
}

/// A list item read as a motif: `**Salt**: brine, crust` or `salt — brine`.
fn motif(path: &FilePath, item: &str, range: TextRange) -> Option<Motif> {
    let item = item.trim_start_matches(['-', '*', '+']).trim();
    let (name, rest) = match item.find([':', '—', '–']) {
        Some(at) => {
            let separator = item[at..].chars().next().map_or(1, char::len_utf8);
            (&item[..at], &item[at + separator..])
        }
        None => match item.find(" - ") {
            Some(at) => (&item[..at], &item[at + 3..]),
            None => (item, ""),
        },
    };
    let clean = |word: &str| {
        word.trim_matches(|c: char| c == '*' || c == '_' || c == '`' || c.is_whitespace())
            .trim_end_matches(['.', ';'])
            .to_lowercase()
    };
    let name = clean(name);
    if name.is_empty() || name.split_whitespace().count() > 4 {
        return None;
    }
    let mut words = vec![name.clone()];
    for word in rest.split([',', ';']).map(clean) {
        if !word.is_empty() && word.split_whitespace().count() <= 4 && !words.contains(&word) {
            words.push(word);
        }
    }
    Some(Motif {
        name,
        words,
        path: path.clone(),
        range,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_motif_is_its_name_and_the_words_after_a_colon_or_a_dash() {
        let path = FilePath::from("Story/Bible/theme.md");
        let range = TextRange::empty(0);
        let salt = motif(&path, "**Salt**: brine, white crust.", range).unwrap();
        assert_eq!(salt.name, "salt");
        assert_eq!(salt.words, ["salt", "brine", "white crust"]);
        let glass = motif(&path, "glass — mirror", range).unwrap();
        assert_eq!(glass.words, ["glass", "mirror"]);
        let bells = motif(&path, "bells - the drowned bells", range).unwrap();
        assert_eq!(bells.words, ["bells", "the drowned bells"]);
        assert!(
            motif(
                &path,
                "a long sentence about what the book is about, not a motif",
                range
            )
            .is_none()
        );
    }

    #[test]
    fn a_motif_counts_in_prose_as_a_whole_word_a_plural_or_a_possessive() {
        let motifs = Motifs::new(vec![
            motif(&FilePath::from("theme.md"), "bell", TextRange::empty(0)).unwrap(),
        ]);
        let file = SourceFile::parse(
            "Story/Scenes/SCN-a.md".into(),
            "# A\n\nThe bell's toll. ‘I heard the bells’ she said. A bellow, a Bluebell.\n\n<!-- bring the bell back -->\n\n`bell`\n".into(),
            &Default::default(),
        );
        assert_eq!(motifs.count(&file), [2]);
    }

    #[test]
    fn an_item_not_read_as_a_motif_is_kept_for_the_report() {
        let (_dir, workspace) = crate::index::test_support::example_with_motifs(
            "- **Salt**: brine\n- the long road home to the sea and back: dust\n",
        );
        let motifs = Motifs::of(&workspace);
        assert_eq!(motifs.list.len(), 1);
        assert_eq!(motifs.skipped.len(), 1);
        let (path, range) = &motifs.skipped[0];
        let file = workspace.file(path).unwrap();
        assert!(range.slice(&file.text).contains("the long road home"));
    }
}

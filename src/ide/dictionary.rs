//! "Add to dictionary": a word the writer spells as they mean it, added to
//! the manuscript's dictionary file (`[language] dictionary`) so that
//! `spelling` takes it from then on, in every scene.

use std::path::Path;

use crate::storage::Disk;

/// The longest word the dictionary takes.
const MAX_WORD: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum DictionaryError {
    #[error(
        "“{0}” is not a word to add to the dictionary: one word of letters, apostrophes and hyphens, at most {MAX_WORD} characters"
    )]
    NotAWord(String),
    #[error("could not write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// Whether `word` can be a line of the dictionary: letters, with inner
/// apostrophes and hyphens, nothing that would be a comment or a new line.
pub fn is_addable(word: &str) -> bool {
    !word.is_empty()
        && word.chars().count() <= MAX_WORD
        && word.chars().next().is_some_and(char::is_alphabetic)
        && word
            .chars()
            .all(|c| c.is_alphabetic() || matches!(c, '\'' | '’' | '-'))
}

/// Appends `word` on a line of its own to the dictionary file at
/// `dictionary` (relative to `root`), creating it if need be, and returns
/// the file's text afterwards. A word already there is not added twice.
pub fn add_word(
    disk: &Disk,
    root: &Path,
    dictionary: &str,
    word: &str,
) -> Result<String, DictionaryError> {
    if !is_addable(word) {
        return Err(DictionaryError::NotAWord(word.to_owned()));
    }
    let path = root.join(dictionary);
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    if crate::index::lexicon::dictionary_words(&before).any(|known| known == word) {
        return Ok(before);
    }
    // A last word without its line break is kept: the disk starts the
    // appended line on a line of its own.
    let line = format!("{word}\n");
    disk.append_line(&path, line.as_bytes())
        .map_err(|source| DictionaryError::Write {
            path: dictionary.to_owned(),
            source,
        })?;
    let apart = if before.is_empty() || before.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    Ok(before + apart + &line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_added_once_on_a_line_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::default();
        let dictionary = "Compendium/dictionary.txt";
        let text = add_word(&disk, dir.path(), dictionary, "kethra").unwrap();
        assert_eq!(text, "kethra\n");
        std::fs::write(dir.path().join(dictionary), "kethra").unwrap();
        let text = add_word(&disk, dir.path(), dictionary, "waystone").unwrap();
        assert_eq!(text, "kethra\nwaystone\n");
        let again = add_word(&disk, dir.path(), dictionary, "waystone").unwrap();
        assert_eq!(again, text);
        assert_eq!(
            std::fs::read_to_string(dir.path().join(dictionary)).unwrap(),
            text
        );
    }

    #[test]
    fn what_is_not_one_word_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for word in [
            "",
            "two words",
            "kethra\n# x",
            "#comment",
            "x".repeat(65).as_str(),
        ] {
            assert!(
                add_word(&Disk::default(), dir.path(), "d.txt", word).is_err(),
                "{word:?}"
            );
        }
        assert!(!dir.path().join("d.txt").exists());
    }
}

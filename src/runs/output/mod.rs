//! What an output does to the manuscript: a drafting run's scene text
//! (`draft`), a run's proposed edits placed by the text they quote
//! (`edits/`), the delivery that decides between them and concludes a run
//! (`delivery`), and the files the Foreman and the voice change outside a
//! run (`changes`).
//!
//! Architecture invariant: a writer's text is never overwritten. Every write
//! to the manuscript that the command line (or the server, when the editor
//! cannot take an edit) makes goes through [`write_guarded`]: a file is
//! replaced only while it still has the text the output was computed on, and
//! created only where no file is (create-new, so two writers racing for one
//! new file cannot both win). The editor's own edits are versioned by the
//! editor.

pub mod changes;
pub mod delivery;
pub mod draft;
pub mod edits;

use std::path::Path;

use crate::runs::store::SceneMark;
use crate::storage::Disk;

/// Why a file was not written.
#[derive(Debug, thiserror::Error)]
pub enum NotWritten {
    #[error("it changed since it was read; nothing was written")]
    Changed,
    #[error("a file appeared there meanwhile; nothing was written")]
    Appeared,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Writes `text` to `path`, whole and atomically, only if the file is still
/// what `base` marks: the same text, or no file at all (then created, with
/// its folders, where none appeared meanwhile).
pub fn write_guarded(
    disk: &Disk,
    path: &Path,
    base: &SceneMark,
    text: &str,
) -> Result<(), NotWritten> {
    if !base.exists() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        return match disk.create_new(path, text.as_bytes())? {
            true => Ok(()),
            false => Err(NotWritten::Appeared),
        };
    }
    // Read again just before writing: an editor may have saved.
    let now = match std::fs::read_to_string(path) {
        Ok(now) => Some(now),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(NotWritten::Io(error)),
    };
    if SceneMark::of(now.as_deref()) != *base {
        return Err(NotWritten::Changed);
    }
    Ok(disk.write_atomic(path, text.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guarded_write_replaces_only_the_text_it_was_computed_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Story/Scenes/SCN-a.md");
        let disk = Disk::default();
        let absent = SceneMark::of(None);

        write_guarded(&disk, &path, &absent, "first").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first");
        assert!(matches!(
            write_guarded(&disk, &path, &absent, "racing"),
            Err(NotWritten::Appeared)
        ));

        let stale = SceneMark::of(Some("what it was before"));
        assert!(matches!(
            write_guarded(&disk, &path, &stale, "over the writer"),
            Err(NotWritten::Changed)
        ));
        write_guarded(&disk, &path, &SceneMark::of(Some("first")), "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");

        std::fs::remove_file(&path).unwrap();
        assert!(matches!(
            write_guarded(&disk, &path, &SceneMark::of(Some("second")), "third"),
            Err(NotWritten::Changed)
        ));
        assert!(!path.exists(), "a deleted file is not brought back");
    }
}

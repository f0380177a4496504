//! Files the engine's features change outside a run (the Foreman's
//! actions, the voice tournament and bundle): each [`Change`] is a file's new
//! text and the text it was computed against. The front end applies them:
//! the editor as a versioned edit the writer can undo, the command line
//! with [`apply_on_disk`], whole and atomically, never over a file that
//! changed meanwhile.

use std::path::Path;
use std::sync::Arc;

use crate::index::{FilePath, SourceFile, Workspace};
use crate::storage::Disk;

/// A file to write: its new text, and the text it was computed against
/// (`None` for a new file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: FilePath,
    pub before: Option<Arc<str>>,
    pub after: String,
}

/// Adds `change` to `changes` (one per file, keeping the first `before`)
/// and to `workspace`, so that what comes next sees it.
pub fn merge(workspace: &mut Workspace, changes: &mut Vec<Change>, change: Change) {
    let file = SourceFile::parse(
        change.path.clone(),
        change.after.as_str().into(),
        &workspace.config().paths,
    );
    workspace.insert_file(file);
    match changes.iter_mut().find(|known| known.path == change.path) {
        Some(known) => known.after = change.after,
        None => changes.push(change),
    }
}

/// Why a change was not written.
#[derive(Debug, thiserror::Error)]
pub enum NotWritten {
    #[error("it changed since it was read; nothing was written")]
    Changed,
    #[error("a file appeared there meanwhile; nothing was written")]
    Appeared,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Writes `changes` to the disk for the command line: each file whole and
/// atomically, a new one only where none is, and none whose text is no
/// longer the one the change was computed on. Returns, per change, its
/// path and whether it was written or why not.
pub fn apply_on_disk(
    root: &Path,
    disk: &Disk,
    changes: &[Change],
) -> Vec<(String, Result<(), NotWritten>)> {
    changes
        .iter()
        .map(|change| {
            let path = root.join(&*change.path);
            let result = match &change.before {
                Some(before) => match std::fs::read_to_string(&path) {
                    Ok(now) if now == **before => disk
                        .write_atomic(&path, change.after.as_bytes())
                        .map_err(NotWritten::Io),
                    Ok(_) => Err(NotWritten::Changed),
                    Err(error) => Err(NotWritten::Io(error)),
                },
                None => {
                    if let Some(parent) = path.parent() {
                        let _ = std::fs::create_dir_all(parent);
                    }
                    match disk.create_new(&path, change.after.as_bytes()) {
                        Ok(true) => Ok(()),
                        Ok(false) => Err(NotWritten::Appeared),
                        Err(error) => Err(NotWritten::Io(error)),
                    }
                }
            };
            (change.path.to_string(), result)
        })
        .collect()
}

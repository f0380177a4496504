//! Files the engine's features change outside a run (the Foreman's
//! actions, the voice tournament and bundle): each [`Change`] is a file's new
//! text and the text it was computed against. The front end applies them:
//! the editor as a versioned edit the writer can undo, the command line
//! with [`apply_on_disk`], whole and atomically, never over a file that
//! changed meanwhile.

use std::path::Path;
use std::sync::Arc;

use crate::index::{FilePath, SourceFile, Workspace};
use crate::runs::store::SceneMark;
use crate::storage::Disk;

use super::{NotWritten, write_guarded};

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
            let base = SceneMark::of(change.before.as_deref());
            let result = write_guarded(disk, &root.join(&*change.path), &base, &change.after);
            (change.path.to_string(), result)
        })
        .collect()
}

//! The command line: the `check` command's renderers and the engine's commands.

pub mod check;
pub mod conference;
pub mod doctor;
pub mod plan;
pub mod run;

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The workspace root a command was given: checked to be a folder it can
/// list, and made absolute.
pub fn workspace_root(dir: &Path) -> anyhow::Result<PathBuf> {
    let metadata = std::fs::metadata(dir)
        .with_context(|| format!("cannot read the workspace {}", dir.display()))?;
    anyhow::ensure!(metadata.is_dir(), "{} is not a folder", dir.display());
    let root = dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))?;
    std::fs::read_dir(&root)
        .with_context(|| format!("cannot list the workspace {}", root.display()))?;
    Ok(root)
}

//! The command line: the `check` command's renderers and the engine's commands.
//!
//! ## Parts
//!
//! the commands: parse arguments, call the engine, print. Drafts are delivered with
//! `delivery::apply_on_disk`; plans run through `driver` with a terminal host.

pub mod ask;
pub mod chart;
pub mod check;
pub mod chief;
pub mod compile;
pub mod conference;
pub mod doctor;
pub mod explain;
pub mod graph;
pub mod health;
pub mod knowledge;
pub mod mode;
pub mod plan;
pub mod run;
pub mod running;
pub mod speakers;
pub mod stats;
pub mod voice;

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The manuscript a command works on, the same way for every command: the
/// folder it was given (`--dir`, default the current one), or the nearest
/// folder above it that holds a manuscript (`control-room.toml`, or `Story/`
/// and `Compendium/`), as git finds its repository; checked to be a folder
/// it can list, and made absolute.
pub fn workspace_root(dir: &Path) -> anyhow::Result<PathBuf> {
    let metadata = std::fs::metadata(dir)
        .with_context(|| format!("cannot read the workspace {}", dir.display()))?;
    anyhow::ensure!(metadata.is_dir(), "{} is not a folder", dir.display());
    let given = dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))?;
    let root = crate::index::find_root(&given).unwrap_or(given);
    std::fs::read_dir(&root)
        .with_context(|| format!("cannot list the workspace {}", root.display()))?;
    Ok(root)
}

/// A passage named on the command line: its file, its lines (1-based) and
/// their byte range (the newline after the last line left out).
pub struct PassageLines {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub range: crate::text::TextRange,
}

/// Reads `PATH` (the whole file) or `PATH:START-END` (1-based lines) as a
/// passage of a file of `workspace`.
pub fn passage_lines(
    workspace: &crate::index::Workspace,
    spec: &str,
) -> anyhow::Result<PassageLines> {
    let (path, lines) = match spec.rsplit_once(':') {
        Some((path, lines)) if lines.contains('-') || lines.parse::<u32>().is_ok() => {
            (path, Some(lines))
        }
        _ => (spec, None),
    };
    crate::tools::check_relative_path(path).map_err(anyhow::Error::msg)?;
    let file = workspace
        .file(path)
        .with_context(|| format!("{path} is not a file of this workspace"))?;
    let total = file.text.lines().count().max(1) as u32;
    let (start, end) = match lines {
        None => (1, total),
        Some(lines) => {
            let (start, end) = lines.split_once('-').unwrap_or((lines, lines));
            let number = |text: &str| {
                text.trim()
                    .parse::<u32>()
                    .with_context(|| format!("`{spec}`: lines are START-END, 1-based"))
            };
            (number(start)?, number(end)?)
        }
    };
    if start == 0 || start > end || end > total {
        anyhow::bail!("`{spec}`: {path} has lines 1–{total}");
    }
    let offsets: Vec<usize> = std::iter::once(0)
        .chain(file.text.match_indices('\n').map(|(at, _)| at + 1))
        .collect();
    let begin = offsets[start as usize - 1];
    let finish = offsets
        .get(end as usize)
        .map_or(file.text.len(), |next| next - 1);
    Ok(PassageLines {
        path: path.to_owned(),
        start,
        end,
        range: crate::text::TextRange::new(begin, finish.max(begin)),
    })
}

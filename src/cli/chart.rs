//! `control-room chart presence [-o FILE]`: the presence chart (who is in
//! which scene: point of view, speaking, present, only mentioned) as a
//! self-contained SVG, by default `.control-room/charts/presence.svg`,
//! written whole; the path is printed.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::workspace_root;
use crate::engine::store::Disk;
use crate::ide::charts;
use crate::index::Workspace;

/// Where charts go unless told.
pub const CHARTS_DIR: &str = ".control-room/charts";

/// Draws chart `kind` of the manuscript.
pub fn chart(dir: &Path, kind: &str, output: Option<&Path>) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let svg = match kind {
        "presence" => {
            let chart = charts::presence(&workspace);
            if chart.scenes.is_empty() {
                bail!("the outline lists no scenes: there is nothing to chart");
            }
            let book = crate::index::Book::of(&workspace);
            let title = crate::export::assemble::book_title(&workspace, &book);
            charts::presence_svg(&chart, &title)
        }
        other => bail!("`{other}` is not a chart; the charts are: presence"),
    };
    let path: PathBuf = match output {
        Some(path) => path.to_path_buf(),
        None => root.join(CHARTS_DIR).join(format!("{kind}.svg")),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    Disk::default()
        .write_atomic(&path, svg.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("{}", path.display());
    Ok(0)
}

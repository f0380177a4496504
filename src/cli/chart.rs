//! `control-room chart presence|timeline|beats|run RUN [-o FILE]`: a chart
//! of the book (or of a run) as a self-contained SVG, by default
//! `.control-room/charts/KIND.svg`, or as a PNG when the file asked for
//! ends in `.png`; written whole, and the path printed.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::workspace_root;
use crate::ide::charts::{self, ChartKind};
use crate::index::Workspace;
use crate::runs::store::Disk;

/// Where charts go unless told.
pub const CHARTS_DIR: &str = ".control-room/charts";

/// Draws chart `kind` of the manuscript (`run` names a run's).
pub fn chart(
    dir: &Path,
    kind: &str,
    run: Option<&str>,
    output: Option<&Path>,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let kind = ChartKind::parse(kind, run)?;
    let workspace = Workspace::load(&root);
    let graph = crate::kb::graph::GraphCache::load(&root);
    let drawn = charts::draw(&workspace, &root, &kind, &graph)?;
    if let Err(error) = graph.save(&crate::storage::Disk::default(), &root) {
        eprintln!(
            "the graph's memo was not saved ({}): {error}",
            crate::kb::graph::MEMO_FILE
        );
    }
    let path: PathBuf = match output {
        Some(path) => path.to_path_buf(),
        None => root.join(CHARTS_DIR).join(format!("{}.svg", kind.name())),
    };
    let png = path
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("png"));
    let bytes = if png {
        charts::png::rasterise(&drawn.svg, 2.0)?
    } else {
        drawn.svg.into_bytes()
    };
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    Disk::default()
        .write_atomic(&path, &bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("{}", path.display());
    Ok(0)
}

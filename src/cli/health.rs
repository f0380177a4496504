//! `control-room health`: the story's health report (`health`): each of
//! the seven checks with its score, what it found and what to do, and the
//! findings' places as `file:line`; `--json` for tools.

use std::path::Path;

use super::workspace_root;
use crate::health::{Health, Measures, report};
use crate::index::Workspace;

/// Prints the report; exits 0 (a report, not a gate: `check` gates).
pub fn health(dir: &Path, json: bool) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let health = Health::check(&workspace, &mut Measures::default());
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report::json(&workspace, &health))?
        );
    } else {
        print!("{}", report::text(&workspace, &health));
    }
    Ok(0)
}

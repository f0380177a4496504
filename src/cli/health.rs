//! `control-room health`: the story's health report (`health`): each of
//! the seven checks with its score, what it found and what to do, and the
//! findings' places as `file:line`; `--json` for tools. A3, B1 and C2 are
//! what the runs of "Read a scene's story health" read
//! (`engine::story_health`), with the writer's overrides, which
//! `control-room health override` sets.

use std::path::Path;

use anyhow::{Context as _, bail};

use super::workspace_root;
use crate::engine::runner::now;
use crate::engine::story_health;
use crate::health::model::ModelCheck;
use crate::health::overrides::{self, Override};
use crate::health::{Health, Measures, report};
use crate::index::Workspace;
use crate::storage::Disk;

/// Prints the report; exits 0 (a report, not a gate: `check` gates).
pub fn health(dir: &Path, json: bool) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let mut problems = Vec::new();
    let readings = story_health::readings(&root, &workspace, &mut problems);
    for problem in &problems {
        eprintln!("{problem}");
    }
    let health = Health::check_read(
        &workspace,
        &mut Measures::default(),
        &|file| crate::checks::dependency_key(&workspace, file),
        &readings,
    );
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

/// `control-room health override CHECK SCENE [VERDICT] [--why …] [--clear]`:
/// the writer's verdict on a scene for a check a model reads, kept over
/// whatever a run says; `verdict` `None` takes it back.
pub fn set_override(
    dir: &Path,
    check: &str,
    scene: &str,
    verdict: Option<String>,
    why: &str,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let Some(check) = ModelCheck::parse(check) else {
        bail!("`{check}` is not a check a model reads: say A3, B1 or C2");
    };
    let found = Override {
        check,
        scene: scene.to_owned(),
        verdict,
        why: why.trim().to_owned(),
        at: now(),
    };
    found.validate_in(&workspace)?;
    overrides::append(&root, &Disk::default(), &found)
        .with_context(|| format!("cannot write {}", overrides::OVERRIDES_FILE))?;
    match &found.verdict {
        Some(verdict) => println!("{} of {scene}: {verdict} (the writer's)", check.id()),
        None => println!(
            "{} of {scene}: the model's reading counts again",
            check.id()
        ),
    }
    Ok(0)
}

//! `control-room health`: the story's health report (`health`): each of
//! the seven checks with its score, what it found and what to do, and the
//! findings' places as `file:line`; `--json` for tools. A3, B1 and C2 are
//! what the runs of "Read a scene's story health" read
//! (`runs::story_health`), with the writer's overrides, which
//! `control-room health override` sets.

use std::path::Path;

use anyhow::bail;

use super::workspace_root;
use crate::health::overrides;
use crate::health::{Health, Measures, report};
use crate::index::Workspace;
use crate::runs::story_health;
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
    let found = overrides::keep(&workspace, &Disk::default(), (check, scene), verdict, why)?;
    let check = found.check;
    match &found.verdict {
        Some(verdict) => println!("{} of {scene}: {verdict} (the writer's)", check.id()),
        None => println!(
            "{} of {scene}: the model's reading counts again",
            check.id()
        ),
    }
    Ok(0)
}

/// `control-room health read [--scene ID]…`: runs "Read a scene's story
/// health" on each scene named, or on every written scene of the outline
/// in its order, one after another; a scene whose run fails is said and
/// the others go on. Exits 1 when a run did not finish.
pub fn read(
    dir: &Path,
    scenes: &[String],
    model_args: &super::running::ModelArgs,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let catalog = workspace.catalog();
    let outline: Vec<String> = catalog
        .outline()
        .and_then(|file| file.outline())
        .map(|outline| outline.entries.iter().map(|e| e.scene_id.clone()).collect())
        .unwrap_or_default();
    let wanted: Vec<&String> = if scenes.is_empty() {
        outline
            .iter()
            .filter(|id| catalog.scene(id).is_some())
            .collect()
    } else {
        scenes.iter().collect()
    };
    let mut paths = Vec::new();
    for id in &wanted {
        match catalog.scene(id) {
            Some(file) => paths.push((id.to_string(), file.path.to_string())),
            None => bail!("`{id}` is not a written scene of the outline"),
        }
    }
    let mut failed = Vec::new();
    for (at, (id, path)) in paths.iter().enumerate() {
        eprintln!("reading {id} ({} of {})", at + 1, paths.len());
        let code = super::run::run(
            &root,
            story_health::RECIPE,
            None,
            &[format!("scene_path={path}")],
            model_args,
        );
        match code {
            Ok(0) => {}
            Ok(_) => failed.push(id.clone()),
            Err(error) => {
                eprintln!("{id}: {error:#}");
                failed.push(id.clone());
            }
        }
    }
    println!(
        "read {} scene(s){}; `control-room health` shows the report",
        paths.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(", {} did not finish: {}", failed.len(), failed.join(", "))
        }
    );
    Ok(i32::from(!failed.is_empty()))
}

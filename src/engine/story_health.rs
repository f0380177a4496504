//! What the runs of "Read a scene's story health"
//! (`analytical_story_health`) read of each scene, for the health report's
//! A3, B1 and C2: each finished run's verdicts (its reply slots in
//! `cache.json`) and its claims (`findings.json`: only those whose quotes
//! were found in the scene, each anchored where its quote is now, with a
//! count of those dropped), the latest run of each scene winning; then the
//! writer's overrides over them, which no run replaces.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::findings::{RunFindings, anchor, load_all};
use super::store::{CacheSlot, RunFiles, RunStatus, list_runs};
use crate::health::model::{Claim, ModelCheck, Reading};
use crate::health::overrides;
use crate::index::Workspace;

/// The recipe that reads a scene's health.
pub const RECIPE: &str = "analytical_story_health";

/// Every scene's latest reading of each model check, the writer's
/// overrides applied; a line of the overrides that cannot be read is
/// added to `problems`.
pub fn readings(root: &Path, workspace: &Workspace, problems: &mut Vec<String>) -> Vec<Reading> {
    let mut latest: BTreeMap<(ModelCheck, String), Reading> = BTreeMap::new();
    let findings: BTreeMap<String, RunFindings> = load_all(root)
        .into_iter()
        .filter(|run| run.recipe_id == RECIPE)
        .map(|run| (run.run_id.clone(), run))
        .collect();
    let mut runs: Vec<_> = list_runs(root)
        .into_iter()
        .filter(|run| run.recipe_id == RECIPE && run.status == RunStatus::Done)
        .collect();
    runs.sort_by(|a, b| {
        a.completed_at
            .cmp(&b.completed_at)
            .then_with(|| a.run_id.cmp(&b.run_id))
    });
    for run in runs {
        let Some(scene) = scene_of(workspace, &run.task.initial_args) else {
            continue;
        };
        let Ok(cache) = RunFiles::new(root, &run.run_id).read_cache() else {
            continue;
        };
        let found = findings.get(&run.run_id);
        for check in ModelCheck::ALL {
            let (step, slot) = check.step();
            let Some(CacheSlot::Artifact { text, .. }) = cache.get(slot) else {
                continue;
            };
            let Some(verdict) = serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|reply| Some(reply.get("verdict")?.as_str()?.to_owned()))
                .filter(|verdict| check.verdicts().contains(&verdict.as_str()))
            else {
                continue;
            };
            let claims = found
                .into_iter()
                .flat_map(|run| &run.findings)
                .filter(|finding| finding.step_id == step)
                .map(|finding| Claim {
                    message: finding.message.clone(),
                    at: workspace.file(&finding.file).and_then(|file| {
                        let range = anchor(&file.text, &finding.quote, None)?;
                        Some((file.path.clone(), range))
                    }),
                })
                .collect();
            let dropped = found
                .into_iter()
                .flat_map(|run| &run.dropped)
                .filter(|dropped| dropped.step_id == step)
                .count();
            latest.insert(
                (check, scene.clone()),
                Reading {
                    check,
                    scene: scene.clone(),
                    verdict,
                    claims,
                    dropped,
                    run_id: Some(run.run_id.clone()),
                    why: None,
                },
            );
        }
    }
    for ((check, scene), writer) in overrides::load(root, problems) {
        latest.insert(
            (check, scene.clone()),
            Reading {
                check,
                scene,
                verdict: writer.verdict.unwrap_or_default(),
                claims: Vec::new(),
                dropped: 0,
                run_id: None,
                why: Some(writer.why),
            },
        );
    }
    latest.into_values().collect()
}

/// The scene a run read: its `scene_path` (or `scene_id`) argument.
fn scene_of(workspace: &Workspace, args: &serde_json::Map<String, Value>) -> Option<String> {
    if let Some(path) = args.get("scene_path").and_then(Value::as_str) {
        return Some(workspace.file(path)?.scene()?.id.clone());
    }
    args.get("scene_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

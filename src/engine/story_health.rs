//! What the runs of "Read a scene's story health"
//! (`analytical_story_health`) read of each scene, for the health report's
//! A3, B1 and C2: each run's verdicts (its reply slots in `cache.json`: a
//! step that kept its contract counts even when a later step failed the
//! run) and its claims (only those whose quotes are in the scene, each
//! anchored where its quote is now, with a count of those dropped: from
//! `findings.json` where the run finished, else read from the reply), the
//! latest run of each scene winning; then the writer's overrides over them,
//! which no run replaces.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::findings::{MIN_QUOTE_CHARS, RunFindings, anchor, load_all};
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
        .filter(|run| {
            run.recipe_id == RECIPE && matches!(run.status, RunStatus::Done | RunStatus::Failed)
        })
        .collect();
    // The latest last (times are fixed-width RFC 3339, so they sort as text).
    runs.sort_by(|a, b| {
        let when = |run: &super::store::RunManifest| {
            run.completed_at
                .clone()
                .unwrap_or_else(|| run.updated_at.clone())
        };
        when(a).cmp(&when(b)).then_with(|| a.run_id.cmp(&b.run_id))
    });
    for run in runs {
        let Some(scene) = scene_of(workspace, &run.task.initial_args) else {
            continue;
        };
        let Ok(cache) = RunFiles::new(root, &run.run_id).read_cache() else {
            continue;
        };
        for check in ModelCheck::ALL {
            let (step, slot) = check.step();
            let Some(CacheSlot::Artifact { text, .. }) = cache.get(slot) else {
                continue;
            };
            let Ok(reply) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            let Some(verdict) = reply
                .get("verdict")
                .and_then(Value::as_str)
                .filter(|verdict| check.verdicts().contains(verdict))
                .map(str::to_owned)
            else {
                continue;
            };
            let (claims, dropped) = match findings.get(&run.run_id) {
                Some(found) => kept(workspace, found, step),
                None => quoted(workspace, &reply, &scene),
            };
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

/// The claims of `step` a finished run kept (each anchored where its quote
/// is now), and how many it dropped.
fn kept(workspace: &Workspace, found: &RunFindings, step: &str) -> (Vec<Claim>, usize) {
    let claims = found
        .findings
        .iter()
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
        .dropped
        .iter()
        .filter(|dropped| dropped.step_id == step)
        .count();
    (claims, dropped)
}

/// The claims of a reply whose run did not finish, read as the run's end
/// would have: only those whose quote is in the scene.
fn quoted(workspace: &Workspace, reply: &Value, scene: &str) -> (Vec<Claim>, usize) {
    let file = workspace.catalog().scene(scene);
    let mut claims = Vec::new();
    let mut dropped = 0;
    for finding in reply["findings"].as_array().into_iter().flatten() {
        let (Some(quote), Some(message)) = (finding["quote"].as_str(), finding["message"].as_str())
        else {
            dropped += 1;
            continue;
        };
        let at = file.and_then(|file| {
            let range = anchor(&file.text, quote, None)?;
            Some((file.path.clone(), range))
        });
        if quote.trim().chars().count() < MIN_QUOTE_CHARS || at.is_none() {
            dropped += 1;
            continue;
        }
        claims.push(Claim {
            message: message.to_owned(),
            at,
        });
    }
    (claims, dropped)
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

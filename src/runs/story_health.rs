//! What the runs of "Read a scene's story health"
//! (`analytical_story_health`) read of each scene, for the health report's
//! A3, B1 and C2: each run's verdicts (its reply slots in `cache.json`: a
//! step that kept its contract counts even when a later step failed the
//! run) and its claims (only those whose quotes are in the scene, each
//! anchored where its quote is now, with a count of those dropped: the
//! run's `findings.json` where it finished, else its kept replies read by
//! `findings::collect` as the run's end reads them), the
//! latest run of each scene winning; then the writer's overrides over them,
//! which no run replaces.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::health::model::{Claim, ModelCheck, Reading};
use crate::health::overrides;
use crate::index::Workspace;
use crate::runs::findings::{FINDINGS_FILE, RunFindings, anchor, collect};
use crate::runs::store::{CacheSlot, RunFiles, RunManifest, RunStatus, list_runs};

/// The recipe that reads a scene's health.
pub const RECIPE: &str = "analytical_story_health";

/// Every scene's latest reading of each model check, the writer's
/// overrides applied; a line of the overrides that cannot be read is
/// added to `problems`.
pub fn readings(root: &Path, workspace: &Workspace, problems: &mut Vec<String>) -> Vec<Reading> {
    let mut latest: BTreeMap<(ModelCheck, String), Reading> = BTreeMap::new();
    let mut runs: Vec<_> = list_runs(root)
        .into_iter()
        .filter(|run| {
            run.recipe_id == RECIPE && matches!(run.status, RunStatus::Done | RunStatus::Failed)
        })
        .collect();
    // The latest last (times are fixed-width RFC 3339, so they sort as text).
    runs.sort_by(|a, b| {
        let when = |run: &RunManifest| {
            run.completed_at
                .clone()
                .unwrap_or_else(|| run.updated_at.clone())
        };
        when(a).cmp(&when(b)).then_with(|| a.run_id.cmp(&b.run_id))
    });
    for run in runs {
        let Some((scene, path)) = scene_of(workspace, &run.task.initial_args) else {
            continue;
        };
        let files = RunFiles::new(root, &run.run_id);
        let Ok(cache) = files.read_cache() else {
            continue;
        };
        // The replies that kept their contract, as JSON.
        let replies: BTreeMap<String, Value> = cache
            .iter()
            .filter_map(|(slot, kept)| match kept {
                CacheSlot::Artifact { text, .. } => {
                    Some((slot.clone(), serde_json::from_str(text).ok()?))
                }
                CacheSlot::Pointer { .. } => None,
            })
            .collect();
        let found = claims_of(workspace, &files, &run, &replies, &path);
        for check in ModelCheck::ALL {
            let (step, slot) = check.step();
            let Some(verdict) = replies
                .get(slot)
                .and_then(|reply| reply.get("verdict"))
                .and_then(Value::as_str)
                .filter(|verdict| check.verdicts().contains(verdict))
            else {
                continue;
            };
            let (claims, dropped) = kept(workspace, &found, step);
            latest.insert(
                (check, scene.clone()),
                Reading {
                    check,
                    scene: scene.clone(),
                    verdict: verdict.to_owned(),
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

/// A run's claims: its `findings.json` where it finished; else those of
/// the replies it kept, read as the run's end reads them (only a quote
/// found in the scene counts).
fn claims_of(
    workspace: &Workspace,
    files: &RunFiles,
    run: &RunManifest,
    replies: &BTreeMap<String, Value>,
    scene_path: &str,
) -> RunFindings {
    let finished = std::fs::read_to_string(files.dir.join(FINDINGS_FILE))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    finished.unwrap_or_else(|| {
        let text_of = |path: &str| workspace.file(path).map(|file| file.text.to_string());
        collect(
            run,
            &files.read_steps(),
            replies,
            Some(scene_path),
            &text_of,
        )
    })
}

/// The claims of `step` (each anchored where its quote is now), and how
/// many were dropped.
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

/// The scene a run read, by id and path: its `scene_path` (or
/// `scene_id`) argument.
fn scene_of(
    workspace: &Workspace,
    args: &serde_json::Map<String, Value>,
) -> Option<(String, String)> {
    let file = match args.get("scene_path").and_then(Value::as_str) {
        Some(path) => workspace.file(path)?,
        None => workspace
            .catalog()
            .scene(args.get("scene_id").and_then(Value::as_str)?)?,
    };
    Some((file.scene()?.id.clone(), file.path.to_string()))
}

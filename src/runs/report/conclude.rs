//! What a run leaves once its result was applied: its findings, anchored in
//! the text the writer will see, and its report.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::receipts::audit;
use crate::runs::contract;
use crate::runs::findings::{self, RunFindings};
use crate::runs::output::delivery::{Applied, Delivery};
use crate::runs::output::draft;
use crate::runs::recipe::Recipe;
use crate::runs::store::{self, Cache, CacheSlot, Disk, RunFiles, RunManifest};

use super::{ReportInput, render, write};

/// What a run leaves after delivery: its findings (anchored in the text
/// the writer will see) and its report.
pub struct Concluded {
    pub findings: RunFindings,
    /// The report's workspace-relative path, or why it could not be written.
    pub report: std::io::Result<String>,
    /// Whether `findings.json` could be written.
    pub findings_written: std::io::Result<()>,
}

/// Writes the run's findings and its report, once its result was applied;
/// `cache` is the run's slots (read once at its end).
/// `text_of` gives a file's current text (the editor's, else the disk's).
pub fn conclude(
    root: &Path,
    recipe: Option<&Recipe>,
    manifest: &RunManifest,
    cache: &Cache,
    applied: &Applied,
    text_of: &dyn Fn(&str) -> Option<String>,
) -> Concluded {
    let files = RunFiles::new(root, &manifest.run_id);
    let steps = files.read_steps();
    let result_step = recipe.and_then(draft::result_step);
    let scene_path = manifest
        .task
        .initial_args
        .get("scene_path")
        .and_then(Value::as_str);
    let default_file = match &applied.delivery {
        Delivery::Scene(path) | Delivery::Beside { path, .. } => Some(path.as_str()),
        _ => scene_path,
    };
    let slots: BTreeMap<String, Value> = cache
        .iter()
        .filter_map(|(name, slot)| match slot {
            CacheSlot::Artifact { text, .. } => Some((name.clone(), contract::stored_json(text)?)),
            CacheSlot::Pointer { .. } => None,
        })
        .collect();
    let text_of = |path: &str| -> Option<String> {
        match applied.landed.iter().find(|(landed, _)| landed == path) {
            Some((_, text)) => Some(text.clone()),
            None => text_of(path),
        }
    };
    let mut run_findings = findings::collect(manifest, &steps, &slots, default_file, &text_of);
    let receipts = audit::receipt_paths(root, &manifest.run_id);
    let dod_issue = store::dod_issue(root, &manifest.run_id);
    let text = render(
        &ReportInput {
            manifest,
            recipe,
            steps: &steps,
            cache,
            delivery: &applied.delivery,
            result_slot: result_step.map(|step| step.output_slot.as_str()),
            agent_receipts: &receipts,
            dod_issue: dod_issue.as_deref(),
            attempts: &super::kept_attempts(root, &manifest.run_id),
        },
        &mut run_findings,
    );
    let disk = Disk::default();
    let report = write(root, &disk, &manifest.run_id, &text);
    let findings_written = findings::write(root, &disk, &run_findings);
    Concluded {
        findings: run_findings,
        report,
        findings_written,
    }
}

/// Writes the report of a run that could not report itself (the engine
/// could not run it, or its task crashed): nothing was delivered, because of
/// `reason`.
pub fn conclude_failed(root: &Path, recipe: Option<&Recipe>, manifest: &RunManifest, reason: &str) {
    let files = RunFiles::new(root, &manifest.run_id);
    let manifest = files.read_manifest().unwrap_or_else(|_| manifest.clone());
    let mut empty = RunFindings::of_run(&manifest, Vec::new(), Vec::new());
    let text = render(
        &ReportInput {
            manifest: &manifest,
            recipe,
            steps: &files.read_steps(),
            cache: &files.read_cache().unwrap_or_default(),
            delivery: &Delivery::Withheld(format!("because {reason}")),
            result_slot: None,
            agent_receipts: &[],
            dod_issue: None,
            attempts: &super::kept_attempts(root, &manifest.run_id),
        },
        &mut empty,
    );
    // The report is for reading; a run is whole without it.
    let _ = write(root, &Disk::default(), &manifest.run_id, &text);
}

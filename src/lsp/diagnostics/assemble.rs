//! The one place a file's diagnostics are put together, for push and pull
//! alike: the checks' diagnostics (cached), the agents' findings anchored in
//! the current text, the evidence diagnostics of open documents with
//! Evidence lines, and, for the documents the editor opens beside the
//! manuscript (project recipes, plan checklists, the knowledge base), their
//! own diagnostics.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tower_lsp_server::ls_types as lsp;

use std::sync::Mutex;

use super::{DiagnosticsCache, HealthPass};
use crate::index::FilePath;
use crate::lsp::shared::lock;
use crate::lsp::snapshot::Snapshot;

/// A file's diagnostics, shared with the cache when nothing was added.
pub type FileDiagnostics = (FilePath, Arc<Vec<lsp::Diagnostic>>);

/// The diagnostics of the manuscript's files (only `only`, when given),
/// with findings and evidence merged in.
/// A full pass (`only` is `None`) measures the story's health afresh.
pub fn files(
    cache: &Mutex<DiagnosticsCache>,
    snapshot: &Snapshot,
    only: Option<&[FilePath]>,
) -> Vec<FileDiagnostics> {
    let health = match only {
        None => HealthPass::Fresh(&snapshot.health),
        Some(_) => HealthPass::Skip,
    };
    files_with(cache, snapshot, only, health)
}

/// [`files`], with the story's health as `health` says.
pub fn files_with(
    cache: &Mutex<DiagnosticsCache>,
    snapshot: &Snapshot,
    only: Option<&[FilePath]>,
    health: HealthPass,
) -> Vec<FileDiagnostics> {
    let computed = super::compute(cache, &snapshot.workspace, only, snapshot.encoding, health);
    with_overlays(computed, snapshot)
}

/// Every file's diagnostics, with the story's health as last measured,
/// unless `stop` says to give the pass up first (see
/// [`super::compute_unless`]).
pub fn all_files_unless(
    cache: &Mutex<DiagnosticsCache>,
    snapshot: &Snapshot,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Vec<FileDiagnostics>> {
    let computed = super::compute_unless(
        cache,
        &snapshot.workspace,
        None,
        snapshot.encoding,
        HealthPass::Last,
        stop,
    )?;
    Some(with_overlays(computed, snapshot))
}

/// The files whose diagnostics the story's health, measured afresh,
/// changed since the last pass (see [`super::refresh_health`]).
pub fn health_changes(
    cache: &Mutex<DiagnosticsCache>,
    snapshot: &Snapshot,
) -> Vec<FileDiagnostics> {
    let computed = super::refresh_health(
        cache,
        &snapshot.workspace,
        snapshot.encoding,
        &snapshot.health,
    );
    with_overlays(computed, snapshot)
}

/// Each file's diagnostics with its agents' findings and, for an open
/// document with Evidence lines, its evidence diagnostics added.
fn with_overlays(computed: Vec<FileDiagnostics>, snapshot: &Snapshot) -> Vec<FileDiagnostics> {
    let (workspace, encoding) = (&snapshot.workspace, snapshot.encoding);
    let findings = &snapshot.findings;
    let files: HashSet<String> = lock(findings)
        .files()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let open: HashSet<FilePath> = computed
        .iter()
        .filter(|(path, _)| snapshot.open.contains(path))
        .map(|(path, _)| path.clone())
        .collect();
    let mut evidence: HashMap<FilePath, Vec<lsp::Diagnostic>> =
        crate::lsp::evidence::diagnostics(&snapshot.receipts, workspace, &open, encoding)
            .into_iter()
            .collect();
    computed
        .into_iter()
        .map(|(path, diagnostics)| {
            let found = evidence.remove(&path).filter(|found| !found.is_empty());
            if !files.contains(path.as_ref()) && found.is_none() {
                return (path, diagnostics);
            }
            let mut merged = (*diagnostics).clone();
            if files.contains(path.as_ref()) {
                merged.extend(crate::lsp::findings::diagnostics(
                    findings, workspace, &path, encoding,
                ));
            }
            merged.extend(found.unwrap_or_default());
            (path, Arc::new(merged))
        })
        .collect()
}

/// The diagnostics of the documents open beside the manuscript (project
/// recipes, plan checklists, the knowledge base), with their versions.
pub fn side_documents(snapshot: &Snapshot) -> Vec<(FilePath, Vec<lsp::Diagnostic>, i32)> {
    let (workspace, encoding) = (&snapshot.workspace, snapshot.encoding);
    let mut found = crate::lsp::recipes::diagnostics(workspace.root(), &snapshot.recipes, encoding);
    if !snapshot.plans.is_empty() {
        found.extend(crate::lsp::plans::diagnostics(
            workspace,
            &snapshot.registry,
            &snapshot.plans,
            encoding,
        ));
    }
    found.extend(crate::lsp::knowledge::diagnostics(
        workspace,
        &snapshot.kb,
        encoding,
    ));
    found
}

/// One document's diagnostics, as a pull asks for them: a side document's
/// own, else the file's. While the index is incomplete, the outline's are
/// withheld (it would call every unread scene missing).
pub fn document(
    cache: &Mutex<DiagnosticsCache>,
    snapshot: &Snapshot,
    path: &FilePath,
    indexed: bool,
) -> Vec<lsp::Diagnostic> {
    let beside = |open: &[crate::lsp::recipes::OpenRecipe]| open.iter().any(|(p, _, _)| p == path);
    if beside(&snapshot.recipes) || beside(&snapshot.plans) || beside(&snapshot.kb) {
        return side_documents(snapshot)
            .into_iter()
            .find(|(open, _, _)| open == path)
            .map(|(_, diagnostics, _)| diagnostics)
            .unwrap_or_default();
    }
    let outline = snapshot
        .workspace
        .file(path)
        .is_some_and(|file| file.outline().is_some());
    if !indexed && outline {
        return Vec::new();
    }
    let only = std::slice::from_ref(path);
    let health = if indexed {
        HealthPass::Fresh(&snapshot.health)
    } else {
        HealthPass::Skip
    };
    let computed = super::compute(
        cache,
        &snapshot.workspace,
        Some(only),
        snapshot.encoding,
        health,
    );
    with_overlays(computed, snapshot)
        .into_iter()
        .flat_map(|(_, diagnostics)| (*diagnostics).clone())
        .collect()
}

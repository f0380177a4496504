//! Pushing diagnostics: computed on a snapshot off the session's lock, sent
//! with the version they were computed for, and only while the document has
//! not moved on (a newer pass follows). The open documents go first, so
//! the writer's scene never waits for the rest of the manuscript; the
//! files an edit changes elsewhere follow, then the story's health; a
//! keystroke stops that pass between two files' checks (on two cores, its
//! threads and their allocations slowed the keystroke's own). A
//! client that pulls is asked to pull again instead. A client is also asked for semantic tokens and
//! inlay hints again when what they read across files changed.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tower_lsp_server::Client;
use tower_lsp_server::ls_types as lsp;

use super::assemble;
use super::{DiagnosticsCache, HealthPass};
use crate::index::FilePath;
use crate::index::config::CONFIG_FILE;
use crate::lsp::convert::{uri_for, uri_for_absolute};
use crate::lsp::pools;
use crate::lsp::session::Session;
use crate::lsp::shared::lock;

/// How long the rest of the manuscript waits after the open documents are
/// sent: a writer still typing asks for the next pass first, which does
/// the rest on a newer snapshot, so a run of keystrokes checks the
/// manuscript once, when it pauses.
const REST_AFTER_OPEN: std::time::Duration = std::time::Duration::from_millis(100);

/// How the client gets diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagnosticsMode {
    Push,
    Pull,
}

/// Computes diagnostics on a snapshot and sends what changed (or, to a
/// client that pulls, asks it to pull again once the index is complete).
pub async fn publish(
    client: Client,
    session: Arc<Mutex<Session>>,
    cache: Arc<Mutex<DiagnosticsCache>>,
    mode: DiagnosticsMode,
    refresh: bool,
) {
    let gates = lock(&cache).gates.clone();
    // Each pass is numbered when asked for. It takes its snapshot in turn,
    // and only while no later pass has been asked for (that one will take
    // a newer snapshot): the passes that run take their snapshots in the
    // order of their numbers.
    let pass = gates.asked.fetch_add(1, Ordering::SeqCst) + 1;
    let open_turn = gates.open.lock().await;
    if gates.asked.load(Ordering::SeqCst) != pass {
        return;
    }
    let (snapshot, indexed, versions, open_documents, (tokens_changed, hints_changed)) = {
        let mut session = lock(&session);
        let versions: HashMap<FilePath, i32> = session
            .documents
            .iter()
            .map(|(path, document)| (path.clone(), document.version))
            .collect();
        // Until the index is complete, only open scenes and cards are
        // checked: the outline would otherwise list every unread scene as
        // missing.
        // Before the cards and the outline are indexed, nothing is checked
        // (every name would be unknown): their indexing publishes at once.
        let indexed = session.indexed;
        let checkable = session.checkable;
        let open_documents: Vec<FilePath> = session
            .open_paths()
            .into_iter()
            .filter(|_| checkable)
            .filter(|path| {
                indexed
                    || session
                        .workspace
                        .file(path)
                        .is_some_and(|file| file.scene().is_some() || file.card().is_some())
            })
            .collect();
        (
            session.snapshot_for_diagnostics(),
            indexed,
            versions,
            open_documents,
            session.views_changed(),
        )
    };
    // The dates, ages or calendar the inlay hints show changed.
    if hints_changed {
        let client = client.clone();
        tokio::spawn(async move { client.inlay_hint_refresh().await });
    }
    // The names, deaths or order that colour the open files changed.
    if tokens_changed {
        let client = client.clone();
        tokio::spawn(async move { client.semantic_tokens_refresh().await });
    }
    if mode == DiagnosticsMode::Pull {
        if refresh && indexed {
            let _ = client.workspace_diagnostic_refresh().await;
        }
        return;
    }
    let workspace = snapshot.workspace.clone();
    let snapshot = Arc::new(snapshot);
    let versions = Arc::new(versions);
    // The story's health as last measured: the documents' own diagnostics
    // do not wait for the book to be measured again.
    let health = if indexed {
        HealthPass::Last
    } else {
        HealthPass::Skip
    };
    // First the open documents, with the configuration file and the side
    // documents.
    let first = {
        let (cache, snapshot, versions) = (cache.clone(), snapshot.clone(), versions.clone());
        pools::run(pools::foreground(), move || {
            let computed = assemble::files_with(&cache, &snapshot, Some(&open_documents), health);
            let mut cache = lock(&cache);
            let changes =
                cache.changes_to_publish(&snapshot.workspace, computed, false, &versions, pass);
            let config = if indexed {
                cache.config_change(&snapshot.workspace, snapshot.encoding)
            } else {
                None
            };
            let side = cache.recipe_changes(assemble::side_documents(&snapshot));
            (changes, config, side)
        })
        .await
    };
    let Some((changes, config, side)) = first else {
        return;
    };
    let changes = changes.into_iter().chain(
        side.into_iter()
            .map(|(path, diagnostics, version)| (path, Arc::new(diagnostics), version)),
    );
    let to = To { client: &client };
    send(to, &session, &workspace, changes, || false).await;
    if let Some(config) = config
        && let Some(uri) = uri_for_absolute(&workspace.root().join(CONFIG_FILE))
    {
        to.publish(&uri, &config, None).await;
    }
    drop(open_turn);
    if !indexed {
        return;
    }
    publish_the_rest(to, &session, cache, snapshot, &versions, pass, &gates).await;
}

/// Every other file (what the change did to the files that read it), and
/// the story's health, measured afresh: the files it changed. Unless a
/// later pass is asked for first, which does it on a newer snapshot.
async fn publish_the_rest(
    to: To<'_>,
    session: &Arc<Mutex<Session>>,
    cache: Arc<Mutex<DiagnosticsCache>>,
    snapshot: Arc<super::super::snapshot::Snapshot>,
    versions: &Arc<HashMap<FilePath, i32>>,
    pass: u64,
    gates: &Arc<super::Gates>,
) {
    let later = || gates.asked.load(Ordering::SeqCst) != pass;
    tokio::time::sleep(REST_AFTER_OPEN).await;
    if later() {
        return;
    }
    let _rest_turn = gates.rest.lock().await;
    if later() {
        return;
    }
    let workspace = snapshot.workspace.clone();
    let versions = versions.clone();
    let kept = cache.clone();
    let gates_held = gates.clone();
    let rest = pools::run(pools::background(), move || {
        // The writer typed: the pass asked for then does this work, after
        // its own pause, on its own snapshot. Meanwhile the cores are the
        // keystroke's.
        let later = || gates_held.asked.load(Ordering::SeqCst) != pass;
        let computed = assemble::all_files_unless(&cache, &snapshot, &later)?;
        let mut changes =
            lock(&cache).changes_to_publish(&snapshot.workspace, computed, true, &versions, pass);
        // Recorded as to be sent: left unsent, they go with the next pass.
        if later() {
            return Some(changes);
        }
        let computed = assemble::health_changes(&cache, &snapshot);
        changes.extend(lock(&cache).changes_to_publish(
            &snapshot.workspace,
            computed,
            false,
            &versions,
            pass,
        ));
        Some(changes)
    })
    .await
    .flatten();
    if let Some(changes) = rest {
        // A pass asked for meanwhile (the writer typed) goes out before
        // the rest of this one, which it sends itself.
        let unsent = send(to, session, &workspace, changes.into_iter(), later).await;
        lock(&kept).left_unsent(unsent);
    }
}

/// Publishes each file's diagnostics with the version they were computed
/// for, and only if the document has not moved on since (a newer pass
/// follows). Stops when `stop` says so: the files not sent.
async fn send(
    to: To<'_>,
    session: &Arc<Mutex<Session>>,
    workspace: &crate::index::Workspace,
    changes: impl Iterator<
        Item = (
            FilePath,
            Arc<Vec<tower_lsp_server::ls_types::Diagnostic>>,
            Option<i32>,
        ),
    >,
    stop: impl Fn() -> bool,
) -> Vec<FilePath> {
    let mut changes = changes.into_iter();
    while let Some((path, diagnostics, version)) = changes.next() {
        if stop() {
            return std::iter::once(path)
                .chain(changes.map(|(path, _, _)| path))
                .collect();
        }
        let Some(uri) = uri_for(workspace, &path) else {
            continue;
        };
        if lock(session).version(&path) != version {
            continue;
        }
        to.publish(&uri, &diagnostics, version).await;
    }
    Vec::new()
}

/// Where diagnostics go: the client, through the framework.
#[derive(Clone, Copy)]
struct To<'a> {
    client: &'a Client,
}

impl To<'_> {
    async fn publish(self, uri: &lsp::Uri, diagnostics: &[lsp::Diagnostic], version: Option<i32>) {
        self.client
            .publish_diagnostics(uri.clone(), diagnostics.to_vec(), version)
            .await;
    }
}

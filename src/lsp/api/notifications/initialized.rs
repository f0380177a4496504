//! `initialized`: watched files registered, then the initial index in a task of its own: cards and outline (read for the catalog alone where they can be; the index cache is read after their first diagnostics) and anti-pattern sheet first, the open documents checked, the cards and outline parsed, then the rest in batches with `$/progress`.

use std::sync::{Arc, Mutex};

use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::{Bounded, NotCancellable, OngoingProgress};

use crate::index::cache::LazyCache;
use crate::index::config::CONFIG_FILE;
use crate::index::{FileKind, FilePath, IndexCache};
use crate::lsp::diagnostics::DiagnosticsCache;
use crate::lsp::diagnostics::publish::{DiagnosticsMode, publish as publish_diagnostics};
use crate::lsp::session::Session;
use crate::lsp::shared::lock;
use crate::lsp::state::{ClientSupport, INDEX_BATCH, Server};

pub(crate) async fn initialized(server: &Server, _: lsp::InitializedParams) {
    if server.support().watched_files_registration {
        let recipes = format!("**/{}/*.json", crate::runs::recipe::PROJECT_DIR);
        let dictionary = {
            let session = server.session.get().map(|session| lock(session));
            let path = session
                .as_ref()
                .map(|session| session.workspace.dictionary_path().to_owned());
            format!("**/{}", path.unwrap_or_default())
        };
        let watchers = [
            "**/*.md",
            "**/*.markdown",
            &format!("**/{CONFIG_FILE}"),
            &recipes,
            &dictionary,
        ]
        .into_iter()
        .map(|glob| lsp::FileSystemWatcher {
            glob_pattern: lsp::GlobPattern::String(glob.to_owned()),
            kind: None,
        })
        .collect();
        let options = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = lsp::Registration {
            id: "control-room-watched-files".to_owned(),
            method: "workspace/didChangeWatchedFiles".to_owned(),
            register_options: serde_json::to_value(options).ok(),
        };
        let _ = server.client.register_capability(vec![registration]).await;
    }
    index_workspace(server).await;
}

/// Builds the index in its own task, so that nothing the editor sends
/// meanwhile (a scene opened, a request) waits for it or it for them.
pub(crate) async fn index_workspace(server: &Server) {
    let Some(indexer) = Indexer::of(server) else {
        return;
    };
    tokio::spawn(indexer.run());
}

/// What the initial index needs of the server.
struct Indexer {
    client: tower_lsp_server::Client,
    session: Arc<Mutex<Session>>,
    diagnostics: Arc<Mutex<DiagnosticsCache>>,
    mode: DiagnosticsMode,
    support: ClientSupport,
    indexed: tokio::sync::watch::Sender<bool>,
}

impl Indexer {
    fn of(server: &Server) -> Option<Indexer> {
        Some(Indexer {
            client: server.client.clone(),
            session: server.session.get()?.clone(),
            diagnostics: server.diagnostics.clone(),
            mode: server.mode(),
            support: server.support(),
            indexed: server.indexed.clone(),
        })
    }

    async fn publish(&self, refresh: bool) {
        publish_diagnostics(
            self.client.clone(),
            self.session.clone(),
            self.diagnostics.clone(),
            self.mode,
            refresh,
        )
        .await;
    }

    /// The progress the client is shown, where it takes it.
    async fn begin_progress(&self) -> Option<OngoingProgress<Bounded, NotCancellable>> {
        let token = lsp::ProgressToken::String("control-room/index".to_owned());
        if !self.support.work_done_progress
            || self
                .client
                .create_work_done_progress(token.clone())
                .await
                .is_err()
        {
            return None;
        }
        Some(
            self.client
                .progress(token, "Indexing manuscript")
                .with_percentage(0)
                .begin()
                .await,
        )
    }

    /// Parses the cards and the outline read for the catalog alone (see
    /// [`crate::index::SourceFile::catalogued`]) and puts them in the index.
    async fn parse_catalogued(&self, paths: Vec<FilePath>, cache: &Arc<IndexCache>) {
        if paths.is_empty() {
            return;
        }
        let workspace = lock(&self.session).workspace.clone();
        let cache = cache.clone();
        if let Ok(files) = tokio::task::spawn_blocking(move || {
            crate::lsp::pools::background()
                .install(|| workspace.read_files_cached(&paths, Some(&cache)))
        })
        .await
        {
            lock(&self.session).insert_indexed(files);
        }
    }

    /// Builds the index in priority order (cards, outline and anti-pattern
    /// sheet first, so the open scene can be checked at once), then the rest
    /// in batches, reporting progress; requests are answered meanwhile from
    /// what is indexed so far. Each file's syntax comes from the index's
    /// cache when it holds its text.
    async fn run(self) {
        let session = self.session.clone();
        let workspace = lock(&session).workspace.clone();
        // What the checks load on first use is loaded beside the index.
        tokio::task::spawn_blocking(crate::prose::warm_up);
        // Grammar's memo of the last start, before anything is published:
        // harper loads only for a paragraph of an open scene it lacks.
        let memo = {
            let workspace = workspace.clone();
            tokio::task::spawn_blocking(move || {
                if workspace.config().language.grammar != crate::index::config::GrammarScope::Off {
                    crate::language::saved::load(workspace.root());
                }
            })
        };
        // The cards and the outline are read while the client is asked to
        // show the progress.
        let priority = {
            let workspace = workspace.clone();
            tokio::task::spawn_blocking(move || read_priority(&workspace))
        };
        // Findings of earlier runs come back before anything is published.
        let findings = {
            let root = workspace.root().to_path_buf();
            tokio::task::spawn_blocking(move || crate::runs::findings::FindingStore::load(&root))
        };
        let progress = self.begin_progress().await;
        if let Ok(store) = findings.await {
            *lock(&lock(&session).findings) = store;
        }
        let _ = memo.await;
        let Ok((priority_files, rest, cache)) = priority.await else {
            if let Some(progress) = progress {
                progress.finish_with_message("indexing failed").await;
            }
            // Nothing more will come: whoever waits for the index goes on.
            lock(&session).checkable = true;
            self.indexed.send_replace(true);
            return;
        };
        let catalogued: Vec<FilePath> = priority_files
            .iter()
            .filter(|file| file.catalogued)
            .map(|file| file.path.clone())
            .collect();
        // The others the cache holds were parsed, the cache not read for them.
        let parsed: Vec<(FilePath, Arc<str>)> = priority_files
            .iter()
            .filter(|file| file.is_cached_syntax())
            .map(|file| (file.path.clone(), file.text.clone()))
            .collect();
        {
            let mut session = lock(&session);
            session.insert_indexed(priority_files);
            session.checkable = true;
        }
        // The open documents can be checked now: publish without debounce.
        self.publish(false).await;
        // The cache is read once the first diagnostics are out; the files
        // parsed for them count as read through it.
        let cache = tokio::task::spawn_blocking(move || {
            let cache = cache.get().clone();
            for (path, text) in parsed {
                cache.note_parsed(&path, &text);
            }
            cache
        })
        .await
        .unwrap_or_default();
        // What was read for the catalog alone is parsed now, before the rest.
        self.parse_catalogued(catalogued, &cache).await;

        let total = rest.len().max(1);
        let mut done = 0;
        for batch in rest.chunks(INDEX_BATCH) {
            let workspace = lock(&session).workspace.clone();
            let batch = batch.to_vec();
            let cache = cache.clone();
            let Ok(files) = tokio::task::spawn_blocking(move || {
                crate::lsp::pools::background()
                    .install(|| workspace.read_files_cached(&batch, Some(&cache)))
            })
            .await
            else {
                continue;
            };
            done += files.len();
            lock(&session).insert_indexed(files);
            if let Some(progress) = &progress {
                progress
                    .report_with_message(
                        format!("{done}/{total} files"),
                        (done * 100 / total) as u32,
                    )
                    .await;
            }
        }
        lock(&session).finish_indexing();
        // The parses freed far more than the index keeps.
        crate::lsp::memory::give_back();
        self.indexed.send_replace(true);
        let hits = cache.hits();
        if cache.is_stale() {
            // Saved beside the first diagnostics, never before them; a folder
            // that cannot be written is indexed afresh next time.
            let workspace = lock(&session).workspace.clone();
            tokio::task::spawn_blocking(move || {
                let _ = cache.save(workspace.root(), workspace.files().map(|file| &**file));
            });
        }
        if let Some(progress) = progress {
            let files = lock(&session).workspace.files().len();
            let message = match hits {
                0 => format!("{files} files indexed"),
                hits => format!("{files} files indexed, {hits} unchanged since the last start"),
            };
            progress.finish_with_message(message).await;
        }
        // One pass over the whole manuscript, with harper loaded first when
        // an open scene's paragraph went unlinted for want of it: a second
        // pass for grammar alone would race the writer's changes.
        let workspace = lock(&session).workspace.clone();
        let _ = tokio::task::spawn_blocking(move || {
            crate::language::grammar::load_if_wanted(&workspace)
        })
        .await;
        self.publish(self.support.diagnostic_refresh).await;
        // And so did the pass over the whole manuscript.
        crate::lsp::memory::give_back();
    }
}

/// The files the first diagnostics need, read (see [`priority_first`]),
/// the rest of the manuscript's paths, and the index's cache, to be read
/// once those diagnostics are out. The files are read on the open
/// documents' pool: on rayon's global one, a scene or card opened
/// meanwhile, whose catalog is built there, would wait for the read to end
/// with the session locked.
fn read_priority(
    workspace: &crate::index::Workspace,
) -> (Vec<crate::index::SourceFile>, Vec<FilePath>, Arc<LazyCache>) {
    let cache = Arc::new(LazyCache::new(workspace.root()));
    let paths = workspace.discover();
    let (priority, rest) = priority_first(paths, &workspace.config().paths);
    let files = crate::lsp::pools::foreground()
        .install(|| workspace.read_files_for_catalog(&priority, Some(&cache)));
    (files, rest, cache)
}

/// The cards, the outline and the anti-pattern sheet, whose index the
/// first diagnostics need, and the rest, each in `paths`' order but for the
/// outline, first: read last, it would keep one core busy while the others
/// wait (it is several cards' worth), and the open scene with them.
fn priority_first(
    paths: Vec<FilePath>,
    config: &crate::index::config::PathsConfig,
) -> (Vec<FilePath>, Vec<FilePath>) {
    let order = |path: &FilePath| match crate::index::file::classify(path, None, config) {
        FileKind::Outline => 0,
        FileKind::AntiPatterns => 1,
        FileKind::Card { .. } => 2,
        _ => 3,
    };
    let mut ordered: Vec<(u8, FilePath)> =
        paths.into_iter().map(|path| (order(&path), path)).collect();
    ordered.sort_by_key(|(order, _)| *order);
    let first_other = ordered.partition_point(|(order, _)| *order < 3);
    let rest = ordered.drain(first_other..).map(|(_, path)| path).collect();
    let priority = ordered.into_iter().map(|(_, path)| path).collect();
    (priority, rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::test_support::{example_copy, hold_rayons_pool};

    /// The start read the cards and the outline on rayon's global pool,
    /// where a card opened meanwhile builds the catalog's name automaton
    /// (`rayon::join` from outside the pool): its didOpen waited for the
    /// read, the session locked. With the global pool's every thread held,
    /// the read must still end.
    #[test]
    fn the_starts_read_of_the_cards_leaves_rayons_global_pool_free() {
        let (_dir, workspace) = example_copy();
        let held = hold_rayons_pool();
        let (read, answer) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (files, rest, _) = read_priority(&workspace);
            let _ = read.send((files.len(), rest.len()));
        });
        let answered = answer.recv_timeout(std::time::Duration::from_secs(5));
        drop(held);
        let (cards, rest) = answered.expect("the read of the cards waited for rayon's global pool");
        assert!(
            cards > 3 && rest > 3,
            "{cards} priority files, {rest} others"
        );
    }
}

//! The server's state and the helpers every handler uses: the session
//! (applied in arrival order), snapshots for queries off its lock with
//! panics turned into error replies, the diagnostics schedule, what the
//! client supports, and the runs in flight.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error as RpcError, Result as RpcResult};
use tower_lsp_server::ls_types as lsp;

use super::diagnostics::DiagnosticsCache;
use super::diagnostics::publish::{DiagnosticsMode, publish as publish_diagnostics};
use super::runs::{self, Runs};
use super::session::Session;
use super::shared::lock;
use super::snapshot::Snapshot;
use crate::runs::launch::panic_message;

/// Files read per batch of the initial index, between progress reports.
pub(crate) const INDEX_BATCH: usize = 48;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClientSupport {
    pub(crate) work_done_progress: bool,
    pub(crate) watched_files_registration: bool,
    pub(crate) diagnostic_refresh: bool,
    pub(crate) edits: runs::EditSupport,
}

pub struct Server {
    pub(crate) client: Client,
    pub(crate) session: OnceLock<Arc<Mutex<Session>>>,
    pub(crate) diagnostics: Arc<Mutex<DiagnosticsCache>>,
    pub(crate) mode: OnceLock<DiagnosticsMode>,
    pub(crate) support: OnceLock<ClientSupport>,
    pub(crate) runs: Arc<Runs>,
    /// Turns true when the initial index is complete.
    pub(crate) indexed: tokio::sync::watch::Sender<bool>,
    /// Diagnostics passes scheduled so far: a pass waiting out its pause
    /// is dropped only for a later one, which takes a newer snapshot.
    pub(crate) scheduled: Arc<AtomicU64>,
}

/// How long a pull from a client that cannot be asked to pull again waits
/// for the initial index, rather than keep an answer from part of it.
pub(crate) const PULL_WAITS_FOR_INDEX: Duration = Duration::from_secs(20);

impl Server {
    pub fn new(client: Client) -> Server {
        Server {
            client,
            session: OnceLock::new(),
            diagnostics: Arc::new(Mutex::new(DiagnosticsCache::default())),
            mode: OnceLock::new(),
            support: OnceLock::new(),
            runs: Arc::new(Runs::default()),
            indexed: tokio::sync::watch::Sender::new(false),
            scheduled: Arc::new(AtomicU64::new(0)),
        }
    }

    /// What a run started from the editor needs of the server.
    pub(crate) fn run_context(&self) -> Option<runs::Context> {
        let session = self.session.get()?.clone();
        let republish = {
            let client = self.client.clone();
            let session = session.clone();
            let diagnostics = self.diagnostics.clone();
            let mode = self.mode();
            let refresh = self.support().diagnostic_refresh;
            Arc::new(move || {
                tokio::spawn(publish_diagnostics(
                    client.clone(),
                    session.clone(),
                    diagnostics.clone(),
                    mode,
                    refresh,
                ));
            })
        };
        Some(runs::Context {
            client: self.client.clone(),
            session,
            runs: self.runs.clone(),
            support: self.support().edits,
            republish,
        })
    }

    pub(crate) fn session(&self) -> Option<MutexGuard<'_, Session>> {
        self.session.get().map(|session| lock(session))
    }

    pub(crate) fn mode(&self) -> DiagnosticsMode {
        *self.mode.get().unwrap_or(&DiagnosticsMode::Push)
    }

    pub(crate) fn support(&self) -> ClientSupport {
        self.support.get().copied().unwrap_or_default()
    }

    pub(crate) fn snapshot(&self) -> Option<Snapshot> {
        Some(self.session()?.snapshot())
    }

    /// Runs a query on a snapshot, turning a panic into an error reply.
    pub(crate) async fn query<T: Send + 'static>(
        &self,
        name: &'static str,
        handler: impl FnOnce(&Snapshot) -> T + Send + 'static,
    ) -> RpcResult<T> {
        let Some(snapshot) = self.snapshot() else {
            return Err(RpcError::invalid_request());
        };
        match catch_unwind(AssertUnwindSafe(|| {
            // Debug builds can be told to panic in one handler, so the tests can
            // prove that a panic becomes an error reply and the server lives on.
            if cfg!(debug_assertions)
                && std::env::var("CONTROL_ROOM_TEST_PANIC_IN").is_ok_and(|wanted| wanted == name)
            {
                panic!("panic requested in {name}");
            }
            handler(&snapshot)
        })) {
            Ok(result) => Ok(result),
            Err(panic) => {
                let message = format!("{name} failed: {}", panic_message(&panic));
                self.client
                    .log_message(lsp::MessageType::ERROR, &message)
                    .await;
                Err(RpcError {
                    code: tower_lsp_server::jsonrpc::ErrorCode::InternalError,
                    message: message.into(),
                    data: None,
                })
            }
        }
    }

    /// Applies a state change synchronously; a panic is logged, never fatal.
    pub(crate) fn mutate(
        &self,
        name: &str,
        change: impl FnOnce(&mut Session),
    ) -> Result<(), String> {
        let Some(session) = self.session.get() else {
            return Ok(());
        };
        let mut session = lock(session);
        catch_unwind(AssertUnwindSafe(|| change(&mut session)))
            .map_err(|panic| format!("{name} failed: {}", panic_message(&panic)))
    }

    pub(crate) async fn report_failure(&self, result: Result<(), String>) {
        if let Err(message) = result {
            self.client
                .log_message(lsp::MessageType::ERROR, message)
                .await;
        }
    }

    /// Recomputes and publishes diagnostics after the debounce delay, unless
    /// another change schedules its own pass meanwhile.
    pub(crate) fn schedule_diagnostics(&self) {
        self.schedule_diagnostics_in(Pause::Debounce);
    }

    /// Recomputes and publishes diagnostics as soon as it can (opening a
    /// document is not typing: the writer waits for nothing), unless another
    /// change arrives first. Before the cards and the outline are indexed
    /// (its names would all be unknown) it waits as typing does; their
    /// index publishes every open document when it is in.
    pub(crate) fn publish_soon(&self) {
        let checkable = self
            .session
            .get()
            .is_some_and(|session| lock(session).checkable);
        self.schedule_diagnostics_in(if checkable {
            Pause::None
        } else {
            Pause::Debounce
        });
    }

    fn schedule_diagnostics_in(&self, pause: Pause) {
        let Some(session) = self.session.get().cloned() else {
            return;
        };
        let delay = {
            let session = lock(&session);
            let debounce = session
                .editor_debounce_ms
                .unwrap_or(session.workspace.config().diagnostics.debounce_ms);
            match pause {
                Pause::Debounce => Duration::from_millis(debounce),
                Pause::None => Duration::ZERO,
            }
        };
        let scheduled = self.scheduled.clone();
        let this = scheduled.fetch_add(1, Ordering::SeqCst) + 1;
        let diagnostics = self.diagnostics.clone();
        let client = self.client.clone();
        let mode = self.mode();
        let refresh = self.support().diagnostic_refresh;
        tokio::spawn(async move {
            // No timer for no delay: the timer wheel turns once a millisecond.
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            // A change scheduled since has its own pass; any other change
            // (the index's files, a reloaded dictionary) is in this one's.
            if scheduled.load(Ordering::SeqCst) != this {
                return;
            }
            publish_diagnostics(
                client.clone(),
                session.clone(),
                diagnostics.clone(),
                mode,
                refresh,
            )
            .await;
            load_grammar_then_publish(client, session, diagnostics, mode, refresh).await;
        });
    }

    /// After a pulled document's diagnostics: harper loads, and the client
    /// is asked to pull again, when they left a paragraph unlinted for want
    /// of it.
    pub(crate) fn load_grammar_when_wanted(&self) {
        if !crate::language::grammar::wanted() {
            return;
        }
        let Some(session) = self.session.get().cloned() else {
            return;
        };
        tokio::spawn(load_grammar_then_publish(
            self.client.clone(),
            session,
            self.diagnostics.clone(),
            self.mode(),
            self.support().diagnostic_refresh,
        ));
    }
}

/// Loads harper when a check left a paragraph of an open scene unlinted for
/// want of it (see `language::grammar::load_if_wanted`), then publishes
/// again: a pass asked for now takes the newest snapshot, so it can only
/// add the grammar the last one lacked.
async fn load_grammar_then_publish(
    client: Client,
    session: Arc<Mutex<Session>>,
    diagnostics: Arc<Mutex<DiagnosticsCache>>,
    mode: DiagnosticsMode,
    refresh: bool,
) {
    if !crate::language::grammar::wanted() {
        return;
    }
    let workspace = lock(&session).workspace.clone();
    let loaded =
        tokio::task::spawn_blocking(move || crate::language::grammar::load_if_wanted(&workspace))
            .await;
    if matches!(loaded, Ok(true)) {
        publish_diagnostics(client, session, diagnostics, mode, refresh).await;
    }
}

/// How long diagnostics wait after a change.
#[derive(Clone, Copy)]
enum Pause {
    /// The writer's debounce: more keystrokes may follow.
    Debounce,
    None,
}

impl Server {
    pub(crate) async fn reload_workspace(&self) {
        self.read_workspace_again().await;
        // Grammar turned on, or other rules: harper loads when the pass
        // meets a paragraph the memo lacks.
        self.schedule_diagnostics();
    }

    /// Loads the whole workspace from disk off the session's lock and swaps
    /// it in (open documents keep the editor's text).
    pub(crate) async fn read_workspace_again(&self) {
        let Some(session) = self.session.get().cloned() else {
            return;
        };
        let root = lock(&session).workspace.root().to_path_buf();
        match tokio::task::spawn_blocking(move || crate::index::Workspace::load(&root)).await {
            Ok(workspace) => lock(&session).replace_workspace(workspace),
            Err(error) => {
                let message = format!("reloading the manuscript failed: {error}");
                self.client
                    .log_message(lsp::MessageType::ERROR, message)
                    .await;
            }
        }
    }

    /// Publishes every file's diagnostics now (or asks the client to pull).
    pub(crate) async fn publish_now(&self, session: Arc<Mutex<Session>>) {
        publish_diagnostics(
            self.client.clone(),
            session,
            self.diagnostics.clone(),
            self.mode(),
            self.support().diagnostic_refresh,
        )
        .await;
    }
}

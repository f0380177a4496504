//! The `LanguageServer` implementation: lifecycle, document sync, the initial
//! index, diagnostics scheduling, and dispatch of requests to handlers.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tower_lsp_server::jsonrpc::{Error as RpcError, Result as RpcResult};
use tower_lsp_server::ls_types::{self as lsp, Uri};
use tower_lsp_server::{Client, LanguageServer};

use super::commands::{self, lock};
use super::convert::{path_for, uri_for};
use super::diagnostics::DiagnosticsCache;
use super::diagnostics::assemble;
use super::diagnostics::publish::{DiagnosticsMode, publish as publish_diagnostics};
use super::handlers;
use super::runs::{self, Runs};
use super::session::Session;
use super::snapshot::Snapshot;
use crate::engine::launch::panic_message;
use crate::index::config::CONFIG_FILE;
use crate::index::{FileKind, FilePath};
use crate::text::PositionEncoding;

/// Files read per batch of the initial index, between progress reports.
const INDEX_BATCH: usize = 48;

#[derive(Clone, Copy, Debug, Default)]
struct ClientSupport {
    work_done_progress: bool,
    watched_files_registration: bool,
    diagnostic_refresh: bool,
    edits: runs::EditSupport,
}

pub struct Server {
    client: Client,
    session: OnceLock<Arc<Mutex<Session>>>,
    diagnostics: Arc<Mutex<DiagnosticsCache>>,
    mode: OnceLock<DiagnosticsMode>,
    support: OnceLock<ClientSupport>,
    runs: Arc<Runs>,
    /// Turns true when the initial index is complete.
    indexed: tokio::sync::watch::Sender<bool>,
}

/// How long a pull from a client that cannot be asked to pull again waits
/// for the initial index, rather than keep an answer from part of it.
const PULL_WAITS_FOR_INDEX: Duration = Duration::from_secs(20);

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
        }
    }

    /// What a run started from the editor needs of the server.
    fn run_context(&self) -> Option<runs::Context> {
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

    /// `window/workDoneProgress/cancel`: the writer pressed cancel on a run's progress.
    pub async fn work_done_progress_cancel(&self, params: lsp::WorkDoneProgressCancelParams) {
        self.runs.cancel_by_token(&params.token);
    }

    fn session(&self) -> Option<MutexGuard<'_, Session>> {
        self.session.get().map(|session| lock(session))
    }

    fn mode(&self) -> DiagnosticsMode {
        *self.mode.get().unwrap_or(&DiagnosticsMode::Push)
    }

    fn support(&self) -> ClientSupport {
        self.support.get().copied().unwrap_or_default()
    }

    fn snapshot(&self) -> Option<Snapshot> {
        Some(self.session()?.snapshot())
    }

    /// Runs a query on a snapshot, turning a panic into an error reply.
    async fn query<T: Send + 'static>(
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
    fn mutate(&self, name: &str, change: impl FnOnce(&mut Session)) -> Result<(), String> {
        let Some(session) = self.session.get() else {
            return Ok(());
        };
        let mut session = lock(session);
        catch_unwind(AssertUnwindSafe(|| change(&mut session)))
            .map_err(|panic| format!("{name} failed: {}", panic_message(&panic)))
    }

    async fn report_failure(&self, result: Result<(), String>) {
        if let Err(message) = result {
            self.client
                .log_message(lsp::MessageType::ERROR, message)
                .await;
        }
    }

    /// Recomputes and publishes diagnostics after the debounce delay, unless
    /// another change arrives meanwhile.
    fn schedule_diagnostics(&self) {
        let Some(session) = self.session.get().cloned() else {
            return;
        };
        let (generation, delay) = {
            let session = lock(&session);
            (
                session.generation,
                Duration::from_millis(
                    session
                        .editor_debounce_ms
                        .unwrap_or(session.workspace.config().diagnostics.debounce_ms),
                ),
            )
        };
        let diagnostics = self.diagnostics.clone();
        let client = self.client.clone();
        let mode = self.mode();
        let refresh = self.support().diagnostic_refresh;
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if lock(&session).generation != generation {
                return;
            }
            publish_diagnostics(client, session, diagnostics, mode, refresh).await;
        });
    }
}

impl LanguageServer for Server {
    async fn initialize(&self, params: lsp::InitializeParams) -> RpcResult<lsp::InitializeResult> {
        let root = workspace_root(&params)
            .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
        let root = root.canonicalize().unwrap_or(root);
        let capabilities = &params.capabilities;
        let offers_utf8 = capabilities
            .general
            .as_ref()
            .and_then(|general| general.position_encodings.as_ref())
            .is_some_and(|encodings| encodings.contains(&lsp::PositionEncodingKind::UTF8));
        let encoding = if offers_utf8 {
            PositionEncoding::Utf8
        } else {
            PositionEncoding::Utf16
        };
        let pull = capabilities
            .text_document
            .as_ref()
            .and_then(|text| text.diagnostic.as_ref())
            .is_some();
        let _ = self.mode.set(if pull {
            DiagnosticsMode::Pull
        } else {
            DiagnosticsMode::Push
        });
        let _ = self.support.set(ClientSupport {
            work_done_progress: capabilities
                .window
                .as_ref()
                .and_then(|window| window.work_done_progress)
                .unwrap_or(false),
            watched_files_registration: capabilities
                .workspace
                .as_ref()
                .and_then(|workspace| workspace.did_change_watched_files.as_ref())
                .and_then(|watched| watched.dynamic_registration)
                .unwrap_or(false),
            diagnostic_refresh: capabilities
                .workspace
                .as_ref()
                .and_then(|workspace| workspace.diagnostics.as_ref())
                .and_then(|diagnostics| diagnostics.refresh_support)
                .unwrap_or(false),
            edits: edit_support(capabilities),
        });
        let mut session = Session::new(&root, encoding);
        let settings = params
            .initialization_options
            .as_ref()
            .map(super::settings::read)
            .unwrap_or_default();
        let problems = session.apply_settings(settings);
        for problem in problems {
            self.client
                .log_message(lsp::MessageType::WARNING, problem)
                .await;
        }
        let _ = self.session.set(Arc::new(Mutex::new(session)));
        Ok(lsp::InitializeResult {
            capabilities: capabilities_for(encoding, pull),
            server_info: Some(lsp::ServerInfo {
                name: "control-room".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: lsp::InitializedParams) {
        if self.support().watched_files_registration {
            let recipes = format!("**/{}/*.json", crate::engine::recipe::PROJECT_DIR);
            let watchers = [
                "**/*.md",
                "**/*.markdown",
                &format!("**/{CONFIG_FILE}"),
                &recipes,
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
            let _ = self.client.register_capability(vec![registration]).await;
        }
        self.index_workspace().await;
    }

    async fn shutdown(&self) -> RpcResult<()> {
        Ok(())
    }

    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        let document = params.text_document;
        let result = self.mutate("didOpen", |session| {
            if let Some(path) = path_for(&session.workspace, &document.uri) {
                session.open(path, document.text, document.version);
            }
        });
        self.report_failure(result).await;
        self.schedule_diagnostics();
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        let document = params.text_document;
        let mut out_of_order = Vec::new();
        let result = self.mutate("didChange", |session| {
            if let Some(path) = path_for(&session.workspace, &document.uri) {
                session.change(&path, document.version, params.content_changes);
            }
            out_of_order = std::mem::take(&mut session.out_of_order);
        });
        self.report_failure(result).await;
        for (path, previous, version) in out_of_order {
            let message = format!("{path}: version {version} arrived after version {previous}");
            self.client
                .log_message(lsp::MessageType::WARNING, message)
                .await;
        }
        self.schedule_diagnostics();
    }

    async fn did_save(&self, params: lsp::DidSaveTextDocumentParams) {
        let Some(session) = self.session.get().cloned() else {
            return;
        };
        let saved = {
            let mut session = lock(&session);
            path_for(&session.workspace, &params.text_document.uri)
                .filter(|path| super::session::is_plan_path(path))
                .and_then(|path| {
                    let text = session.documents.get(&path)?.rope.to_string();
                    Some((session.workspace.clone(), session.recipes(), path, text))
                })
        };
        let Some((workspace, registry, path, text)) = saved else {
            return;
        };
        let result = tokio::task::spawn_blocking(move || {
            super::plans::save(&workspace, &registry, &path, &text)
        })
        .await;
        if let Ok(Err(message)) = result {
            self.client
                .show_message(lsp::MessageType::WARNING, message)
                .await;
        }
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        let result = self.mutate("didClose", |session| {
            if let Some(path) = path_for(&session.workspace, &params.text_document.uri) {
                session.close(&path);
            }
        });
        self.report_failure(result).await;
        self.schedule_diagnostics();
    }

    async fn did_change_configuration(&self, params: lsp::DidChangeConfigurationParams) {
        // The change applies before the first `.await`, in arrival order.
        let settings = super::settings::read(&params.settings);
        let mut problems = Vec::new();
        let result = self.mutate("didChangeConfiguration", |session| {
            problems = session.apply_settings(settings);
            session.generation += 1;
        });
        for problem in problems {
            self.client
                .log_message(lsp::MessageType::WARNING, problem)
                .await;
        }
        self.report_failure(result).await;
        self.schedule_diagnostics();
    }

    async fn did_change_watched_files(&self, params: lsp::DidChangeWatchedFilesParams) {
        let config_changed = params.changes.iter().any(|change| {
            change
                .uri
                .to_file_path()
                .is_some_and(|path| path.file_name().is_some_and(|name| name == CONFIG_FILE))
        });
        if config_changed {
            // Paths and settings may all have changed: load everything again,
            // off the session's lock, then swap it in.
            self.reload_workspace().await;
            return;
        }
        let result = self.mutate("didChangeWatchedFiles", |session| {
            for change in &params.changes {
                // Deleted files resolve too: `path_for` needs no file on disk.
                if let Some(path) = path_for(&session.workspace, &change.uri) {
                    session.reload_from_disk(&path);
                }
            }
        });
        self.report_failure(result).await;
        self.schedule_diagnostics();
    }

    async fn hover(&self, params: lsp::HoverParams) -> RpcResult<Option<lsp::Hover>> {
        self.query("hover", move |snapshot| handlers::hover(snapshot, &params))
            .await
    }

    async fn goto_definition(
        &self,
        params: lsp::GotoDefinitionParams,
    ) -> RpcResult<Option<lsp::GotoDefinitionResponse>> {
        self.query("definition", move |snapshot| {
            handlers::definition(snapshot, &params)
        })
        .await
    }

    async fn references(
        &self,
        params: lsp::ReferenceParams,
    ) -> RpcResult<Option<Vec<lsp::Location>>> {
        self.query("references", move |snapshot| {
            Some(handlers::references(snapshot, &params))
        })
        .await
    }

    async fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> RpcResult<Option<lsp::PrepareRenameResponse>> {
        self.query("prepareRename", move |snapshot| {
            handlers::prepare_rename(snapshot, &params)
        })
        .await
        .and_then(|result| result.map_err(RpcError::invalid_params))
    }

    async fn rename(&self, params: lsp::RenameParams) -> RpcResult<Option<lsp::WorkspaceEdit>> {
        self.query("rename", move |snapshot| {
            handlers::rename(snapshot, &params)
        })
        .await
        .and_then(|result| result.map_err(RpcError::invalid_params))
    }

    async fn document_symbol(
        &self,
        params: lsp::DocumentSymbolParams,
    ) -> RpcResult<Option<lsp::DocumentSymbolResponse>> {
        self.query("documentSymbol", move |snapshot| {
            handlers::document_symbols(snapshot, &params)
        })
        .await
    }

    async fn symbol(
        &self,
        params: lsp::WorkspaceSymbolParams,
    ) -> RpcResult<Option<lsp::WorkspaceSymbolResponse>> {
        self.query("workspaceSymbol", move |snapshot| {
            Some(lsp::WorkspaceSymbolResponse::Flat(
                handlers::workspace_symbols(snapshot, &params),
            ))
        })
        .await
    }

    async fn completion(
        &self,
        params: lsp::CompletionParams,
    ) -> RpcResult<Option<lsp::CompletionResponse>> {
        self.query("completion", move |snapshot| {
            handlers::completion(snapshot, &params)
        })
        .await
    }

    async fn folding_range(
        &self,
        params: lsp::FoldingRangeParams,
    ) -> RpcResult<Option<Vec<lsp::FoldingRange>>> {
        self.query("foldingRange", move |snapshot| {
            Some(handlers::folding_ranges(snapshot, &params))
        })
        .await
    }

    async fn code_lens(
        &self,
        params: lsp::CodeLensParams,
    ) -> RpcResult<Option<Vec<lsp::CodeLens>>> {
        self.query("codeLens", move |snapshot| {
            Some(handlers::code_lenses(snapshot, &params))
        })
        .await
    }

    async fn code_action(
        &self,
        params: lsp::CodeActionParams,
    ) -> RpcResult<Option<lsp::CodeActionResponse>> {
        self.query("codeAction", move |snapshot| {
            Some(handlers::code_actions(snapshot, &params))
        })
        .await
    }

    async fn execute_command(
        &self,
        params: lsp::ExecuteCommandParams,
    ) -> RpcResult<Option<serde_json::Value>> {
        if params.command == super::diagnostics::CHECK_WORKSPACE {
            return self.check_workspace().await.map(Some);
        }
        let Some(context) = self.run_context() else {
            return Err(RpcError::invalid_request());
        };
        commands::execute(&context, params).await
    }

    async fn diagnostic(
        &self,
        params: lsp::DocumentDiagnosticParams,
    ) -> RpcResult<lsp::DocumentDiagnosticReportResult> {
        if !self.support().diagnostic_refresh {
            // Answered from part of the index, a scene would name unknown
            // characters until its next edit (Neovim 0.11 has no refresh).
            let mut indexed = self.indexed.subscribe();
            let _ =
                tokio::time::timeout(PULL_WAITS_FOR_INDEX, indexed.wait_for(|done| *done)).await;
        }
        let cache = self.diagnostics.clone();
        let indexed = self.session().is_some_and(|session| session.indexed);
        let items = self
            .query("diagnostic", move |snapshot| {
                let Some(path) = path_for(&snapshot.workspace, &params.text_document.uri) else {
                    return Vec::new();
                };
                assemble::document(&mut lock(&cache), snapshot, &path, indexed)
            })
            .await?;
        Ok(lsp::DocumentDiagnosticReportResult::Report(
            lsp::DocumentDiagnosticReport::Full(lsp::RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                    result_id: None,
                    items,
                },
            }),
        ))
    }

    async fn workspace_diagnostic(
        &self,
        _: lsp::WorkspaceDiagnosticParams,
    ) -> RpcResult<lsp::WorkspaceDiagnosticReportResult> {
        let cache = self.diagnostics.clone();
        let versions: Vec<(FilePath, i32)> = self
            .session()
            .map(|session| {
                session
                    .documents
                    .iter()
                    .map(|(path, document)| (path.clone(), document.version))
                    .collect()
            })
            .unwrap_or_default();
        let items = self
            .query("workspaceDiagnostic", move |snapshot| {
                assemble::files(&mut lock(&cache), snapshot, None)
                    .into_iter()
                    .filter(|(_, diagnostics)| !diagnostics.is_empty())
                    .filter_map(|(path, diagnostics)| {
                        let uri = uri_for(&snapshot.workspace, &path)?;
                        let version = versions
                            .iter()
                            .find(|(open, _)| *open == path)
                            .map(|(_, version)| i64::from(*version));
                        Some(lsp::WorkspaceDocumentDiagnosticReport::Full(
                            lsp::WorkspaceFullDocumentDiagnosticReport {
                                uri,
                                version,
                                full_document_diagnostic_report:
                                    lsp::FullDocumentDiagnosticReport {
                                        result_id: None,
                                        items: (*diagnostics).clone(),
                                    },
                            },
                        ))
                    })
                    .collect()
            })
            .await?;
        Ok(lsp::WorkspaceDiagnosticReportResult::Report(
            lsp::WorkspaceDiagnosticReport { items },
        ))
    }
}

/// The reply to `controlRoom/documentState`: what the server holds for a
/// document, so a client (or a test) can verify that the two are in sync.
#[derive(serde::Serialize, serde::Deserialize, Debug)]
pub struct DocumentState {
    pub version: Option<i32>,
    pub length: usize,
    pub sha256: String,
}

#[derive(serde::Deserialize, Debug)]
pub struct DocumentStateParams {
    pub uri: Uri,
}

impl Server {
    async fn reload_workspace(&self) {
        self.read_workspace_again().await;
        self.schedule_diagnostics();
    }

    /// Loads the whole workspace from disk off the session's lock and swaps
    /// it in (open documents keep the editor's text).
    async fn read_workspace_again(&self) {
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

    /// `controlRoom.checkWorkspace`: the manuscript is read from disk again
    /// (open documents keep the editor's text), so files changed behind an
    /// editor that does not watch them count; every file is checked, the
    /// diagnostics are published (or the client asked to pull them), and the
    /// answer sums them up.
    async fn check_workspace(&self) -> RpcResult<serde_json::Value> {
        // No debounced publish: this one sends what changed before answering.
        self.read_workspace_again().await;
        let cache = self.diagnostics.clone();
        let summary = self
            .query("checkWorkspace", move |snapshot| {
                super::diagnostics::summary(&assemble::files(&mut lock(&cache), snapshot, None))
            })
            .await?;
        if let Some(session) = self.session.get().cloned() {
            self.publish_now(session).await;
        }
        Ok(summary)
    }

    /// `controlRoom/documentState`: the version, length and SHA-256 of the
    /// server's copy of a document.
    pub async fn document_state(
        &self,
        params: DocumentStateParams,
    ) -> RpcResult<Option<DocumentState>> {
        use sha2::Digest;
        let Some(session) = self.session() else {
            return Err(RpcError::invalid_request());
        };
        let Some(path) = path_for(&session.workspace, &params.uri) else {
            return Ok(None);
        };
        let Some(file) = session.workspace.file(&path) else {
            return Ok(None);
        };
        let digest = sha2::Sha256::digest(file.text.as_bytes());
        let sha256 = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        Ok(Some(DocumentState {
            version: session.version(&path),
            length: file.text.len(),
            sha256,
        }))
    }

    /// Builds the index in priority order (cards, outline and anti-pattern
    /// sheet first, so the open scene can be checked at once), then the rest
    /// in batches, reporting progress; requests are answered meanwhile from
    /// what is indexed so far.
    async fn index_workspace(&self) {
        let Some(session) = self.session.get().cloned() else {
            return;
        };
        let token = lsp::ProgressToken::String("control-room/index".to_owned());
        let progress = if self.support().work_done_progress
            && self
                .client
                .create_work_done_progress(token.clone())
                .await
                .is_ok()
        {
            Some(
                self.client
                    .progress(token, "Indexing manuscript")
                    .with_percentage(0)
                    .begin()
                    .await,
            )
        } else {
            None
        };
        let workspace = lock(&session).workspace.clone();
        // Findings of earlier runs come back before anything is published.
        let root = workspace.root().to_path_buf();
        if let Ok(store) =
            tokio::task::spawn_blocking(move || crate::engine::findings::FindingStore::load(&root))
                .await
        {
            *lock(&lock(&session).findings) = store;
        }
        let discovered = tokio::task::spawn_blocking(move || {
            let paths = workspace.discover();
            let config = workspace.config().paths.clone();
            let (priority, rest): (Vec<FilePath>, Vec<FilePath>) =
                paths.into_iter().partition(|path| {
                    matches!(
                        crate::index::file::classify(path, None, &config),
                        FileKind::Card { .. } | FileKind::Outline | FileKind::AntiPatterns
                    )
                });
            let files = workspace.read_files(&priority);
            (files, rest)
        })
        .await;
        let Ok((priority_files, rest)) = discovered else {
            if let Some(progress) = progress {
                progress.finish_with_message("indexing failed").await;
            }
            return;
        };
        lock(&session).insert_indexed(priority_files);
        // The open documents can be checked now: publish without debounce.
        publish_diagnostics(
            self.client.clone(),
            session.clone(),
            self.diagnostics.clone(),
            self.mode(),
            false,
        )
        .await;

        let total = rest.len().max(1);
        let mut done = 0;
        for batch in rest.chunks(INDEX_BATCH) {
            let workspace = lock(&session).workspace.clone();
            let batch = batch.to_vec();
            let Ok(files) = tokio::task::spawn_blocking(move || workspace.read_files(&batch)).await
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
        lock(&session).indexed = true;
        self.indexed.send_replace(true);
        if let Some(progress) = progress {
            let files = lock(&session).workspace.files().len();
            progress
                .finish_with_message(format!("{files} files indexed"))
                .await;
        }
        self.publish_now(session).await;
    }

    /// Publishes every file's diagnostics now (or asks the client to pull).
    async fn publish_now(&self, session: Arc<Mutex<Session>>) {
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

/// What the client can do with the edits and documents a run sends.
fn edit_support(capabilities: &lsp::ClientCapabilities) -> runs::EditSupport {
    let edit = capabilities
        .workspace
        .as_ref()
        .and_then(|workspace| workspace.workspace_edit.as_ref());
    runs::EditSupport {
        work_done_progress: capabilities
            .window
            .as_ref()
            .and_then(|window| window.work_done_progress)
            .unwrap_or(false),
        document_changes: edit.and_then(|edit| edit.document_changes).unwrap_or(false),
        create_files: edit
            .and_then(|edit| edit.resource_operations.as_ref())
            .is_some_and(|operations| operations.contains(&lsp::ResourceOperationKind::Create)),
        show_document: capabilities
            .window
            .as_ref()
            .and_then(|window| window.show_document.as_ref())
            .is_some_and(|show| show.support),
    }
}

#[allow(deprecated)] // `root_uri` is how older clients name the workspace.
fn workspace_root(params: &lsp::InitializeParams) -> Option<PathBuf> {
    let from_folders = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .map(|folder| &folder.uri);
    let uri = from_folders.or(params.root_uri.as_ref())?;
    uri.to_file_path().map(|path| path.into_owned())
}

fn capabilities_for(encoding: PositionEncoding, pull: bool) -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(match encoding {
            PositionEncoding::Utf8 => lsp::PositionEncodingKind::UTF8,
            _ => lsp::PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                // A saved plan checklist goes into its plan.json.
                save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
                ..lsp::TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
        })),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        workspace_symbol_provider: Some(lsp::OneOf::Left(true)),
        completion_provider: Some(lsp::CompletionOptions::default()),
        folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
        code_lens_provider: Some(lsp::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
            lsp::CodeActionOptions {
                code_action_kinds: Some(vec![
                    lsp::CodeActionKind::QUICKFIX,
                    lsp::CodeActionKind::new(handlers::RUN_ACTION_KIND),
                ]),
                ..lsp::CodeActionOptions::default()
            },
        )),
        execute_command_provider: Some(lsp::ExecuteCommandOptions {
            commands: commands::COMMANDS
                .iter()
                .map(|&command| command.to_owned())
                .collect(),
            work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
        }),
        diagnostic_provider: pull.then(|| {
            lsp::DiagnosticServerCapabilities::Options(lsp::DiagnosticOptions {
                identifier: Some("control-room".to_owned()),
                inter_file_dependencies: true,
                workspace_diagnostics: true,
                ..lsp::DiagnosticOptions::default()
            })
        }),
        ..lsp::ServerCapabilities::default()
    }
}

//! The `LanguageServer` implementation: every request and notification is
//! handed to its handler under `lsp/api/`; the state they share is in
//! `lsp/state.rs`.

use tower_lsp_server::LanguageServer;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use super::api;
pub use super::state::Server;

/// The server's own methods, beside the protocol's.
impl Server {
    /// `controlRoom/documentState`.
    pub async fn document_state(
        &self,
        params: api::requests::document_state::DocumentStateParams,
    ) -> RpcResult<Option<api::requests::document_state::DocumentState>> {
        api::requests::document_state::document_state(self, params).await
    }

    /// `window/workDoneProgress/cancel`.
    pub async fn work_done_progress_cancel(&self, params: lsp::WorkDoneProgressCancelParams) {
        api::notifications::work_done_progress_cancel::work_done_progress_cancel(self, params).await
    }
}

impl LanguageServer for Server {
    async fn initialize(&self, params: lsp::InitializeParams) -> RpcResult<lsp::InitializeResult> {
        api::requests::initialize::initialize(self, params).await
    }

    async fn initialized(&self, params: lsp::InitializedParams) {
        api::notifications::initialized::initialized(self, params).await
    }

    async fn shutdown(&self) -> RpcResult<()> {
        api::requests::shutdown::shutdown(self).await
    }

    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        api::notifications::did_open::did_open(self, params).await
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        api::notifications::did_change::did_change(self, params).await
    }

    async fn did_save(&self, params: lsp::DidSaveTextDocumentParams) {
        api::notifications::did_save::did_save(self, params).await
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        api::notifications::did_close::did_close(self, params).await
    }

    async fn did_change_configuration(&self, params: lsp::DidChangeConfigurationParams) {
        api::notifications::did_change_configuration::did_change_configuration(self, params).await
    }

    async fn did_change_watched_files(&self, params: lsp::DidChangeWatchedFilesParams) {
        api::notifications::did_change_watched_files::did_change_watched_files(self, params).await
    }

    async fn hover(&self, params: lsp::HoverParams) -> RpcResult<Option<lsp::Hover>> {
        api::on_snapshot::<lsp::request::HoverRequest>(self, params).await
    }

    async fn goto_definition(
        &self,
        params: lsp::GotoDefinitionParams,
    ) -> RpcResult<Option<lsp::GotoDefinitionResponse>> {
        api::on_snapshot::<lsp::request::GotoDefinition>(self, params).await
    }

    async fn references(
        &self,
        params: lsp::ReferenceParams,
    ) -> RpcResult<Option<Vec<lsp::Location>>> {
        api::requests::references::references(self, params).await
    }

    async fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> RpcResult<Option<lsp::PrepareRenameResponse>> {
        api::on_snapshot::<lsp::request::PrepareRenameRequest>(self, params).await
    }

    async fn rename(&self, params: lsp::RenameParams) -> RpcResult<Option<lsp::WorkspaceEdit>> {
        api::on_snapshot::<lsp::request::Rename>(self, params).await
    }

    async fn document_symbol(
        &self,
        params: lsp::DocumentSymbolParams,
    ) -> RpcResult<Option<lsp::DocumentSymbolResponse>> {
        api::on_snapshot::<lsp::request::DocumentSymbolRequest>(self, params).await
    }

    async fn symbol(
        &self,
        params: lsp::WorkspaceSymbolParams,
    ) -> RpcResult<Option<lsp::WorkspaceSymbolResponse>> {
        api::on_snapshot::<lsp::request::WorkspaceSymbolRequest>(self, params).await
    }

    async fn completion(
        &self,
        params: lsp::CompletionParams,
    ) -> RpcResult<Option<lsp::CompletionResponse>> {
        api::on_snapshot::<lsp::request::Completion>(self, params).await
    }

    async fn folding_range(
        &self,
        params: lsp::FoldingRangeParams,
    ) -> RpcResult<Option<Vec<lsp::FoldingRange>>> {
        api::on_snapshot::<lsp::request::FoldingRangeRequest>(self, params).await
    }

    async fn semantic_tokens_full(
        &self,
        params: lsp::SemanticTokensParams,
    ) -> RpcResult<Option<lsp::SemanticTokensResult>> {
        api::on_snapshot::<lsp::request::SemanticTokensFullRequest>(self, params).await
    }

    async fn semantic_tokens_range(
        &self,
        params: lsp::SemanticTokensRangeParams,
    ) -> RpcResult<Option<lsp::SemanticTokensRangeResult>> {
        api::on_snapshot::<lsp::request::SemanticTokensRangeRequest>(self, params).await
    }

    async fn inlay_hint(
        &self,
        params: lsp::InlayHintParams,
    ) -> RpcResult<Option<Vec<lsp::InlayHint>>> {
        api::on_snapshot::<lsp::request::InlayHintRequest>(self, params).await
    }

    async fn code_lens(
        &self,
        params: lsp::CodeLensParams,
    ) -> RpcResult<Option<Vec<lsp::CodeLens>>> {
        api::on_snapshot::<lsp::request::CodeLensRequest>(self, params).await
    }

    async fn code_action(
        &self,
        params: lsp::CodeActionParams,
    ) -> RpcResult<Option<lsp::CodeActionResponse>> {
        api::on_snapshot::<lsp::request::CodeActionRequest>(self, params).await
    }

    async fn execute_command(
        &self,
        params: lsp::ExecuteCommandParams,
    ) -> RpcResult<Option<serde_json::Value>> {
        api::requests::execute_command::execute_command(self, params).await
    }

    async fn diagnostic(
        &self,
        params: lsp::DocumentDiagnosticParams,
    ) -> RpcResult<lsp::DocumentDiagnosticReportResult> {
        api::requests::diagnostic::diagnostic(self, params).await
    }

    async fn workspace_diagnostic(
        &self,
        params: lsp::WorkspaceDiagnosticParams,
    ) -> RpcResult<lsp::WorkspaceDiagnosticReportResult> {
        api::requests::workspace_diagnostic::workspace_diagnostic(self, params).await
    }
}

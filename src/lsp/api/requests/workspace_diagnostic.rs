//! `workspace/diagnostic`: every file's diagnostics, pulled.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::index::FilePath;
use crate::lsp::convert::uri_for;
use crate::lsp::diagnostics::assemble;
use crate::lsp::state::Server;

pub(crate) async fn workspace_diagnostic(
    server: &Server,
    _: lsp::WorkspaceDiagnosticParams,
) -> RpcResult<lsp::WorkspaceDiagnosticReportResult> {
    let cache = server.diagnostics.clone();
    let versions: Vec<(FilePath, i32)> = server
        .session()
        .map(|session| {
            session
                .documents
                .iter()
                .map(|(path, document)| (path.clone(), document.version))
                .collect()
        })
        .unwrap_or_default();
    server
        .query("workspaceDiagnostic", move |snapshot| {
            let files = assemble::files(&cache, snapshot, None);
            let items = files
                .into_iter()
                .filter(|(_, diagnostics)| !diagnostics.is_empty())
                .filter_map(|(path, diagnostics)| {
                    let version = versions
                        .iter()
                        .find(|(open, _)| *open == path)
                        .map(|(_, version)| i64::from(*version));
                    Some(lsp::WorkspaceDocumentDiagnosticReport::Full(
                        lsp::WorkspaceFullDocumentDiagnosticReport {
                            uri: uri_for(&snapshot.workspace, &path)?,
                            version,
                            full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                                result_id: None,
                                items: diagnostics.to_vec(),
                            },
                        },
                    ))
                })
                .collect();
            lsp::WorkspaceDiagnosticReportResult::Report(lsp::WorkspaceDiagnosticReport { items })
        })
        .await
}

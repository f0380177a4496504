//! `textDocument/diagnostic`: one document's diagnostics, pulled.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::lsp::convert::path_for;
use crate::lsp::diagnostics::assemble;
use crate::lsp::state::{PULL_WAITS_FOR_INDEX, Server};

pub(crate) async fn diagnostic(
    server: &Server,
    params: lsp::DocumentDiagnosticParams,
) -> RpcResult<lsp::DocumentDiagnosticReportResult> {
    if !server.support().diagnostic_refresh {
        // Answered from part of the index, a scene would name unknown
        // characters until its next edit (Neovim 0.11 has no refresh).
        let mut indexed = server.indexed.subscribe();
        let _ = tokio::time::timeout(PULL_WAITS_FOR_INDEX, indexed.wait_for(|done| *done)).await;
    }
    let cache = server.diagnostics.clone();
    let indexed = server.session().is_some_and(|session| session.indexed);
    let report = server
        .query("diagnostic", move |snapshot| {
            let items = match path_for(&snapshot.workspace, &params.text_document.uri) {
                Some(path) => assemble::document(&cache, snapshot, &path, indexed),
                None => Vec::new(),
            };
            lsp::DocumentDiagnosticReportResult::Report(lsp::DocumentDiagnosticReport::Full(
                lsp::RelatedFullDocumentDiagnosticReport {
                    related_documents: None,
                    full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                        result_id: None,
                        items,
                    },
                },
            ))
        })
        .await;
    server.load_grammar_when_wanted();
    report
}

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
            report(&items)
        })
        .await?;
    Ok(server.splices.document_report(report))
}

/// A full document diagnostic report, as the framework would write it,
/// serialised from the diagnostics in place (see `lsp::splice`).
fn report(items: &[lsp::Diagnostic]) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Report<'a> {
        kind: &'static str,
        items: &'a [lsp::Diagnostic],
    }
    serde_json::to_vec(&Report {
        kind: "full",
        items,
    })
    .expect("diagnostics serialise to JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pulled_report_is_the_one_the_framework_would_send() {
        let diagnostic = lsp::Diagnostic {
            range: lsp::Range::new(lsp::Position::new(2, 0), lsp::Position::new(2, 5)),
            severity: Some(lsp::DiagnosticSeverity::WARNING),
            code: Some(lsp::NumberOrString::String("name-typo".to_owned())),
            source: Some("control-room".to_owned()),
            message: "“Kale” is one letter from “Kael”".to_owned(),
            ..lsp::Diagnostic::default()
        };
        for items in [Vec::new(), vec![diagnostic.clone(), diagnostic]] {
            let framework = lsp::DocumentDiagnosticReportResult::Report(
                lsp::DocumentDiagnosticReport::Full(lsp::RelatedFullDocumentDiagnosticReport {
                    related_documents: None,
                    full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                        result_id: None,
                        items: items.clone(),
                    },
                }),
            );
            let ours: serde_json::Value = serde_json::from_slice(&report(&items)).unwrap();
            assert_eq!(ours, serde_json::to_value(&framework).unwrap());
        }
    }
}

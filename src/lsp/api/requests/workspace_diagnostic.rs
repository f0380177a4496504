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
    let report = server
        .query("workspaceDiagnostic", move |snapshot| {
            let files = assemble::files(&cache, snapshot, None);
            let items: Vec<Item> = files
                .iter()
                .filter(|(_, diagnostics)| !diagnostics.is_empty())
                .filter_map(|(path, diagnostics)| {
                    let version = versions
                        .iter()
                        .find(|(open, _)| open == path)
                        .map(|(_, version)| i64::from(*version));
                    Some(Item {
                        kind: "full",
                        uri: uri_for(&snapshot.workspace, path)?,
                        version,
                        items: diagnostics.as_slice(),
                    })
                })
                .collect();
            serde_json::to_vec(&Report { items }).expect("diagnostics serialise to JSON")
        })
        .await?;
    Ok(server.splices.workspace_report(report))
}

/// A workspace diagnostic report, as the framework would write it,
/// serialised from the cached diagnostics in place (see `lsp::splice`).
#[derive(serde::Serialize)]
struct Report<'a> {
    items: Vec<Item<'a>>,
}

/// One document's full report in it.
#[derive(serde::Serialize)]
struct Item<'a> {
    kind: &'static str,
    uri: lsp::Uri,
    version: Option<i64>,
    items: &'a [lsp::Diagnostic],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pulled_workspace_report_is_the_one_the_framework_would_send() {
        let diagnostic = lsp::Diagnostic {
            range: lsp::Range::new(lsp::Position::new(0, 1), lsp::Position::new(0, 3)),
            message: "an echo".to_owned(),
            ..lsp::Diagnostic::default()
        };
        let files: Vec<(lsp::Uri, Option<i64>, Vec<lsp::Diagnostic>)> = vec![
            (
                "file:///a.md".parse().unwrap(),
                Some(4),
                vec![diagnostic.clone()],
            ),
            ("file:///b%20c.md".parse().unwrap(), None, vec![diagnostic]),
        ];
        let ours = Report {
            items: files
                .iter()
                .map(|(uri, version, items)| Item {
                    kind: "full",
                    uri: uri.clone(),
                    version: *version,
                    items,
                })
                .collect(),
        };
        let framework =
            lsp::WorkspaceDiagnosticReportResult::Report(lsp::WorkspaceDiagnosticReport {
                items: files
                    .iter()
                    .map(|(uri, version, items)| {
                        lsp::WorkspaceDocumentDiagnosticReport::Full(
                            lsp::WorkspaceFullDocumentDiagnosticReport {
                                uri: uri.clone(),
                                version: *version,
                                full_document_diagnostic_report:
                                    lsp::FullDocumentDiagnosticReport {
                                        result_id: None,
                                        items: items.clone(),
                                    },
                            },
                        )
                    })
                    .collect(),
            });
        assert_eq!(
            serde_json::to_value(&ours).unwrap(),
            serde_json::to_value(&framework).unwrap()
        );
    }
}

//! `textDocument/didChange`: edits applied in arrival order; a version that goes back is logged.

use tower_lsp_server::ls_types as lsp;

use crate::lsp::convert::path_for;
use crate::lsp::state::Server;

pub(crate) async fn did_change(server: &Server, params: lsp::DidChangeTextDocumentParams) {
    let document = params.text_document;
    let mut out_of_order = Vec::new();
    let result = server.mutate("didChange", |session| {
        if let Some(path) = path_for(&session.workspace, &document.uri) {
            session.change(&path, document.version, params.content_changes);
        }
        out_of_order = std::mem::take(&mut session.out_of_order);
    });
    server.report_failure(result).await;
    for (path, previous, version) in out_of_order {
        let message = format!("{path}: version {version} arrived after version {previous}");
        server
            .client
            .log_message(lsp::MessageType::WARNING, message)
            .await;
    }
    server.schedule_diagnostics();
}

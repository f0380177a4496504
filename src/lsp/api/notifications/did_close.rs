//! `textDocument/didClose`: the disk's text is read again.

use tower_lsp_server::ls_types as lsp;

use crate::lsp::convert::path_for;
use crate::lsp::state::Server;

pub(crate) async fn did_close(server: &Server, params: lsp::DidCloseTextDocumentParams) {
    let result = server.mutate("didClose", |session| {
        if let Some(path) = path_for(&session.workspace, &params.text_document.uri) {
            session.close(&path);
        }
    });
    server.report_failure(result).await;
    server.schedule_diagnostics();
}

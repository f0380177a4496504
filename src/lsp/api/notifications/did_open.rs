//! `textDocument/didOpen`: the editor's text replaces the disk's, and its
//! diagnostics are published without the typing debounce.

use tower_lsp_server::ls_types as lsp;

use crate::lsp::convert::path_for;
use crate::lsp::state::Server;

pub(crate) async fn did_open(server: &Server, params: lsp::DidOpenTextDocumentParams) {
    let document = params.text_document;
    let result = server.mutate("didOpen", |session| {
        if let Some(path) = path_for(&session.workspace, &document.uri) {
            session.open(path, document.text, document.version);
        }
    });
    server.report_failure(result).await;
    server.publish_soon();
}

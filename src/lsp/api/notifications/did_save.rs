//! `textDocument/didSave`: a saved plan checklist goes into its `plan.json`.

use tower_lsp_server::ls_types as lsp;

use crate::lsp::convert::path_for;
use crate::lsp::shared::lock;
use crate::lsp::state::Server;

pub(crate) async fn did_save(server: &Server, params: lsp::DidSaveTextDocumentParams) {
    let Some(session) = server.session.get().cloned() else {
        return;
    };
    let saved = {
        let mut session = lock(&session);
        path_for(&session.workspace, &params.text_document.uri)
            .filter(|path| crate::lsp::session::is_plan_path(path))
            .and_then(|path| {
                let text = session.documents.get(&path)?.rope.to_string();
                Some((session.workspace.clone(), session.recipes(), path, text))
            })
    };
    let Some((workspace, registry, path, text)) = saved else {
        return;
    };
    let result = tokio::task::spawn_blocking(move || {
        crate::lsp::plans::save(&workspace, &registry, &path, &text)
    })
    .await;
    if let Ok(Err(message)) = result {
        server
            .client
            .show_message(lsp::MessageType::WARNING, message)
            .await;
    }
}

//! `workspace/executeCommand`: `controlRoom.checkWorkspace` here, every other command through `lsp::commands`.

use tower_lsp_server::jsonrpc::{Error as RpcError, Result as RpcResult};
use tower_lsp_server::ls_types as lsp;

use crate::lsp::commands;
use crate::lsp::diagnostics::assemble;
use crate::lsp::state::Server;

pub(crate) async fn execute_command(
    server: &Server,
    params: lsp::ExecuteCommandParams,
) -> RpcResult<Option<serde_json::Value>> {
    if params.command == crate::lsp::diagnostics::CHECK_WORKSPACE {
        return check_workspace(server).await.map(Some);
    }
    let Some(context) = server.run_context() else {
        return Err(RpcError::invalid_request());
    };
    if commands::reads_the_manuscript(&params.command) {
        // A run routed on part of the index would not find the outline or
        // the scene: wait for the initial index (a moment after start-up).
        let mut indexed = server.indexed.subscribe();
        let _ = tokio::time::timeout(WAIT_FOR_INDEX, indexed.wait_for(|done| *done)).await;
    }
    commands::execute(&context, params).await
}

/// How long a command that reads the manuscript waits for the initial index.
const WAIT_FOR_INDEX: std::time::Duration = std::time::Duration::from_secs(60);

/// `controlRoom.checkWorkspace`: the manuscript is read from disk again
/// (open documents keep the editor's text), so files changed behind an
/// editor that does not watch them count; every file is checked, the
/// diagnostics are published (or the client asked to pull them), and the
/// answer sums them up.
pub(crate) async fn check_workspace(server: &Server) -> RpcResult<serde_json::Value> {
    // No debounced publish: this one sends what changed before answering.
    server.read_workspace_again().await;
    let cache = server.diagnostics.clone();
    let summary = server
        .query("checkWorkspace", move |snapshot| {
            crate::lsp::diagnostics::summary(&assemble::files(&cache, snapshot, None))
        })
        .await?;
    if let Some(session) = server.session.get().cloned() {
        server.publish_now(session).await;
    }
    Ok(summary)
}

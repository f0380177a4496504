//! `shutdown`: the story's graph's memo and grammar's are saved for the
//! next start; runs in flight keep their files whole.

use tower_lsp_server::jsonrpc::Result as RpcResult;

use crate::lsp::state::Server;

pub(crate) async fn shutdown(server: &Server) -> RpcResult<()> {
    let kept = server.session().and_then(|session| {
        session.indexed.then(|| {
            (
                session.graph.clone(),
                session.workspace.root().to_path_buf(),
            )
        })
    });
    if let Some((graph, root)) = kept {
        // A cache: a failure costs the next start a cold build, nothing else.
        let saved = tokio::task::spawn_blocking(move || {
            // Grammar's memo only saves time, like the index's cache.
            let _ = crate::language::saved::save(&root);
            graph.save(&crate::storage::Disk::default(), &root)
        })
        .await;
        if let Ok(Err(error)) = saved {
            server
                .client
                .log_message(
                    tower_lsp_server::ls_types::MessageType::WARNING,
                    format!("control-room: the story graph's memo was not saved: {error}"),
                )
                .await;
        }
    }
    Ok(())
}

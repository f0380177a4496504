//! The language server: the only module that knows LSP and its framework.
//!
//! `session` owns the mutable state (applied in arrival order), `handlers`
//! answer requests on snapshots, `diagnostics` caches and publishes,
//! `recipes` validates project recipes open in the editor, `runs` starts
//! recipe runs and delivers their results as workspace edits, `findings`
//! turns agents' findings into diagnostics, and `convert` is where byte
//! offsets become line/column positions.

mod api;
mod commands;
mod conference;
mod convert;
mod diagnostics;
mod evidence;
mod findings;
mod knowledge;
mod plans;
mod recipes;
mod runs;
mod server;
mod session;
mod settings;
mod snapshot;
mod state;

use tower_lsp_server::{LspService, Server as Transport};

/// Serves LSP over stdin/stdout until the client says `exit`.
pub fn run_stdio() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (service, socket) = LspService::build(server::Server::new)
            .custom_method("controlRoom/documentState", server::Server::document_state)
            .custom_method(
                "window/workDoneProgress/cancel",
                server::Server::work_done_progress_cancel,
            )
            .finish();
        Transport::new(tokio::io::stdin(), tokio::io::stdout(), socket)
            .serve(service)
            .await;
    });
    Ok(())
}

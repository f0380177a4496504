//! The language server: the only module that knows LSP and its framework.
//!
//! `session` owns the mutable state (applied in arrival order), `handlers`
//! answer requests on snapshots, `diagnostics` caches and publishes,
//! `recipes` validates project recipes open in the editor, `runs` starts
//! recipe runs and delivers their results as workspace edits, `findings`
//! turns agents' findings into diagnostics, `convert` is where byte
//! offsets become line/column positions.

mod api;
mod charts;
mod commands;
mod compile;
mod conference;
mod convert;
mod diagnostics;
mod dictionary;
mod evidence;
mod findings;
pub(crate) mod foreman;
pub mod framing;
mod health;
mod knowledge;
pub mod memory;
pub(crate) mod mode;
mod plans;
mod pools;
mod recipes;
mod runs;
mod server;
mod session;
mod settings;
mod snapshot;
mod state;
mod stats;
mod stdio;
mod voice;

use tower_lsp_server::{LspService, Server as Transport};

/// How long the server lets its handlers finish once the editor's input
/// has ended.
const GRACE_AFTER_INPUT_ENDS: std::time::Duration = std::time::Duration::from_secs(2);

/// Serves LSP over stdin/stdout until the client says `exit` or closes its
/// output. Frames are read by [`framing`], so a malformed one is answered
/// with an error and the server goes on; a frame that cannot be delimited
/// ends the connection with an error.
pub fn run_stdio() -> anyhow::Result<()> {
    memory::limit_arenas();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (stdin, stdout) = (stdio::stdin()?, framing::stdout()?);
    let closed = runtime.block_on(async {
        let (service, socket) = LspService::build(server::Server::new)
            .custom_method("controlRoom/documentState", server::Server::document_state)
            .custom_method(
                "window/workDoneProgress/cancel",
                server::Server::work_done_progress_cancel,
            )
            .finish();
        let (client_frames, server_input) = tokio::io::duplex(1 << 16);
        let (server_output, server_frames) = tokio::io::duplex(1 << 16);
        let (refusals, refused) = tokio::sync::mpsc::unbounded_channel();
        let shutdown = framing::Shutdown::default();
        let input = tokio::spawn(framing::pump_input(
            stdin,
            client_frames,
            refusals,
            shutdown.clone(),
        ));
        let output = tokio::spawn(framing::pump_output(
            server_frames,
            stdout,
            refused,
            shutdown,
        ));
        let mut serve =
            Box::pin(Transport::new(server_input, server_output, socket).serve(service));
        let mut input = input;
        // The framework's input ends only once the pump has handed it back
        // with its reason (a garbled frame or a clean end), so the framework
        // cannot finish first and hide a garbled frame.
        let closed = tokio::select! {
            biased;
            pumped = &mut input => {
                let closed = match pumped {
                    Ok((closed, to_server)) => {
                        drop(to_server); // Now the framework's input ends.
                        closed
                    }
                    Err(_) => framing::Closed::Ended,
                };
                // After `exit` the process ends now: the framework would
                // wait for every handler still running, one of them maybe
                // for an answer the client will never send, and editors
                // kill a server that lingers (Eglot after 0.1 s). Nothing is
                // lost: what the server writes is safe against a kill at
                // any point. If the editor is gone without `exit`, a handler
                // may still be finishing work: give it a moment.
                if closed != framing::Closed::Exit {
                    let _ = tokio::time::timeout(GRACE_AFTER_INPUT_ENDS, &mut serve).await;
                }
                closed
            }
            () = &mut serve => {
                input.abort();
                framing::Closed::Ended
            }
        };
        // The framework's output ends with it: what it wrote goes out.
        drop(serve);
        let _ = tokio::time::timeout(GRACE_AFTER_INPUT_ENDS, output).await;
        closed
    });
    // Blocking work may still run (a start's index): do not wait for it.
    // The input's thread, waiting in a read, ends with the process.
    runtime.shutdown_background();
    match closed {
        framing::Closed::Ended | framing::Closed::Exit => Ok(()),
        framing::Closed::Garbled(why) => {
            anyhow::bail!("the connection to the editor was closed: {why}")
        }
    }
}

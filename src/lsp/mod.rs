//! The language server: the only module that knows LSP and its framework.
//!
//! `session` owns the mutable state (applied in arrival order), `handlers`
//! answer requests on snapshots, `diagnostics` caches and publishes,
//! `recipes` validates project recipes open in the editor, `runs` starts
//! recipe runs and delivers their results as workspace edits, `findings`
//! turns agents' findings into diagnostics, `convert` is where byte
//! offsets become line/column positions.
//!
//! ## Parts
//!
//! the adapter: `server.rs` only delegates to `api/requests/*` and `api/notifications/*` (one
//! file per handler, `from_proto` → core → `to_proto`; a query implements
//! `api::SnapshotRequest` for its LSP request type); `state` holds what the handlers share (the
//! session, snapshots with panics caught, the diagnostics schedule); `session` owns the mutable
//! state, `snapshot` what handlers read; `api/notifications/initialized` builds the initial
//! index in a task of its own (the framework polls every handler in one task, so the index
//! never waits for a handler's work nor they for it): the cards and outline first, read while
//! the client is asked to show progress, each file's syntax from `index::cache` when unchanged
//! (where it is not, the cards and the outline are read for the catalog alone, the open
//! documents checked, then they are parsed), the cache saved after; `diagnostics/` assembles a
//! file's diagnostics once for push and pull (`assemble`) and publishes them (`publish`: the
//! open documents first, then, after a pause unless the writer typed meanwhile, the rest of the
//! manuscript and the story's health, given up between one file's checks and the next as soon
//! as the writer types (the files checked kept); the cache's lock is held only to read and
//! store entries, so a pass for the scene the writer opens never waits behind a pass over the
//! manuscript (a file whose entry is of another text, the one typed in, has its dependency key
//! found beside its checks), a numbered pass never publishes over a later one's, and a pass
//! asked for while the rest is sent goes first, sending what the earlier one left; it also asks
//! the client for semantic tokens again when the names, the deaths or the outline's order
//! changed); `api/requests/semantic_tokens` encodes `ide::semantic_tokens` line by line in the
//! client's encoding (`convert::Columns`); `commands/` dispatches `workspace/executeCommand`
//! and holds the shared argument parsing and the one lock helper; `runs/` starts runs through
//! `runs::launch`, turns their events into `$/progress`, and applies deliveries as workspace
//! edits; `dictionary` adds a word to the manuscript's dictionary file and reloads it; `plans`,
//! `knowledge`, `conference`, `findings`, `evidence`, `recipes`, `compile`, `voice`
//! (tournaments with progress, pick, why, cross, bundle, lock), `charts` (a chart's SVG for the
//! editors), `health` (the story's health report) and `mode` (the project's mode and moving
//! it), `foreman` ("Ask the Foreman": a turn in a task with progress, its reply appended to the
//! desk as a versioned edit, its changes as edits), `stats` (this session's words, counted from
//! the end of the first index) are the features' LSP sides; `convert` maps offsets to positions
//! (a file's diagnostics make each related file's URI once); `framing` reads the client's
//! frames before the framework does (a malformed body gets an error reply, not the end of the
//! server; `exit` ends the process at once, without waiting for handlers) and copies the
//! framework's to stdout, at most four ahead, and nothing but answers once `shutdown` is
//! answered; stdin and stdout are read and written by a thread each (`stdio`, `lsp-input`;
//! `framing`, `lsp-output`), in blocking calls; `pools` the threads: the open documents' own,
//! and the whole manuscript's (the rest of a pass, the health, the initial index), whose
//! threads yield the cores (nice 10 on Linux); a diagnostics pass runs on its pool and answers
//! the waiting task from there (`pools::run`). `session` keeps a syntax tree for the four
//! documents written in last (an opened document keeps none until it is written in; one opened
//! as the index read it is that very file, shared, no parse); `memory` malloc's arenas, one per
//! core, and the freed pages given back after the initial index and after the pass over the
//! whole manuscript that follows it (glibc).

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
mod shared;
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

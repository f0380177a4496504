//! `window/workDoneProgress/cancel`: the writer pressed cancel on a run's progress.

use tower_lsp_server::ls_types as lsp;

use crate::lsp::state::Server;

/// `window/workDoneProgress/cancel`: the writer pressed cancel on a run's progress.
pub(crate) async fn work_done_progress_cancel(
    server: &Server,
    params: lsp::WorkDoneProgressCancelParams,
) {
    server.runs.cancel_by_token(&params.token);
}

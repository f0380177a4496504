//! `workspace/didChangeConfiguration`: the editor's settings, applied before the next pass.

use tower_lsp_server::ls_types as lsp;

use crate::lsp::state::Server;

pub(crate) async fn did_change_configuration(
    server: &Server,
    params: lsp::DidChangeConfigurationParams,
) {
    // The change applies before the first `.await`, in arrival order.
    let settings = crate::lsp::settings::read(&params.settings);
    let mut problems = Vec::new();
    let result = server.mutate("didChangeConfiguration", |session| {
        problems = session.apply_settings(settings);
    });
    for problem in problems {
        server
            .client
            .log_message(lsp::MessageType::WARNING, problem)
            .await;
    }
    server.report_failure(result).await;
    server.schedule_diagnostics();
}

//! `workspace/didChangeWatchedFiles`: changed files read again (the dictionary file into the manuscript's words); a changed `control-room.toml` reloads everything.

use tower_lsp_server::ls_types as lsp;

use crate::index::config::CONFIG_FILE;
use crate::lsp::convert::path_for;
use crate::lsp::state::Server;

pub(crate) async fn did_change_watched_files(
    server: &Server,
    params: lsp::DidChangeWatchedFilesParams,
) {
    let config_changed = params.changes.iter().any(|change| {
        change
            .uri
            .to_file_path()
            .is_some_and(|path| path.file_name().is_some_and(|name| name == CONFIG_FILE))
    });
    if config_changed {
        // Paths and settings may all have changed: load everything again,
        // off the session's lock, then swap it in.
        server.reload_workspace().await;
        return;
    }
    let result = server.mutate("didChangeWatchedFiles", |session| {
        let dictionary = session.workspace.dictionary_path().to_owned();
        for change in &params.changes {
            if path_for(&session.workspace, &change.uri).is_some_and(|path| *path == *dictionary) {
                crate::lsp::dictionary::reload(session);
                continue;
            }
            // Deleted files resolve too: `path_for` needs no file on disk.
            if let Some(path) = path_for(&session.workspace, &change.uri) {
                session.reload_from_disk(&path);
            }
        }
    });
    server.report_failure(result).await;
    server.schedule_diagnostics();
}

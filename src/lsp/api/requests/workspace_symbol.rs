//! `workspace/symbol`: cards and scenes by name, across the manuscript.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::server::Server;
use crate::lsp::snapshot::Snapshot;

pub(crate) async fn symbol(
    server: &Server,
    params: lsp::WorkspaceSymbolParams,
) -> RpcResult<Option<lsp::WorkspaceSymbolResponse>> {
    server
        .query("workspaceSymbol", move |snapshot| {
            Some(lsp::WorkspaceSymbolResponse::Flat(workspace_symbols(
                snapshot, &params,
            )))
        })
        .await
}

pub fn workspace_symbols(
    snapshot: &Snapshot,
    params: &lsp::WorkspaceSymbolParams,
) -> Vec<lsp::SymbolInformation> {
    ide::workspace_symbols(&snapshot.workspace, &params.query)
        .into_iter()
        .filter_map(|symbol| {
            let location = snapshot.location(&ide::Location {
                path: symbol.path.clone(),
                range: symbol.selection,
            })?;
            #[allow(deprecated)] // `deprecated` is a required field of the protocol type.
            Some(lsp::SymbolInformation {
                name: symbol.name,
                kind: super::document_symbol::symbol_kind(symbol.kind),
                tags: None,
                deprecated: None,
                location,
                container_name: symbol.detail,
            })
        })
        .collect()
}

//! `workspace/symbol`: cards and scenes by name, across the manuscript.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::snapshot::Snapshot;

impl SnapshotRequest for lsp::request::WorkspaceSymbolRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(Some(lsp::WorkspaceSymbolResponse::Flat(workspace_symbols(
            snapshot, params,
        ))))
    }
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

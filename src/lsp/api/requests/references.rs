//! `textDocument/references`: every mention of a character or place in the prose, and every link to it.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::snapshot::Snapshot;

impl SnapshotRequest for lsp::request::References {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(Some(references_of(snapshot, params)))
    }
}

fn references_of(snapshot: &Snapshot, params: &lsp::ReferenceParams) -> Vec<lsp::Location> {
    let Some((file, offset)) = snapshot.at(&params.text_document_position) else {
        return Vec::new();
    };
    snapshot.locations(&ide::references(
        &snapshot.workspace,
        &file.path,
        offset,
        params.context.include_declaration,
    ))
}

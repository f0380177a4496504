//! `textDocument/references`: every mention of a character or place in the prose, and every link to it.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use tower_lsp_server::ls_types::request::{References, Request};

use crate::ide;
use crate::lsp::snapshot::Snapshot;
use crate::lsp::state::Server;

/// Answers on a snapshot: a character's references across a novel are
/// thousands of locations, converted file by file.
pub(crate) async fn references(
    server: &Server,
    params: lsp::ReferenceParams,
) -> RpcResult<Option<Vec<lsp::Location>>> {
    server
        .query(References::METHOD, move |snapshot| {
            Some(snapshot.locations(&references_of(snapshot, &params)))
        })
        .await
}

fn references_of(snapshot: &Snapshot, params: &lsp::ReferenceParams) -> Vec<ide::Location> {
    let Some((file, offset)) = snapshot.at(&params.text_document_position) else {
        return Vec::new();
    };
    ide::references(
        &snapshot.workspace,
        &file.path,
        offset,
        params.context.include_declaration,
    )
}

//! `textDocument/definition`: from a name or a scene id to its card or scene.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::snapshot::Snapshot;

impl SnapshotRequest for lsp::request::GotoDefinition {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(definition(snapshot, params))
    }
}

pub fn definition(
    snapshot: &Snapshot,
    params: &lsp::GotoDefinitionParams,
) -> Option<lsp::GotoDefinitionResponse> {
    let (file, offset) = snapshot.at(&params.text_document_position_params)?;
    let target = ide::definition(&snapshot.workspace, &file.path, offset)?;
    Some(lsp::GotoDefinitionResponse::Scalar(
        snapshot.location(&target)?,
    ))
}

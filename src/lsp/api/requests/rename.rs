//! `textDocument/prepareRename` and `textDocument/rename`: a character or place renamed everywhere at once.

use tower_lsp_server::jsonrpc::{Error as RpcError, Result as RpcResult};
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::convert::range;
use crate::lsp::snapshot::Snapshot;

impl SnapshotRequest for lsp::request::PrepareRenameRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        prepare(snapshot, params).map_err(RpcError::invalid_params)
    }
}

impl SnapshotRequest for lsp::request::Rename {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        rename_edit(snapshot, params).map_err(RpcError::invalid_params)
    }
}

fn prepare(
    snapshot: &Snapshot,
    params: &lsp::TextDocumentPositionParams,
) -> Result<Option<lsp::PrepareRenameResponse>, String> {
    let Some((file, offset)) = snapshot.at(params) else {
        return Ok(None);
    };
    match ide::prepare_rename(&snapshot.workspace, &file.path, offset) {
        Ok((target, placeholder)) => Ok(Some(lsp::PrepareRenameResponse::RangeWithPlaceholder {
            range: range(file, target, snapshot.encoding),
            placeholder,
        })),
        Err(error) => Err(error.to_string()),
    }
}

fn rename_edit(
    snapshot: &Snapshot,
    params: &lsp::RenameParams,
) -> Result<Option<lsp::WorkspaceEdit>, String> {
    let Some((file, offset)) = snapshot.at(&params.text_document_position) else {
        return Ok(None);
    };
    let edits = ide::rename(&snapshot.workspace, &file.path, offset, &params.new_name)
        .map_err(|error| error.to_string())?;
    Ok(Some(snapshot.workspace_edit(&edits)))
}

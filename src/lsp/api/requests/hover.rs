//! `textDocument/hover`: the card of the name under the cursor, or what a receipt id in an Evidence line names.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::convert::range;
use crate::lsp::snapshot::Snapshot;

impl SnapshotRequest for lsp::request::HoverRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(hover_at(snapshot, params))
    }
}

fn hover_at(snapshot: &Snapshot, params: &lsp::HoverParams) -> Option<lsp::Hover> {
    let (file, offset) = snapshot.at(&params.text_document_position_params)?;
    let (target_range, markdown) =
        crate::lsp::evidence::hover(&snapshot.receipts, &snapshot.workspace, file, offset)
            .or_else(|| ide::hover(&snapshot.workspace, &file.path, offset))?;
    Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(range(file, target_range, snapshot.encoding)),
    })
}

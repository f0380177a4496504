//! `textDocument/hover`: the card of the name under the cursor, or what a receipt id in an Evidence line names.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::convert::range;
use crate::lsp::server::Server;
use crate::lsp::snapshot::Snapshot;

pub(crate) async fn hover(
    server: &Server,
    params: lsp::HoverParams,
) -> RpcResult<Option<lsp::Hover>> {
    server
        .query("hover", move |snapshot| hover_at(snapshot, &params))
        .await
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

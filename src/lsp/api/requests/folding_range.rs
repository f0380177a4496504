//! `textDocument/foldingRange`: front matter, sections and comments.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::convert::range;
use crate::lsp::snapshot::Snapshot;

impl SnapshotRequest for lsp::request::FoldingRangeRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(Some(folding_ranges(snapshot, params)))
    }
}

pub fn folding_ranges(
    snapshot: &Snapshot,
    params: &lsp::FoldingRangeParams,
) -> Vec<lsp::FoldingRange> {
    let Some(file) = snapshot.file(&params.text_document.uri) else {
        return Vec::new();
    };
    ide::folding_ranges(file)
        .into_iter()
        .filter_map(|folded| {
            let range = range(file, folded, snapshot.encoding);
            (range.end.line > range.start.line).then(|| lsp::FoldingRange {
                start_line: range.start.line,
                end_line: range.end.line,
                kind: Some(lsp::FoldingRangeKind::Region),
                ..lsp::FoldingRange::default()
            })
        })
        .collect()
}

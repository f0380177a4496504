//! `textDocument/inlayHint`: the story clock's day, time and point of view's
//! age at each scene's heading and after each outline entry's id.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::convert::{offset, position};
use crate::lsp::snapshot::Snapshot;
use crate::text::TextRange;

impl SnapshotRequest for lsp::request::InlayHintRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(Some(inlay_hints(snapshot, params)))
    }
}

pub fn inlay_hints(snapshot: &Snapshot, params: &lsp::InlayHintParams) -> Vec<lsp::InlayHint> {
    let Some(file) = snapshot.file(&params.text_document.uri) else {
        return Vec::new();
    };
    let encoding = snapshot.encoding;
    let within = TextRange::new(
        offset(file, params.range.start, encoding),
        offset(file, params.range.end, encoding),
    );
    ide::inlay_hints(&snapshot.workspace, &file.path, within)
        .into_iter()
        .map(|hint| lsp::InlayHint {
            position: position(file, hint.offset, encoding),
            label: lsp::InlayHintLabel::String(hint.label),
            kind: None,
            text_edits: None,
            tooltip: Some(lsp::InlayHintTooltip::String(hint.tooltip)),
            padding_left: Some(!hint.before_text),
            padding_right: Some(hint.before_text),
            data: None,
        })
        .collect()
}

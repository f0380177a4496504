//! `textDocument/completion`: card names, scene ids and front matter keys.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide::{self, CompletionKind};
use crate::lsp::api::SnapshotRequest;
use crate::lsp::snapshot::Snapshot;

impl SnapshotRequest for lsp::request::Completion {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(completions_at(snapshot, params))
    }
}

fn completions_at(
    snapshot: &Snapshot,
    params: &lsp::CompletionParams,
) -> Option<lsp::CompletionResponse> {
    let (file, offset) = snapshot.at(&params.text_document_position)?;
    let items = ide::completions(&snapshot.workspace, &file.path, offset)
        .into_iter()
        .map(|completion| lsp::CompletionItem {
            kind: Some(match completion.kind {
                CompletionKind::Character => lsp::CompletionItemKind::CLASS,
                CompletionKind::Location => lsp::CompletionItemKind::MODULE,
                CompletionKind::Canon => lsp::CompletionItemKind::VALUE,
                CompletionKind::Scene => lsp::CompletionItemKind::EVENT,
            }),
            detail: (!completion.detail.is_empty()).then_some(completion.detail),
            sort_text: Some(format!(
                "{}{}",
                if completion.preferred { 0 } else { 1 },
                completion.label
            )),
            label: completion.label,
            ..lsp::CompletionItem::default()
        })
        .collect();
    Some(lsp::CompletionResponse::Array(items))
}

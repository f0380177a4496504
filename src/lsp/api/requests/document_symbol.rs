//! `textDocument/documentSymbol`: the headings, cards and outline entries of a file.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide::{self, SymbolKind};
use crate::index::SourceFile;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::convert::range;
use crate::lsp::snapshot::Snapshot;
use crate::text::PositionEncoding;

impl SnapshotRequest for lsp::request::DocumentSymbolRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(document_symbols(snapshot, params))
    }
}

pub fn document_symbols(
    snapshot: &Snapshot,
    params: &lsp::DocumentSymbolParams,
) -> Option<lsp::DocumentSymbolResponse> {
    let file = snapshot.file(&params.text_document.uri)?;
    #[allow(deprecated)] // `deprecated` is a required field of the protocol type.
    fn to_proto(
        file: &SourceFile,
        symbol: &ide::Symbol,
        encoding: PositionEncoding,
    ) -> lsp::DocumentSymbol {
        lsp::DocumentSymbol {
            name: if symbol.name.is_empty() {
                "(untitled)".to_owned()
            } else {
                symbol.name.clone()
            },
            detail: symbol.detail.clone(),
            kind: symbol_kind(symbol.kind),
            tags: None,
            deprecated: None,
            range: range(file, symbol.range, encoding),
            selection_range: range(file, symbol.selection, encoding),
            children: Some(
                symbol
                    .children
                    .iter()
                    .map(|child| to_proto(file, child, encoding))
                    .collect(),
            ),
        }
    }
    let symbols = ide::document_symbols(file);
    Some(lsp::DocumentSymbolResponse::Nested(
        symbols
            .iter()
            .map(|symbol| to_proto(file, symbol, snapshot.encoding))
            .collect(),
    ))
}

pub(crate) fn symbol_kind(kind: SymbolKind) -> lsp::SymbolKind {
    match kind {
        SymbolKind::Heading => lsp::SymbolKind::NAMESPACE,
        SymbolKind::Scene => lsp::SymbolKind::EVENT,
        SymbolKind::Character => lsp::SymbolKind::CLASS,
        SymbolKind::Location => lsp::SymbolKind::PACKAGE,
        SymbolKind::Canon => lsp::SymbolKind::OBJECT,
    }
}

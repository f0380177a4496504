//! `textDocument/semanticTokens/full` and `/range`: names by kind, dialogue,
//! and the dead struck through (`ide::semantic_tokens`), as the protocol's
//! relative numbers.
//!
//! The legend's types are the manuscript's own, `character`, `place` and
//! `dialogue`, with the standard `deprecated` modifier on the dead. Editors
//! colour custom types as their user or extension says: the VS Code
//! extension gives each a standard super type and TextMate scopes, the
//! Neovim plugin links `@lsp.type.character` and the rest to standard
//! groups. Tokens are never multi-line (a stretch of dialogue over lines is
//! sent line by line) and never overlap, so every client can take them.

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide::{self, SemanticKind};
use crate::index::SourceFile;
use crate::lsp::api::SnapshotRequest;
use crate::lsp::convert::{Columns, offset, width};
use crate::lsp::snapshot::Snapshot;
use crate::text::{PositionEncoding, TextRange};

/// The token types, in the legend's order ([`SemanticKind`] as an index).
pub(crate) const TOKEN_TYPES: [&str; 3] = ["character", "place", "dialogue"];
/// The token modifiers: bit 0 marks a dead character after their death.
pub(crate) const TOKEN_MODIFIERS: [&str; 1] = ["deprecated"];

pub(crate) fn legend() -> lsp::SemanticTokensLegend {
    lsp::SemanticTokensLegend {
        token_types: TOKEN_TYPES
            .iter()
            .map(|&name| lsp::SemanticTokenType::new(name))
            .collect(),
        token_modifiers: TOKEN_MODIFIERS
            .iter()
            .map(|&name| lsp::SemanticTokenModifier::new(name))
            .collect(),
    }
}

pub(crate) fn capability() -> lsp::SemanticTokensServerCapabilities {
    lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(lsp::SemanticTokensOptions {
        legend: legend(),
        range: Some(true),
        full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
        work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
    })
}

impl SnapshotRequest for lsp::request::SemanticTokensFullRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        let tokens = tokens(snapshot, &params.text_document.uri, None);
        Ok(tokens.map(lsp::SemanticTokensResult::Tokens))
    }
}

impl SnapshotRequest for lsp::request::SemanticTokensRangeRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        let tokens = tokens(snapshot, &params.text_document.uri, Some(params.range));
        Ok(tokens.map(lsp::SemanticTokensRangeResult::Tokens))
    }
}

/// The tokens of a document, or of those that meet `range` in it.
fn tokens(
    snapshot: &Snapshot,
    uri: &lsp::Uri,
    range: Option<lsp::Range>,
) -> Option<lsp::SemanticTokens> {
    let file = snapshot.file(uri)?;
    let mut tokens = ide::semantic_tokens(&snapshot.workspace, &file.path);
    if let Some(range) = range {
        let wanted = TextRange::new(
            offset(file, range.start, snapshot.encoding),
            offset(file, range.end, snapshot.encoding),
        );
        tokens.retain(|token| token.range.intersects(wanted));
    }
    Some(lsp::SemanticTokens {
        result_id: None,
        data: encode(file, &tokens, snapshot.encoding),
    })
}

/// The protocol's form of `tokens` (in text order, none overlapping): each
/// line's piece of a token, relative to the piece before it.
fn encode(
    file: &SourceFile,
    tokens: &[ide::SemanticToken],
    encoding: PositionEncoding,
) -> Vec<lsp::SemanticToken> {
    let text = &*file.text;
    let mut columns = Columns::new(file, encoding);
    let mut encoded = Vec::with_capacity(tokens.len());
    let (mut line, mut start) = (0, 0);
    for token in tokens {
        let token_type = match token.kind {
            SemanticKind::Character => 0,
            SemanticKind::Place => 1,
            SemanticKind::Dialogue => 2,
        };
        for piece in lines_of(text, token.range) {
            let at = columns.position(piece.start);
            let delta_line = at.line - line;
            encoded.push(lsp::SemanticToken {
                delta_line,
                delta_start: if delta_line == 0 {
                    at.col - start
                } else {
                    at.col
                },
                length: width(piece.slice(text), encoding),
                token_type,
                token_modifiers_bitset: u32::from(token.dead),
            });
            (line, start) = (at.line, at.col);
        }
    }
    encoded
}

/// The pieces of `range` on each line it spans, without line breaks; empty
/// pieces are left out.
fn lines_of(text: &str, range: TextRange) -> impl Iterator<Item = TextRange> + '_ {
    let mut start = range.start;
    std::iter::from_fn(move || {
        while start < range.end {
            let rest = &text[start..range.end];
            let (end, next) = match rest.find('\n') {
                Some(newline) => (start + newline, start + newline + 1),
                None => (range.end, range.end),
            };
            let end = if text[start..end].ends_with('\r') {
                end - 1
            } else {
                end
            };
            let piece = TextRange::new(start, end);
            start = next;
            if !piece.is_empty() {
                return Some(piece);
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::config::PathsConfig;

    fn file(text: &str) -> SourceFile {
        SourceFile::parse(
            "Story/Scenes/SCN-a.md".into(),
            text.into(),
            &PathsConfig::default(),
        )
    }

    fn token(start: usize, end: usize, kind: SemanticKind, dead: bool) -> ide::SemanticToken {
        ide::SemanticToken {
            range: TextRange::new(start, end),
            kind,
            dead,
        }
    }

    #[test]
    fn tokens_are_relative_split_by_line_and_counted_in_the_encoding() {
        let text = "“Où” dit Kael.\r\n\"Two\r\nlines\" and Tomas";
        let file = file(text);
        let at = |needle: &str| text.find(needle).unwrap();
        let tokens = [
            token(at("Kael"), at("Kael") + 4, SemanticKind::Character, false),
            token(at("\"Two"), at(" and"), SemanticKind::Dialogue, false),
            token(at("Tomas"), text.len(), SemanticKind::Character, true),
        ];
        let numbers = |encoding| -> Vec<[u32; 5]> {
            encode(&file, &tokens, encoding)
                .iter()
                .map(|t| {
                    [
                        t.delta_line,
                        t.delta_start,
                        t.length,
                        t.token_type,
                        t.token_modifiers_bitset,
                    ]
                })
                .collect()
        };
        // “Où” is 4 UTF-16 units and 9 bytes; the dialogue is cut at the CRLF.
        assert_eq!(
            numbers(PositionEncoding::Utf16),
            [
                [0, 9, 4, 0, 0],
                [1, 0, 4, 2, 0],
                [1, 0, 6, 2, 0],
                [0, 11, 5, 0, 1]
            ]
        );
        assert_eq!(numbers(PositionEncoding::Utf8)[0], [0, 14, 4, 0, 0]);
    }
}

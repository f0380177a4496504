//! Which edits leave which part of a kept tree standing: a line of a
//! paragraph's prose keeps every block; an edit inside or before a list or
//! a block quote, or to a tree with an error, keeps none. After an edit
//! that keeps the blocks, [`splice`] makes the syntax from the last one.

use tree_sitter::{Node, Parser, Tree};

use super::{Block, Extractor, InlineMemo, MarkdownSyntax, remove_bare_urls};
use crate::text::TextRange;

/// Whether bytes `line_start..end` (from a line's start to an edit's end)
/// lie inside one paragraph's inline text, outside any list or block
/// quote: a line of prose. `inserted` is what the edit puts there.
pub(super) fn within_a_paragraph_line(
    tree: &Tree,
    line_start: usize,
    end: usize,
    inserted: &str,
) -> bool {
    let Some(mut node) = tree.root_node().descendant_for_byte_range(line_start, end) else {
        return false;
    };
    let mut paragraph = None;
    loop {
        match node.kind() {
            "list" | "list_item" | "block_quote" => return false,
            "paragraph" if paragraph.is_none() => paragraph = Some(node),
            _ => {}
        }
        match node.parent() {
            Some(parent) => node = parent,
            None => break,
        }
    }
    let Some(paragraph) = paragraph else {
        return false;
    };
    // Its inline text ends before the last line's trailing spaces: an edit
    // there moves that end unless it ends the line with a word.
    let mut cursor = paragraph.walk();
    let inline_end = paragraph
        .children(&mut cursor)
        .find(|child| child.kind() == "inline")
        .map(|inline| inline.end_byte());
    let ends_with_a_word = inserted
        .chars()
        .next_back()
        .is_some_and(|last| !last.is_whitespace());
    paragraph.start_byte() <= line_start
        && inline_end
            .is_some_and(|inline_end| end < inline_end || (end == inline_end && ends_with_a_word))
}

/// Whether the line around `start..end` of `text` (what an edit inserted,
/// after the line's first character) can only be a line of a paragraph's
/// prose, and was one before: not blank, indented less than four spaces, beginning with nothing that opens or
/// underlines a block (`#`, `>`, a list marker, a fence, a digit, `<`, `[`,
/// `=`, `_`, `|`, `$`, `:`, `\`), and with no pipe (a table's cells) or
/// NUL (the end of the block scanner's input).
pub(super) fn is_plain_line(text: &str, start: usize, end: usize) -> bool {
    if end > text.len() || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return false;
    }
    // A carriage return alone ends a line too.
    let line_start = text[..start]
        .rfind(['\n', '\r'])
        .map_or(0, |newline| newline + 1);
    let line_end = text[end..]
        .find(['\n', '\r'])
        .map_or(text.len(), |newline| end + newline);
    let line = &text[line_start..line_end];
    // The edit leaves the line's indent and first character as they were
    // (a paragraph's range starts at its first line's indent).
    let indent_and_first = line.len() - line.trim_start_matches(' ').len() + 1;
    if start < line_start + indent_and_first {
        return false;
    }
    let content = line.trim_start_matches(' ');
    let indent = line.len() - content.len();
    let Some(first) = content.chars().next() else {
        return false;
    };
    indent < 4
        && !first.is_whitespace()
        && !first.is_ascii_digit()
        && !"#>-*+=_~`<[|$:\\".contains(first)
        && !line.contains(['|', '\0'])
        && !content.trim().is_empty()
}

/// Whether a list or a block quote ends after byte `offset` (the scanner
/// can also misplace the end of one after an edit before it).
///
/// A tree with a syntax error is never reused: its recovery is no block
/// structure to build on.
pub(super) fn list_or_quote_after(tree: &Tree, offset: usize) -> bool {
    fn within(node: Node<'_>, offset: usize) -> bool {
        let mut cursor = node.walk();
        node.children(&mut cursor).any(|child| match child.kind() {
            "list" | "list_item" | "block_quote" => child.end_byte() > offset,
            "section" => child.end_byte() > offset && within(child, offset),
            _ => false,
        })
    }
    tree.root_node().has_error() || within(tree.root_node(), offset)
}

/// Whether bytes `start..end` of the tree's text touch a list or a block
/// quote.
pub(super) fn inside_list_or_quote(tree: &Tree, start: usize, end: usize) -> bool {
    let Some(mut node) = tree.root_node().descendant_for_byte_range(start, end) else {
        return false;
    };
    loop {
        if matches!(node.kind(), "list" | "list_item" | "block_quote") {
            return true;
        }
        match node.parent() {
            Some(parent) => node = parent,
            None => return false,
        }
    }
}

/// How many parses in a row may be made from the last one (see
/// [`splice`]) before the tree is read whole again.
pub(super) const MAX_SPLICES: usize = 64;

/// The syntax after one edit inside a line of a paragraph that kept the
/// blocks (`start..old_end` of the old text became `start..end`), made
/// from the last parse's: every block and prose range moved as the
/// edited tree's nodes moved, and only the paragraph's inline text read
/// again. `None` (read the tree whole) if the edit is not inside one
/// inline node of the tree.
pub(super) fn splice(
    text: &str,
    tree: &Tree,
    inline_parser: &mut Parser,
    inline_memo: &mut InlineMemo,
    last: &MarkdownSyntax,
    (start, old_end, end): (usize, usize, usize),
) -> Option<MarkdownSyntax> {
    let mut node = tree.root_node().descendant_for_byte_range(start, start)?;
    while node.kind() != "inline" {
        node = node.parent()?;
    }
    if !(node.start_byte() < start && end <= node.end_byte()) {
        return None;
    }
    // Where a position of the old text is in the new one: as tree-sitter
    // moves a node's ends (no block or inline text starts or ends inside
    // what the edit removed: it holds no line break).
    let moved = |offset: usize| {
        if offset < old_end {
            offset
        } else {
            offset - old_end + end
        }
    };
    let moved_range = |range: TextRange| TextRange::new(moved(range.start), moved(range.end));
    let blocks = last
        .blocks
        .iter()
        .map(|block| Block {
            range: moved_range(block.range),
            inline: moved_range(block.inline),
            ..block.clone()
        })
        .collect();
    // The inline node's ends in the old text.
    let (old_start, old_node_end) = (node.start_byte(), node.end_byte() - end + old_end);
    let before = last.prose.partition_point(|range| range.end <= old_start);
    let after = last
        .prose
        .partition_point(|range| range.start < old_node_end);
    let mut extractor = Extractor {
        text,
        inline_parser,
        old_memo: inline_memo,
        new_memo: None,
        syntax: MarkdownSyntax::default(),
    };
    let key = extractor.inline(node);
    let read = remove_bare_urls(text, extractor.syntax.prose);
    if let Some((key, prose)) = key {
        inline_memo.insert(key, prose);
    }
    let mut prose = Vec::with_capacity(last.prose.len() + read.len());
    prose.extend_from_slice(&last.prose[..before]);
    prose.extend(read);
    prose.extend(last.prose[after..].iter().map(|range| moved_range(*range)));
    Some(MarkdownSyntax { blocks, prose })
}

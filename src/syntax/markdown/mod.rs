//! Markdown structure and prose ranges, from tree-sitter-md.
//!
//! tree-sitter-md has two grammars: a block grammar for the document and an
//! inline grammar run on each `inline` node. We drive both ourselves instead
//! of using `tree_sitter_md::MarkdownParser` because incremental re-parsing
//! of its inline trees does not reproduce a fresh parse (about a third of
//! random edits differ). Here the block tree is edited and re-parsed
//! incrementally, and inline content is analysed per block and memoised by
//! the block's exact text, so the result after any edit is, by construction,
//! what a fresh parse gives.
//!
//! Architecture invariant: [`MarkdownSyntax`] is a pure function of the text.
//! The incremental path exists only for speed; a property test holds it equal
//! to a fresh parse.

use rustc_hash::FxHashMap;
use std::sync::Arc;

use tree_sitter::{InputEdit, Node, Parser, Point, Range, Tree};

use crate::text::TextRange;

mod plain;
mod reuse;
use reuse::{
    MAX_SPLICES, inside_list_or_quote, is_plain_line, list_or_quote_after, splice,
    within_a_paragraph_line,
};

/// One block of the document, in document order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub kind: BlockKind,
    /// The whole block, markers included.
    pub range: TextRange,
    /// The block's first line of inline text: a heading's title, a paragraph or
    /// list item's text. Empty for blocks without inline content.
    pub inline: TextRange,
    /// How many list items enclose this block (0 at top level).
    pub list_depth: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    Heading { level: u8 },
    Paragraph,
    ListItem,
    CodeBlock,
    HtmlBlock,
    Quote,
    Table,
    ThematicBreak,
    FrontMatter,
}

/// What the core needs from a Markdown document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MarkdownSyntax {
    pub blocks: Vec<Block>,
    /// Sorted, non-overlapping byte ranges of prose: inline text outside code,
    /// link destinations, autolinks, bare URLs, HTML and comments.
    pub prose: Vec<TextRange>,
}

impl MarkdownSyntax {
    /// The prose ranges that intersect `range`, clipped to it.
    pub fn prose_in(&self, range: TextRange) -> impl Iterator<Item = TextRange> + '_ {
        let first = self.prose.partition_point(|prose| prose.end <= range.start);
        self.prose[first..]
            .iter()
            .take_while(move |prose| prose.start < range.end)
            .map(move |prose| {
                TextRange::new(prose.start.max(range.start), prose.end.min(range.end))
            })
    }

    /// Whether the whole of `range` is prose.
    pub fn is_prose(&self, range: TextRange) -> bool {
        let index = self.prose.partition_point(|prose| prose.end < range.end);
        self.prose
            .get(index)
            .is_some_and(|prose| prose.contains_range(range))
    }
}

/// An edit of a text, in byte offsets of the text before the edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    pub range: TextRange,
    pub new_text: String,
}

/// One edit of the text in the terms tree-sitter needs: byte offsets and
/// (row, byte column) points before and after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeEdit {
    pub start_byte: usize,
    pub old_end_byte: usize,
    pub new_end_byte: usize,
    pub start_position: (usize, usize),
    pub old_end_position: (usize, usize),
    pub new_end_position: (usize, usize),
}

/// Inline analysis of one inline node: prose ranges relative to the node start.
type InlineProse = Arc<[TextRange]>;

/// The prose of each inline node read so far, by its text and cuts.
type InlineMemo = FxHashMap<InlineKey, InlineProse>;

/// A parser that keeps what it needs to re-parse one document incrementally.
///
/// Closed files are parsed with [`MarkdownParser::parse_fresh`] and keep
/// nothing; open documents keep a `MarkdownParser` with their tree.
pub struct MarkdownParser {
    block_parser: Parser,
    inline_parser: Parser,
    tree: Option<Tree>,
    /// Inline results of the last parse keyed by the inline node's text and cut
    /// points. Only the last parse's entries are kept.
    inline_memo: InlineMemo,
    /// What the edits since the last parse may have done to the blocks.
    pending: Pending,
    /// The last parse's result, from which an edit that keeps the blocks
    /// makes the next one; `None` when nothing was remembered.
    last: Option<MarkdownSyntax>,
    /// Parses made from the last one since the tree was last read whole:
    /// each adds its paragraph's new text to the inline memo, which only a
    /// whole reading renews, so after [`MAX_SPLICES`] the tree is read whole.
    splices: usize,
    /// Block parses done (fresh or incremental), for the tests.
    block_parses: usize,
    /// Parses made from the last one ([`splice`]), for the tests.
    spliced: usize,
    /// Parses made by [`plain`], for the tests.
    read_plainly: usize,
}

/// An open document [`plain`] can read, up to this size, is read by it
/// after each edit and keeps no tree; the inline content that needs the
/// inline grammar (links, code) is memoised by its text as in the tree's
/// path. Its line scan reads 128 KB (about 20,000 words) in about 0.3 ms,
/// less than the grammar's incremental parse of a line break typed in a
/// 5,000-word scene and far less than the 10 ms of a first parse of one;
/// past this size the tree's incremental parse costs less per keystroke.
const PLAIN_EDITS_UP_TO: usize = 128 * 1024;

/// What the edits since the last parse may have changed of the blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    Nothing,
    /// One edit inside one line of a paragraph, neither removing nor
    /// inserting a line break, a pipe or a backslash; `start..end` is what
    /// it inserted, in place of `start..old_end`. If the line is still a
    /// plain line of prose, the blocks are those of the edited tree: only
    /// the paragraph's inline text is read again, and no block parse is
    /// needed.
    InParagraph {
        start: usize,
        old_end: usize,
        end: usize,
    },
    /// Anything else: the blocks are parsed again.
    Anywhere,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct InlineKey {
    text: Box<str>,
    cuts: Box<[(u32, u32)]>,
}

impl Default for MarkdownParser {
    fn default() -> Self {
        Self::new()
    }
}

impl MarkdownParser {
    pub fn new() -> Self {
        let mut block_parser = Parser::new();
        block_parser
            .set_language(&tree_sitter_md::LANGUAGE.into())
            .expect("the bundled tree-sitter-md block grammar matches the tree-sitter ABI");
        Self {
            block_parser,
            inline_parser: new_inline_parser(),
            tree: None,
            inline_memo: InlineMemo::default(),
            pending: Pending::Nothing,
            last: None,
            splices: 0,
            block_parses: 0,
            spliced: 0,
            read_plainly: 0,
        }
    }

    /// Parses `text` from scratch and keeps the tree for later edits.
    pub fn parse(&mut self, text: &str) -> MarkdownSyntax {
        self.tree = None;
        self.last = None;
        self.inline_memo.clear();
        self.reparse(text, true)
    }

    /// Parses `text` without keeping any state: the path for closed files.
    /// A document of plain prose is read without the block grammar (see
    /// [`plain`]), to the same result.
    pub fn parse_fresh(text: &str) -> MarkdownSyntax {
        plain::parse(text).unwrap_or_else(|| Self::parse_with_grammar(text))
    }

    /// [`Self::parse_fresh`] through tree-sitter-md's block grammar, whatever
    /// the text.
    pub fn parse_with_grammar(text: &str) -> MarkdownSyntax {
        let mut parser = Self::new();
        parser.reparse(text, false)
    }

    /// Re-parses after `edit` turned `old_text` into `new_text`.
    pub fn apply_edit(
        &mut self,
        old_text: &str,
        edit: &TextEdit,
        new_text: &str,
    ) -> MarkdownSyntax {
        let start = edit.range.start;
        let new_end = start + edit.new_text.len();
        self.edit_tree(
            &TreeEdit {
                start_byte: start,
                old_end_byte: edit.range.end,
                new_end_byte: new_end,
                start_position: point_at(old_text, start),
                old_end_position: point_at(old_text, edit.range.end),
                new_end_position: point_at(new_text, new_end),
            },
            &old_text[edit.range.start..edit.range.end],
            &edit.new_text,
        );
        self.reparse_after_edits(new_text)
    }

    /// Tells the kept tree about one edit, which replaced `removed` with
    /// `inserted`; call [`Self::reparse_after_edits`] once after the last of
    /// a batch.
    pub fn edit_tree(&mut self, edit: &TreeEdit, removed: &str, inserted: &str) {
        // A NUL ends the block scanner's input.
        let keeps_lines = |text: &str| !text.contains(['\n', '\r', '|', '\\', '\0']);
        let in_paragraph = self.pending == Pending::Nothing
            && keeps_lines(removed)
            && keeps_lines(inserted)
            && self.tree.as_ref().is_some_and(|tree| {
                !tree.root_node().has_error()
                    && within_a_paragraph_line(
                        tree,
                        edit.start_byte - edit.start_position.1,
                        edit.old_end_byte,
                        inserted,
                    )
            });
        self.pending = if in_paragraph {
            Pending::InParagraph {
                start: edit.start_byte,
                old_end: edit.old_end_byte,
                end: edit.new_end_byte,
            }
        } else {
            Pending::Anywhere
        };
        // tree-sitter-md's block scanner can reuse a list or a block quote
        // wrongly after an edit inside or before one (a lazy continuation
        // line keeps its old extent, a last item its end): such an edit
        // parses the blocks afresh, which costs a block parse of the file
        // and keeps the inline memo.
        if !in_paragraph
            && self.tree.as_ref().is_some_and(|tree| {
                inside_list_or_quote(tree, edit.start_byte, edit.old_end_byte)
                    || list_or_quote_after(tree, edit.start_byte)
            })
        {
            self.tree = None;
        }
        if let Some(tree) = &mut self.tree {
            let point = |(row, column): (usize, usize)| Point { row, column };
            tree.edit(&InputEdit {
                start_byte: edit.start_byte,
                old_end_byte: edit.old_end_byte,
                new_end_byte: edit.new_end_byte,
                start_position: point(edit.start_position),
                old_end_position: point(edit.old_end_position),
                new_end_position: point(edit.new_end_position),
            });
        }
    }

    /// Re-parses `text` reusing the edited tree and the inline memo.
    pub fn reparse_after_edits(&mut self, text: &str) -> MarkdownSyntax {
        self.reparse(text, true)
    }

    fn reparse(&mut self, text: &str, remember: bool) -> MarkdownSyntax {
        let pending = std::mem::replace(&mut self.pending, Pending::Nothing);
        // A document read plainly keeps no tree, and is read plainly again
        // until it no longer can be; then the grammar parses it whole.
        if remember && self.tree.is_none() && text.len() <= PLAIN_EDITS_UP_TO {
            let mut memo = InlineMemo::default();
            if let Some(syntax) =
                plain::parse_remembering(text, Some((&self.inline_memo, &mut memo)))
            {
                self.read_plainly += 1;
                self.inline_memo = memo;
                self.last = Some(syntax.clone());
                self.splices = 0;
                return syntax;
            }
        }
        let blocks_kept = match pending {
            Pending::InParagraph { start, end, .. } => remember && is_plain_line(text, start, end),
            Pending::Nothing | Pending::Anywhere => false,
        };
        let last = self.last.take();
        if let (
            true,
            Some(tree),
            Some(last),
            Pending::InParagraph {
                start,
                old_end,
                end,
            },
        ) = (blocks_kept, &self.tree, &last, pending)
            && self.splices < MAX_SPLICES
            && let Some(syntax) = splice(
                text,
                tree,
                &mut self.inline_parser,
                &mut self.inline_memo,
                last,
                (start, old_end, end),
            )
        {
            self.splices += 1;
            self.spliced += 1;
            self.last = Some(syntax.clone());
            return syntax;
        }
        let tree = match self.tree.take() {
            // The edited tree's blocks stand, moved by the edit.
            Some(tree) if blocks_kept => tree,
            old => {
                // A paragraph's edit that turned out to change its line is
                // judged as any other (see `edit_tree`).
                let old = old.filter(|tree| match pending {
                    Pending::InParagraph { start, .. } => !list_or_quote_after(tree, start),
                    Pending::Nothing | Pending::Anywhere => true,
                });
                self.block_parses += 1;
                self.block_parser
                    .parse(text, old.as_ref())
                    .expect("tree-sitter returns a tree when no timeout or cancellation is set")
            }
        };
        let mut memo = if remember {
            Some(InlineMemo::default())
        } else {
            None
        };
        let syntax = extract(
            text,
            &tree,
            &mut self.inline_parser,
            &self.inline_memo,
            memo.as_mut(),
        );
        if remember {
            self.tree = Some(tree);
            self.inline_memo = memo.unwrap_or_default();
            self.last = Some(syntax.clone());
            self.splices = 0;
        }
        syntax
    }
}

fn new_inline_parser() -> Parser {
    let mut inline_parser = Parser::new();
    inline_parser
        .set_language(&tree_sitter_md::INLINE_LANGUAGE.into())
        .expect("the bundled tree-sitter-md inline grammar matches the tree-sitter ABI");
    inline_parser
}

/// (row, byte column) of `offset`.
fn point_at(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset];
    let row = memchr::memchr_iter(b'\n', before).count();
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |newline| newline + 1);
    (row, offset - line_start)
}

struct Extractor<'a> {
    text: &'a str,
    inline_parser: &'a mut Parser,
    old_memo: &'a InlineMemo,
    new_memo: Option<&'a mut InlineMemo>,
    syntax: MarkdownSyntax,
}

fn extract(
    text: &str,
    tree: &Tree,
    inline_parser: &mut Parser,
    old_memo: &InlineMemo,
    new_memo: Option<&mut InlineMemo>,
) -> MarkdownSyntax {
    let mut extractor = Extractor {
        text,
        inline_parser,
        old_memo,
        new_memo,
        syntax: MarkdownSyntax::default(),
    };
    extractor.visit(tree.root_node(), 0, false);
    let mut syntax = extractor.syntax;
    syntax.prose = remove_bare_urls(text, syntax.prose);
    // Kept as long as the file, in room grown by doubling.
    syntax.blocks.shrink_to_fit();
    syntax.prose.shrink_to_fit();
    syntax
}

impl Extractor<'_> {
    /// Reads `node` and what it holds; `in_setext` says whether its parent
    /// is a setext heading (asked of the parent here rather than of the
    /// node: tree-sitter finds a node's parent by walking down from the
    /// root, which made a long scene's walk quadratic in its paragraphs).
    fn visit(&mut self, node: Node<'_>, list_depth: u16, in_setext: bool) {
        let range = TextRange::new(node.start_byte(), node.end_byte());
        let kind = match node.kind() {
            "atx_heading" | "setext_heading" => Some(BlockKind::Heading {
                level: heading_level(node),
            }),
            // A setext heading's text is a paragraph inside it: one block,
            // the heading, or its words would be read twice.
            "paragraph" if in_setext => None,
            "paragraph" => Some(BlockKind::Paragraph),
            "list_item" => Some(BlockKind::ListItem),
            "fenced_code_block" | "indented_code_block" => Some(BlockKind::CodeBlock),
            "html_block" => Some(BlockKind::HtmlBlock),
            "block_quote" => Some(BlockKind::Quote),
            "pipe_table" => Some(BlockKind::Table),
            "thematic_break" => Some(BlockKind::ThematicBreak),
            "minus_metadata" | "plus_metadata" => Some(BlockKind::FrontMatter),
            "inline" | "pipe_table_cell" => {
                let _ = self.inline(node);
                return;
            }
            _ => None,
        };
        if let Some(kind) = kind {
            let inline = first_inline(node).map_or(TextRange::empty(range.start), |inline| {
                TextRange::new(inline.start_byte(), first_line_end(self.text, inline))
            });
            self.syntax.blocks.push(Block {
                kind,
                range,
                inline,
                list_depth,
            });
        }
        if matches!(
            kind,
            Some(
                BlockKind::CodeBlock
                    | BlockKind::HtmlBlock
                    | BlockKind::FrontMatter
                    | BlockKind::ThematicBreak
            )
        ) {
            return;
        }
        let child_depth = list_depth + u16::from(kind == Some(BlockKind::ListItem));
        let setext = node.kind() == "setext_heading";
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.visit(child, child_depth, setext);
        }
    }

    /// Adds the prose of one inline node, from the memo when its text was
    /// seen; the memo's new entry when there is no new memo to put it in.
    fn inline(&mut self, node: Node<'_>) -> Option<(InlineKey, InlineProse)> {
        let ranges = included_ranges(node);
        let base = node.start_byte();
        let key = InlineKey {
            text: self.text[base..node.end_byte()].into(),
            cuts: ranges
                .iter()
                .map(|range| {
                    (
                        (range.start_byte - base) as u32,
                        (range.end_byte - base) as u32,
                    )
                })
                .collect(),
        };
        let prose = match self.old_memo.get(&key) {
            Some(prose) => prose.clone(),
            None => self.analyse_inline(&ranges, base),
        };
        self.syntax
            .prose
            .extend(prose.iter().map(|range| range.shifted(base)));
        match self.new_memo.as_deref_mut() {
            Some(memo) => {
                memo.insert(key, prose);
                None
            }
            None => Some((key, prose)),
        }
    }

    fn analyse_inline(&mut self, ranges: &[Range], base: usize) -> InlineProse {
        analyse_inline(self.text, ranges, base, || &mut *self.inline_parser).into()
    }
}

/// Whether the inline content at `ranges` of `text` has a byte that can
/// open an inline construct that is not prose (code spans, links, images,
/// autolinks, HTML, LaTeX). Without one the inline grammar's answer is
/// known, and skipping it is most of why a cold index costs little more
/// than reading the blocks.
fn needs_inline_grammar(text: &str, ranges: &[Range]) -> bool {
    ranges.iter().any(|range| {
        let bytes = &text.as_bytes()[range.start_byte..range.end_byte];
        memchr::memchr3(b'`', b'<', b'[', bytes).is_some() || memchr::memchr(b'$', bytes).is_some()
    })
}

/// The prose of the inline content at `ranges` of `text`, relative to `base`:
/// the ranges less code spans, link destinations, autolinks, HTML and LaTeX.
/// `inline_parser` is asked for only when a byte that can open one of them
/// is there.
fn analyse_inline<'p>(
    text: &str,
    ranges: &[Range],
    base: usize,
    inline_parser: impl FnOnce() -> &'p mut Parser,
) -> Vec<TextRange> {
    let mut prose: Vec<TextRange> = ranges
        .iter()
        .filter(|range| range.end_byte > range.start_byte)
        .map(|range| TextRange::new(range.start_byte - base, range.end_byte - base))
        .collect();
    if !needs_inline_grammar(text, ranges) {
        return prose;
    }
    let inline_parser = inline_parser();
    if inline_parser.set_included_ranges(ranges).is_err() {
        return prose;
    }
    let Some(tree) = inline_parser.parse(text, None) else {
        return prose;
    };
    let mut excluded = Vec::new();
    collect_non_prose(tree.root_node(), &mut excluded);
    for range in excluded {
        let relative = TextRange::new(range.start - base, range.end - base);
        prose = subtract(prose, relative);
    }
    prose
}

/// The ranges of an inline node without its block continuation markers
/// (the `> ` of a quote, the indentation of a list item), as tree-sitter-md does.
fn included_ranges(node: Node<'_>) -> Vec<Range> {
    let mut ranges = Vec::new();
    let mut range = node.range();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let child_range = child.range();
        ranges.push(Range {
            start_byte: range.start_byte,
            start_point: range.start_point,
            end_byte: child_range.start_byte,
            end_point: child_range.start_point,
        });
        range.start_byte = child_range.end_byte;
        range.start_point = child_range.end_point;
    }
    ranges.push(range);
    ranges
}

fn collect_non_prose(node: Node<'_>, excluded: &mut Vec<TextRange>) {
    match node.kind() {
        "code_span" | "link_destination" | "link_title" | "link_label" | "uri_autolink"
        | "email_autolink" | "html_tag" | "latex_block" | "image" => {
            excluded.push(TextRange::new(node.start_byte(), node.end_byte()));
        }
        _ => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                collect_non_prose(child, excluded);
            }
        }
    }
}

fn subtract(prose: Vec<TextRange>, cut: TextRange) -> Vec<TextRange> {
    let mut result = Vec::with_capacity(prose.len() + 1);
    for range in prose {
        if !range.intersects(cut) {
            result.push(range);
            continue;
        }
        if range.start < cut.start {
            result.push(TextRange::new(range.start, cut.start));
        }
        if cut.end < range.end {
            result.push(TextRange::new(cut.end, range.end));
        }
    }
    result
}

/// Bare URLs (`https://…`, `www.…`) in prose are not prose; the inline grammar
/// only knows `<…>` autolinks.
fn remove_bare_urls(text: &str, prose: Vec<TextRange>) -> Vec<TextRange> {
    static FINDER: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    let finder = FINDER.get_or_init(|| {
        aho_corasick::AhoCorasick::new(["http://", "https://", "www."])
            .expect("three literal patterns build an automaton")
    });
    let mut result = Vec::with_capacity(prose.len());
    for range in prose {
        let mut pieces = vec![range];
        for found in finder.find_iter(range.slice(text)) {
            let start = range.start + found.start();
            let preceded_by_word = text[..start]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric);
            if preceded_by_word {
                continue;
            }
            let end = text[start..range.end]
                .find(char::is_whitespace)
                .map_or(range.end, |length| start + length);
            pieces = pieces
                .into_iter()
                .flat_map(|piece| subtract(vec![piece], TextRange::new(start, end)))
                .collect();
        }
        result.extend(pieces);
    }
    result
}

fn heading_level(node: Node<'_>) -> u8 {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let level = match child.kind() {
            "atx_h1_marker" | "setext_h1_underline" => 1,
            "atx_h2_marker" | "setext_h2_underline" => 2,
            "atx_h3_marker" => 3,
            "atx_h4_marker" => 4,
            "atx_h5_marker" => 5,
            "atx_h6_marker" => 6,
            _ => continue,
        };
        return level;
    }
    1
}

/// The first `inline` node that belongs to this block (not to a nested list).
fn first_inline(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "inline" => return Some(child),
            "paragraph" => return first_inline(child),
            _ => {}
        }
    }
    None
}

fn first_line_end(text: &str, inline: Node<'_>) -> usize {
    let start = inline.start_byte();
    let end = inline.end_byte();
    memchr::memchr(b'\n', &text.as_bytes()[start..end]).map_or(end, |newline| start + newline)
}

#[cfg(test)]
mod tests;

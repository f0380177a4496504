//! Syntax of a manuscript file: the YAML front matter and the Markdown body.
//!
//! Parsing never fails. A broken front matter block yields its entries that
//! could be read plus a [`front_matter::FrontMatterError`]; Markdown always
//! has a tree. What the rest of the core needs from the trees is extracted
//! into plain data ([`markdown::MarkdownSyntax`]), so no tree-sitter type
//! leaks past this module.
//!
//! ## Parts
//!
//! front matter (serde-saphyr, entry by entry so one bad line costs one entry; a block of the
//! plain shape, `key: value` lines and lists of plain words, is read without it by
//! `front_matter::plain`, held to the parser's answer by
//! `plain_front_matter_reads_as_the_parser_does`) and tree-sitter-md blocks and prose ranges.
//! `MarkdownSyntax` is a pure function of the text. A closed file of front matter, ATX
//! headings, thematic breaks, one-line list items and paragraphs of prose is read by a line
//! scan, `markdown::plain`, much faster, which leaves any other line to the block grammar;
//! `a_document_read_plainly_is_what_the_grammar_reads` holds it to the grammar's answer. An
//! open document the scan reads (up to 128 KB) is read by it after each edit and keeps no tree
//! (`a_plain_document_is_read_plainly_after_each_edit_until_it_is_not`). Other open documents
//! re-parse incrementally: an edit inside a line of a paragraph that leaves it a plain line of
//! prose needs no block parse and no walk of the tree (the last parse's blocks and prose ranges
//! are moved; only that paragraph's inline node is read again), any other edit re-parses the
//! blocks (afresh where tree-sitter-md misplaces a list's or a quote's end).
//! `incremental_parse_equals_fresh_parse` holds both to a fresh parse.

pub mod front_matter;
pub mod markdown;

pub use front_matter::{FrontMatter, FrontMatterError, YamlKind, YamlValue};
pub use markdown::{Block, BlockKind, MarkdownParser, MarkdownSyntax, TextEdit};

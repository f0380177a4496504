//! Syntax of a manuscript file: the YAML front matter and the Markdown body.
//!
//! Parsing never fails. A broken front matter block yields its entries that
//! could be read plus a [`front_matter::FrontMatterError`]; Markdown always
//! has a tree. What the rest of the core needs from the trees is extracted
//! into plain data ([`markdown::MarkdownSyntax`]), so no tree-sitter type
//! leaks past this module.

pub mod front_matter;
pub mod markdown;

pub use front_matter::{FrontMatter, FrontMatterError, YamlKind, YamlValue};
pub use markdown::{Block, BlockKind, MarkdownParser, MarkdownSyntax, TextEdit};

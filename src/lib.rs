//! control-room: a language server and command-line checker for novels kept
//! as Markdown.
//!
//! The core (`text`, `syntax`, `index`, `checks`) knows nothing of LSP; the
//! `lsp` module adapts it to the protocol and `cli` to the terminal. `engine`
//! runs recipes of tools and agents over the core.

pub mod checks;
pub mod cli;
pub mod engine;
pub mod evidence;
pub mod ide;
pub mod index;
pub mod llm;
pub mod lsp;
pub mod prose;
pub mod syntax;
pub mod text;

//! control-room: a language server and command-line checker for novels kept
//! as Markdown.
//!
//! The core (`text`, `syntax`, `index`, `checks`) knows nothing of LSP; the
//! `lsp` module adapts it to the protocol and `cli` to the terminal. `runs`
//! runs recipes of `tools` and agents (through `llm`) over the core, on
//! `storage` and the knowledge base (`kb`); `conference`, `foreman`, `voice`
//! and `plan` are features beside it. `ARCHITECTURE.md` has the table of which module may
//! import which; `tests/tidy.rs` holds the code to it.

pub mod checks;
pub mod cli;
pub mod codes;
pub mod conference;
pub mod evidence;
pub mod export;
pub mod foreman;
pub mod health;
pub mod ide;
pub mod index;
pub mod kb;
pub mod language;
pub mod llm;
pub mod lsp;
pub mod manuscript;
pub mod plan;
pub mod prose;
pub mod receipts;
pub mod runs;
pub mod stats;
pub mod storage;
pub mod syntax;
pub mod text;
pub mod tools;
pub mod voice;

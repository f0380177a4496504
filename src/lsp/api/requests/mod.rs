//! One file per LSP request the server answers.

pub(crate) mod code_action;
pub(crate) mod code_lens;
pub(crate) mod completion;
pub(crate) mod definition;
pub(crate) mod diagnostic;
pub(crate) mod document_state;
pub(crate) mod document_symbol;
pub(crate) mod execute_command;
pub(crate) mod folding_range;
pub(crate) mod hover;
pub(crate) mod initialize;
pub(crate) mod inlay_hint;
pub(crate) mod references;
pub(crate) mod rename;
pub(crate) mod semantic_tokens;
pub(crate) mod shutdown;
pub(crate) mod workspace_diagnostic;
pub(crate) mod workspace_symbol;

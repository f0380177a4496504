//! Project recipes open in the editor: validated exactly as the engine loads
//! them (the editor's unsaved text wins over the disk), with each error shown
//! at its JSON pointer in the recipe file.

use std::collections::BTreeMap;
use std::path::Path;

use tower_lsp_server::ls_types as lsp;

use super::convert;
use crate::index::FilePath;
use crate::runs::prompts::Prompts;
use crate::runs::recipe::Registry;
use crate::text::PositionEncoding;

/// An open recipe document: its path, text and version.
pub type OpenRecipe = (FilePath, String, i32);

/// The diagnostics of every open recipe document, with its version.
pub fn diagnostics(
    root: &Path,
    open: &[OpenRecipe],
    encoding: PositionEncoding,
) -> Vec<(FilePath, Vec<lsp::Diagnostic>, i32)> {
    if open.is_empty() {
        return Vec::new();
    }
    let templates = Prompts::load(root);
    let texts: BTreeMap<String, String> = open
        .iter()
        .map(|(path, text, _)| (path.to_string(), text.clone()))
        .collect();
    let registry = Registry::load_with_open(root, &templates, &texts);
    open.iter()
        .map(|(path, text, version)| {
            let diagnostics = registry
                .errors()
                .iter()
                .filter(|error| error.file == **path)
                .map(|error| lsp::Diagnostic {
                    range: convert::range_in_text(text, error.range(text), encoding),
                    severity: Some(lsp::DiagnosticSeverity::ERROR),
                    code: Some(lsp::NumberOrString::String(error.rule.to_owned())),
                    source: Some("control-room".to_owned()),
                    message: error.message.clone(),
                    data: Some(serde_json::json!({ "pointer": error.pointer })),
                    ..lsp::Diagnostic::default()
                })
                .collect();
            (path.clone(), diagnostics, *version)
        })
        .collect()
}

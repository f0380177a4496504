//! `controlRoom.compile`: the manuscript as one DOCX, EPUB, PDF or Markdown
//! file from the editor (see `export`), on the text as the editor has it.
//! It answers where the file went and what it holds; a missing pandoc or
//! PDF engine, or an output that would touch the manuscript, is an error
//! whose message says what to do.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types::Uri;

use super::convert::uri_for_absolute;
use super::runs::Context;
use super::shared::{invalid, lock};
use crate::export::{self, Format};

pub const COMPILE: &str = "controlRoom.compile";

/// What `controlRoom.compile` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompileArgs {
    /// `docx` (default), `epub`, `pdf` or `md`.
    #[serde(default)]
    format: Option<String>,
    /// Where to write: a path (relative to the manuscript root) or a
    /// `file://` URI; default `<title>.<format>` beside the manuscript's folders.
    #[serde(default)]
    output: Option<String>,
}

/// Compiles; answers the output's path and URI, the scenes and words, and
/// what was left out.
pub async fn compile(context: &Context, args: CompileArgs) -> Result<Value, RpcError> {
    let format = match args.format.as_deref() {
        None => Format::Docx,
        Some(name) => Format::parse(name).ok_or_else(|| {
            invalid(format!(
                "{COMPILE}: `{name}` is not a format; use docx, epub, pdf or md"
            ))
        })?,
    };
    let workspace = lock(&context.session).workspace.clone();
    let output = match args.output.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) if text.starts_with("file:") => Some(
            text.parse::<Uri>()
                .ok()
                .and_then(|uri| uri.to_file_path().map(|path| path.into_owned()))
                .ok_or_else(|| invalid(format!("{COMPILE}: {text} is not a file URI")))?,
        ),
        Some(text) => Some(workspace.root().join(PathBuf::from(text))),
    };
    let compiled =
        tokio::task::spawn_blocking(move || export::compile(&workspace, format, output.as_deref()))
            .await
            .map_err(|error| invalid(format!("{COMPILE}: {error}")))?
            .map_err(|error| invalid(format!("{COMPILE}: {error}")))?;
    Ok(json!({
        "format": format.extension(),
        "output": compiled.output.to_string_lossy(),
        "uri": uri_for_absolute(&compiled.output).map(|uri| uri.as_str().to_owned()),
        "title": compiled.title,
        "scenes": compiled.scenes,
        "words": compiled.words,
        "missing": compiled.missing,
        "unlisted": compiled.unlisted,
        "converter": compiled.converter,
    }))
}

//! `controlRoom.remember`: "Remember this" on a selection appends the
//! decision it makes (`ide::remembered`) to the knowledge base, where the
//! agents' prompts find it.

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::convert::{self, path_for};
use super::runs::{Context, invalid, lock};
use crate::engine::prompts::state::append_decisions;
use crate::engine::runner::now;
use crate::engine::store::Disk;
use crate::text::TextRange;

pub const REMEMBER: &str = "controlRoom.remember";

/// What `controlRoom.remember` takes: the passage.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RememberArgs {
    uri: Uri,
    range: lsp::Range,
}

/// Appends the passage's decision; answers it.
pub fn remember(context: &Context, args: RememberArgs) -> Result<Value, RpcError> {
    let (workspace, encoding) = {
        let session = lock(&context.session);
        (session.workspace.clone(), session.encoding)
    };
    let path = path_for(&workspace, &args.uri).ok_or_else(|| {
        invalid(format!(
            "{REMEMBER}: {:?} is not in the workspace",
            args.uri
        ))
    })?;
    let file = workspace
        .file(&path)
        .ok_or_else(|| invalid(format!("{REMEMBER}: {path} is not indexed")))?;
    let start = convert::offset(file, args.range.start, encoding);
    let end = convert::offset(file, args.range.end, encoding);
    let range = TextRange::new(start.min(end), start.max(end));
    let decision = crate::ide::remembered(&workspace, file, range, &now())
        .ok_or_else(|| invalid(format!("{REMEMBER}: select the passage to remember")))?;
    append_decisions(
        workspace.root(),
        &Disk::default(),
        std::slice::from_ref(&decision),
    )
    .map_err(|error| {
        invalid(format!(
            "{REMEMBER}: cannot write the knowledge base: {error}"
        ))
    })?;
    Ok(json!({"decision": decision}))
}

//! `controlRoom/documentState`: the version, length and SHA-256 of the server's copy of a document, so a client (or a test) can verify that the two are in sync.

use tower_lsp_server::jsonrpc::{Error as RpcError, Result as RpcResult};
use tower_lsp_server::ls_types::Uri;

use crate::lsp::convert::path_for;
use crate::lsp::state::Server;

/// The reply to `controlRoom/documentState`: what the server holds for a
/// document, so a client (or a test) can verify that the two are in sync.
#[derive(serde::Serialize, serde::Deserialize, Debug)]
pub struct DocumentState {
    pub version: Option<i32>,
    pub length: usize,
    pub sha256: String,
}

#[derive(serde::Deserialize, Debug)]
pub struct DocumentStateParams {
    pub uri: Uri,
}

/// `controlRoom/documentState`: the version, length and SHA-256 of the
/// server's copy of a document.
pub(crate) async fn document_state(
    server: &Server,
    params: DocumentStateParams,
) -> RpcResult<Option<DocumentState>> {
    use sha2::Digest;
    let Some(session) = server.session() else {
        return Err(RpcError::invalid_request());
    };
    let Some(path) = path_for(&session.workspace, &params.uri) else {
        return Ok(None);
    };
    let Some(file) = session.workspace.file(&path) else {
        return Ok(None);
    };
    let digest = sha2::Sha256::digest(file.text.as_bytes());
    let sha256 = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    Ok(Some(DocumentState {
        version: session.version(&path),
        length: file.text.len(),
        sha256,
    }))
}

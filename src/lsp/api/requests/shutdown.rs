//! `shutdown`: nothing is left to flush; runs in flight keep their files whole.

use tower_lsp_server::jsonrpc::Result as RpcResult;

use crate::lsp::state::Server;

pub(crate) async fn shutdown(_server: &Server) -> RpcResult<()> {
    Ok(())
}

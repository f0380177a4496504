//! The handlers, one file per request or notification, laid out like ruff's
//! server: each turns the protocol's params into the core's terms, calls the
//! feature (`ide`, the engine, the session) and turns the answer back.
//! `server.rs` only delegates here.

pub(crate) mod notifications;
pub(crate) mod requests;

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types::request::Request;

use super::snapshot::Snapshot;
use super::state::Server;

/// A request answered on a snapshot of the session, off its lock, as ruff's
/// background request handlers are: each handler file implements it for
/// its request type, and the server answers with [`on_snapshot`].
pub(crate) trait SnapshotRequest: Request {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result>;
}

/// Answers request `R` on a snapshot; a panic in it becomes an error reply
/// naming the request's method.
pub(crate) async fn on_snapshot<R>(server: &Server, params: R::Params) -> RpcResult<R::Result>
where
    R: SnapshotRequest,
    R::Params: Send + 'static,
    R::Result: Send + 'static,
{
    server
        .query(R::METHOD, move |snapshot| R::answer(snapshot, &params))
        .await?
}

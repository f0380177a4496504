//! `controlRoom.health`: the story's health from the manuscript as the
//! editor has it: `{score, scenes, words, checks, pace, text}`, the checks
//! with their scores and findings (each finding's place as `path:line`),
//! and the report as the writer reads it, for an editor to show.

use serde_json::Value;
use tower_lsp_server::jsonrpc::Error as RpcError;

use super::commands::shared::{invalid, lock};
use super::runs::Context;
use crate::health::{Health, report};

pub const HEALTH: &str = "controlRoom.health";

/// The report, measured off the session's lock through its memo.
pub async fn health(context: &Context) -> Result<Value, RpcError> {
    let (workspace, measures) = {
        let session = lock(&context.session);
        (session.workspace.clone(), session.health.clone())
    };
    tokio::task::spawn_blocking(move || {
        let health = Health::check(&workspace, &mut lock(&measures));
        let mut answer = report::json(&workspace, &health);
        answer["text"] = Value::String(report::text(&workspace, &health));
        answer
    })
    .await
    .map_err(|error| invalid(format!("{HEALTH}: {error}")))
}

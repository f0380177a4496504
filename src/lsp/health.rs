//! `controlRoom.health`: the story's health from the manuscript as the
//! editor has it: `{score, scenes, words, checks, pace, text}`, the checks
//! with their scores and findings (each finding's place as `path:line`),
//! and the report as the writer reads it, for an editor to show; A3, B1
//! and C2 as the runs of "Read a scene's story health" read each scene.
//! `controlRoom.healthOverride` keeps the writer's verdict on a scene for
//! one of those three over whatever a run says.

use serde_json::Value;
use tower_lsp_server::jsonrpc::Error as RpcError;

use super::runs::Context;
use super::shared::{invalid, lock};
use crate::health::{Health, report};

pub const HEALTH: &str = "controlRoom.health";
pub const HEALTH_OVERRIDE: &str = "controlRoom.healthOverride";

/// What `controlRoom.healthOverride` takes: the check (`A3`, `B1`, `C2`),
/// the scene's id, the verdict (`null` takes the override back) and why.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverrideArgs {
    check: String,
    scene: String,
    verdict: Option<String>,
    #[serde(default)]
    why: String,
}

/// Appends the writer's override; answers it.
pub fn set_override(context: &Context, args: OverrideArgs) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let found = crate::health::overrides::keep(
        &workspace,
        &crate::storage::Disk::default(),
        (&args.check, &args.scene),
        args.verdict,
        &args.why,
    )
    .map_err(|error| invalid(format!("{HEALTH_OVERRIDE}: {error}")))?;
    Ok(serde_json::to_value(&found).unwrap_or(Value::Null))
}

/// The report, measured off the session's lock through its memo.
pub async fn health(context: &Context) -> Result<Value, RpcError> {
    let (workspace, measures) = {
        let session = lock(&context.session);
        (session.workspace.clone(), session.health.clone())
    };
    tokio::task::spawn_blocking(move || {
        let mut problems = Vec::new();
        let readings =
            crate::runs::story_health::readings(workspace.root(), &workspace, &mut problems);
        let health = Health::check_read(
            &workspace,
            &mut lock(&measures),
            &|file| crate::checks::dependency_key(&workspace, file),
            &readings,
        );
        let mut answer = report::json(&workspace, &health);
        answer["text"] = Value::String(report::text(&workspace, &health));
        answer["problems"] = serde_json::json!(problems);
        answer
    })
    .await
    .map_err(|error| invalid(format!("{HEALTH}: {error}")))
}

//! `controlRoom.mode` (the project's mode, the gate out of it and its
//! history: what the editors' status lines and code lenses show) and
//! `controlRoom.mode.advance` (to the next mode, or `to` a given one; a shut
//! gate is a refusal in the result, passed only with `skip` and `because`).

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;

use tower_lsp_server::ls_types as lsp;

use super::runs::Context;
use super::shared::{invalid, lock};
use crate::foreman::actions::effect::ProposedMove;
use crate::kb::mode::{self, Mode, ModeError, Move};
use crate::runs::runner::now;
use crate::runs::store::Disk;

pub const MODE: &str = "controlRoom.mode";
pub const ADVANCE_MODE: &str = "controlRoom.mode.advance";

/// What `controlRoom.mode.advance` takes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdvanceArgs {
    /// The mode to move to (default: the next).
    #[serde(default)]
    pub to: Option<String>,
    #[serde(default)]
    pub skip: bool,
    #[serde(default)]
    pub because: Option<String>,
}

/// Asks the writer whether to make the move the Foreman proposed, and
/// makes it on their yes; what happened, in a line.
pub async fn confirm(context: &Context, proposed: &ProposedMove) -> String {
    let yes = format!("Move to {}", proposed.to.label());
    let no = format!("Stay in {}", proposed.from.label());
    let items = [&yes, &no]
        .iter()
        .map(|title| lsp::MessageActionItem {
            title: (*title).clone(),
            properties: Default::default(),
        })
        .collect();
    let picked = context
        .client
        .show_message_request(lsp::MessageType::INFO, proposed.question(), Some(items))
        .await;
    if !matches!(&picked, Ok(Some(item)) if item.title == yes) {
        let said = format!("stayed in {}", proposed.from.label());
        context
            .client
            .show_message(lsp::MessageType::INFO, format!("control-room: {said}."))
            .await;
        return said;
    }
    let args = AdvanceArgs {
        to: Some(proposed.to.id().to_owned()),
        skip: proposed.because.is_some(),
        because: proposed.because.clone(),
    };
    let said = match advance(context, args) {
        Ok(result) if result["moved"] == true => format!("moved to {}", proposed.to.label()),
        Ok(result) => format!(
            "not moved: {}",
            result["refused"].as_str().unwrap_or("the gate is shut")
        ),
        Err(error) => format!("not moved: {}", error.message),
    };
    context
        .client
        .show_message(lsp::MessageType::INFO, format!("control-room: {said}."))
        .await;
    said
}

/// The mode as [`mode::View`].
pub fn show(context: &Context) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let state = mode::load(workspace.root()).map_err(|error| invalid(error.to_string()))?;
    Ok(json!(mode::view(&workspace, &state)))
}

/// Moves the project; `{"moved": false, "refused": why}` when a gate is shut.
pub fn advance(context: &Context, args: AdvanceArgs) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let root = workspace.root();
    let state = mode::load(root).map_err(|error| invalid(error.to_string()))?;
    let target = match args.to.as_deref() {
        Some(name) => Some(Mode::parse(name).ok_or_else(|| {
            invalid(format!(
                "{ADVANCE_MODE}: `{name}` is not a mode: architect, voice_calibration, director or editor"
            ))
        })?),
        None => None,
    };
    let asked = Move {
        skip: args.skip,
        because: args.because,
    };
    match mode::advance(&workspace, &state, target, &asked, &now()) {
        Ok(next) => {
            mode::save(&Disk::default(), root, &next)
                .map_err(|error| invalid(error.to_string()))?;
            Ok(json!({"moved": true, "mode": mode::view(&workspace, &next)}))
        }
        Err(error @ (ModeError::GateShut { .. } | ModeError::AlreadyComplete { .. })) => Ok(
            json!({"moved": false, "refused": error.to_string(), "mode": mode::view(&workspace, &state)}),
        ),
        Err(error) => Err(invalid(error.to_string())),
    }
}

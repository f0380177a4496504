//! `workspace/executeCommand`: every command the server executes, and the
//! one place that sends each to its handler. What the handlers share
//! (argument parsing, errors, the lock helper) is in [`super::shared`].

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types as lsp;

use super::runs::{self, Context};
use super::shared::{argument, invalid};
use super::{
    charts, compile, conference, diagnostics, dictionary, foreman, health, knowledge, mode, plans,
    stats, voice,
};

/// Every command the server executes.
pub const COMMANDS: &[&str] = &[
    runs::RUN_RECIPE,
    runs::RESUME_RUN,
    runs::ROUTE,
    runs::CANCEL_RUN,
    runs::LIST_RUNS,
    runs::OPEN_RUN,
    runs::DISMISS_FINDING,
    conference::CONFERENCE,
    diagnostics::CHECK_WORKSPACE,
    plans::RUN_PLAN,
    plans::PAUSE_PLAN,
    knowledge::REMEMBER,
    compile::COMPILE,
    stats::STATS,
    stats::OUTLINE,
    stats::CAST,
    charts::CHART,
    health::HEALTH,
    health::HEALTH_OVERRIDE,
    dictionary::ADD_TO_DICTIONARY,
    mode::MODE,
    mode::ADVANCE_MODE,
    foreman::ASK_FOREMAN,
    foreman::SCAFFOLD,
    voice::VOICE_TOURNAMENT,
    voice::VOICE_PICK,
    voice::VOICE_WHY,
    voice::VOICE_CROSS,
    voice::VOICE_BUNDLE,
    voice::VOICE_LOCK,
    voice::VOICE_UNLOCK,
];

/// Whether `command` reads the manuscript (routes, runs, plans, remembers),
/// and so must wait for the initial index; listing, opening and cancelling
/// runs answer at once.
pub fn reads_the_manuscript(command: &str) -> bool {
    ![
        runs::LIST_RUNS,
        runs::OPEN_RUN,
        runs::CANCEL_RUN,
        plans::PAUSE_PLAN,
    ]
    .contains(&command)
}

/// Dispatches a `workspace/executeCommand`.
pub async fn execute(
    context: &Context,
    params: lsp::ExecuteCommandParams,
) -> Result<Option<Value>, RpcError> {
    let arguments = &params.arguments;
    match params.command.as_str() {
        runs::RUN_RECIPE => {
            let args: runs::RunRecipeArgs = argument(runs::RUN_RECIPE, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            if let Some(task) = foreman::unroutable(context, &args) {
                return foreman::decompose(context, task, token).map(Some);
            }
            let started = runs::start(context, args, token)?;
            Ok(Some(json!({ "run_id": started.run_id })))
        }
        runs::RESUME_RUN => {
            let runs::RunIdArgs { run_id } = argument(runs::RESUME_RUN, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            runs::resume(context, &run_id, token).map(Some)
        }
        runs::ROUTE => {
            let runs::RouteArgs { task } = argument(runs::ROUTE, arguments)?;
            runs::route(context, &task).map(Some)
        }
        runs::CANCEL_RUN => {
            let runs::RunIdArgs { run_id } = argument(runs::CANCEL_RUN, arguments)?;
            runs::cancel(context, &run_id).map(Some)
        }
        runs::LIST_RUNS => Ok(Some(runs::list(context))),
        runs::OPEN_RUN => {
            let runs::RunIdArgs { run_id } = argument(runs::OPEN_RUN, arguments)?;
            runs::open(context, &run_id).await.map(Some)
        }
        runs::DISMISS_FINDING => {
            let runs::FindingArgs { finding_id } = argument(runs::DISMISS_FINDING, arguments)?;
            runs::dismiss(context, &finding_id).map(Some)
        }
        conference::CONFERENCE => {
            let args = argument(conference::CONFERENCE, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            conference::start(context, args, token).map(Some)
        }
        plans::RUN_PLAN => {
            let args = argument(plans::RUN_PLAN, arguments)?;
            plans::run(context, args).map(Some)
        }
        knowledge::REMEMBER => {
            let args = argument(knowledge::REMEMBER, arguments)?;
            knowledge::remember(context, args).map(Some)
        }
        plans::PAUSE_PLAN => {
            let args = argument(plans::PAUSE_PLAN, arguments)?;
            plans::pause(context, args).map(Some)
        }
        compile::COMPILE => {
            let args = argument(compile::COMPILE, arguments)?;
            compile::compile(context, args).await.map(Some)
        }
        charts::CHART => {
            let args = argument(charts::CHART, arguments)?;
            charts::chart(context, args).await.map(Some)
        }
        health::HEALTH => health::health(context).await.map(Some),
        health::HEALTH_OVERRIDE => {
            let args = argument(health::HEALTH_OVERRIDE, arguments)?;
            health::set_override(context, args).map(Some)
        }
        stats::STATS => {
            let args = argument(stats::STATS, arguments)?;
            stats::stats(context, args).await.map(Some)
        }
        stats::OUTLINE => stats::outline(context).await.map(Some),
        stats::CAST => stats::cast(context).await.map(Some),
        dictionary::ADD_TO_DICTIONARY => {
            let args = argument(dictionary::ADD_TO_DICTIONARY, arguments)?;
            dictionary::add(context, args).map(Some)
        }
        mode::MODE => mode::show(context).map(Some),
        foreman::ASK_FOREMAN => {
            let args = argument(foreman::ASK_FOREMAN, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            foreman::start(context, args, token).map(Some)
        }
        foreman::SCAFFOLD => {
            let args = argument(foreman::SCAFFOLD, arguments)?;
            foreman::scaffold(context, args).await.map(Some)
        }
        voice::VOICE_TOURNAMENT => {
            let args = argument(voice::VOICE_TOURNAMENT, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            voice::start_tournament(context, args, token).map(Some)
        }
        voice::VOICE_PICK => {
            let args = argument(voice::VOICE_PICK, arguments)?;
            voice::pick(context, args).await.map(Some)
        }
        voice::VOICE_WHY => {
            let args = argument(voice::VOICE_WHY, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            voice::why(context, args, token).map(Some)
        }
        voice::VOICE_CROSS => {
            let args = argument(voice::VOICE_CROSS, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            voice::cross(context, args, token).map(Some)
        }
        voice::VOICE_BUNDLE => {
            let args = argument(voice::VOICE_BUNDLE, arguments)?;
            voice::bundle(context, args).await.map(Some)
        }
        voice::VOICE_LOCK => voice::lock_voice(context).await.map(Some),
        voice::VOICE_UNLOCK => voice::unlock_voice(context).await.map(Some),
        mode::ADVANCE_MODE => {
            let args = argument(mode::ADVANCE_MODE, arguments)?;
            mode::advance(context, args).map(Some)
        }
        other => Err(invalid(format!(
            "unknown command `{other}`; the commands are {}",
            COMMANDS.join(", ")
        ))),
    }
}

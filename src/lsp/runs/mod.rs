//! Recipe runs started from the editor: `workspace/executeCommand`
//! `controlRoom.runRecipe` answers `{run_id}` at once and the run goes on in
//! the background with cancellable `$/progress`; `cancelRun`, `listRuns`,
//! `openRun` and `dismissFinding` do what they say.
//!
//! When a run ends, its result reaches the manuscript only through the
//! editor: a new scene as `CreateFile` + `TextDocumentEdit`, an existing one
//! as a `TextDocumentEdit` versioned with the document version seen when the
//! run started. If the scene changed meanwhile, or the editor refuses the
//! edit, the draft is written beside the scene (`SCN-x.draft-<run>.md`) and
//! the writer is told, with an action that opens it: a writer's words are
//! never overwritten. Then the run's findings become diagnostics, the run
//! report is written, and the result is shown.
//!
//! `drive` runs a run to its end and delivers it; `edits` holds what runs
//! and conferences send the editor (progress, edits, documents to show).

mod drive;
mod edits;

pub(super) use edits::{EditPlan, Progress, apply, apply_change, apply_files, show};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error as RpcError, ErrorCode};
use tower_lsp_server::ls_types::{self as lsp};

use super::convert::uri_for;
use super::session::Session;
use super::shared::{invalid, lock};
use crate::index::Workspace;
use crate::llm::model::Model;
use crate::runs::findings;
use crate::runs::launch::{self, CancelOutcome, LaunchError, LaunchRequest, PlanLink, SceneLock};
use crate::runs::recipe::Registry;
use crate::runs::report;
use crate::runs::router;
use crate::runs::runner::{self, RunError, Runner};
use crate::runs::store::{self, Disk, RunFiles, RunManifest, RunStatus};

pub const RUN_RECIPE: &str = "controlRoom.runRecipe";
pub const CANCEL_RUN: &str = "controlRoom.cancelRun";
pub const LIST_RUNS: &str = "controlRoom.listRuns";
pub const OPEN_RUN: &str = "controlRoom.openRun";
pub const DISMISS_FINDING: &str = "controlRoom.dismissFinding";
pub const RESUME_RUN: &str = "controlRoom.resumeRun";
pub const ROUTE: &str = "controlRoom.route";

/// What the client can do with what a run leaves.
#[derive(Clone, Copy, Debug, Default)]
pub struct EditSupport {
    pub work_done_progress: bool,
    /// Versioned `documentChanges` in workspace edits.
    pub document_changes: bool,
    /// `CreateFile` operations in workspace edits.
    pub create_files: bool,
    pub show_document: bool,
}

/// What a run's task needs of the server.
#[derive(Clone)]
pub struct Context {
    pub client: Client,
    pub session: Arc<Mutex<Session>>,
    pub runs: Arc<Runs>,
    pub support: EditSupport,
    /// Recomputes and publishes diagnostics (after findings change).
    pub republish: Arc<dyn Fn() + Send + Sync>,
}

/// The runs this server has in flight.
#[derive(Default)]
pub struct Runs {
    in_flight: Mutex<HashMap<String, InFlight>>,
}

pub(super) struct InFlight {
    pub(super) recipe_id: String,
    pub(super) label: String,
    pub(super) scene_path: Option<String>,
    pub(super) cancel: CancellationToken,
    pub(super) token: lsp::ProgressToken,
    /// What the progress last said.
    pub(super) step: String,
}

/// A task in flight that is not a recipe run (a Foreman's turn, a voice
/// tournament): its progress token, whether the server made it, and its
/// cancel, registered under `id` so that cancelling the progress cancels it.
pub(super) struct Tracked {
    pub(super) token: lsp::ProgressToken,
    pub(super) created: bool,
    pub(super) cancel: CancellationToken,
}

impl Runs {
    /// Registers task `id` (`kind` and `label` as the run list shows them).
    pub(super) fn track(
        &self,
        id: &str,
        kind: &str,
        label: &str,
        client_token: Option<lsp::ProgressToken>,
    ) -> Tracked {
        let created = client_token.is_none();
        let token = client_token
            .unwrap_or_else(|| lsp::ProgressToken::String(format!("control-room/{id}")));
        let cancel = CancellationToken::new();
        self.lock().insert(
            id.to_owned(),
            InFlight {
                recipe_id: kind.to_owned(),
                label: label.to_owned(),
                scene_path: None,
                cancel: cancel.clone(),
                token: token.clone(),
                step: "starting".into(),
            },
        );
        Tracked {
            token,
            created,
            cancel,
        }
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, InFlight>> {
        lock(&self.in_flight)
    }

    /// Cancels the run whose progress has `token` (`window/workDoneProgress/cancel`).
    pub fn cancel_by_token(&self, token: &lsp::ProgressToken) -> bool {
        let runs = self.lock();
        let found = runs.values().find(|run| &run.token == token);
        if let Some(run) = found {
            run.cancel.cancel();
        }
        found.is_some()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RunRecipeArgs {
    /// A recipe id; else `task` is routed.
    #[serde(default)]
    pub(super) recipe: Option<String>,
    #[serde(default)]
    pub(super) task: Option<String>,
    #[serde(default)]
    pub(super) args: Map<String, Value>,
    /// A scene id or path, as a shorthand for `args.scene_id`/`scene_path`.
    #[serde(default)]
    pub(super) scene: Option<String>,
    /// The plan task the run carries out.
    #[serde(default)]
    pub(super) plan: Option<PlanLink>,
    /// Ask the model afresh ("Draft again"): nothing is reused.
    #[serde(default)]
    pub(super) fresh: bool,
}

#[derive(Debug, Deserialize)]
pub(super) struct RunIdArgs {
    #[serde(alias = "runId")]
    pub(super) run_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RouteArgs {
    pub(super) task: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct FindingArgs {
    #[serde(alias = "findingId")]
    pub(super) finding_id: String,
}

/// The writer's text of `path` (the editor's if it is open, else the
/// disk's) and its document version.
fn scene_now(session: &Session, path: &str) -> (Option<String>, Option<i32>) {
    let version = session.version(path);
    let text = if version.is_some() {
        session
            .workspace
            .file(path)
            .map(|file| file.text.to_string())
    } else {
        std::fs::read_to_string(session.workspace.absolute_path(path)).ok()
    };
    (text, version)
}

/// Everything a run needs that was known when it started.
struct Started {
    manifest: RunManifest,
    label: String,
    scene_path: Option<String>,
    /// The scene's document version when the run started.
    version: Option<i32>,
    workspace: Arc<Workspace>,
    registry: Arc<Registry>,
}

/// A run this server started: its id, and what its end sends (the run's
/// manifest once its result is delivered, or why it did not run).
pub(super) struct StartedRun {
    pub(super) run_id: String,
    pub(super) ended: oneshot::Receiver<Result<RunManifest, String>>,
}

/// The engine as the editor has it: the session's workspace, and project
/// recipes open in the editor over the disk's.
pub(super) fn editor_engine(context: &Context) -> Runner {
    let (workspace, open_recipes, graph) = {
        let session = lock(&context.session);
        (
            Arc::new(session.workspace.clone()),
            session.open_recipe_texts(),
            session.graph.clone(),
        )
    };
    // Recipes that do not load are shown on their files as diagnostics.
    let mut runner = launch::open(workspace, &open_recipes).runner;
    runner.graph = graph;
    runner
}

/// `controlRoom.runRecipe`: creates the run and starts it in the background.
pub(super) fn start(
    context: &Context,
    request: RunRecipeArgs,
    client_token: Option<lsp::ProgressToken>,
) -> Result<StartedRun, RpcError> {
    let launch_request = LaunchRequest {
        recipe: request.recipe,
        task: request.task,
        description: None,
        args: request.args,
        plan: request.plan,
        fresh: request.fresh,
    }
    .with_scene(request.scene.as_deref().unwrap_or_default());
    start_request(context, launch_request, client_token)
}

/// Starts a run of `request` through the engine's launcher.
pub(super) fn start_request(
    context: &Context,
    request: LaunchRequest,
    client_token: Option<lsp::ProgressToken>,
) -> Result<StartedRun, RpcError> {
    let mut runner = editor_engine(context);
    let plan = request.plan.clone();
    let resolved = launch::resolve(&runner.registry, &runner.workspace, request).map_err(
        |error| match error {
            LaunchError::NothingToRun => invalid(format!("{RUN_RECIPE}: {error}")),
            error => invalid(error.to_string()),
        },
    )?;
    with_model(context, &mut runner, &resolved.recipe.label)?;
    // One run of a recipe per scene at a time: checked and recorded under
    // one lock, so two quick clicks cannot both start.
    let mut in_flight = context.runs.lock();
    refuse_twice(
        &in_flight,
        &resolved.recipe.recipe_id,
        resolved.scene_path.as_deref(),
        &resolved.recipe.label,
    )?;
    let (created, version) = {
        let session = lock(&context.session);
        let version = resolved
            .scene_path
            .as_deref()
            .and_then(|path| session.version(path));
        let created = launch::create(&runner, &resolved, plan.as_ref(), |path| {
            scene_now(&session, path).0
        })
        .map_err(|error| invalid(error.to_string()))?;
        (created, version)
    };
    let started = Started {
        label: resolved.label,
        scene_path: resolved.scene_path,
        version,
        workspace: runner.workspace.clone(),
        registry: runner.registry.clone(),
        manifest: created.manifest,
    };
    Ok(begin(
        context,
        &mut in_flight,
        (runner, created.lock),
        started,
        client_token,
    ))
}

/// Gives `runner` the model of the editor's settings; agents' replies that
/// an identical request produced before are reused.
fn with_model(context: &Context, runner: &mut Runner, label: &str) -> Result<(), RpcError> {
    let editor_llm = lock(&context.session).editor_llm.clone();
    let model = connect(runner.workspace.root(), editor_llm.as_ref())
        .map_err(|error| invalid(format!("{label}: the model is not usable: {error}")))?;
    runner.model = Some(model);
    runner.reuse = true;
    Ok(())
}

/// Refuses a second run of a recipe on a scene while one is in flight.
fn refuse_twice(
    in_flight: &HashMap<String, InFlight>,
    recipe_id: &str,
    scene_path: Option<&str>,
    label: &str,
) -> Result<(), RpcError> {
    let Some((run_id, _)) = in_flight
        .iter()
        .find(|(_, run)| run.recipe_id == recipe_id && run.scene_path.as_deref() == scene_path)
    else {
        return Ok(());
    };
    let on = scene_path.map_or(String::new(), |path| format!(" on {path}"));
    Err(RpcError {
        code: ErrorCode::InvalidRequest,
        message: format!(
            "“{label}” is already running{on} (run {run_id}); cancel it or wait for it to finish"
        )
        .into(),
        data: Some(json!({"run_id": run_id})),
    })
}

/// Records the run as in flight and executes it in the background.
fn begin(
    context: &Context,
    in_flight: &mut HashMap<String, InFlight>,
    (runner, scene_lock): (Runner, Option<SceneLock>),
    started: Started,
    client_token: Option<lsp::ProgressToken>,
) -> StartedRun {
    let run_id = started.manifest.run_id.clone();
    let created = client_token.is_none();
    let token = client_token
        .unwrap_or_else(|| lsp::ProgressToken::String(format!("control-room/run/{run_id}")));
    let cancel = CancellationToken::new();
    in_flight.insert(
        run_id.clone(),
        InFlight {
            recipe_id: started.manifest.recipe_id.clone(),
            label: started.label.clone(),
            scene_path: started.scene_path.clone(),
            cancel: cancel.clone(),
            token: token.clone(),
            step: "starting".into(),
        },
    );
    let (sender, ended) = oneshot::channel();
    let context = context.clone();
    let task_run_id = run_id.clone();
    tokio::spawn(async move {
        let handle = launch::spawn(runner, &task_run_id, cancel, scene_lock);
        drive::drive(&context, started, handle, token, created, sender).await;
    });
    StartedRun { run_id, ended }
}

/// `controlRoom.resumeRun`: goes on with a run that is not done (after a
/// failure, a stop, a crash or a cancel) from its first unfinished step,
/// like `runs resume`.
pub(super) fn resume(
    context: &Context,
    run_id: &str,
    client_token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let mut runner = editor_engine(context);
    let manifest = RunFiles::new(runner.workspace.root(), run_id)
        .read_manifest()
        .map_err(|error| {
            if error.is_missing() {
                invalid(format!("no run `{run_id}` in this workspace"))
            } else {
                invalid(error.to_string())
            }
        })?;
    // A failed or cancelled run goes on from its first unfinished step.
    if manifest.status == RunStatus::Done {
        return Err(invalid(
            RunError::Finished {
                run_id: run_id.to_owned(),
                status: manifest.status.as_str(),
            }
            .to_string(),
        ));
    }
    let recipe = runner
        .registry
        .get(&manifest.recipe_id)
        .cloned()
        .ok_or_else(|| invalid(RunError::UnknownRecipe(manifest.recipe_id.clone()).to_string()))?;
    let scene_path = manifest
        .task
        .initial_args
        .get("scene_path")
        .and_then(Value::as_str)
        .map(str::to_owned);
    with_model(context, &mut runner, &recipe.label)?;
    let mut in_flight = context.runs.lock();
    if in_flight.contains_key(run_id) {
        return Err(invalid(format!("run {run_id} is already running")));
    }
    refuse_twice(
        &in_flight,
        &recipe.recipe_id,
        scene_path.as_deref(),
        &recipe.label,
    )?;
    let scene_lock = launch::lock_for(runner.workspace.root(), &recipe, scene_path.as_deref())
        .map_err(|error| invalid(error.to_string()))?;
    let version = scene_path
        .as_deref()
        .and_then(|path| lock(&context.session).version(path));
    let label = match scene_path.as_deref() {
        Some(path) => format!("{}: {}", recipe.label, crate::index::file::file_stem(path)),
        None => recipe.label.clone(),
    };
    let started = Started {
        label,
        scene_path,
        version,
        workspace: runner.workspace.clone(),
        registry: runner.registry.clone(),
        manifest,
    };
    let started = begin(
        context,
        &mut in_flight,
        (runner, scene_lock),
        started,
        client_token,
    );
    Ok(json!({ "run_id": started.run_id }))
}

/// `controlRoom.route`: which recipe a task in words goes to, as
/// `control-room route` prints it.
pub(super) fn route(context: &Context, task: &str) -> Result<Value, RpcError> {
    let engine = editor_engine(context);
    serde_json::to_value(router::route(
        &engine.registry,
        Some(&engine.workspace),
        task,
    ))
    .map_err(|error| invalid(format!("{ROUTE}: {error}")))
}

/// The model for agents: `[llm]` of `control-room.toml`, the editor's
/// `controlRoom.llm`, then the `CONTROL_ROOM_LLM_*` variables.
pub(super) fn connect(
    root: &Path,
    editor: Option<&crate::llm::config::LlmLayer>,
) -> anyhow::Result<Arc<dyn Model>> {
    let env = |name: &str| std::env::var(name).ok();
    let config = crate::llm::workspace_config(root, editor, &env)?;
    Ok(crate::llm::connect(&config, root, &env, None)?)
}

/// `controlRoom.cancelRun`: stops a run of this server, asks another
/// process to stop its run, or marks a run nobody runs as cancelled.
pub(super) fn cancel(context: &Context, run_id: &str) -> Result<Value, RpcError> {
    if let Some(run) = context.runs.lock().get(run_id) {
        run.cancel.cancel();
        return Ok(json!({"run_id": run_id, "status": "cancelling"}));
    }
    let root = lock(&context.session).workspace.root().to_path_buf();
    let status = match launch::cancel_elsewhere(&root, run_id)
        .map_err(|error| invalid(error.to_string()))?
    {
        CancelOutcome::AlreadyFinished(status) => status.as_str(),
        CancelOutcome::Cancelled => "cancelled",
        CancelOutcome::Requested => "cancelling",
    };
    Ok(json!({"run_id": run_id, "status": status}))
}

/// `controlRoom.listRuns`: every run of the workspace, newest first, with
/// the step of those in flight here; conferences in flight (which keep no
/// run folder) come first.
pub(super) fn list(context: &Context) -> Value {
    let workspace = lock(&context.session).workspace.clone();
    let in_flight = context.runs.lock();
    let on_disk = store::list_runs(workspace.root());
    let mut conferences: Vec<Value> = in_flight
        .iter()
        .filter(|(id, _)| !on_disk.iter().any(|run| &run.run_id == *id))
        .map(|(id, run)| {
            json!({
                "run_id": id,
                "recipe_id": run.recipe_id,
                "label": run.label,
                "status": "running",
                "in_flight": true,
                "step": run.step,
                "scene_path": run.scene_path,
            })
        })
        .collect();
    conferences.sort_by(|a, b| a["run_id"].as_str().cmp(&b["run_id"].as_str()));
    let runs: Vec<Value> = on_disk
        .into_iter()
        .map(|run| {
            let here = in_flight.get(&run.run_id);
            let report = report::report_path(&run.run_id);
            let report_uri = workspace
                .absolute_path(&report)
                .is_file()
                .then(|| uri_for(&workspace, &report))
                .flatten();
            json!({
                "run_id": run.run_id,
                "recipe_id": run.recipe_id,
                "label": here.map(|run| run.label.clone()),
                // A run of this server is running; one no process holds is interrupted.
                "status": if here.is_some() {
                    run.status.as_str()
                } else {
                    store::shown_status(workspace.root(), &run)
                },
                "in_flight": here.is_some(),
                "step": here.map(|run| run.step.clone()),
                "scene_path": run.task.initial_args.get("scene_path"),
                "current_step_index": run.current_step_index,
                "total_steps": run.total_steps,
                "created_at": run.created_at,
                "completed_at": run.completed_at,
                "error": run.error,
                "report": report_uri,
            })
        })
        .collect();
    Value::Array(conferences.into_iter().chain(runs).collect())
}

/// `controlRoom.openRun`: shows the run's report (its run.json until it
/// has one) and answers its URI.
pub(super) async fn open(context: &Context, run_id: &str) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let files = RunFiles::new(workspace.root(), run_id);
    if !files.manifest().exists() {
        return Err(invalid(format!("no run `{run_id}` in this workspace")));
    }
    let report = report::report_path(run_id);
    let path = if workspace.absolute_path(&report).is_file() {
        report
    } else {
        format!("{}/{run_id}/run.json", store::RUNS_DIR)
    };
    let uri = uri_for(&workspace, &path)
        .ok_or_else(|| invalid(format!("{path} cannot be named as a URI")))?;
    show(context, uri.clone(), true).await;
    Ok(json!({"run_id": run_id, "uri": uri}))
}

/// `controlRoom.dismissFinding`: the finding is recorded as dismissed and
/// its diagnostic goes.
pub(super) fn dismiss(context: &Context, finding_id: &str) -> Result<Value, RpcError> {
    let (root, store) = {
        let session = lock(&context.session);
        (
            session.workspace.root().to_path_buf(),
            session.findings.clone(),
        )
    };
    {
        let mut store = lock(&store);
        let finding = store
            .get(finding_id)
            .cloned()
            .ok_or_else(|| invalid(format!("no finding `{finding_id}` is shown")))?;
        findings::dismiss(&root, &Disk::default(), &finding, &runner::now())
            .map_err(|error| invalid(format!("cannot record the dismissal: {error}")))?;
        store.dismiss(finding_id);
    }
    (context.republish)();
    Ok(json!({"dismissed": finding_id}))
}

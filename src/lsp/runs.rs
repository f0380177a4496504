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
//! Architecture invariant: progress always ends (done, failed, cancelled,
//! or a panic in the run), because the run executes in its own task whose
//! end, however it comes, is awaited by the task that ends the progress.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error as RpcError, ErrorCode};
use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::convert::{self, uri_for};
use super::session::Session;
use crate::engine::delivery::{self, Applied, Decision, Placement};
use crate::engine::events::RunEvent;
use crate::engine::findings;
use crate::engine::launch::{
    self, CancelOutcome, LaunchError, LaunchRequest, PlanLink, RunEnd, RunHandle,
};
use crate::engine::model::Model;
use crate::engine::prompts::Prompts;
use crate::engine::recipe::Registry;
use crate::engine::report::{self, Delivery};
use crate::engine::router;
use crate::engine::runner::{self, RunError, Runner};
use crate::engine::store::{self, Disk, RunFiles, RunManifest, RunStatus};
use crate::index::{SourceFile, Workspace};

pub const RUN_RECIPE: &str = "controlRoom.runRecipe";
pub const CANCEL_RUN: &str = "controlRoom.cancelRun";
pub const LIST_RUNS: &str = "controlRoom.listRuns";
pub const OPEN_RUN: &str = "controlRoom.openRun";
pub const DISMISS_FINDING: &str = "controlRoom.dismissFinding";
pub const RESUME_RUN: &str = "controlRoom.resumeRun";
pub const ROUTE: &str = "controlRoom.route";

/// Every command the server executes.
pub const COMMANDS: &[&str] = &[
    RUN_RECIPE,
    RESUME_RUN,
    ROUTE,
    CANCEL_RUN,
    LIST_RUNS,
    OPEN_RUN,
    DISMISS_FINDING,
    super::conference::CONFERENCE,
    super::diagnostics::CHECK_WORKSPACE,
    super::plans::RUN_PLAN,
    super::plans::PAUSE_PLAN,
    super::knowledge::REMEMBER,
];

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

impl Runs {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, InFlight>> {
        self.in_flight
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
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

/// The session, even if a panic poisoned its lock.
pub(super) fn lock(session: &Mutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    session
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(super) fn invalid(message: impl Into<String>) -> RpcError {
    RpcError {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

/// The first argument of a command as `T`, or an error naming the command.
pub(super) fn argument<T: serde::de::DeserializeOwned>(
    command: &str,
    arguments: &[Value],
) -> Result<T, RpcError> {
    let value = arguments.first().cloned().unwrap_or(json!({}));
    serde_json::from_value(value).map_err(|error| invalid(format!("{command}: {error}")))
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
}

#[derive(Debug, Deserialize)]
struct RunIdArgs {
    #[serde(alias = "runId")]
    run_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteArgs {
    task: String,
}

#[derive(Debug, Deserialize)]
struct FindingArgs {
    #[serde(alias = "findingId")]
    finding_id: String,
}

/// Dispatches a `workspace/executeCommand`.
pub async fn execute(
    context: &Context,
    params: lsp::ExecuteCommandParams,
) -> Result<Option<Value>, RpcError> {
    let arguments = &params.arguments;
    match params.command.as_str() {
        RUN_RECIPE => {
            let args = argument(RUN_RECIPE, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            let started = start(context, args, token)?;
            Ok(Some(json!({ "run_id": started.run_id })))
        }
        RESUME_RUN => {
            let RunIdArgs { run_id } = argument(RESUME_RUN, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            resume(context, &run_id, token).map(Some)
        }
        ROUTE => {
            let RouteArgs { task } = argument(ROUTE, arguments)?;
            route(context, &task).map(Some)
        }
        CANCEL_RUN => {
            let RunIdArgs { run_id } = argument(CANCEL_RUN, arguments)?;
            cancel(context, &run_id).map(Some)
        }
        LIST_RUNS => Ok(Some(list(context))),
        OPEN_RUN => {
            let RunIdArgs { run_id } = argument(OPEN_RUN, arguments)?;
            open(context, &run_id).await.map(Some)
        }
        DISMISS_FINDING => {
            let FindingArgs { finding_id } = argument(DISMISS_FINDING, arguments)?;
            dismiss(context, &finding_id).map(Some)
        }
        super::conference::CONFERENCE => {
            let args = argument(super::conference::CONFERENCE, arguments)?;
            let token = params.work_done_progress_params.work_done_token;
            super::conference::start(context, args, token).map(Some)
        }
        super::plans::RUN_PLAN => {
            let args = argument(super::plans::RUN_PLAN, arguments)?;
            super::plans::run(context, args).map(Some)
        }
        super::knowledge::REMEMBER => {
            let args = argument(super::knowledge::REMEMBER, arguments)?;
            super::knowledge::remember(context, args).map(Some)
        }
        super::plans::PAUSE_PLAN => {
            let args = argument(super::plans::PAUSE_PLAN, arguments)?;
            super::plans::pause(context, args).map(Some)
        }
        other => Err(invalid(format!(
            "unknown command `{other}`; the commands are {}",
            COMMANDS.join(", ")
        ))),
    }
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

/// The recipes as the editor has them: project recipes open in the editor
/// win over the disk.
fn editor_registry(context: &Context) -> (Arc<Workspace>, Registry, Prompts) {
    let (workspace, open_recipes) = {
        let session = lock(&context.session);
        (
            Arc::new(session.workspace.clone()),
            session.open_recipe_texts(),
        )
    };
    let prompts = Prompts::load(workspace.root());
    let registry = Registry::load_with_open(workspace.root(), &prompts, &open_recipes);
    (workspace, registry, prompts)
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
    let (workspace, registry, prompts) = editor_registry(context);
    let plan = request.plan.clone();
    let resolved =
        launch::resolve(&registry, &workspace, request).map_err(|error| match error {
            LaunchError::NothingToRun => invalid(format!("{RUN_RECIPE}: {error}")),
            error => invalid(error.to_string()),
        })?;
    let runner = runner_for(
        context,
        workspace,
        registry,
        prompts,
        &resolved.recipe.label,
    )?;
    // One run of a recipe per scene at a time: checked and recorded under
    // one lock, so two quick clicks cannot both start.
    let mut in_flight = context.runs.lock();
    refuse_twice(
        &in_flight,
        &resolved.recipe.recipe_id,
        resolved.scene_path.as_deref(),
        &resolved.recipe.label,
    )?;
    let (manifest, version) = {
        let session = lock(&context.session);
        let version = resolved
            .scene_path
            .as_deref()
            .and_then(|path| session.version(path));
        let manifest = launch::create(&runner, &resolved, plan.as_ref(), |path| {
            scene_now(&session, path).0
        })
        .map_err(|error| invalid(error.to_string()))?;
        (manifest, version)
    };
    let started = Started {
        label: resolved.label,
        scene_path: resolved.scene_path,
        version,
        workspace: runner.workspace.clone(),
        registry: runner.registry.clone(),
        manifest,
    };
    Ok(begin(
        context,
        &mut in_flight,
        runner,
        started,
        client_token,
    ))
}

/// A runner for a run the editor starts, with the editor's model settings.
fn runner_for(
    context: &Context,
    workspace: Arc<Workspace>,
    registry: Registry,
    prompts: Prompts,
    label: &str,
) -> Result<Runner, RpcError> {
    let editor_llm = lock(&context.session).editor_llm.clone();
    let model = connect(workspace.root(), editor_llm.as_ref())
        .map_err(|error| invalid(format!("{label}: the model is not usable: {error}")))?;
    Ok(Runner {
        workspace,
        registry: Arc::new(registry),
        prompts: Arc::new(prompts),
        model: Some(model),
        disk: Disk::default(),
        sinks: Vec::new(),
        reuse: true,
    })
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
    runner: Runner,
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
        let handle = launch::spawn(runner, &task_run_id, cancel);
        drive(&context, started, handle, token, created, sender).await;
    });
    StartedRun { run_id, ended }
}

/// `controlRoom.resumeRun`: goes on with a run that is not done (after a
/// failure, a stop, a crash or a cancel) from its first unfinished step,
/// like `runs resume`.
fn resume(
    context: &Context,
    run_id: &str,
    client_token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let (workspace, registry, prompts) = editor_registry(context);
    let manifest = RunFiles::new(workspace.root(), run_id)
        .read_manifest()
        .map_err(|_| invalid(format!("no run `{run_id}` in this workspace")))?;
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
    let recipe = registry
        .get(&manifest.recipe_id)
        .cloned()
        .ok_or_else(|| invalid(RunError::UnknownRecipe(manifest.recipe_id.clone()).to_string()))?;
    let scene_path = manifest
        .task
        .initial_args
        .get("scene_path")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let runner = runner_for(context, workspace, registry, prompts, &recipe.label)?;
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
    let started = begin(context, &mut in_flight, runner, started, client_token);
    Ok(json!({ "run_id": started.run_id }))
}

/// `controlRoom.route`: which recipe a task in words goes to, as
/// `control-room route` prints it.
fn route(context: &Context, task: &str) -> Result<Value, RpcError> {
    let (workspace, registry, _) = editor_registry(context);
    serde_json::to_value(router::route(&registry, Some(&workspace), task))
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

/// `$/progress` of one run; silent when the client does not do progress.
pub(super) struct Progress {
    client: Client,
    token: Option<lsp::ProgressToken>,
}

impl Progress {
    pub(super) async fn begin(
        context: &Context,
        token: lsp::ProgressToken,
        create: bool,
        title: &str,
    ) -> Progress {
        let client = context.client.clone();
        let usable = context.support.work_done_progress
            && (!create
                || client
                    .create_work_done_progress(token.clone())
                    .await
                    .is_ok());
        let progress = Progress {
            client,
            token: usable.then_some(token),
        };
        progress
            .send(lsp::WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin {
                title: title.to_owned(),
                cancellable: Some(true),
                message: Some("starting".to_owned()),
                percentage: Some(0),
            }))
            .await;
        progress
    }

    pub(super) async fn report(&self, message: String, percentage: u32) {
        self.send(lsp::WorkDoneProgress::Report(lsp::WorkDoneProgressReport {
            cancellable: Some(true),
            message: Some(message),
            percentage: Some(percentage),
        }))
        .await;
    }

    pub(super) async fn end(&self, message: String) {
        self.send(lsp::WorkDoneProgress::End(lsp::WorkDoneProgressEnd {
            message: Some(message),
        }))
        .await;
    }

    async fn send(&self, value: lsp::WorkDoneProgress) {
        if let Some(token) = &self.token {
            self.client
                .send_notification::<lsp::notification::Progress>(lsp::ProgressParams {
                    token: token.clone(),
                    value: lsp::ProgressParamsValue::WorkDone(value),
                })
                .await;
        }
    }
}

/// A message for the writer: its kind, its text, and its actions with the
/// document each opens.
type Message = (lsp::MessageType, String, Vec<(String, Uri)>);

/// What a run's end tells the writer.
struct Outcome {
    /// The progress's last word.
    summary: String,
    /// A message to show, with the documents its actions open.
    message: Option<Message>,
    /// A document to show at once (the new scene, the report).
    show: Option<Uri>,
}

/// Runs a run to its end and delivers what it leaves; sends `ended` the
/// run's manifest, or why it did not run.
async fn drive(
    context: &Context,
    started: Started,
    mut handle: RunHandle,
    token: lsp::ProgressToken,
    create: bool,
    ended: oneshot::Sender<Result<RunManifest, String>>,
) {
    let run_id = started.manifest.run_id.clone();
    let progress = Progress::begin(context, token, create, &started.label).await;
    // The channel closes when the run's task ends, however it ends, so
    // every event is forwarded before progress ends.
    while let Some(event) = handle.events.recv().await {
        let report = match event {
            RunEvent::StepStarted {
                index,
                total,
                step_id,
                actor,
                ..
            } => Some((
                format!("[{}/{total}] {step_id} ({actor})", index + 1),
                (index * 100 / total.max(1)) as u32,
            )),
            RunEvent::Checking { .. } => Some(("checking the Definition of Done".to_owned(), 100)),
            _ => None,
        };
        if let Some((message, percentage)) = report {
            if let Some(run) = context.runs.lock().get_mut(&run_id) {
                run.step = message.clone();
            }
            progress.report(message, percentage).await;
        }
    }
    let root = started.workspace.root().to_path_buf();
    let recipe = started.registry.get(&started.manifest.recipe_id);
    let (outcome, result) = match handle.finish().await {
        RunEnd::Ended(manifest) => {
            let outcome = finish(context, &started, &manifest).await;
            (outcome, Ok(*manifest))
        }
        RunEnd::NotRun(error) => {
            let reason = error.to_string();
            delivery::conclude_failed(&root, recipe, &started.manifest, &reason);
            (failed(&started, &reason), Err(reason))
        }
        RunEnd::Crashed(reason) => {
            delivery::conclude_failed(&root, recipe, &started.manifest, &reason);
            (failed(&started, &reason), Err(reason))
        }
    };
    // Out of the in-flight list before the progress ends, so a client that
    // starts the same run again on seeing the end is not refused.
    context.runs.lock().remove(&run_id);
    // Whoever waits for the run (a plan) goes on now: its result is
    // delivered and its findings published.
    let _ = ended.send(result);
    progress.end(outcome.summary.clone()).await;
    if let Some(uri) = outcome.show {
        show(context, uri, false).await;
    }
    if let Some((kind, text, actions)) = outcome.message {
        // Answered whenever the writer gets to it; nothing waits for it.
        let context = context.clone();
        tokio::spawn(async move {
            let items: Vec<lsp::MessageActionItem> = actions
                .iter()
                .map(|(title, _)| lsp::MessageActionItem {
                    title: title.clone(),
                    properties: HashMap::new(),
                })
                .collect();
            let chosen = context
                .client
                .show_message_request(kind, text, (!items.is_empty()).then_some(items))
                .await;
            if let Ok(Some(chosen)) = chosen
                && let Some((_, uri)) = actions.iter().find(|(title, _)| *title == chosen.title)
            {
                show(&context, uri.clone(), true).await;
            }
        });
    }
}

pub(super) async fn show(context: &Context, uri: Uri, take_focus: bool) {
    if context.support.show_document {
        let _ = context
            .client
            .show_document(lsp::ShowDocumentParams {
                uri,
                external: Some(false),
                take_focus: Some(take_focus),
                selection: None,
            })
            .await;
    }
}

/// A run that ended (done, failed or cancelled): deliver its result,
/// publish its findings, write its report.
async fn finish(context: &Context, started: &Started, manifest: &RunManifest) -> Outcome {
    let root = started.workspace.root().to_path_buf();
    let recipe = started.registry.get(&manifest.recipe_id);
    let applied = deliver(context, started, manifest).await;
    let concluded = {
        let session = lock(&context.session);
        let text_of = |path: &str| -> Option<String> {
            session
                .workspace
                .file(path)
                .map(|file| file.text.to_string())
        };
        delivery::conclude(&root, recipe, manifest, &applied, &text_of)
    };
    if let Err(error) = &concluded.findings_written {
        context
            .client
            .log_message(
                lsp::MessageType::ERROR,
                format!(
                    "run {}: cannot write its findings: {error}",
                    manifest.run_id
                ),
            )
            .await;
    }
    let shown = concluded.findings.findings.len();
    let store = lock(&context.session).findings.clone();
    store
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(concluded.findings);
    (context.republish)();
    let report_uri = concluded
        .report
        .ok()
        .and_then(|path| uri_for(&started.workspace, &path));
    outcome(started, manifest, &applied.delivery, report_uri, shown)
}

/// What the writer is told of a run that ended.
fn outcome(
    started: &Started,
    manifest: &RunManifest,
    delivery: &Delivery,
    report_uri: Option<Uri>,
    shown: usize,
) -> Outcome {
    let dod_issue = report::dod_issue(started.workspace.root(), &manifest.run_id);
    let report_action = |actions: &mut Vec<(String, Uri)>| {
        if let Some(uri) = &report_uri {
            actions.push(("Open report".to_owned(), uri.clone()));
        }
    };
    let uri = |path: &str| uri_for(&started.workspace, path);
    let findings_note = match shown {
        0 => String::new(),
        1 => ", 1 finding".to_owned(),
        n => format!(", {n} findings"),
    };
    match (manifest.status, delivery) {
        (RunStatus::Done, Delivery::Scene(path)) => Outcome {
            summary: format!("done: {path}{findings_note}"),
            message: None,
            show: uri(path),
        },
        (RunStatus::Done, Delivery::Beside { path, reason }) => {
            let mut actions: Vec<(String, Uri)> = uri(path)
                .map(|uri| vec![("Open draft".to_owned(), uri)])
                .unwrap_or_default();
            report_action(&mut actions);
            Outcome {
                summary: format!("done: the draft is in {path}"),
                message: Some((
                    lsp::MessageType::WARNING,
                    format!(
                        "{}: the draft was written beside the scene, as {path}, because {reason}. Nothing you wrote was changed.",
                        started.label
                    ),
                    actions,
                )),
                show: None,
            }
        }
        (RunStatus::Done, _) => Outcome {
            summary: format!("done{findings_note}"),
            message: None,
            show: report_uri.clone(),
        },
        (RunStatus::Cancelled, _) => Outcome {
            summary: "cancelled".to_owned(),
            message: Some((
                lsp::MessageType::INFO,
                format!("{}: cancelled; nothing was written", started.label),
                Vec::new(),
            )),
            show: None,
        },
        (_, _) => {
            let mut actions = Vec::new();
            if let Some(issue) = dod_issue.as_deref().and_then(uri) {
                actions.push(("Open issue".to_owned(), issue));
            }
            report_action(&mut actions);
            let error = manifest.error.clone().unwrap_or_default();
            Outcome {
                summary: format!("failed: {error}"),
                message: Some((
                    if dod_issue.is_some() {
                        lsp::MessageType::WARNING
                    } else {
                        lsp::MessageType::ERROR
                    },
                    format!("{} failed: {error}", started.label),
                    actions,
                )),
                show: None,
            }
        }
    }
}

/// Puts the run's draft where the engine decides: into the scene through
/// the editor, or beside it on the disk when the scene changed or the
/// editor refuses.
async fn deliver(context: &Context, started: &Started, manifest: &RunManifest) -> Applied {
    let root = started.workspace.root();
    let recipe = started.registry.get(&manifest.recipe_id);
    let cache = RunFiles::new(root, &manifest.run_id)
        .read_cache()
        .unwrap_or_default();
    // Decide and build the edit under the lock, so the state it is built
    // on is the state that was checked.
    let (decision, edit) = {
        let session = lock(&context.session);
        let scene = manifest
            .task
            .initial_args
            .get("scene_path")
            .and_then(Value::as_str);
        let (text, version) = scene.map_or((None, None), |path| scene_now(&session, path));
        let decision = delivery::decide(
            &session.workspace,
            recipe,
            manifest,
            &cache,
            text.as_deref(),
        );
        let edit = match &decision {
            Decision::Draft(Placement::Replace { range, body, .. }) => Some(EditPlan::Replace {
                range: convert::range_in_text(
                    text.as_deref().unwrap_or_default(),
                    *range,
                    session.encoding,
                ),
                body: body.clone(),
                // The text is the one the run started from; if only the
                // version moved (an edit undone), the current version is
                // the one the editor will accept.
                version: version.or(started.version),
            }),
            Decision::Draft(Placement::Create { text, .. }) => {
                Some(EditPlan::Create { text: text.clone() })
            }
            _ => None,
        };
        (decision, edit)
    };
    let placement = match decision {
        Decision::Draft(placement) => placement,
        other => return Applied::nothing(&other),
    };
    let scene_path = placement.scene_path().to_owned();
    let placement = match (edit, uri_for(&started.workspace, &scene_path)) {
        (Some(edit), Some(uri)) => match apply(context, uri, edit, root, &scene_path).await {
            Ok(()) => {
                let text = placement.text().to_owned();
                // A file the editor does not have open learns its new text
                // now; the editor's didOpen or a watched-file event confirms it.
                let mut session = lock(&context.session);
                if session.version(&scene_path).is_none() {
                    let paths = session.workspace.config().paths.clone();
                    let file =
                        SourceFile::parse(scene_path.as_str().into(), text.clone().into(), &paths);
                    session.workspace.insert_file(file);
                    session.generation += 1;
                }
                return Applied {
                    delivery: Delivery::Scene(scene_path.clone()),
                    landed: Some((scene_path, text)),
                };
            }
            Err(reason) => placement.beside(&manifest.run_id, reason),
        },
        (Some(_), None) => placement.beside(
            &manifest.run_id,
            format!("{scene_path} cannot be named as a URI"),
        ),
        (None, _) => placement,
    };
    let applied = delivery::apply_on_disk(root, &Disk::default(), &manifest.run_id, placement);
    if let Delivery::Beside { path, .. } = &applied.delivery {
        lock(&context.session).reload_from_disk(&path.as_str().into());
    }
    applied
}

/// The edit that delivers a draft, or a conference's transcript.
pub(super) enum EditPlan {
    /// An existing scene: its body replaced, at the version it was read.
    Replace {
        range: lsp::Range,
        body: String,
        version: Option<i32>,
    },
    /// A new file.
    Create { text: String },
}

/// Sends the edit; `Err` with why when the editor did not apply it (then
/// the caller keeps the text elsewhere). A client that cannot create files
/// through an edit gets the new file written here, only where no file is.
pub(super) async fn apply(
    context: &Context,
    uri: Uri,
    plan: EditPlan,
    root: &Path,
    path: &str,
) -> Result<(), String> {
    let support = context.support;
    let edit = match plan {
        EditPlan::Replace {
            range,
            body,
            version,
        } => {
            let edits = vec![lsp::TextEdit {
                range,
                new_text: body,
            }];
            if support.document_changes {
                lsp::WorkspaceEdit {
                    document_changes: Some(lsp::DocumentChanges::Edits(vec![
                        lsp::TextDocumentEdit {
                            text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                                uri,
                                version,
                            },
                            edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
                        },
                    ])),
                    ..lsp::WorkspaceEdit::default()
                }
            } else {
                lsp::WorkspaceEdit {
                    changes: Some([(uri, edits)].into_iter().collect()),
                    ..lsp::WorkspaceEdit::default()
                }
            }
        }
        EditPlan::Create { text } => {
            if !(support.document_changes && support.create_files) {
                // The client cannot create files through an edit: create
                // the file here, only if none is there (nothing is lost).
                let absolute: PathBuf = root.join(path);
                if let Some(parent) = absolute.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                return match Disk::default().create_new(&absolute, text.as_bytes()) {
                    Ok(true) => Ok(()),
                    Ok(false) => Err("the file appeared while the run worked".into()),
                    Err(error) => Err(format!("the file cannot be written ({error})")),
                };
            }
            lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Operations(vec![
                    lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Create(lsp::CreateFile {
                        uri: uri.clone(),
                        options: Some(lsp::CreateFileOptions {
                            overwrite: Some(false),
                            ignore_if_exists: Some(false),
                        }),
                        annotation_id: None,
                    })),
                    lsp::DocumentChangeOperation::Edit(lsp::TextDocumentEdit {
                        text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                            uri,
                            version: None,
                        },
                        edits: vec![lsp::OneOf::Left(lsp::TextEdit {
                            range: lsp::Range::default(),
                            new_text: text,
                        })],
                    }),
                ])),
                ..lsp::WorkspaceEdit::default()
            }
        }
    };
    match context.client.apply_edit(edit).await {
        Ok(response) if response.applied => Ok(()),
        Ok(response) => Err(match response.failure_reason {
            Some(reason) if !reason.trim().is_empty() => {
                format!("the editor did not apply the edit ({reason})")
            }
            _ => "the editor did not apply the edit".to_owned(),
        }),
        Err(error) => Err(format!(
            "the editor did not apply the edit ({})",
            error.message
        )),
    }
}

/// A run that ended without reporting itself: its message.
fn failed(started: &Started, reason: &str) -> Outcome {
    Outcome {
        summary: format!("failed: {reason}"),
        message: Some((
            lsp::MessageType::ERROR,
            format!("{} failed: {reason}", started.label),
            Vec::new(),
        )),
        show: None,
    }
}

/// `controlRoom.cancelRun`: stops a run of this server, asks another
/// process to stop its run, or marks a run nobody runs as cancelled.
fn cancel(context: &Context, run_id: &str) -> Result<Value, RpcError> {
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
fn list(context: &Context) -> Value {
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
                "status": run.status.as_str(),
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
async fn open(context: &Context, run_id: &str) -> Result<Value, RpcError> {
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
fn dismiss(context: &Context, finding_id: &str) -> Result<Value, RpcError> {
    let (root, store) = {
        let session = lock(&context.session);
        (
            session.workspace.root().to_path_buf(),
            session.findings.clone(),
        )
    };
    {
        let mut store = store
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
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

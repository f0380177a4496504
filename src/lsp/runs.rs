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
use sha2::Digest;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error as RpcError, ErrorCode};
use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::convert::{range, uri_for};
use super::session::Session;
use crate::engine::contract;
use crate::engine::drafting;
use crate::engine::events::{RunEvent, RunSink};
use crate::engine::findings::{self, RunFindings};
use crate::engine::model::Model;
use crate::engine::prompts::Prompts;
use crate::engine::recipe::Registry;
use crate::engine::report::{self, Delivery, ReportInput};
use crate::engine::router;
use crate::engine::runner::{self, RunError, Runner};
use crate::engine::store::{self, CacheSlot, Disk, RunFiles, RunManifest, RunStatus};
use crate::index::{SourceFile, Workspace};

pub const RUN_RECIPE: &str = "controlRoom.runRecipe";
pub const CANCEL_RUN: &str = "controlRoom.cancelRun";
pub const LIST_RUNS: &str = "controlRoom.listRuns";
pub const OPEN_RUN: &str = "controlRoom.openRun";
pub const DISMISS_FINDING: &str = "controlRoom.dismissFinding";

/// Every command the server executes.
pub const COMMANDS: &[&str] = &[
    RUN_RECIPE,
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

/// A run's plan task: the plan's id and the task's number.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlanLink {
    pub(super) session_id: String,
    pub(super) task_id: u32,
}

#[derive(Debug, Deserialize)]
struct RunIdArgs {
    #[serde(alias = "runId")]
    run_id: String,
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
            start(context, args, token).map(Some)
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

/// The scene as it stands: whether it exists, a digest of its text (the
/// editor's if it is open, else the disk's), and its document version.
#[derive(Clone, Debug, PartialEq)]
struct SceneState {
    digest: Option<[u8; 32]>,
    version: Option<i32>,
}

fn scene_state(session: &Session, path: &str) -> SceneState {
    let version = session.version(path);
    let digest = if version.is_some() {
        session
            .workspace
            .file(path)
            .map(|file| sha2::Sha256::digest(file.text.as_bytes()).into())
    } else {
        std::fs::read(session.workspace.absolute_path(path))
            .ok()
            .map(|bytes| sha2::Sha256::digest(&bytes).into())
    };
    SceneState { digest, version }
}

/// Everything a run needs that was known when it started.
struct Started {
    manifest: RunManifest,
    label: String,
    scene_path: Option<String>,
    before: Option<SceneState>,
    workspace: Arc<Workspace>,
    registry: Arc<Registry>,
}

/// `controlRoom.runRecipe`: creates the run and starts it in the background.
pub(super) fn start(
    context: &Context,
    request: RunRecipeArgs,
    client_token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let (workspace, editor_llm, open_recipes) = {
        let session = lock(&context.session);
        (
            Arc::new(session.workspace.clone()),
            session.editor_llm.clone(),
            session.open_recipe_texts(),
        )
    };
    let root = workspace.root().to_path_buf();
    let prompts = Prompts::load(&root);
    let registry = Registry::load_with_open(&root, &prompts, &open_recipes);
    let plan_link = request.plan.clone();
    let mut args = request.args;
    if let Some(scene) = request.scene.filter(|scene| !scene.trim().is_empty()) {
        let key = if scene.ends_with(".md") {
            "scene_path"
        } else {
            "scene_id"
        };
        args.entry(key).or_insert(Value::String(scene));
    }
    let (recipe_id, description) = match (request.recipe, request.task) {
        (Some(recipe_id), task) => {
            let recipe = registry.get(&recipe_id).ok_or_else(|| {
                let known: Vec<&str> = registry.recipes().map(|r| r.recipe_id.as_str()).collect();
                invalid(format!(
                    "no recipe `{recipe_id}`; the recipes are {}",
                    known.join(", ")
                ))
            })?;
            let description = task.unwrap_or_else(|| {
                match args
                    .get("scene_id")
                    .or(args.get("scene_path"))
                    .and_then(Value::as_str)
                {
                    Some(scene) => format!("{}: {scene}", recipe.label),
                    None => recipe.label.clone(),
                }
            });
            (recipe_id, description)
        }
        (None, Some(task)) => {
            let routed = router::route(&registry, Some(&workspace), &task);
            let recipe_id = routed
                .recipe_id
                .filter(|_| routed.routable)
                .ok_or_else(|| invalid(routed.reason.clone()))?;
            for (key, value) in routed.initial_args {
                args.entry(key).or_insert(value);
            }
            (recipe_id, task)
        }
        (None, None) => {
            return Err(invalid(format!(
                "{RUN_RECIPE}: give a `recipe` id or a `task` to route"
            )));
        }
    };
    router::complete_args(&workspace, &mut args);
    let scene_path = args
        .get("scene_path")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let recipe = registry
        .get(&recipe_id)
        .cloned()
        .expect("routed to a known recipe");
    if drafting::drafts(&recipe) && scene_path.is_none() {
        return Err(invalid(format!(
            "{}: name the scene to draft (a scene id such as SCN-the-gate, or its path)",
            recipe.label
        )));
    }
    let model = connect(&root, editor_llm.as_ref()).map_err(|error| {
        invalid(format!(
            "{}: the model is not usable: {error}",
            recipe.label
        ))
    })?;

    let (events, receiver) = unbounded_channel();
    let registry = Arc::new(registry);
    let runner = Runner {
        workspace: workspace.clone(),
        registry: registry.clone(),
        prompts: Arc::new(prompts),
        model: Some(model),
        disk: Disk::default(),
        sinks: vec![Arc::new(ProgressSink(events))],
        reuse: true,
    };
    // One run of a recipe per scene at a time: checked and recorded under
    // one lock, so two quick clicks cannot both start.
    let mut in_flight = context.runs.lock();
    if let Some((run_id, _)) = in_flight
        .iter()
        .find(|(_, run)| run.recipe_id == recipe_id && run.scene_path == scene_path)
    {
        let on = scene_path
            .as_deref()
            .map_or(String::new(), |path| format!(" on {path}"));
        return Err(RpcError {
            code: ErrorCode::InvalidRequest,
            message: format!(
                "“{}” is already running{on} (run {run_id}); cancel it or wait for it to finish",
                recipe.label
            )
            .into(),
            data: Some(json!({"run_id": run_id})),
        });
    }
    let plan = plan_link
        .as_ref()
        .map(|link| crate::engine::runner::PlanTask {
            session_id: &link.session_id,
            task_id: link.task_id,
        });
    let manifest = runner
        .create(&recipe_id, &description, args, plan)
        .map_err(|error| invalid(format!("{}: {error}", recipe.label)))?;
    let run_id = manifest.run_id.clone();
    let before = scene_path
        .as_deref()
        .map(|path| scene_state(&lock(&context.session), path));
    let created = client_token.is_none();
    let token = client_token
        .unwrap_or_else(|| lsp::ProgressToken::String(format!("control-room/run/{run_id}")));
    let cancel = CancellationToken::new();
    let label = match scene_path.as_deref() {
        Some(path) => format!("{}: {}", recipe.label, crate::index::file::file_stem(path)),
        None => recipe.label.clone(),
    };
    in_flight.insert(
        run_id.clone(),
        InFlight {
            recipe_id: recipe_id.clone(),
            label: label.clone(),
            scene_path: scene_path.clone(),
            cancel: cancel.clone(),
            token: token.clone(),
            step: "starting".into(),
        },
    );
    drop(in_flight);
    let started = Started {
        manifest,
        label,
        scene_path,
        before,
        workspace,
        registry,
    };
    tokio::spawn(drive(
        context.clone(),
        runner,
        started,
        cancel,
        token,
        created,
        receiver,
    ));
    Ok(json!({ "run_id": run_id }))
}

/// The model for agents: `[llm]` of `control-room.toml`, the editor's
/// `controlRoom.llm`, then the `CONTROL_ROOM_LLM_*` variables.
pub(super) fn connect(
    root: &Path,
    editor: Option<&crate::llm::config::LlmLayer>,
) -> anyhow::Result<Arc<dyn Model>> {
    let env = |name: &str| std::env::var(name).ok();
    let config = crate::llm::workspace_config(root, editor, &env)?;
    crate::llm::connect(&config, root, &env, None)
}

/// Hands the runner's events to the task that reports progress.
struct ProgressSink(UnboundedSender<RunEvent>);

impl RunSink for ProgressSink {
    fn event(&self, event: &RunEvent) {
        let _ = self.0.send(event.clone());
    }
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

/// Runs a run to its end and delivers what it leaves.
async fn drive(
    context: Context,
    runner: Runner,
    started: Started,
    cancel: CancellationToken,
    token: lsp::ProgressToken,
    create: bool,
    mut events: UnboundedReceiver<RunEvent>,
) {
    let run_id = started.manifest.run_id.clone();
    let progress = Progress::begin(&context, token, create, &started.label).await;
    // The runner is moved into its own task: when that task ends, however
    // it ends, the runner and with it the event sender are dropped, so the
    // forwarding below drains every event before progress ends.
    let execution = {
        let run_id = run_id.clone();
        tokio::spawn(async move {
            if cfg!(debug_assertions)
                && std::env::var("CONTROL_ROOM_TEST_PANIC_IN").is_ok_and(|wanted| wanted == "run")
            {
                panic!("panic requested in run {run_id}");
            }
            runner.execute(&run_id, cancel).await
        })
    };
    while let Some(event) = events.recv().await {
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
    let outcome = match execution.await {
        Ok(Ok(manifest)) => finish(&context, &started, manifest).await,
        Ok(Err(error)) => failed_to_run(&started, &error),
        Err(join) => {
            let reason = if join.is_panic() {
                let panic = join.into_panic();
                super::server::panic_message(&panic)
            } else {
                "the run's task was stopped".to_owned()
            };
            crashed(&started, &reason)
        }
    };
    // Out of the in-flight list before the progress ends, so a client that
    // starts the same run again on seeing the end is not refused.
    context.runs.lock().remove(&run_id);
    progress.end(outcome.summary.clone()).await;
    if let Some(uri) = outcome.show {
        show(&context, uri, false).await;
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
async fn finish(context: &Context, started: &Started, manifest: RunManifest) -> Outcome {
    let root = started.workspace.root().to_path_buf();
    let files = RunFiles::new(&root, &manifest.run_id);
    let cache = files.read_cache().unwrap_or_default();
    let steps = files.read_steps();
    let recipe = started.registry.get(&manifest.recipe_id);
    let result_step = recipe.and_then(drafting::result_step);
    let draft = result_step.and_then(|step| match cache.get(&step.output_slot) {
        Some(CacheSlot::Artifact { text, .. }) => Some(text.clone()),
        _ => None,
    });
    let dod_issue = report::dod_issue(&root, &manifest.run_id);

    // Deliver the draft, if this run made one and finished well.
    let mut delivered: Option<(String, String)> = None; // (path, text)
    let delivery = match (manifest.status, &draft, &started.scene_path) {
        (RunStatus::Done, Some(draft), Some(scene_path)) => {
            let (delivery, landed) =
                deliver(context, started, &manifest, &cache, scene_path, draft).await;
            delivered = landed;
            delivery
        }
        (RunStatus::Done, _, _) if result_step.is_none() => Delivery::Report,
        (RunStatus::Cancelled, _, _) => {
            Delivery::Withheld("because the run was cancelled".to_owned())
        }
        _ if dod_issue.is_some() => {
            Delivery::Withheld("because the Definition of Done failed".to_owned())
        }
        _ => Delivery::Withheld("because the run did not finish".to_owned()),
    };

    // Findings, checked against the text the writer will see.
    let default_file = delivered
        .as_ref()
        .map(|(path, _)| path.clone())
        .or_else(|| started.scene_path.clone());
    let slots: std::collections::BTreeMap<String, Value> = cache
        .iter()
        .filter_map(|(name, slot)| match slot {
            CacheSlot::Artifact { text, .. } => Some((name.clone(), contract::stored_json(text)?)),
            CacheSlot::Pointer { .. } => None,
        })
        .collect();
    let mut run_findings = {
        let session = lock(&context.session);
        let text_of = |path: &str| -> Option<String> {
            if let Some((landed, text)) = &delivered
                && landed == path
            {
                return Some(text.clone());
            }
            session
                .workspace
                .file(path)
                .map(|file| file.text.to_string())
        };
        findings::collect(&manifest, &steps, &slots, default_file.as_deref(), &text_of)
    };
    let receipts = crate::engine::audit::receipt_paths(&root, &manifest.run_id);
    let text = report::render(
        &ReportInput {
            manifest: &manifest,
            recipe,
            steps: &steps,
            cache: &cache,
            delivery: &delivery,
            result_slot: result_step.map(|step| step.output_slot.as_str()),
            agent_receipts: &receipts,
            dod_issue: dod_issue.as_deref(),
        },
        &mut run_findings,
    );
    let disk = Disk::default();
    let report_path = report::write(&root, &disk, &manifest.run_id, &text);
    if let Err(error) = findings::write(&root, &disk, &run_findings) {
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
    let shown = run_findings.findings.len();
    let store = lock(&context.session).findings.clone();
    store
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(run_findings);
    (context.republish)();

    let report_uri = report_path
        .ok()
        .and_then(|path| uri_for(&started.workspace, &path));
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
    match (manifest.status, &delivery) {
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

/// Puts the draft into the scene through the editor, or beside it.
/// Returns the delivery and, when the draft landed, (its path, its text).
async fn deliver(
    context: &Context,
    started: &Started,
    manifest: &RunManifest,
    cache: &store::Cache,
    scene_path: &str,
    draft: &str,
) -> (Delivery, Option<(String, String)>) {
    let brief = started
        .registry
        .get(&manifest.recipe_id)
        .and_then(|recipe| drafting::run_draft(recipe, cache).1);
    let scene_id = manifest
        .task
        .initial_args
        .get("scene_id")
        .and_then(Value::as_str)
        .map_or_else(
            || crate::index::file::file_stem(scene_path).to_owned(),
            str::to_owned,
        );
    // Decide and build the edit under the lock, so the state it is built
    // on is the state that was checked.
    let plan = {
        let session = lock(&context.session);
        let now = scene_state(&session, scene_path);
        let before = started.before.clone().unwrap_or(SceneState {
            digest: None,
            version: None,
        });
        let workspace = &session.workspace;
        let new_text = |existing: Option<&SourceFile>| match existing {
            Some(file) => {
                let (range, body) = drafting::replacement_body(file, draft);
                format!("{}{body}", &file.text[..range.start])
            }
            None => drafting::new_scene_text(workspace, &scene_id, brief.as_deref(), draft),
        };
        if now.digest != before.digest {
            let existing = workspace.file(scene_path).map(Arc::as_ref);
            Err((
                "the scene changed while the run worked".to_owned(),
                new_text(existing.filter(|_| before.digest.is_some())),
            ))
        } else {
            match before.digest {
                Some(_) => {
                    let file = workspace.file(scene_path).cloned().unwrap_or_else(|| {
                        // Not indexed (yet): read it as the disk has it.
                        Arc::new(SourceFile::read(
                            workspace.root(),
                            scene_path.into(),
                            &workspace.config().paths,
                        ))
                    });
                    let (replace, body) = drafting::replacement_body(&file, draft);
                    let text = new_text(Some(&file));
                    // The version the run started from; if only the version
                    // moved (an edit undone), the text is the same and the
                    // current version is the one the editor will accept.
                    let version = now.version.or(before.version);
                    Ok(EditPlan::Replace {
                        range: range(&file, replace, session.encoding),
                        body,
                        version,
                        text,
                    })
                }
                None => Ok(EditPlan::Create {
                    text: new_text(None),
                }),
            }
        }
    };
    let Some(uri) = uri_for(&started.workspace, scene_path) else {
        return (
            Delivery::Withheld(format!("because {scene_path} cannot be named as a URI")),
            None,
        );
    };
    let outcome = match plan {
        Err((reason, text)) => Err((reason, text)),
        Ok(plan) => apply(context, uri, plan, started.workspace.root(), scene_path).await,
    };
    match outcome {
        Ok(text) => {
            // A file the editor does not have open learns its new text now;
            // the editor's didOpen or a watched-file event will confirm it.
            let mut session = lock(&context.session);
            if session.version(scene_path).is_none() {
                let paths = session.workspace.config().paths.clone();
                let file = SourceFile::parse(scene_path.into(), text.clone().into(), &paths);
                session.workspace.insert_file(file);
                session.generation += 1;
            }
            (
                Delivery::Scene(scene_path.to_owned()),
                Some((scene_path.to_owned(), text)),
            )
        }
        Err((reason, text)) => {
            let beside = drafting::beside_path(scene_path, &manifest.run_id);
            let absolute = started.workspace.absolute_path(&beside);
            match Disk::default().write_atomic(&absolute, text.as_bytes()) {
                Ok(()) => {
                    lock(&context.session).reload_from_disk(&beside.as_str().into());
                    (
                        Delivery::Beside {
                            path: beside.clone(),
                            reason,
                        },
                        Some((beside, text)),
                    )
                }
                Err(error) => (
                    Delivery::Withheld(format!(
                        "because {reason}, and {beside} cannot be written ({error}); the draft is in the run's cache.json"
                    )),
                    None,
                ),
            }
        }
    }
}

/// The edit that delivers a draft.
pub(super) enum EditPlan {
    /// An existing scene: its body replaced, at the version it was read.
    Replace {
        range: lsp::Range,
        body: String,
        version: Option<i32>,
        /// The whole text after the edit.
        text: String,
    },
    /// A new scene file.
    Create { text: String },
}

/// Sends the edit; the scene's new text when the editor applied it, else
/// why not and the text to keep beside the scene.
pub(super) async fn apply(
    context: &Context,
    uri: Uri,
    plan: EditPlan,
    root: &Path,
    scene_path: &str,
) -> Result<String, (String, String)> {
    let support = context.support;
    let (edit, text) = match plan {
        EditPlan::Replace {
            range,
            body,
            version,
            text,
        } => {
            let edits = vec![lsp::TextEdit {
                range,
                new_text: body,
            }];
            let edit = if support.document_changes {
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
            };
            (edit, text)
        }
        EditPlan::Create { text } => {
            if !(support.document_changes && support.create_files) {
                // The client cannot create files through an edit: write the
                // new file here (it does not exist, so nothing is lost).
                let absolute: PathBuf = root.join(scene_path);
                if absolute.exists() {
                    return Err(("the scene file appeared while the run worked".into(), text));
                }
                if let Some(parent) = absolute.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                return match Disk::default().write_atomic(&absolute, text.as_bytes()) {
                    Ok(()) => Ok(text),
                    Err(error) => {
                        Err((format!("the scene file cannot be written ({error})"), text))
                    }
                };
            }
            let edit = lsp::WorkspaceEdit {
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
                            new_text: text.clone(),
                        })],
                    }),
                ])),
                ..lsp::WorkspaceEdit::default()
            };
            (edit, text)
        }
    };
    match context.client.apply_edit(edit).await {
        Ok(response) if response.applied => Ok(text),
        Ok(response) => Err((
            match response.failure_reason {
                Some(reason) if !reason.trim().is_empty() => {
                    format!("the editor did not apply the edit ({reason})")
                }
                _ => "the editor did not apply the edit".to_owned(),
            },
            text,
        )),
        Err(error) => Err((
            format!("the editor did not apply the edit ({})", error.message),
            text,
        )),
    }
}

/// The engine could not run the run at all (its files, its lock).
fn failed_to_run(started: &Started, error: &RunError) -> Outcome {
    failed(started, &error.to_string())
}

/// The run's task panicked: the run is marked failed so it can be resumed.
fn crashed(started: &Started, reason: &str) -> Outcome {
    let reason = format!("internal error: {reason}");
    let files = RunFiles::new(started.workspace.root(), &started.manifest.run_id);
    if let Ok(mut manifest) = files.read_manifest()
        && !manifest.status.is_finished()
    {
        manifest.status = RunStatus::Failed;
        manifest.error = Some(reason.clone());
        manifest.updated_at = runner::now();
        manifest.completed_at = Some(manifest.updated_at.clone());
        let _ = files.write_manifest(&Disk::default(), &manifest);
    }
    failed(started, &reason)
}

/// A run that ended without reporting itself: its report and its message.
fn failed(started: &Started, reason: &str) -> Outcome {
    write_failure_report(started, reason);
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

/// A report for a run that never got to report itself.
fn write_failure_report(started: &Started, reason: &str) {
    let root = started.workspace.root();
    let files = RunFiles::new(root, &started.manifest.run_id);
    let manifest = files
        .read_manifest()
        .unwrap_or_else(|_| started.manifest.clone());
    let mut empty = RunFindings {
        version: 1,
        run_id: manifest.run_id.clone(),
        recipe_id: manifest.recipe_id.clone(),
        scene_path: started.scene_path.clone(),
        completed_at: manifest.completed_at.clone(),
        findings: Vec::new(),
        dropped: Vec::new(),
    };
    let text = report::render(
        &ReportInput {
            manifest: &manifest,
            recipe: started.registry.get(&manifest.recipe_id),
            steps: &files.read_steps(),
            cache: &files.read_cache().unwrap_or_default(),
            delivery: &Delivery::Withheld(format!("because {reason}")),
            result_slot: None,
            agent_receipts: &[],
            dod_issue: None,
        },
        &mut empty,
    );
    let _ = report::write(root, &Disk::default(), &manifest.run_id, &text);
}

/// `controlRoom.cancelRun`: stops a run of this server, asks another
/// process to stop its run, or marks a run nobody runs as cancelled.
fn cancel(context: &Context, run_id: &str) -> Result<Value, RpcError> {
    if let Some(run) = context.runs.lock().get(run_id) {
        run.cancel.cancel();
        return Ok(json!({"run_id": run_id, "status": "cancelling"}));
    }
    let root = lock(&context.session).workspace.root().to_path_buf();
    let files = RunFiles::new(&root, run_id);
    let mut manifest = files
        .read_manifest()
        .map_err(|_| invalid(format!("no run `{run_id}` in this workspace")))?;
    if manifest.status.is_finished() {
        return Ok(json!({"run_id": run_id, "status": manifest.status.as_str()}));
    }
    let disk = Disk::default();
    let io = |error: std::io::Error| invalid(format!("run {run_id}: {error}"));
    match files.try_lock().map_err(io)? {
        Some(_lock) => {
            manifest.status = RunStatus::Cancelled;
            manifest.phase = None;
            manifest.updated_at = runner::now();
            manifest.completed_at = Some(manifest.updated_at.clone());
            manifest.error = Some("cancelled while no process was running it".into());
            files.write_manifest(&disk, &manifest).map_err(io)?;
            Ok(json!({"run_id": run_id, "status": "cancelled"}))
        }
        None => {
            disk.write_atomic(&files.cancel_request(), b"cancel\n")
                .map_err(io)?;
            Ok(json!({"run_id": run_id, "status": "cancelling"}))
        }
    }
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

//! Starting a run, the same way for every front end: a recipe id or a task in
//! words is resolved into a recipe, a description and arguments; the run is
//! created with a digest of the scene it will write, as the writer sees it
//! now; and it executes in a task of its own, which hands back an awaitable
//! [`RunHandle`] with the run's events.
//!
//! The command line and the server differ only in what they do with the
//! handle (a progress bar or `$/progress`) and in how they apply what
//! [`crate::runs::output::delivery`] decides.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use crate::index::Workspace;
use crate::runs::events::{RunEvent, RunSink};
use crate::runs::output::delivery;
use crate::runs::output::draft;
use crate::runs::recipe::{Recipe, Registry};
use crate::runs::router;
use crate::runs::runner::{self, PlanTask, RunError, Runner};
use crate::runs::store::{Disk, RunFiles, RunManifest, RunStatus};

/// The engine opened on a workspace: a runner with the workspace's prompts
/// and recipes (project recipes open in an editor, `open_recipes` by path,
/// over the disk's) and no model yet, and what could not be loaded.
pub struct Opened {
    pub runner: Runner,
    /// Prompt files and recipes that could not be loaded, one line each.
    pub warnings: Vec<String>,
}

/// Opens the engine on `workspace` for a front end to launch runs with.
pub fn open(
    workspace: Arc<Workspace>,
    open_recipes: &std::collections::BTreeMap<String, String>,
) -> Opened {
    let prompts = crate::runs::prompts::Prompts::load(workspace.root());
    let registry = Registry::load_with_open(workspace.root(), &prompts, open_recipes);
    let warnings = prompts
        .problems
        .iter()
        .cloned()
        .chain(
            registry
                .errors()
                .iter()
                .map(|error| format!("recipe not loaded: {error}")),
        )
        .collect();
    Opened {
        runner: Runner {
            workspace,
            registry: Arc::new(registry),
            prompts: Arc::new(prompts),
            model: None,
            disk: Disk::default(),
            sinks: Vec::new(),
            reuse: false,
            graph: Default::default(),
            cited: Default::default(),
        },
        warnings,
    }
}

/// What a front end asks to run.
#[derive(Clone, Debug, Default)]
pub struct LaunchRequest {
    /// A recipe id; when absent, `task` is routed to a recipe.
    pub recipe: Option<String>,
    /// The task in words: routed when no recipe is named, and the run's
    /// description unless `description` is given.
    pub task: Option<String>,
    /// The run's description, when it is not the task.
    pub description: Option<String>,
    /// The run's arguments (`scene_id`, `scene_path`…), completed from the
    /// workspace.
    pub args: Map<String, Value>,
    /// The plan task the run carries out.
    pub plan: Option<PlanLink>,
    /// Ask the model afresh: no step reuses an earlier identical request's
    /// artifact ("Draft again").
    pub fresh: bool,
}

impl LaunchRequest {
    /// Names the scene by id or by path (a path ends in `.md`).
    pub fn with_scene(mut self, scene: &str) -> LaunchRequest {
        let scene = scene.trim();
        if !scene.is_empty() {
            let key = if scene.ends_with(".md") {
                "scene_path"
            } else {
                "scene_id"
            };
            self.args
                .entry(key)
                .or_insert_with(|| Value::String(scene.to_owned()));
        }
        self
    }
}

/// A run's plan task: the plan's id and the task's number.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanLink {
    pub session_id: String,
    pub task_id: u32,
}

/// Why a run could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("give a recipe id or a task to route")]
    NothingToRun,
    #[error("no recipe `{id}`; the recipes are {}", known.join(", "))]
    UnknownRecipe { id: String, known: Vec<String> },
    #[error("recipe `{id}` could not be loaded: {error}")]
    RecipeNotLoaded { id: String, error: String },
    #[error("`{task}` is neither a recipe id nor a task a recipe matches: {reason}")]
    NotRoutable { task: String, reason: String },
    #[error("{label}: name the scene to draft (a scene id such as SCN-the-gate, or its path)")]
    NoScene { label: String },
    #[error(
        "{label}: a run already drafts {scene_path} (in this window, another one, or the command line); wait for it to end or cancel it"
    )]
    SceneBusy { label: String, scene_path: String },
    #[error("{label}: {source}")]
    Create {
        label: String,
        #[source]
        source: RunError,
    },
}

/// A request resolved against the recipes and the workspace.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub recipe: Recipe,
    pub description: String,
    pub args: Map<String, Value>,
    /// The scene the run is about, if any (`args.scene_path`).
    pub scene_path: Option<String>,
    /// What the writer sees the run called: the recipe's label and scene.
    pub label: String,
    /// Ask the model afresh (see [`LaunchRequest::fresh`]).
    pub fresh: bool,
}

/// Resolves `request`: the named recipe, or the one its task routes to, with
/// the arguments completed from the workspace.
pub fn resolve(
    registry: &Registry,
    workspace: &Workspace,
    request: LaunchRequest,
) -> Result<Resolved, LaunchError> {
    let LaunchRequest {
        recipe,
        task,
        description,
        mut args,
        plan: _,
        fresh,
    } = request;
    let not_loaded = |id: &str| {
        registry
            .errors()
            .iter()
            .find(|error| error.file.ends_with(&format!("/{id}.json")))
            .map(|error| LaunchError::RecipeNotLoaded {
                id: id.to_owned(),
                error: error.to_string(),
            })
    };
    let (recipe, description) = match (recipe, task) {
        (Some(id), task) => {
            let Some(recipe) = registry.get(&id) else {
                return Err(
                    not_loaded(&id).unwrap_or_else(|| LaunchError::UnknownRecipe {
                        id,
                        known: registry.recipes().map(|r| r.recipe_id.clone()).collect(),
                    }),
                );
            };
            let description = description.or(task).unwrap_or_else(|| {
                match args
                    .get("scene_id")
                    .or(args.get("scene_path"))
                    .and_then(Value::as_str)
                {
                    Some(scene) => format!("{}: {scene}", recipe.label),
                    None => recipe.label.clone(),
                }
            });
            (recipe.clone(), description)
        }
        (None, Some(task)) => {
            if let Some(error) = not_loaded(task.trim()) {
                return Err(error);
            }
            let routed = router::route(registry, Some(workspace), &task);
            let Some(recipe) = routed
                .recipe_id
                .as_deref()
                .filter(|_| routed.routable)
                .and_then(|id| registry.get(id))
            else {
                return Err(LaunchError::NotRoutable {
                    task,
                    reason: routed.reason,
                });
            };
            for (key, value) in routed.initial_args {
                args.entry(key).or_insert(value);
            }
            (recipe.clone(), description.unwrap_or(task))
        }
        (None, None) => return Err(LaunchError::NothingToRun),
    };
    router::complete_args(workspace, &mut args);
    let scene_path = args
        .get("scene_path")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if draft::drafts(&recipe) && scene_path.is_none() {
        return Err(LaunchError::NoScene {
            label: recipe.label.clone(),
        });
    }
    let label = match scene_path.as_deref() {
        Some(path) => format!("{}: {}", recipe.label, crate::index::file::file_stem(path)),
        None => recipe.label.clone(),
    };
    Ok(Resolved {
        recipe,
        description,
        args,
        scene_path,
        label,
        fresh,
    })
}

/// The lock on a scene a run drafts: one writer per scene per manuscript,
/// across processes. It is an OS lock on a file under
/// `.control-room/locks/`, so it goes when the process that holds it ends,
/// however it ends: a stale lock is never waited on.
#[derive(Debug)]
pub struct SceneLock {
    _file: std::fs::File,
}

/// Where the lock of `scene_path` lives.
fn scene_lock_path(root: &std::path::Path, scene_path: &str) -> std::path::PathBuf {
    let digest = crate::storage::sha256_hex(scene_path.as_bytes());
    root.join(".control-room/locks")
        .join(format!("scene-{}.lock", &digest[..16]))
}

/// Takes the lock of `scene_path`; `None` when a run holds it already.
pub fn lock_scene(root: &std::path::Path, scene_path: &str) -> std::io::Result<Option<SceneLock>> {
    let path = scene_lock_path(root, scene_path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)?;
    Ok(file.try_lock().is_ok().then_some(SceneLock { _file: file }))
}

/// The lock a run of `recipe` on `scene_path` needs: a drafting recipe's
/// scene's; none for a recipe that only reports.
pub fn lock_for(
    root: &std::path::Path,
    recipe: &Recipe,
    scene_path: Option<&str>,
) -> Result<Option<SceneLock>, LaunchError> {
    let Some(scene_path) = scene_path.filter(|_| draft::drafts(recipe)) else {
        return Ok(None);
    };
    let busy = || LaunchError::SceneBusy {
        label: recipe.label.clone(),
        scene_path: scene_path.to_owned(),
    };
    match lock_scene(root, scene_path) {
        Ok(Some(lock)) => Ok(Some(lock)),
        Ok(None) => Err(busy()),
        Err(io) => Err(LaunchError::Create {
            label: recipe.label.clone(),
            source: io.into(),
        }),
    }
}

/// A created run, and the lock on its scene, held until the run ends.
#[derive(Debug)]
pub struct Created {
    pub manifest: RunManifest,
    pub lock: Option<SceneLock>,
}

/// Creates the run of `resolved` (status `pending`), recording the digest of
/// its scene as `scene_text` gives it (the writer's text: the editor's
/// buffer, else the disk's), so delivery can tell whether the writer changed
/// it while the run worked.
pub fn create(
    runner: &Runner,
    resolved: &Resolved,
    plan: Option<&PlanLink>,
    scene_text: impl Fn(&str) -> Option<String>,
) -> Result<Created, LaunchError> {
    // The scene's lock first: a run refused costs nothing.
    let lock = lock_for(
        runner.workspace.root(),
        &resolved.recipe,
        resolved.scene_path.as_deref(),
    )?;
    let plan_task = plan.map(|link| PlanTask {
        session_id: &link.session_id,
        task_id: link.task_id,
    });
    let error = |source| LaunchError::Create {
        label: resolved.recipe.label.clone(),
        source,
    };
    let scene = resolved
        .scene_path
        .as_deref()
        .map(|path| delivery::SceneMark::of(scene_text(path).as_deref()));
    let manifest = runner
        .create_marked(
            &resolved.recipe.recipe_id,
            &resolved.description,
            resolved.args.clone(),
            plan_task,
            scene,
            resolved.fresh,
        )
        .map_err(error)?;
    Ok(Created { manifest, lock })
}

/// How a run's task ended.
#[derive(Debug)]
pub enum RunEnd {
    /// The run ended (done, failed, cancelled or stopped): its manifest.
    Ended(Box<RunManifest>),
    /// The engine could not run it at all (its files, its lock).
    NotRun(RunError),
    /// The run's task panicked or was stopped; the run is marked failed so
    /// it can be resumed.
    Crashed(String),
}

/// A run executing in a task of its own.
pub struct RunHandle {
    pub run_id: String,
    /// The run's events, in order; the channel closes when the run ends.
    pub events: UnboundedReceiver<RunEvent>,
    root: std::path::PathBuf,
    task: tokio::task::JoinHandle<Result<RunManifest, RunError>>,
}

impl RunHandle {
    /// Waits for the run to end, however it ends.
    pub async fn finish(self) -> RunEnd {
        match self.task.await {
            Ok(Ok(manifest)) => RunEnd::Ended(Box::new(manifest)),
            Ok(Err(error)) => RunEnd::NotRun(error),
            Err(join) => {
                let reason = if join.is_panic() {
                    panic_message(&join.into_panic())
                } else {
                    "the run's task was stopped".to_owned()
                };
                let reason = format!("internal error: {reason}");
                mark_failed(&self.root, &self.run_id, &reason);
                RunEnd::Crashed(reason)
            }
        }
    }
}

/// The text of a panic's payload.
pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Hands the runner's events to the run's handle.
struct ChannelSink(UnboundedSender<RunEvent>);

impl RunSink for ChannelSink {
    fn event(&self, event: &RunEvent) {
        let _ = self.0.send(event.clone());
    }
}

/// Executes (or resumes) `run_id` in a task of its own, holding `lock` on
/// its scene until it ends; `cancel` stops it. Must be called inside a tokio
/// runtime.
pub fn spawn(
    mut runner: Runner,
    run_id: &str,
    cancel: CancellationToken,
    lock: Option<SceneLock>,
) -> RunHandle {
    let (sender, events) = unbounded_channel();
    runner.sinks.push(Arc::new(ChannelSink(sender)));
    let root = runner.workspace.root().to_path_buf();
    let task = {
        let run_id = run_id.to_owned();
        // The runner moves into the task: when the task ends, however it
        // ends, the event sender goes with it and the channel closes.
        tokio::spawn(async move {
            if cfg!(debug_assertions)
                && std::env::var("CONTROL_ROOM_TEST_PANIC_IN").is_ok_and(|wanted| wanted == "run")
            {
                panic!("panic requested in run {run_id}");
            }
            let ended = runner.execute(&run_id, cancel).await;
            // The scene is free once the run has ended.
            drop(lock);
            ended
        })
    };
    RunHandle {
        run_id: run_id.to_owned(),
        events,
        root,
        task,
    }
}

/// Marks an unfinished run failed with `reason` (its process crashed), so
/// it shows as failed and can be resumed.
pub fn mark_failed(root: &std::path::Path, run_id: &str, reason: &str) {
    let files = RunFiles::new(root, run_id);
    if let Ok(mut manifest) = files.read_manifest()
        && !manifest.status.is_finished()
    {
        manifest.status = RunStatus::Failed;
        manifest.error = Some(reason.to_owned());
        manifest.updated_at = runner::now();
        manifest.completed_at = Some(manifest.updated_at.clone());
        let _ = files.write_manifest(&Disk::default(), &manifest);
    }
}

/// How asking a run to stop went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelOutcome {
    /// It had already ended, with this status.
    AlreadyFinished(RunStatus),
    /// No process was running it: it is marked cancelled.
    Cancelled,
    /// Another process runs it: it was asked to stop.
    Requested,
}

/// Cancels a run that no task of this process runs: marks it cancelled when
/// no process holds it, else asks the process that does to stop.
pub fn cancel_elsewhere(
    root: &std::path::Path,
    run_id: &str,
) -> Result<CancelOutcome, CancelError> {
    let files = RunFiles::new(root, run_id);
    let mut manifest = files
        .read_manifest()
        .map_err(|_| CancelError::UnknownRun(run_id.to_owned()))?;
    if manifest.status.is_finished() {
        return Ok(CancelOutcome::AlreadyFinished(manifest.status));
    }
    let disk = Disk::default();
    let io = |source| CancelError::Io {
        run_id: run_id.to_owned(),
        source,
    };
    match files.try_lock().map_err(io)? {
        Some(_lock) => {
            manifest.status = RunStatus::Cancelled;
            manifest.phase = None;
            manifest.updated_at = runner::now();
            manifest.completed_at = Some(manifest.updated_at.clone());
            manifest.error = Some("cancelled while no process was running it".into());
            files.write_manifest(&disk, &manifest).map_err(io)?;
            Ok(CancelOutcome::Cancelled)
        }
        None => {
            disk.write_atomic(&files.cancel_request(), b"cancel\n")
                .map_err(io)?;
            Ok(CancelOutcome::Requested)
        }
    }
}

/// Why a run could not be cancelled.
#[derive(Debug, thiserror::Error)]
pub enum CancelError {
    #[error("no run `{0}` in this workspace")]
    UnknownRun(String),
    #[error("run {run_id}: {source}")]
    Io {
        run_id: String,
        #[source]
        source: std::io::Error,
    },
}

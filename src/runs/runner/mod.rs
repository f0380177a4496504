//! The StepRunner: executes a recipe mechanically, step by step, and keeps
//! the run's files valid at every instant.
//!
//! The spec's eight guarantees, and where they hold:
//! 1. Phase A steps run in order, each finished before the next ([`Runner::execute`]'s loop).
//! 2. Tool outputs are cached in named slots with receipt ids (`CacheSlot::Pointer`).
//! 3. Phase B agents run in order; each output is cached before the next runs.
//! 4. Agents get no tools: a [`ModelRequest`] has only messages.
//! 5. An agent's prompt is its `prompt_type` template and its `input_slots`, nothing else.
//! 6. A failing agent (error, bad reply) halts the run; nothing retries it
//!    automatically. The writer may `resume` it.
//! 7. Every tool call leaves a signed receipt linked to the run's session.
//! 8. After the last step the Definition of Done is evaluated; a failure ends
//!    the run `failed` and writes an issue file under `.control-room/issues/`.
//!
//! A completed step is persisted in this order: its receipt (synced), then
//! its `steps.jsonl` line (append, synced), which carries the step's slot.
//! `run.json` is rewritten only when the phase, the review loop's state or
//! the count of steps changes, and `cache.json` when the run ends (and on
//! resume): between those, readers take the slots and the progress from the
//! journal. A crash between any two writes leaves files that
//! [`Runner::execute`] reconciles on resume: `steps.jsonl` is the truth
//! about what finished, a torn line is dropped and its step runs again, so
//! no step id is ever written twice.
//!
//! Each part has one job, and reaches only what that job needs:
//! - [`Runner`] creates and executes runs: the step loop (here), what each
//!   finished step leaves on disk (`record`), what a resumed run finished
//!   before (`resume`), and `control-room prompt`'s preview (`preview`).
//! - `Agents` (held in `prompted`) runs an agent step: prompt, packet, model call,
//!   contract, retries (`agent`), a small model's micro-steps (`micro`), a
//!   finished identical request's reuse (`reuse`), the receipt it fills
//!   (`receipt`), and the types its parts share (`prompted`). It holds the
//!   workspace, prompts, model and disk, never the run's journal.
//! - A tool step (`tool`), the review loop's gates and what the loop adds
//!   to an agent step (`review_loop`), and the Definition of Done (`dod`) are
//!   functions of the workspace (or the root) and the step's slots.
//! - `slots` reads the slots' values and texts; `cited` the files each tool
//!   receipt read.
//!
//! [`ModelRequest`]: crate::llm::model::ModelRequest

mod agent;
mod cited;
mod dod;
mod micro;
mod preview;
mod prompted;
mod receipt;
mod record;
pub use cited::CitedFiles;
pub use preview::PreviewFor;
mod resume;
mod reuse;
mod review_loop;
mod slots;
mod tool;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::index::Workspace;
use crate::llm::model::Model;
use crate::receipts::audit::{self, AgentReceipt};
use crate::receipts::{SigningKey, ToolReceipt};
use crate::runs::events::{RunEvent, RunSink};
use crate::runs::prompts::PromptBuilder;
use crate::runs::recipe::{Recipe, Registry};
use crate::runs::review::{Next, Outcome, Planned, ReviewState, Schedule, Stage, Stop};
use crate::runs::router;
use crate::runs::store::{
    Cache, CacheSlot, Disk, RunFileError, RunFiles, RunManifest, RunStatus, RunTask,
};
use reuse::ReuseEntry;
use slots::task_value;

use crate::storage::Committer;
pub use crate::storage::{new_id, now};
pub use reuse::REUSE_DIR;

/// How often a running run looks for a cancel request from another process.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Everything a run needs.
#[derive(Clone)]
pub struct Runner {
    pub workspace: Arc<Workspace>,
    pub registry: Arc<Registry>,
    pub prompts: Arc<dyn PromptBuilder>,
    /// `None` when no model is configured: phase B steps then fail clearly.
    pub model: Option<Arc<dyn Model>>,
    pub disk: Disk,
    pub sinks: Vec<Arc<dyn RunSink>>,
    /// Whether an agent step whose prompt and model are those of a step
    /// finished before reuses that step's artifact instead of asking again.
    pub reuse: bool,
    /// The story's graph as the prompts read it, kept between steps (and,
    /// in the editor, between runs).
    pub graph: crate::kb::graph::GraphCache,
    /// The files each tool receipt read, as this runner's steps wrote them
    /// (each `execute` starts its own: `CitedFiles::default()` elsewhere).
    pub cited: CitedFiles,
}

/// Why a run could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no recipe `{0}`")]
    UnknownRecipe(String),
    #[error("no run `{0}` in this workspace")]
    UnknownRun(String),
    #[error("run {0} is being run by another process")]
    Busy(String),
    #[error("run {run_id} is {status}; only an unfinished run can be resumed")]
    Finished {
        run_id: String,
        status: &'static str,
    },
    #[error("cannot write the run's files: {0}")]
    Io(#[from] std::io::Error),
    /// run.json or cache.json could not be read; the message names the file.
    #[error(transparent)]
    Files(#[from] RunFileError),
    #[error("recipe `{recipe}` has no agent step `{step}`; its agent steps are {}", .steps.join(", "))]
    NoSuchStep {
        recipe: String,
        step: String,
        steps: Vec<String>,
    },
    #[error("run {run_id} ran recipe `{ran}`, not `{asked}`")]
    OtherRecipe {
        run_id: String,
        ran: String,
        asked: String,
    },
    /// A step's input slots could not be filled: why, naming the slot.
    #[error("step `{step_id}`: {why}")]
    Inputs { step_id: String, why: String },
    #[error("step `{step_id}`: {error}")]
    Tool {
        step_id: String,
        #[source]
        error: tool::CallError,
    },
    #[error(transparent)]
    Prompt(#[from] crate::runs::prompts::PromptError),
    #[error(
        "step `{step_id}`: its receipt {receipt_id} is missing, altered or unsigned, so its output cannot be trusted; start a new run"
    )]
    Untrusted { step_id: String, receipt_id: String },
}

/// The session plan task a run carries out (`session_id` and
/// `task.session_plan_task_id` in run.json).
#[derive(Clone, Copy, Debug)]
pub struct PlanTask<'a> {
    pub session_id: &'a str,
    pub task_id: u32,
}

/// A step's receipt.
enum StepReceipt {
    Tool(Box<ToolReceipt>),
    Agent(Box<AgentReceipt>),
}

impl StepReceipt {
    fn id(&self) -> &str {
        match self {
            StepReceipt::Tool(receipt) => &receipt.receipt_id,
            StepReceipt::Agent(receipt) => &receipt.receipt_id,
        }
    }
}

/// What a finished step hands to persistence.
struct StepOutput {
    slot: CacheSlot,
    /// What `$ref` sees of the slot.
    value: Value,
    receipt: StepReceipt,
    input_slot_refs: Vec<String>,
    /// The full output as text, hashed and previewed in steps.jsonl.
    text: String,
    /// An agent step later runs may reuse: its key and entry.
    reusable: Option<(String, ReuseEntry)>,
    /// The reply's `<action>`s; `save_decision` goes to the knowledge base.
    actions: Vec<crate::llm::protocol::Action>,
    /// What the step's model calls cost (none for a tool, or a reply reused).
    tokens: Option<crate::llm::model::Usage>,
}

impl StepOutput {
    fn with_tokens(self, tokens: Option<crate::llm::model::Usage>) -> StepOutput {
        StepOutput { tokens, ..self }
    }
}

/// How a step ended when it did not succeed.
enum StepFailure {
    Failed(String),
    /// An agent's reply broke its contract past the retries, or named a
    /// path it must not: STOP_HOOK, with the receipt that says so.
    Stopped(String, Box<AgentReceipt>),
    Cancelled,
    Io(std::io::Error),
    /// The review loop ended the run (escalated, back to scoping, split).
    Review(Stop),
}

impl Runner {
    fn emit(&self, event: RunEvent) {
        emit(&self.sinks, &event);
    }

    fn root(&self) -> &Path {
        self.workspace.root()
    }

    /// Creates a run of `recipe_id` (status `pending`), its arguments
    /// completed from the workspace. It runs with [`Runner::execute`].
    pub fn create(
        &self,
        recipe_id: &str,
        description: &str,
        args: Map<String, Value>,
        plan: Option<PlanTask<'_>>,
    ) -> Result<RunManifest, RunError> {
        self.create_marked(recipe_id, description, args, plan, None, false)
    }

    /// [`Runner::create`] with the mark of the scene the run will write, as
    /// the writer's text stands now (see `runs::output::delivery`), written in the
    /// same `run.json`; `fresh` asks the model afresh whatever `reuse` says.
    pub fn create_marked(
        &self,
        recipe_id: &str,
        description: &str,
        mut args: Map<String, Value>,
        plan: Option<PlanTask<'_>>,
        scene: Option<crate::runs::store::SceneMark>,
        fresh: bool,
    ) -> Result<RunManifest, RunError> {
        let recipe = self
            .registry
            .get(recipe_id)
            .ok_or_else(|| RunError::UnknownRecipe(recipe_id.to_owned()))?;
        router::complete_args(&self.workspace, &mut args);
        let run_id = new_id("run_");
        let files = RunFiles::new(self.root(), &run_id);
        // The run's folder appears whole: written under a hidden name, then renamed.
        let staging = RunFiles {
            dir: files.dir.with_file_name(format!(".{run_id}.tmp")),
        };
        std::fs::create_dir_all(&staging.dir)?;
        let created = now();
        let manifest = RunManifest {
            run_id,
            recipe_id: recipe.recipe_id.clone(),
            session_id: plan
                .as_ref()
                .map_or_else(|| new_id("sess_"), |plan| plan.session_id.to_owned()),
            status: RunStatus::Pending,
            created_at: created.clone(),
            updated_at: created,
            completed_at: None,
            task: RunTask {
                description: description.to_owned(),
                session_plan_task_id: plan.as_ref().map(|plan| u64::from(plan.task_id)),
                initial_args: args,
            },
            current_step_index: 0,
            total_steps: Schedule::new(recipe).total(1),
            phase: None,
            error: None,
            review: recipe.review.as_ref().map(|_| ReviewState::new()),
            scene,
            fresh: fresh || (self.model.is_some() && !self.reuse),
        };
        // No cache.json yet: a run's first is written when it ends.
        let written = staging
            .write_first_manifest(&self.disk, &manifest)
            .and_then(|()| std::fs::rename(&staging.dir, &files.dir));
        if let Err(error) = written {
            let _ = std::fs::remove_dir_all(&staging.dir);
            return Err(error.into());
        }
        Ok(manifest)
    }

    /// Runs (or resumes) `run_id` from its first unfinished step until it is
    /// done, fails, or `cancel` fires (or a cancel request file appears).
    pub async fn execute(
        &self,
        run_id: &str,
        cancel: CancellationToken,
    ) -> Result<RunManifest, RunError> {
        let files = RunFiles::new(self.root(), run_id);
        if !files.manifest().exists() {
            return Err(RunError::UnknownRun(run_id.to_owned()));
        }
        let Some(lock) = files.try_lock()? else {
            return Err(RunError::Busy(run_id.to_owned()));
        };
        let mut manifest = files.read_manifest()?;
        if manifest.status == RunStatus::Done {
            return Err(RunError::Finished {
                run_id: run_id.to_owned(),
                status: manifest.status.as_str(),
            });
        }
        let recipe = self
            .registry
            .get(&manifest.recipe_id)
            .ok_or_else(|| RunError::UnknownRecipe(manifest.recipe_id.clone()))?
            .clone();
        // A cancel request left from before this resume does not apply to
        // it, and temporary files of a write a crash interrupted are litter.
        let _ = std::fs::remove_file(files.cancel_request());
        remove_temporary_files(&files.dir);
        let key = SigningKey::load_or_create(self.root(), &self.disk)?;
        let (mut cache, mut values, done, next, review_state) =
            self.reconcile(&files, &recipe, &manifest, &key)?;
        let schedule = Schedule::new(&recipe);

        manifest.status = RunStatus::Running;
        manifest.current_step_index = done;
        manifest.total_steps = schedule.total(review_state.as_ref().map_or(1, |r| r.iterations));
        manifest.review = review_state;
        manifest.error = None;
        manifest.completed_at = None;
        manifest.phase = phase_of(&schedule, &next);
        manifest.updated_at = now();
        // The steps' writes are made durable on a thread of their own, each
        // step's line once what it points at is (see `storage::disk::commit`).
        let committer = Committer::start(self.disk.clone());
        let steps = Runner {
            disk: self.disk.deferring(&committer),
            cited: CitedFiles::default(),
            ..self.clone()
        };
        files.write_manifest(&steps.disk, &manifest)?;
        self.emit(RunEvent::Started {
            manifest: manifest.clone(),
            from_step: done,
        });

        let watcher = watch_for_cancel_request(files.cancel_request(), cancel.clone());
        let scope = RunScope {
            files: &files,
            recipe: &recipe,
            key: &key,
            cancel: &cancel,
            task: task_value(&manifest),
        };
        let outcome = steps
            .run_steps(&scope, &mut manifest, &mut cache, &mut values, next)
            .await;
        watcher.abort();
        // The journal has every slot; cache.json is brought up to it once,
        // here, rather than after every step, and with the run's last
        // run.json put in place after the journal's last lines: the run
        // ends with one round of syncs more than its last step. Failing to
        // write it loses nothing, but a run that otherwise ended well
        // reports it.
        let outcome = match (outcome, files.write_cache(&steps.disk, &cache)) {
            (Ok(()), Err(error)) => Err(StepFailure::Io(error)),
            (outcome, _) => outcome,
        };
        let concluded = self.conclude(&recipe, &mut manifest, &values, outcome);
        let written = match concluded {
            Ok(()) => files.write_manifest_after(&steps.disk, &manifest),
            Err(_) => Ok(()),
        };
        // Flushed however the run ended: nothing of it is left waiting (or
        // half written) once it has, and a failure's own run.json below
        // comes after every one before it.
        let flushed = steps.disk.flush().and(written);
        match (concluded, flushed) {
            (Ok(()), Ok(())) => {}
            (Err(RunError::Io(error)), _) | (Ok(()), Err(error)) => {
                return Err(self.write_failure(&files, &mut manifest, error));
            }
            (Err(error), _) => return Err(error),
        }
        let _ = std::fs::remove_file(files.cancel_request());
        self.emit(RunEvent::Finished {
            manifest: manifest.clone(),
        });
        drop(lock);
        Ok(manifest)
    }

    /// Puts how the steps ended into the manifest: after the last step, the
    /// Definition of Done decides; otherwise the cancel, the review loop's
    /// stop or the failure says why the run ended. A write error of the
    /// run's files is returned, for the caller to record once the run's
    /// committer is flushed.
    fn conclude(
        &self,
        recipe: &Recipe,
        manifest: &mut RunManifest,
        values: &HashMap<String, Value>,
        outcome: Result<(), StepFailure>,
    ) -> Result<(), RunError> {
        let finished = now();
        manifest.updated_at = finished.clone();
        manifest.phase = None;
        match outcome {
            Ok(()) => {
                self.emit(RunEvent::Checking {
                    run_id: manifest.run_id.clone(),
                });
                let failures = dod::failures(self.root(), recipe, manifest, values);
                if failures.is_empty() {
                    manifest.status = RunStatus::Done;
                } else {
                    manifest.status = RunStatus::Failed;
                    let issue =
                        dod::write_issue(self.root(), &self.disk, manifest, recipe, &failures)?;
                    manifest.error = Some(format!(
                        "the Definition of Done failed ({}); see {issue}",
                        failures.join("; ")
                    ));
                }
                manifest.completed_at = Some(finished);
            }
            Err(StepFailure::Cancelled) => {
                manifest.status = RunStatus::Cancelled;
                manifest.error = Some(format!(
                    "cancelled during step {} of {}",
                    manifest.current_step_index + 1,
                    manifest.total_steps
                ));
                manifest.completed_at = Some(finished);
            }
            Err(StepFailure::Review(stop)) => {
                manifest.status = RunStatus::Failed;
                manifest.error = Some(match stop.outcome {
                    Outcome::NeedsScoping => format!("{}; the task needs scoping", stop.reason),
                    Outcome::Split => format!(
                        "{}; it splits into: {}",
                        stop.reason,
                        stop.subtasks.join("; ")
                    ),
                    _ => format!(
                        "the review loop stopped: {}; the last draft is in the run's report for you to judge",
                        stop.reason
                    ),
                });
                manifest.completed_at = Some(finished);
            }
            Err(StepFailure::Failed(message) | StepFailure::Stopped(message, _)) => {
                manifest.status = RunStatus::Failed;
                manifest.error = Some(message);
                manifest.completed_at = Some(finished);
            }
            Err(StepFailure::Io(error)) => return Err(RunError::Io(error)),
        }
        Ok(())
    }

    /// Records that the run's files could not be written, as far as the
    /// disk allows, and tells the listeners the run ended.
    fn write_failure(
        &self,
        files: &RunFiles,
        manifest: &mut RunManifest,
        error: std::io::Error,
    ) -> RunError {
        manifest.status = RunStatus::Failed;
        manifest.error = Some(format!("cannot write the run's files: {error}"));
        let finished = now();
        manifest.updated_at = finished.clone();
        manifest.completed_at = Some(finished);
        // The files on disk are still the last consistent state; try to
        // record the failure, but a full disk may refuse even that.
        let _ = files.write_manifest(&self.disk, manifest);
        self.emit(RunEvent::Finished {
            manifest: manifest.clone(),
        });
        RunError::Io(error)
    }

    /// Runs the schedule's stages from `next` until the run ends, each
    /// step recorded before the next begins.
    async fn run_steps(
        &self,
        run: &RunScope<'_>,
        manifest: &mut RunManifest,
        cache: &mut Cache,
        values: &mut HashMap<String, Value>,
        mut next: Next,
    ) -> Result<(), StepFailure> {
        let schedule = Schedule::new(run.recipe);
        loop {
            let stage = match next {
                Next::End => return Ok(()),
                Next::Stop(stop) => return Err(StepFailure::Review(stop)),
                Next::Stage(stage) => stage,
            };
            if run.cancel.is_cancelled() {
                return Err(StepFailure::Cancelled);
            }
            let index = manifest.current_step_index;
            let total = manifest.total_steps;
            let planned = schedule.planned(stage);
            // The journal names this step: its line is the previous step's
            // (or none, when the run starts).
            self.emit(RunEvent::StepStarted {
                run_id: manifest.run_id.clone(),
                index,
                total,
                step_id: planned.id().to_owned(),
                phase: planned.phase(),
                actor: planned.actor().to_owned(),
            });
            let started_at = now();
            let stage = StageRun {
                schedule: &schedule,
                stage,
                planned: &planned,
                index,
                started_at,
            };
            let output = self.run_stage(run, &stage, manifest, cache, values).await?;
            next = self.record_step(stage, run.files, manifest, cache, values, output)?;
        }
    }

    /// Runs one stage of the schedule. A failure names the step and its
    /// actor; a STOP_HOOK's receipt is written before the run stops.
    async fn run_stage(
        &self,
        scope: &RunScope<'_>,
        run: &StageRun<'_>,
        manifest: &RunManifest,
        cache: &Cache,
        values: &HashMap<String, Value>,
    ) -> Result<StepOutput, StepFailure> {
        let outcome = match run.planned {
            Planned::Tool(tool) => tool::run(&self.workspace, scope, run, tool, manifest, values),
            Planned::Agent(agent) => {
                let extras =
                    review_loop::agent_extras(&self.workspace, run.schedule, run.stage, values);
                prompted::Agents::of(self)
                    .run(scope, run, agent, manifest, cache, extras)
                    .await
            }
            Planned::Gates { .. } => {
                review_loop::gates(&self.workspace, scope, run, manifest, values)
            }
        };
        let label = match run.planned {
            Planned::Agent(agent) => format!("agent {}", agent.agent_archetype),
            other => format!("tool {}", other.actor()),
        };
        match outcome {
            Ok(done) => Ok(done),
            Err(StepFailure::Failed(message)) => Err(StepFailure::Failed(format!(
                "step `{}` ({label}) failed: {message}",
                run.planned.id()
            ))),
            Err(StepFailure::Stopped(message, receipt)) => {
                let path = audit::write_receipt(self.root(), &self.disk, &receipt)
                    .map_err(StepFailure::Io)?;
                Err(StepFailure::Failed(format!(
                    "step `{}` ({label}) stopped (STOP_HOOK): {message}; nothing was written. The receipt is {path}",
                    run.planned.id()
                )))
            }
            Err(other) => Err(other),
        }
    }
}

/// What stays the same from one step of a run to the next: its files, its
/// recipe, the key its receipts are signed with, the cancel that stops it,
/// and its task as `$ref` reads it.
struct RunScope<'a> {
    files: &'a RunFiles,
    recipe: &'a Recipe,
    key: &'a SigningKey,
    cancel: &'a CancellationToken,
    task: Value,
}

/// The stage the step loop is on, and what it knows of it before it runs.
struct StageRun<'a> {
    schedule: &'a Schedule<'a>,
    stage: Stage,
    planned: &'a Planned<'a>,
    index: usize,
    started_at: String,
}

/// Tells every listener of a run.
fn emit(sinks: &[Arc<dyn RunSink>], event: &RunEvent) {
    for sink in sinks {
        sink.event(event);
    }
}

/// run.json's `phase` before `next`.
fn phase_of(schedule: &Schedule, next: &Next) -> Option<String> {
    match next {
        Next::Stage(stage) => Some(schedule.planned(*stage).phase().to_owned()),
        _ => None,
    }
}

/// Fires `cancel` when a cancel request file appears, so another process
/// (`control-room runs cancel`) can stop a run whose lock it cannot take.
fn watch_for_cancel_request(
    request: std::path::PathBuf,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if request.exists() {
                cancel.cancel();
                break;
            }
            tokio::time::sleep(CANCEL_POLL).await;
        }
    })
}

/// Deletes `.NAME.tmp-PID-N` files an interrupted atomic write left behind.
fn remove_temporary_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.contains(".tmp-") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

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
//! A completed step is persisted in this order: its receipt, `cache.json`
//! (atomic), its `steps.jsonl` line (append, synced), then `run.json`
//! (atomic). A crash between any two leaves files that [`Runner::execute`]
//! reconciles on resume: `steps.jsonl` is the truth about what finished, a
//! slot without its step line is dropped and the step runs again, so no step
//! id is ever written twice.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::audit::{
    self, AgentReceipt, DecodingPair, Handoff, InputRef, OutputContract, OutputRef, Packet,
    ReceiptActor,
};
use super::contract::{self, Check, PathGuard, Violation};
use super::events::{RunEvent, RunSink};
use super::model::{Decoding, Message, Model, ModelReply, ModelRequest, ModelTarget};
use super::prompts::{Output, PromptBuilder, PromptInputs, SlotKind, SlotText};
use super::receipts::{self, SigningKey, ToolReceipt};
use super::recipe::{AgentStep, DodCheck, Recipe, Registry, ReviewRule, ToolStep};
use super::refs::{self, RefPath, RefScope};
use super::review::{self, Next, Outcome, Planned, ReviewState, Schedule, Stage, Stop};
use super::router;
use super::store::{Cache, CacheSlot, Disk, RunFiles, RunManifest, RunStatus, RunTask, StepRecord};
use super::tools::{self, ToolContext, sha256_hex};
use crate::index::Workspace;

/// How often a running run looks for a cancel request from another process.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Characters of an output kept as its preview.
const PREVIEW_CHARS: usize = 200;

/// How many times a reply that breaks its contract is asked for again.
const CONTRACT_RETRIES: u32 = 2;

/// Finished agent steps that later runs may reuse, relative to the root.
pub const REUSE_DIR: &str = ".control-room/cache/steps";

/// Everything a run needs.
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
    #[error("{0}")]
    Other(String),
}

impl From<anyhow::Error> for RunError {
    fn from(error: anyhow::Error) -> Self {
        RunError::Other(format!("{error:#}"))
    }
}

/// The session plan task a run carries out (`session_id` and
/// `task.session_plan_task_id` in run.json).
#[derive(Clone, Copy, Debug)]
pub struct PlanTask<'a> {
    pub session_id: &'a str,
    pub task_id: u32,
}

pub use crate::storage::{new_id, now};

fn preview(text: &str) -> String {
    text.chars().take(PREVIEW_CHARS).collect()
}

/// The slots' values during a run: a tool's full output, an agent's reply
/// (parsed when it is JSON).
struct Slots<'a> {
    task: &'a Value,
    values: &'a HashMap<String, Value>,
}

/// What `$ref` paths starting with `task.` see.
fn task_value(manifest: &RunManifest) -> Value {
    json!({
        "description": manifest.task.description,
        "args": manifest.task.initial_args,
        "initial_args": manifest.task.initial_args,
        "session_plan_task_id": manifest.task.session_plan_task_id,
    })
}

/// A tool step's resolved arguments, its output, and the slots the
/// arguments read.
type ToolCall = (Map<String, Value>, tools::ToolOutput, Vec<String>);

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
    actions: Vec<super::protocol::Action>,
}

/// A finished agent step, kept for reuse by a later identical request.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct ReuseEntry {
    receipt_id: String,
    run_id: String,
    step_id: String,
    sha256: String,
    text: String,
}

impl RefScope for Slots<'_> {
    fn root(&self, name: &str) -> Option<&Value> {
        if name == "task" {
            Some(self.task)
        } else {
            self.values.get(name)
        }
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

/// What an agent step gets besides its recipe inputs: the review loop's.
#[derive(Default)]
struct AgentExtras {
    /// Slots made for the step (`draft`, `review_rules` for the reviewer).
    slots: Vec<(String, String)>,
    /// Messages after the assembled prompt (the writer's revision request).
    follow_up: Vec<Message>,
    /// The rules a reviewer's verdict is validated against.
    review: Option<VerdictCheck>,
    next_step_id: Option<String>,
}

struct VerdictCheck {
    applicable: Vec<ReviewRule>,
    all: Vec<ReviewRule>,
    draft: String,
}

impl Runner {
    fn emit(&self, event: RunEvent) {
        for sink in &self.sinks {
            sink.event(&event);
        }
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
        mut args: Map<String, Value>,
        plan: Option<PlanTask<'_>>,
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
            scene: None,
        };
        let written = staging
            .write_manifest(&self.disk, &manifest)
            .and_then(|()| staging.write_cache(&self.disk, &Cache::new()))
            .and_then(|()| std::fs::rename(&staging.dir, &files.dir));
        if let Err(error) = written {
            let _ = std::fs::remove_dir_all(&staging.dir);
            return Err(error.into());
        }
        Ok(manifest)
    }

    /// The prompt `step_id` of `recipe_id` would be sent, for inspection
    /// (`control-room prompt`). Its inputs come from `run_id`'s finished
    /// steps when given; otherwise phase A's tools run now (they only read
    /// the index) and earlier agents' outputs are shown as placeholders.
    /// `model` (else the configured model) and `tier` choose the tier.
    #[allow(clippy::too_many_arguments)]
    pub fn preview_prompt(
        &self,
        recipe_id: &str,
        step_id: &str,
        description: &str,
        mut args: Map<String, Value>,
        run_id: Option<&str>,
        model: Option<&str>,
        tier: Option<&str>,
    ) -> Result<super::prompts::Assembly, RunError> {
        let recipe = self
            .registry
            .get(recipe_id)
            .ok_or_else(|| RunError::UnknownRecipe(recipe_id.to_owned()))?;
        let agents: Vec<&AgentStep> = recipe.phase_b.iter().collect();
        let Some(step) = agents.iter().find(|step| step.step_id == step_id).copied() else {
            let ids: Vec<&str> = agents.iter().map(|step| step.step_id.as_str()).collect();
            return Err(RunError::Other(format!(
                "recipe `{recipe_id}` has no agent step `{step_id}`; its agent steps are {}",
                ids.join(", ")
            )));
        };
        let mut cache = Cache::new();
        let (description, args) = match run_id {
            Some(run_id) => {
                let files = RunFiles::new(self.root(), run_id);
                if !files.manifest().exists() {
                    return Err(RunError::UnknownRun(run_id.to_owned()));
                }
                let manifest = files.read_manifest()?;
                if manifest.recipe_id != recipe.recipe_id {
                    return Err(RunError::Other(format!(
                        "run {run_id} ran recipe `{}`, not `{recipe_id}`",
                        manifest.recipe_id
                    )));
                }
                cache = files.read_cache()?;
                (manifest.task.description, manifest.task.initial_args)
            }
            None => {
                router::complete_args(&self.workspace, &mut args);
                (description.to_owned(), args)
            }
        };
        if run_id.is_none() {
            let task = json!({
                "description": description,
                "args": args,
                "initial_args": args,
                "session_plan_task_id": null,
            });
            let mut values = HashMap::new();
            for tool in &recipe.phase_a {
                let scope = Slots {
                    task: &task,
                    values: &values,
                };
                let (_, output, _) = self.call_tool(tool, &scope).map_err(|error| {
                    RunError::Other(format!("step `{}`: {error}", tool.step_id))
                })?;
                let text = serde_json::to_string(&output.data)
                    .map_err(|e| RunError::Other(e.to_string()))?;
                cache.insert(
                    tool.output_slot.clone(),
                    CacheSlot::Pointer {
                        receipt_id: "(preview)".into(),
                        sha256: sha256_hex(text.as_bytes()),
                        summary: output.summary,
                    },
                );
                values.insert(tool.output_slot.clone(), output.data);
            }
        }
        for earlier in &recipe.phase_b {
            if earlier.step_id == step_id {
                break;
            }
            cache.entry(earlier.output_slot.clone()).or_insert_with(|| {
                let text = format!(
                    "[the {}'s output from step `{}` goes here]",
                    earlier.agent_archetype, earlier.step_id
                );
                CacheSlot::Artifact {
                    agent_id: earlier.agent_archetype.clone(),
                    summary: text.clone(),
                    sha256: sha256_hex(text.as_bytes()),
                    text,
                }
            });
        }
        let (slots, _) = slot_texts(step, &cache).map_err(|failure| match failure {
            StepFailure::Failed(message) => RunError::Other(message),
            _ => RunError::Other(format!("step `{step_id}`: its inputs are not available")),
        })?;
        let target = self
            .model
            .as_ref()
            .and_then(|model| model.target(&step.agent_archetype));
        let model = model.or(target.as_ref().map(|target| target.model.as_str()));
        self.prompts
            .build(
                step,
                &PromptInputs {
                    task_description: &description,
                    task_args: &args,
                    slots,
                    model,
                    max_tokens: target.as_ref().and_then(|target| target.max_tokens),
                    tier,
                    workspace: Some(&self.workspace),
                },
            )
            .map_err(|error| RunError::Other(error.to_string()))
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
        files.write_manifest(&self.disk, &manifest)?;
        self.emit(RunEvent::Started {
            manifest: manifest.clone(),
            from_step: done,
        });

        let watcher = {
            let cancel = cancel.clone();
            let request = files.cancel_request();
            tokio::spawn(async move {
                loop {
                    if request.exists() {
                        cancel.cancel();
                        break;
                    }
                    tokio::time::sleep(CANCEL_POLL).await;
                }
            })
        };
        let outcome = self
            .run_steps(
                &files,
                &recipe,
                &mut manifest,
                &mut cache,
                &mut values,
                &key,
                &cancel,
                next,
            )
            .await;
        watcher.abort();

        let finished = now();
        manifest.updated_at = finished.clone();
        manifest.phase = None;
        match outcome {
            Ok(()) => {
                manifest.phase = Some("dod".into());
                files.write_manifest(&self.disk, &manifest)?;
                self.emit(RunEvent::Checking {
                    run_id: run_id.to_owned(),
                });
                let failures = self.check_dod(&recipe, &manifest, &values);
                manifest.phase = None;
                if failures.is_empty() {
                    manifest.status = RunStatus::Done;
                } else {
                    manifest.status = RunStatus::Failed;
                    let issue = self.write_dod_issue(&manifest, &recipe, &failures)?;
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
            Err(StepFailure::Io(error)) => {
                manifest.status = RunStatus::Failed;
                manifest.error = Some(format!("cannot write the run's files: {error}"));
                manifest.completed_at = Some(finished);
                // The files on disk are still the last consistent state; try
                // to record the failure, but a full disk may refuse even that.
                let _ = files.write_manifest(&self.disk, &manifest);
                self.emit(RunEvent::Finished {
                    manifest: manifest.clone(),
                });
                return Err(RunError::Io(error));
            }
        }
        files.write_manifest(&self.disk, &manifest)?;
        let _ = std::fs::remove_file(files.cancel_request());
        self.emit(RunEvent::Finished {
            manifest: manifest.clone(),
        });
        drop(lock);
        Ok(manifest)
    }

    /// Reads what a run finished before: the steps in steps.jsonl that
    /// follow the recipe's schedule (its review loop included) and whose
    /// slots are in cache.json, and what comes next. Repairs steps.jsonl if
    /// it holds anything else (a torn line, a step whose slot was never
    /// written).
    #[allow(clippy::type_complexity)]
    fn reconcile(
        &self,
        files: &RunFiles,
        recipe: &Recipe,
        manifest: &RunManifest,
        key: &SigningKey,
    ) -> Result<
        (
            Cache,
            HashMap<String, Value>,
            usize,
            Next,
            Option<ReviewState>,
        ),
        RunError,
    > {
        let stored_cache = files.read_cache()?;
        let raw = std::fs::read_to_string(files.steps()).unwrap_or_default();
        let records = files.read_steps();
        let schedule = Schedule::new(recipe);
        let mut review_state = schedule.review().map(|_| ReviewState::new());
        let mut next = schedule.first().map_or(Next::End, Next::Stage);
        let mut kept: Vec<StepRecord> = Vec::new();
        let mut cache = Cache::new();
        let mut values = HashMap::new();
        let mut receipts_by_id: Option<HashMap<String, ToolReceipt>> = None;
        for record in records {
            let Next::Stage(stage) = next else {
                break;
            };
            let planned = schedule.planned(stage);
            let slot_name = planned.slot();
            if record.step_index != kept.len()
                || record.step_id != planned.id()
                || !stored_cache.contains_key(slot_name)
            {
                break;
            }
            let slot = stored_cache[slot_name].clone();
            let value = match &slot {
                CacheSlot::Pointer {
                    receipt_id, sha256, ..
                } => {
                    let receipts = receipts_by_id.get_or_insert_with(|| {
                        receipts::load(self.root(), &manifest.session_id)
                            .into_iter()
                            .map(|receipt| (receipt.receipt_id.clone(), receipt))
                            .collect()
                    });
                    let receipt = receipts
                        .get(receipt_id)
                        .filter(|receipt| receipt.verify(key) && &receipt.output_sha256 == sha256)
                        .ok_or_else(|| {
                            RunError::Other(format!(
                                "step `{}`: its receipt {receipt_id} is missing, altered or unsigned, so its output cannot be trusted; start a new run",
                                record.step_id
                            ))
                        })?;
                    receipt.output.clone()
                }
                CacheSlot::Artifact { text, .. } => self.artifact_value(&planned, text),
            };
            if let Some(alias) = schedule.alias(stage) {
                cache.insert(alias.clone(), slot.clone());
                values.insert(alias, value.clone());
            }
            cache.insert(slot_name.to_owned(), slot);
            next = schedule.after(stage, &value);
            values.insert(slot_name.to_owned(), value);
            if let Some(state) = &mut review_state {
                state.note(stage, &next);
            }
            kept.push(record);
        }
        let clean: String = kept
            .iter()
            .map(|record| serde_json::to_string(record).map(|line| line + "\n"))
            .collect::<Result<_, _>>()
            .map_err(std::io::Error::other)?;
        if clean != raw && !(raw.is_empty() && kept.is_empty()) {
            self.disk.write_atomic(&files.steps(), clean.as_bytes())?;
        }
        if cache != stored_cache {
            files.write_cache(&self.disk, &cache)?;
        }
        Ok((cache, values, kept.len(), next, review_state))
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_steps(
        &self,
        files: &RunFiles,
        recipe: &Recipe,
        manifest: &mut RunManifest,
        cache: &mut Cache,
        values: &mut HashMap<String, Value>,
        key: &SigningKey,
        cancel: &CancellationToken,
        mut next: Next,
    ) -> Result<(), StepFailure> {
        let schedule = Schedule::new(recipe);
        let task = task_value(manifest);
        loop {
            let stage = match next {
                Next::End => return Ok(()),
                Next::Stop(stop) => return Err(StepFailure::Review(stop)),
                Next::Stage(stage) => stage,
            };
            if cancel.is_cancelled() {
                return Err(StepFailure::Cancelled);
            }
            let index = manifest.current_step_index;
            let total = manifest.total_steps;
            let planned = schedule.planned(stage);
            // run.json already names this step: it was written when the
            // previous one finished (or when the run started).
            self.emit(RunEvent::StepStarted {
                run_id: manifest.run_id.clone(),
                index,
                total,
                step_id: planned.id().to_owned(),
                phase: planned.phase(),
                actor: planned.actor().to_owned(),
            });
            let started_at = now();
            let outcome = match &planned {
                Planned::Tool(tool) => {
                    self.run_tool(tool, manifest, &task, values, key, &started_at)
                }
                Planned::Agent(agent) => {
                    let extras = self.agent_extras(&schedule, stage, values);
                    self.run_agent(
                        index,
                        agent,
                        manifest,
                        cache,
                        key,
                        &started_at,
                        cancel,
                        extras,
                    )
                    .await
                }
                Planned::Gates { step_id, .. } => self.run_gates(
                    &schedule,
                    stage,
                    step_id,
                    recipe,
                    manifest,
                    values,
                    key,
                    &started_at,
                ),
            };
            let label = match &planned {
                Planned::Agent(agent) => format!("agent {}", agent.agent_archetype),
                other => format!("tool {}", other.actor()),
            };
            let StepOutput {
                slot,
                value,
                receipt,
                input_slot_refs,
                text: output_text,
                reusable,
                actions,
            } = match outcome {
                Ok(done) => done,
                Err(StepFailure::Failed(message)) => {
                    return Err(StepFailure::Failed(format!(
                        "step `{}` ({label}) failed: {message}",
                        planned.id()
                    )));
                }
                Err(StepFailure::Stopped(message, receipt)) => {
                    let path = audit::write_receipt(self.root(), &self.disk, &receipt)
                        .map_err(StepFailure::Io)?;
                    return Err(StepFailure::Failed(format!(
                        "step `{}` ({label}) stopped (STOP_HOOK): {message}; nothing was written. The receipt is {path}",
                        planned.id()
                    )));
                }
                Err(other) => return Err(other),
            };
            match &receipt {
                StepReceipt::Tool(receipt) => {
                    receipts::append(self.root(), &self.disk, receipt).map_err(StepFailure::Io)?;
                }
                StepReceipt::Agent(receipt) => {
                    audit::write_receipt(self.root(), &self.disk, receipt)
                        .map_err(StepFailure::Io)?;
                }
            }
            let alias = schedule.alias(stage);
            if let Some(alias) = &alias {
                cache.insert(alias.clone(), slot.clone());
            }
            cache.insert(planned.slot().to_owned(), slot.clone());
            files
                .write_cache(&self.disk, cache)
                .map_err(StepFailure::Io)?;
            let record = StepRecord {
                step_index: index,
                step_id: planned.id().to_owned(),
                phase: planned.phase().to_owned(),
                tool: match &planned {
                    Planned::Agent(_) => None,
                    other => Some(other.actor().to_owned()),
                },
                agent_archetype: match &planned {
                    Planned::Agent(agent) => Some(agent.agent_archetype.clone()),
                    _ => None,
                },
                agent_id: match &slot {
                    CacheSlot::Artifact { agent_id, .. } => Some(agent_id.clone()),
                    CacheSlot::Pointer { .. } => None,
                },
                status: "done".into(),
                output_slot: planned.slot().to_owned(),
                receipt_id: Some(receipt.id().to_owned()),
                input_slot_refs,
                output_hash: format!("sha256:{}", sha256_hex(output_text.as_bytes())),
                output_preview: preview(&output_text),
                started_at,
                completed_at: now(),
                error: None,
            };
            files
                .append_step(&self.disk, &record)
                .map_err(StepFailure::Io)?;
            // After the step is recorded; saved twice (a resumed step), a
            // decision still counts once, as the later line supersedes.
            let decisions = super::prompts::state::decisions_from_actions(
                &actions,
                &format!(
                    "{} ({}, step {})",
                    record.agent_archetype.as_deref().unwrap_or("agent"),
                    manifest.run_id,
                    record.step_id
                ),
                manifest
                    .task
                    .initial_args
                    .get("scene_id")
                    .and_then(Value::as_str),
                &record.completed_at,
            );
            super::prompts::state::append_decisions(self.root(), &self.disk, &decisions)
                .map_err(StepFailure::Io)?;
            if let Some((key, entry)) = reusable {
                self.keep_for_reuse(&key, &entry);
            }
            next = schedule.after(stage, &value);
            if let Some(alias) = alias {
                values.insert(alias, value.clone());
            }
            values.insert(planned.slot().to_owned(), value);
            if let Some(state) = &mut manifest.review {
                state.note(stage, &next);
            }
            manifest.current_step_index = index + 1;
            manifest.total_steps =
                schedule.total(manifest.review.as_ref().map_or(1, |r| r.iterations));
            manifest.phase = phase_of(&schedule, &next);
            manifest.updated_at = now();
            files
                .write_manifest(&self.disk, manifest)
                .map_err(StepFailure::Io)?;
            self.emit(RunEvent::StepFinished {
                run_id: manifest.run_id.clone(),
                index,
                total: manifest.total_steps,
                step_id: planned.id().to_owned(),
                preview: record.output_preview.clone(),
            });
        }
    }

    /// What the review loop adds to an agent step: the reviewer's draft,
    /// rules and verdict check; the writer's revision request.
    fn agent_extras(
        &self,
        schedule: &Schedule,
        stage: Stage,
        values: &HashMap<String, Value>,
    ) -> AgentExtras {
        let next_step_id = match stage {
            Stage::Review(_) => None,
            _ => match schedule.after(stage, &Value::Null) {
                Next::Stage(next) => Some(schedule.planned(next).id().to_owned()),
                _ => None,
            },
        };
        let mut extras = AgentExtras {
            next_step_id,
            ..AgentExtras::default()
        };
        let Some((review, writer)) = schedule.review() else {
            return extras;
        };
        match stage {
            Stage::Writer(k) if k > 1 => {
                if let Some((draft, why)) = review::revision_request(
                    values,
                    &writer.output_slot,
                    &review.output_slot,
                    k - 1,
                ) {
                    extras.follow_up = vec![
                        Message::assistant(draft),
                        Message::user(format!(
                            "{why}\n\nReply with the whole revised text, as before, and nothing else."
                        )),
                    ];
                }
            }
            Stage::Review(k) => {
                let draft = values
                    .get(&review::iteration_slot(&writer.output_slot, k))
                    .map(|value| {
                        value
                            .as_str()
                            .map_or_else(|| value.to_string(), str::to_owned)
                    })
                    .unwrap_or_default();
                let applicable: Vec<ReviewRule> =
                    review::verdict::applicable(&review.rules, &self.workspace, &draft)
                        .into_iter()
                        .cloned()
                        .collect();
                let listed: Vec<&ReviewRule> = applicable.iter().collect();
                extras.slots = vec![
                    ("draft".to_owned(), draft.clone()),
                    (
                        "review_rules".to_owned(),
                        review::verdict::rules_text(&listed),
                    ),
                ];
                extras.review = Some(VerdictCheck {
                    applicable,
                    all: review.rules.clone(),
                    draft,
                });
            }
            _ => {}
        }
        extras
    }

    /// The review loop's gates on iteration `k`'s draft, as a step with a
    /// signed receipt like a tool's.
    #[allow(clippy::too_many_arguments)]
    fn run_gates(
        &self,
        schedule: &Schedule,
        stage: Stage,
        step_id: &str,
        recipe: &Recipe,
        manifest: &RunManifest,
        values: &HashMap<String, Value>,
        key: &SigningKey,
        started_at: &str,
    ) -> Result<StepOutput, StepFailure> {
        let (Stage::Gates(k), Some((review, writer))) = (stage, schedule.review()) else {
            return Err(StepFailure::Failed(
                "the gates run only in a review loop".into(),
            ));
        };
        let draft_slot = review::iteration_slot(&writer.output_slot, k);
        let draft = values
            .get(&draft_slot)
            .and_then(Value::as_str)
            .ok_or_else(|| StepFailure::Failed(format!("slot `{draft_slot}` holds no draft")))?;
        let brief = recipe
            .phase_b
            .iter()
            .find(|step| step.prompt_type == "refine_brief")
            .and_then(|step| values.get(&step.output_slot))
            .and_then(Value::as_str);
        let args = &manifest.task.initial_args;
        let report = review::gates::run(
            &self.workspace,
            &review.gates,
            &review::gates::DraftScene {
                scene_path: args.get("scene_path").and_then(Value::as_str),
                scene_id: args.get("scene_id").and_then(Value::as_str),
                brief,
                args,
            },
            draft,
        );
        let data = serde_json::to_value(&report).map_err(|e| StepFailure::Failed(e.to_string()))?;
        let mut call_args = Map::new();
        call_args.insert("draft_slot".into(), draft_slot.clone().into());
        call_args.insert("draft_sha256".into(), sha256_hex(draft.as_bytes()).into());
        call_args.insert(
            "gates".into(),
            serde_json::to_value(&review.gates).unwrap_or_default(),
        );
        Ok(self.tool_step_output(
            manifest,
            step_id,
            review::GATES_TOOL,
            call_args,
            tools::ToolOutput {
                data,
                summary: report.summary(),
                file_refs: Vec::new(),
            },
            vec![draft_slot],
            key,
            started_at,
        ))
    }

    /// Resolves a tool step's arguments in `scope` and runs the tool:
    /// (arguments, output, the slots the arguments read).
    fn call_tool(&self, step: &ToolStep, scope: &Slots) -> Result<ToolCall, String> {
        let mut input_refs = Vec::new();
        let args = refs::resolve(&Value::Object(step.args.clone()), scope, &mut input_refs)
            .map_err(|error| with_arg_hint(error.to_string()))?;
        let Value::Object(args) = args else {
            unreachable!("an object resolves to an object")
        };
        let output = tools::run(
            &step.tool,
            &ToolContext {
                workspace: &self.workspace,
            },
            &args,
        )
        .map_err(|error| error.to_string())?;
        Ok((args, output, input_refs))
    }

    fn run_tool(
        &self,
        step: &ToolStep,
        manifest: &RunManifest,
        task: &Value,
        values: &HashMap<String, Value>,
        key: &SigningKey,
        started_at: &str,
    ) -> Result<StepOutput, StepFailure> {
        let (args, output, input_refs) = self
            .call_tool(step, &Slots { task, values })
            .map_err(StepFailure::Failed)?;
        Ok(self.tool_step_output(
            manifest,
            &step.step_id,
            &step.tool,
            args,
            output,
            input_refs,
            key,
            started_at,
        ))
    }

    /// A finished tool-like step: its signed receipt and its pointer slot.
    #[allow(clippy::too_many_arguments)]
    fn tool_step_output(
        &self,
        manifest: &RunManifest,
        step_id: &str,
        tool: &str,
        args: Map<String, Value>,
        output: tools::ToolOutput,
        input_refs: Vec<String>,
        key: &SigningKey,
        started_at: &str,
    ) -> StepOutput {
        let output_text = serde_json::to_string(&output.data).unwrap_or_default();
        let sha256 = sha256_hex(output_text.as_bytes());
        let mut receipt = ToolReceipt {
            receipt_id: new_id("rcpt_"),
            run_id: manifest.run_id.clone(),
            session_id: manifest.session_id.clone(),
            step_id: step_id.to_owned(),
            tool: tool.to_owned(),
            args: Value::Object(args),
            output: output.data.clone(),
            output_sha256: sha256.clone(),
            output_size: output_text.len(),
            summary: output.summary.clone(),
            file_refs: output.file_refs,
            started_at: started_at.to_owned(),
            finished_at: now(),
            signature: String::new(),
        };
        receipt.sign(key);
        let slot = CacheSlot::Pointer {
            receipt_id: receipt.receipt_id.clone(),
            sha256,
            summary: output.summary,
        };
        StepOutput {
            slot,
            value: output.data,
            receipt: StepReceipt::Tool(Box::new(receipt)),
            input_slot_refs: input_refs,
            text: output_text,
            reusable: None,
            actions: Vec::new(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_agent(
        &self,
        index: usize,
        step: &AgentStep,
        manifest: &RunManifest,
        cache: &Cache,
        key: &SigningKey,
        started_at: &str,
        cancel: &CancellationToken,
        extras: AgentExtras,
    ) -> Result<StepOutput, StepFailure> {
        let model = self.model.as_ref().ok_or_else(|| {
            StepFailure::Failed(
                "no model is configured: pass --model scripted:FILE to dry-run the recipe".into(),
            )
        })?;
        let (mut slots, inputs_used) = slot_texts(step, cache)?;
        for (name, text) in &extras.slots {
            slots.retain(|slot| slot.name != name);
            slots.push(SlotText {
                name,
                text: text.clone(),
                kind: SlotKind::Artifact,
            });
        }
        let target = model.target(&step.agent_archetype);
        let assembly = self
            .prompts
            .build(
                step,
                &PromptInputs {
                    task_description: &manifest.task.description,
                    task_args: &manifest.task.initial_args,
                    slots,
                    model: target.as_ref().map(|target| target.model.as_str()),
                    max_tokens: target.as_ref().and_then(|target| target.max_tokens),
                    tier: None,
                    workspace: Some(&self.workspace),
                },
            )
            .map_err(|error| StepFailure::Failed(error.to_string()))?;
        let json = assembly.output == Output::Json;
        let guard = PathGuard::new(self.expected_artifacts(step, manifest, cache));
        let args = &manifest.task.initial_args;
        let arg = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
        let packet = Packet {
            packet_id: new_id("pkt_"),
            parent_issue_id: manifest.run_id.clone(),
            parent_packet_id: None,
            intent: audit::intent(&step.prompt_type, json, assembly.mode.as_deref()).to_owned(),
            target: audit::Target {
                file: arg("scene_path"),
                scene_id: arg("scene_id"),
            },
            scope: manifest.task.description.clone(),
            inputs: inputs_used.clone(),
            constraints: vec![
                "use no tools; rely only on the inputs given".into(),
                "name no file outside the expected artifacts".into(),
                if json {
                    "reply with one JSON object that follows the schema".into()
                } else {
                    "reply with the prose; reasoning stays in <thinking>".into()
                },
            ],
            output_contract: OutputContract {
                kind: if json { "json" } else { "prose" }.into(),
                schema: assembly.schema.as_ref().map(|(source, _)| source.clone()),
                expected_artifacts: guard.expected().map(str::to_owned).collect(),
            },
            handoff: Handoff {
                from: "step_runner".into(),
                to: step.agent_archetype.clone(),
                step_id: step.step_id.clone(),
                next_step_id: extras.next_step_id.clone(),
            },
            timestamp: now(),
            requested_by: "step_runner".into(),
            choices: None,
        };
        audit::write_packet(self.root(), &self.disk, &packet).map_err(StepFailure::Io)?;
        let mut assembled = assembly.messages.clone();
        assembled.extend(extras.follow_up.iter().cloned());
        let base = ModelRequest {
            step_id: step.step_id.clone(),
            agent_archetype: step.agent_archetype.clone(),
            prompt_type: step.prompt_type.clone(),
            messages: assembled,
            json_reply: json,
            schema: assembly.schema.as_ref().map(|(_, schema)| schema.clone()),
        };
        let mut draft = ReceiptDraft {
            step,
            manifest,
            packet: &packet,
            inputs_used,
            started_at,
            key,
            risks: assembly
                .trimmed
                .iter()
                .map(|part| {
                    format!("the prompt was trimmed to fit the model: {part} left out or cut")
                })
                .collect(),
            assumptions: match &assembly.profile.matched {
                Some(_) => Vec::new(),
                None => vec![format!(
                    "{} is not in the capability matrix; its prompt was assembled for tier `{}`",
                    target
                        .as_ref()
                        .map_or("the model", |target| target.model.as_str()),
                    assembly.profile.tier
                )],
            },
        };
        let reuse_key = target.as_ref().map(|target| reuse_key(target, &base));
        if self.reuse
            && let Some(reuse_key) = &reuse_key
            && let Some(entry) = self.reusable(reuse_key)
        {
            let mut checks = Vec::new();
            if let Ok(accepted) = contract::check_reply(
                &entry.text,
                assembly.output,
                assembly.schema.as_ref(),
                &guard,
                &mut checks,
            ) && check_verdict(extras.review.as_ref(), &accepted, &mut checks).is_ok()
            {
                checks.push(Check {
                    check: "idempotency".into(),
                    passed: true,
                    detail: format!(
                        "the same request finished in run {} (step `{}`); its artifact is reused",
                        entry.run_id, entry.step_id
                    ),
                });
                let actor = ReceiptActor {
                    agent: step.agent_archetype.clone(),
                    provider: target
                        .as_ref()
                        .map_or(String::new(), |t| t.provider.clone()),
                    model: target.as_ref().map_or(String::new(), |t| t.model.clone()),
                    requested_model: None,
                    decoding: DecodingPair {
                        requested: Decoding::default(),
                        effective: Decoding::default(),
                    },
                };
                let receipt = draft.finish(
                    actor,
                    checks,
                    1,
                    Some(entry.receipt_id.clone()),
                    Ok(&accepted),
                );
                return Ok(self.agent_output(index, step, accepted, receipt, None));
            }
        }

        let mut messages = base.messages.clone();
        let mut attempts = 0;
        let mut retried: Vec<Check> = Vec::new();
        loop {
            attempts += 1;
            let request = ModelRequest {
                messages: messages.clone(),
                ..base.clone()
            };
            let reply: ModelReply = tokio::select! {
                reply = model.complete(&request) => reply.map_err(|error| StepFailure::Failed(error.to_string()))?,
                () = cancel.cancelled() => return Err(StepFailure::Cancelled),
            };
            let mut checks = retried.clone();
            let verdict = contract::check_reply(
                &reply.text,
                assembly.output,
                assembly.schema.as_ref(),
                &guard,
                &mut checks,
            )
            .and_then(|accepted| {
                check_verdict(extras.review.as_ref(), &accepted, &mut checks)
                    .map(|()| accepted)
                    .map_err(Violation::Contract)
            });
            let actor = ReceiptActor::of(&step.agent_archetype, &reply);
            match verdict {
                Ok(accepted) => {
                    let receipt = draft.finish(actor, checks, attempts, None, Ok(&accepted));
                    let reusable = reuse_key.map(|key| {
                        (
                            key,
                            ReuseEntry {
                                receipt_id: receipt.receipt_id.clone(),
                                run_id: manifest.run_id.clone(),
                                step_id: step.step_id.clone(),
                                sha256: sha256_hex(accepted.text.as_bytes()),
                                text: accepted.text.clone(),
                            },
                        )
                    });
                    return Ok(self.agent_output(index, step, accepted, receipt, reusable));
                }
                Err(Violation::Contract(message)) if attempts <= CONTRACT_RETRIES => {
                    retried.push(Check {
                        check: format!("attempt_{attempts}"),
                        passed: false,
                        detail: message.clone(),
                    });
                    messages.push(Message::assistant(reply.text.clone()));
                    messages.push(Message::user(stricter_prompt(&message, json, attempts + 1)));
                }
                Err(violation) => {
                    let message = match &violation {
                        Violation::Contract(message) => format!(
                            "the reply broke its contract {attempts} times; the last time: {message}"
                        ),
                        Violation::Path(message) => message.clone(),
                    };
                    let receipt = draft.finish(actor, checks, attempts, None, Err(&message));
                    return Err(StepFailure::Stopped(message, Box::new(receipt)));
                }
            }
        }
    }

    fn agent_output(
        &self,
        index: usize,
        step: &AgentStep,
        accepted: contract::Accepted,
        receipt: AgentReceipt,
        reusable: Option<(String, ReuseEntry)>,
    ) -> StepOutput {
        let sha256 = sha256_hex(accepted.text.as_bytes());
        let slot = CacheSlot::Artifact {
            agent_id: format!("{}-{:03}", step.agent_archetype, index + 1),
            summary: summary_line(&accepted.text),
            text: accepted.text.clone(),
            sha256,
        };
        StepOutput {
            slot,
            value: accepted.value,
            receipt: StepReceipt::Agent(Box::new(receipt)),
            input_slot_refs: step.input_slots.clone(),
            text: accepted.text,
            reusable,
            actions: accepted.actions,
        }
    }

    /// The files an agent step may name: the task's scene and canon cards,
    /// and every file the tools read for the step's input slots.
    fn expected_artifacts(
        &self,
        step: &AgentStep,
        manifest: &RunManifest,
        cache: &Cache,
    ) -> Vec<String> {
        let args = &manifest.task.initial_args;
        let mut expected: Vec<String> = Vec::new();
        if let Some(path) = args.get("scene_path").and_then(Value::as_str) {
            expected.push(path.to_owned());
        }
        if let Some(Value::Array(paths)) = args.get("canon_paths") {
            expected.extend(paths.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        let cited: std::collections::HashSet<&str> = step
            .input_slots
            .iter()
            .filter_map(|name| match cache.get(name) {
                Some(CacheSlot::Pointer { receipt_id, .. }) => Some(receipt_id.as_str()),
                _ => None,
            })
            .collect();
        if !cited.is_empty() {
            for receipt in receipts::load(self.root(), &manifest.session_id) {
                if cited.contains(receipt.receipt_id.as_str()) {
                    expected.extend(receipt.file_refs.into_iter().map(|file| file.path));
                }
            }
        }
        expected
    }

    fn reusable(&self, key: &str) -> Option<ReuseEntry> {
        let path = self.root().join(REUSE_DIR).join(format!("{key}.json"));
        let entry: ReuseEntry = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
        (sha256_hex(entry.text.as_bytes()) == entry.sha256).then_some(entry)
    }

    /// Keeps a finished agent step for reuse. Best effort: a failed write
    /// only costs a later run a model call.
    fn keep_for_reuse(&self, key: &str, entry: &ReuseEntry) {
        let dir = self.root().join(REUSE_DIR);
        if let Ok(bytes) = serde_json::to_vec(entry)
            && std::fs::create_dir_all(&dir).is_ok()
        {
            let _ = self
                .disk
                .write_atomic(&dir.join(format!("{key}.json")), &bytes);
        }
    }

    /// An agent slot's value for `$ref`: its JSON when the step answers JSON.
    fn artifact_value(&self, step: &Planned, text: &str) -> Value {
        if let Planned::Agent(agent) = step
            && self.prompts.output(&agent.prompt_type) == Output::Json
            && let Some(value) = contract::stored_json(text)
        {
            return value;
        }
        Value::String(text.to_owned())
    }

    /// The failed checks of the recipe's Definition of Done, in words.
    fn check_dod(
        &self,
        recipe: &Recipe,
        manifest: &RunManifest,
        values: &HashMap<String, Value>,
    ) -> Vec<String> {
        let task = task_value(manifest);
        let scope = Slots {
            task: &task,
            values,
        };
        recipe
            .dod
            .iter()
            .filter_map(|check| dod_failure(check, &scope, self.root()))
            .collect()
    }

    /// Writes `.control-room/issues/DOD-{runId}.md` and returns its path.
    fn write_dod_issue(
        &self,
        manifest: &RunManifest,
        recipe: &Recipe,
        failures: &[String],
    ) -> Result<String, RunError> {
        let relative = format!(".control-room/issues/DOD-{}.md", manifest.run_id);
        let path: PathBuf = self.root().join(&relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let run_dir = format!(".control-room/runs/{}", manifest.run_id);
        let mut text = format!(
            "# Definition of Done failed: {}\n\n- Run: `{}` ({})\n- Task: {}\n- Finished: {}\n\n## Failed checks\n\n",
            recipe.label,
            manifest.run_id,
            recipe.recipe_id,
            manifest.task.description,
            manifest.updated_at
        );
        for failure in failures {
            text.push_str(&format!("- {failure}\n"));
        }
        text.push_str(&format!(
            "\n## The run's files\n\n- [run.json](../runs/{id}/run.json)\n- [steps.jsonl](../runs/{id}/steps.jsonl)\n- [cache.json](../runs/{id}/cache.json)\n- Receipts: `.control-room/audit/sessions/{session}/tool_receipts.jsonl`\n\nResume the run after fixing what failed with `control-room runs resume {id}` (files in `{run_dir}`).\n",
            id = manifest.run_id,
            session = manifest.session_id,
        ));
        self.disk.write_atomic(&path, text.as_bytes())?;
        Ok(relative)
    }
}

/// run.json's `phase` before `next`.
fn phase_of(schedule: &Schedule, next: &Next) -> Option<String> {
    match next {
        Next::Stage(stage) => Some(schedule.planned(*stage).phase().to_owned()),
        _ => None,
    }
}

/// A reviewer's verdict held to the loop's rules (a check in its receipt);
/// the reasons it fails, for the reviewer to hear when asked again.
fn check_verdict(
    check: Option<&VerdictCheck>,
    accepted: &contract::Accepted,
    checks: &mut Vec<Check>,
) -> Result<(), String> {
    let Some(check) = check else {
        return Ok(());
    };
    let applicable: Vec<&ReviewRule> = check.applicable.iter().collect();
    match review::verdict::validate(&accepted.value, &applicable, &check.all, &check.draft) {
        Ok(_) => {
            checks.push(Check {
                check: "review_validation".into(),
                passed: true,
                detail: format!(
                    "every applicable rule ({}) is reviewed with evidence quoted from the draft",
                    applicable
                        .iter()
                        .map(|rule| rule.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
            Ok(())
        }
        Err(errors) => Err(format!("the verdict is not valid: {}", errors.join("; "))),
    }
}

/// Deletes `.NAME.tmp-PID` files an interrupted atomic write left behind.
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

/// A failed DoD check in words, or `None` when it passes.
fn dod_failure(check: &DodCheck, scope: &Slots, root: &Path) -> Option<String> {
    match check.check.as_str() {
        "slot_not_null" => {
            let slot = check.slot.as_deref().unwrap_or_default();
            match scope.values.get(slot) {
                Some(value) if !value.is_null() && value != &Value::String(String::new()) => None,
                _ => Some(format!("slot_not_null: slot `{slot}` is empty")),
            }
        }
        "slot_field_equals" => {
            let slot = check.slot.as_deref().unwrap_or_default();
            let field = check.field.as_deref().unwrap_or_default();
            let expected = check.expected.clone().unwrap_or(Value::Null);
            let path = match RefPath::parse(&format!("{slot}.{field}")) {
                Ok(path) => path,
                Err(error) => return Some(format!("slot_field_equals: {error}")),
            };
            match path.resolve_from(scope.values.get(slot)) {
                Ok(actual) if *actual == expected => None,
                Ok(actual) => Some(format!(
                    "slot_field_equals: `{slot}.{field}` is {actual}, expected {expected}"
                )),
                Err(error) => Some(format!("slot_field_equals: {error}")),
            }
        }
        "file_exists" => {
            let mut roots = Vec::new();
            let path = check.path.clone().unwrap_or(Value::Null);
            match refs::resolve(&path, scope, &mut roots) {
                Ok(Value::String(path)) => {
                    if tools::check_relative_path(&path).is_err() {
                        Some(format!(
                            "file_exists: `{path}` is not a path inside the workspace"
                        ))
                    } else if root.join(&path).is_file() {
                        None
                    } else {
                        Some(format!("file_exists: `{path}` does not exist"))
                    }
                }
                Ok(other) => Some(format!("file_exists: the path is {other}, not text")),
                Err(error) => Some(format!("file_exists: {error}")),
            }
        }
        other => Some(format!("unknown DoD check `{other}`")),
    }
}

/// The first non-empty line, shortened.
fn summary_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    preview(line)
}

fn with_arg_hint(message: String) -> String {
    match message
        .split("`task.args.")
        .nth(1)
        .and_then(|rest| rest.split(['`', '.', '[']).next())
    {
        Some(arg) if !arg.is_empty() => format!("{message} (pass it with --arg {arg}=…)"),
        _ => message,
    }
}

/// The key under which a finished agent step may be reused: the endpoint,
/// its decoding, and the request exactly as sent.
fn reuse_key(target: &ModelTarget, request: &ModelRequest) -> String {
    let canonical = json!({
        "provider": target.provider,
        "model": target.model,
        "temperature": target.temperature,
        "max_tokens": target.max_tokens,
        "prompt_type": request.prompt_type,
        "agent_archetype": request.agent_archetype,
        "messages": request.messages,
        "schema": request.schema,
    });
    sha256_hex(canonical.to_string().as_bytes())
}

/// The message that asks again after a reply broke its contract.
fn stricter_prompt(error: &str, json: bool, attempt: u32) -> String {
    let total = CONTRACT_RETRIES + 1;
    let shape = if json {
        "exactly one JSON object that follows the schema, and nothing else: no prose, no code fences, no XML"
    } else {
        "the prose itself, or the prose inside <content_update target=\"…\">…</content_update>; reasoning only inside <thinking>"
    };
    format!(
        "Your reply could not be used: {error}\n\nReply again with {shape}. Quote text exactly as it is written, and name only the files you were given. This is attempt {attempt} of {total}."
    )
}

/// What an agent receipt is built from, gathered before the model answers.
struct ReceiptDraft<'a> {
    step: &'a AgentStep,
    manifest: &'a RunManifest,
    packet: &'a Packet,
    inputs_used: Vec<InputRef>,
    started_at: &'a str,
    key: &'a SigningKey,
    risks: Vec<String>,
    assumptions: Vec<String>,
}

impl ReceiptDraft<'_> {
    /// The signed receipt of the step: `Ok` with what it produced, or `Err`
    /// with why it stopped (STOP_HOOK).
    fn finish(
        &mut self,
        actor: ReceiptActor,
        checks: Vec<Check>,
        attempts: u32,
        reused_from: Option<String>,
        outcome: Result<&contract::Accepted, &str>,
    ) -> AgentReceipt {
        let step = self.step;
        let next = self.packet.handoff.next_step_id.as_deref().map_or_else(
            || "evaluate the Definition of Done".to_owned(),
            |next| format!("run step `{next}`"),
        );
        let (outputs, excerpt, summary, stop_reason, next_action) = match outcome {
            Ok(accepted) => {
                let words = accepted.text.split_whitespace().count();
                let excerpt = format!(
                    "The {} answered `{}` in {attempts} attempt{}: {words} words into slot `{}`. It begins: {}",
                    step.agent_archetype,
                    step.prompt_type,
                    if attempts == 1 { "" } else { "s" },
                    step.output_slot,
                    summary_line(&accepted.text)
                );
                (
                    vec![OutputRef {
                        slot: step.output_slot.clone(),
                        sha256: sha256_hex(accepted.text.as_bytes()),
                        chars: accepted.text.chars().count(),
                        path: None,
                    }],
                    excerpt,
                    accepted.message.clone().unwrap_or_else(|| {
                        "The agent gave no message beside its output.".to_owned()
                    }),
                    None,
                    next,
                )
            }
            Err(reason) => (
                Vec::new(),
                format!(
                    "STOP_HOOK: the {} step `{}` stopped and nothing was written. {reason}",
                    step.agent_archetype, step.step_id
                ),
                "The step stopped before its output was accepted.".to_owned(),
                Some(reason.to_owned()),
                format!(
                    "the writer decides: fix the inputs or the prompt, then `control-room runs resume {}`",
                    self.manifest.run_id
                ),
            ),
        };
        let mut risks = std::mem::take(&mut self.risks);
        if let Ok(accepted) = outcome {
            risks.extend(
                accepted
                    .warnings
                    .iter()
                    .map(|w| format!("XML protocol: {w}")),
            );
        }
        let mut receipt = AgentReceipt {
            receipt_id: new_id("arcpt_"),
            packet_id: self.packet.packet_id.clone(),
            issue_id: self.manifest.run_id.clone(),
            run_id: self.manifest.run_id.clone(),
            session_id: self.manifest.session_id.clone(),
            step_id: step.step_id.clone(),
            actor,
            started_at: self.started_at.to_owned(),
            finished_at: now(),
            inputs_used: self.inputs_used.clone(),
            outputs_produced: outputs,
            reasoning_summary: summary,
            decisions: Vec::new(),
            checks_performed: checks,
            assumptions: std::mem::take(&mut self.assumptions),
            risks,
            next_recommended_action: next_action,
            stop_hook: stop_reason.is_some(),
            stop_reason,
            citations: self
                .inputs_used
                .iter()
                .filter_map(|input| input.receipt_id.clone())
                .collect(),
            report_excerpt: excerpt,
            attempts,
            reused_from,
            signature: String::new(),
        };
        receipt.sign(self.key);
        receipt
    }
}

/// The texts a step's input slots inject, and what the packet records of them.
fn slot_texts<'s>(
    step: &'s AgentStep,
    cache: &Cache,
) -> Result<(Vec<SlotText<'s>>, Vec<InputRef>), StepFailure> {
    let mut slots = Vec::new();
    let mut inputs_used = Vec::new();
    for name in &step.input_slots {
        let slot = cache
            .get(name)
            .ok_or_else(|| StepFailure::Failed(format!("input slot `{name}` is empty")))?;
        let (text, kind, input) = match slot {
            CacheSlot::Pointer {
                summary,
                receipt_id,
                sha256,
            } => (
                summary.clone(),
                SlotKind::Pointer,
                InputRef {
                    slot: name.clone(),
                    kind: "pointer".into(),
                    sha256: sha256.clone(),
                    receipt_id: Some(receipt_id.clone()),
                },
            ),
            CacheSlot::Artifact { text, sha256, .. } => (
                text.clone(),
                SlotKind::Artifact,
                InputRef {
                    slot: name.clone(),
                    kind: "artifact".into(),
                    sha256: sha256.clone(),
                    receipt_id: None,
                },
            ),
        };
        slots.push(SlotText {
            name: name.as_str(),
            text,
            kind,
        });
        inputs_used.push(input);
    }
    Ok((slots, inputs_used))
}

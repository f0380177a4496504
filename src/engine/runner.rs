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

use super::events::{RunEvent, RunSink};
use super::model::{Model, ModelRequest};
use super::prompts::{JSON_REPLIES, PromptBuilder, PromptInputs};
use super::receipts::{self, SigningKey, ToolReceipt};
use super::recipe::{AgentStep, DodCheck, Recipe, Registry, Step, ToolStep};
use super::refs::{self, RefPath, RefScope};
use super::router;
use super::store::{Cache, CacheSlot, Disk, RunFiles, RunManifest, RunStatus, RunTask, StepRecord};
use super::tools::{self, ToolContext, sha256_hex};
use crate::index::Workspace;

/// How often a running run looks for a cancel request from another process.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Characters of an output kept as its preview.
const PREVIEW_CHARS: usize = 200;

/// Everything a run needs.
pub struct Runner {
    pub workspace: Arc<Workspace>,
    pub registry: Arc<Registry>,
    pub prompts: Arc<dyn PromptBuilder>,
    /// `None` when no model is configured: phase B steps then fail clearly.
    pub model: Option<Arc<dyn Model>>,
    pub disk: Disk,
    pub sinks: Vec<Arc<dyn RunSink>>,
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

/// `prefix` and 12 random lowercase hex digits.
pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 6];
    if getrandom::fill(&mut bytes).is_err() {
        // No entropy source: fall back to the clock and the process id.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mixed = nanos ^ (u128::from(std::process::id()) << 64);
        bytes.copy_from_slice(&mixed.to_le_bytes()[..6]);
    }
    format!("{prefix}{}", receipts::hex(&bytes))
}

/// The current time, RFC 3339 in UTC with milliseconds.
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

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

/// What a finished step hands to persistence.
struct StepOutput {
    slot: CacheSlot,
    /// What `$ref` sees of the slot.
    value: Value,
    /// A tool's receipt; agents have none.
    receipt: Option<ToolReceipt>,
    input_slot_refs: Vec<String>,
    /// The full output as text, hashed and previewed in steps.jsonl.
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
    Cancelled,
    Io(std::io::Error),
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
        session_id: Option<String>,
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
            session_id: session_id.unwrap_or_else(|| new_id("sess_")),
            status: RunStatus::Pending,
            created_at: created.clone(),
            updated_at: created,
            completed_at: None,
            task: RunTask {
                description: description.to_owned(),
                session_plan_task_id: None,
                initial_args: args,
            },
            current_step_index: 0,
            total_steps: recipe.step_count(),
            phase: None,
            error: None,
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
        let (mut cache, mut values, done) = self.reconcile(&files, &recipe, &manifest, &key)?;

        manifest.status = RunStatus::Running;
        manifest.current_step_index = done;
        manifest.total_steps = recipe.step_count();
        manifest.error = None;
        manifest.completed_at = None;
        manifest.phase = recipe.step(done).map(|step| step.phase().to_owned());
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
            Err(StepFailure::Failed(message)) => {
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

    /// Reads what a run finished before: the steps in steps.jsonl that form
    /// a prefix of the recipe and whose slots are in cache.json. Repairs
    /// steps.jsonl if it holds anything else (a torn line, a step whose slot
    /// was never written).
    #[allow(clippy::type_complexity)]
    fn reconcile(
        &self,
        files: &RunFiles,
        recipe: &Recipe,
        manifest: &RunManifest,
        key: &SigningKey,
    ) -> Result<(Cache, HashMap<String, Value>, usize), RunError> {
        let stored_cache = files.read_cache()?;
        let raw = std::fs::read_to_string(files.steps()).unwrap_or_default();
        let records = files.read_steps();
        let mut kept: Vec<StepRecord> = Vec::new();
        for record in records {
            let index = kept.len();
            let Some(step) = recipe.step(index) else {
                break;
            };
            if record.step_index != index
                || record.step_id != step.id()
                || !stored_cache.contains_key(step.output_slot())
            {
                break;
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
        let mut cache = Cache::new();
        let mut values = HashMap::new();
        let receipts_by_id: HashMap<String, ToolReceipt> =
            if kept.iter().any(|r| r.receipt_id.is_some()) {
                receipts::load(self.root(), &manifest.session_id)
                    .into_iter()
                    .map(|receipt| (receipt.receipt_id.clone(), receipt))
                    .collect()
            } else {
                HashMap::new()
            };
        for (index, record) in kept.iter().enumerate() {
            let step = recipe.step(index).expect("kept steps are recipe steps");
            let slot_name = step.output_slot();
            let slot = stored_cache[slot_name].clone();
            let value = match &slot {
                CacheSlot::Pointer {
                    receipt_id, sha256, ..
                } => {
                    let receipt = receipts_by_id
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
                CacheSlot::Artifact { text, .. } => artifact_value(step, text),
            };
            cache.insert(slot_name.to_owned(), slot);
            values.insert(slot_name.to_owned(), value);
        }
        if cache != stored_cache {
            files.write_cache(&self.disk, &cache)?;
        }
        let done = kept.len();
        Ok((cache, values, done))
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
    ) -> Result<(), StepFailure> {
        let total = recipe.step_count();
        let task = task_value(manifest);
        for index in manifest.current_step_index..total {
            if cancel.is_cancelled() {
                return Err(StepFailure::Cancelled);
            }
            let step = recipe.step(index).expect("index is in range");
            // run.json already names this step: it was written when the
            // previous one finished (or when the run started).
            let actor = match step {
                Step::Tool(tool) => tool.tool.clone(),
                Step::Agent(agent) => agent.agent_archetype.clone(),
            };
            self.emit(RunEvent::StepStarted {
                run_id: manifest.run_id.clone(),
                index,
                total,
                step_id: step.id().to_owned(),
                phase: step.phase(),
                actor,
            });
            let started_at = now();
            let outcome = match step {
                Step::Tool(tool) => self.run_tool(tool, manifest, &task, values, key, &started_at),
                Step::Agent(agent) => self.run_agent(index, agent, manifest, cache, cancel).await,
            };
            let StepOutput {
                slot,
                value,
                receipt,
                input_slot_refs,
                text: output_text,
            } = match outcome {
                Ok(done) => done,
                Err(StepFailure::Failed(message)) => {
                    let label = match step {
                        Step::Tool(tool) => format!("tool {}", tool.tool),
                        Step::Agent(agent) => format!("agent {}", agent.agent_archetype),
                    };
                    return Err(StepFailure::Failed(format!(
                        "step `{}` ({label}) failed: {message}",
                        step.id()
                    )));
                }
                Err(other) => return Err(other),
            };
            if let Some(receipt) = &receipt {
                receipts::append(self.root(), &self.disk, receipt).map_err(StepFailure::Io)?;
            }
            cache.insert(step.output_slot().to_owned(), slot.clone());
            files
                .write_cache(&self.disk, cache)
                .map_err(StepFailure::Io)?;
            let record = StepRecord {
                step_index: index,
                step_id: step.id().to_owned(),
                phase: step.phase().to_owned(),
                tool: match step {
                    Step::Tool(tool) => Some(tool.tool.clone()),
                    Step::Agent(_) => None,
                },
                agent_archetype: match step {
                    Step::Agent(agent) => Some(agent.agent_archetype.clone()),
                    Step::Tool(_) => None,
                },
                agent_id: match &slot {
                    CacheSlot::Artifact { agent_id, .. } => Some(agent_id.clone()),
                    CacheSlot::Pointer { .. } => None,
                },
                status: "done".into(),
                output_slot: step.output_slot().to_owned(),
                receipt_id: receipt.as_ref().map(|r| r.receipt_id.clone()),
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
            values.insert(step.output_slot().to_owned(), value);
            manifest.current_step_index = index + 1;
            manifest.phase = recipe.step(index + 1).map(|next| next.phase().to_owned());
            manifest.updated_at = now();
            files
                .write_manifest(&self.disk, manifest)
                .map_err(StepFailure::Io)?;
            self.emit(RunEvent::StepFinished {
                run_id: manifest.run_id.clone(),
                index,
                total,
                step_id: step.id().to_owned(),
                preview: record.output_preview.clone(),
            });
        }
        Ok(())
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
        let scope = Slots { task, values };
        let mut input_refs = Vec::new();
        let args = refs::resolve(&Value::Object(step.args.clone()), &scope, &mut input_refs)
            .map_err(|error| StepFailure::Failed(with_arg_hint(error.to_string())))?;
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
        .map_err(|error| StepFailure::Failed(error.to_string()))?;
        let output_text =
            serde_json::to_string(&output.data).map_err(|e| StepFailure::Failed(e.to_string()))?;
        let sha256 = sha256_hex(output_text.as_bytes());
        let mut receipt = ToolReceipt {
            receipt_id: new_id("rcpt_"),
            run_id: manifest.run_id.clone(),
            session_id: manifest.session_id.clone(),
            step_id: step.step_id.clone(),
            tool: step.tool.clone(),
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
        Ok(StepOutput {
            slot,
            value: output.data,
            receipt: Some(receipt),
            input_slot_refs: input_refs,
            text: output_text,
        })
    }

    async fn run_agent(
        &self,
        index: usize,
        step: &AgentStep,
        manifest: &RunManifest,
        cache: &Cache,
        cancel: &CancellationToken,
    ) -> Result<StepOutput, StepFailure> {
        let model = self.model.as_ref().ok_or_else(|| {
            StepFailure::Failed(
                "no model is configured: pass --model scripted:FILE to dry-run the recipe".into(),
            )
        })?;
        let mut slots = Vec::new();
        for name in &step.input_slots {
            let slot = cache
                .get(name)
                .ok_or_else(|| StepFailure::Failed(format!("input slot `{name}` is empty")))?;
            let text = match slot {
                CacheSlot::Pointer { summary, .. } => summary.clone(),
                CacheSlot::Artifact { text, .. } => text.clone(),
            };
            slots.push((name.as_str(), text));
        }
        let messages = self
            .prompts
            .build(
                step,
                &PromptInputs {
                    task_description: &manifest.task.description,
                    task_args: &manifest.task.initial_args,
                    slots,
                },
            )
            .map_err(|error| StepFailure::Failed(error.to_string()))?;
        let json_reply = JSON_REPLIES.contains(&step.prompt_type.as_str());
        let request = ModelRequest {
            step_id: step.step_id.clone(),
            agent_archetype: step.agent_archetype.clone(),
            prompt_type: step.prompt_type.clone(),
            messages,
            json_reply,
            schema: None,
        };
        let reply = tokio::select! {
            reply = model.complete(&request) => reply.map_err(|error| StepFailure::Failed(error.to_string()))?,
            () = cancel.cancelled() => return Err(StepFailure::Cancelled),
        };
        let text = reply.text.trim().to_owned();
        if text.is_empty() {
            return Err(StepFailure::Failed("the model's reply is empty".into()));
        }
        let value = if json_reply {
            let json = strip_fences(&text);
            let value: Value = serde_json::from_str(json).map_err(|error| {
                StepFailure::Failed(format!(
                    "the reply to `{}` must be one JSON object, but it is not valid JSON ({error}); it begins: {}",
                    step.prompt_type,
                    preview(&text)
                ))
            })?;
            if !value.is_object() {
                return Err(StepFailure::Failed(format!(
                    "the reply to `{}` must be a JSON object",
                    step.prompt_type
                )));
            }
            value
        } else {
            Value::String(text.clone())
        };
        let sha256 = sha256_hex(text.as_bytes());
        let slot = CacheSlot::Artifact {
            agent_id: format!("{}-{:03}", step.agent_archetype, index + 1),
            summary: summary_line(&text),
            text: text.clone(),
            sha256,
        };
        Ok(StepOutput {
            slot,
            value,
            receipt: None,
            input_slot_refs: step.input_slots.clone(),
            text,
        })
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

/// An agent slot's value for `$ref`: its JSON when the step answers JSON.
fn artifact_value(step: Step, text: &str) -> Value {
    if let Step::Agent(agent) = step
        && JSON_REPLIES.contains(&agent.prompt_type.as_str())
        && let Ok(value) = serde_json::from_str(strip_fences(text))
    {
        return value;
    }
    Value::String(text.to_owned())
}

/// The JSON inside a ```json fence, or the text itself.
fn strip_fences(text: &str) -> &str {
    let trimmed = text.trim();
    if let Some(rest) = trimmed.strip_prefix("```")
        && let Some(body) = rest.strip_suffix("```")
    {
        return body
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .trim();
    }
    trimmed
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

//! Run persistence (appendix A of the execution-modes spec):
//! `.control-room/runs/{runId}/run.json` (the manifest), `steps.jsonl` (one
//! line per completed step, append-only) and `cache.json` (the slot store,
//! rewritten whole after each step).
//!
//! Every whole-file write goes to a temporary file beside the target, is
//! fsynced, then renamed over it (and the folder fsynced), so a reader or a
//! crash sees the old file or the new one, never half of one. An append that
//! fails is truncated back, so `steps.jsonl` never keeps half a line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub const RUNS_DIR: &str = ".control-room/runs";

pub use crate::storage::{Disk, read_jsonl};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Pending,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Pending => "pending",
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    pub fn is_finished(self) -> bool {
        matches!(
            self,
            RunStatus::Done | RunStatus::Failed | RunStatus::Cancelled
        )
    }
}

/// `task` in run.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunTask {
    pub description: String,
    pub session_plan_task_id: Option<u64>,
    pub initial_args: Map<String, Value>,
}

/// Why the loop ended a run, as run.json's `review` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Still going.
    Reviewing,
    Approved,
    /// The writer (the person) must judge the draft.
    Escalated,
    /// The task is misscoped or architectural: back to scoping.
    NeedsScoping,
    /// The task is too big: split it into `subtasks`.
    Split,
}

/// run.json's `review`: the loop's iterations and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewState {
    pub iterations: u32,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subtasks: Vec<String>,
}

impl ReviewState {
    pub fn new() -> ReviewState {
        ReviewState {
            iterations: 0,
            outcome: Outcome::Reviewing,
            reason: None,
            subtasks: Vec::new(),
        }
    }
}

impl Default for ReviewState {
    fn default() -> Self {
        ReviewState::new()
    }
}

/// The writer's text of a scene at one moment: its SHA-256, or `None` when
/// there was no such file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SceneMark {
    pub sha256: Option<String>,
}

impl SceneMark {
    /// The mark of `text` (`None`: the scene does not exist).
    pub fn of(text: Option<&str>) -> SceneMark {
        SceneMark {
            sha256: text.map(|text| crate::storage::sha256_hex(text.as_bytes())),
        }
    }

    pub fn exists(&self) -> bool {
        self.sha256.is_some()
    }
}

/// The version of run.json's format this build writes. A file without a
/// version is read as version 1 (the format before the field was added).
pub const RUN_FORMAT_VERSION: u32 = 1;

fn run_format_v1() -> u32 {
    1
}

/// run.json: the wire format of a run's manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    /// The format's version ([`RUN_FORMAT_VERSION`] when written).
    #[serde(default = "run_format_v1")]
    pub version: u32,
    pub run_id: String,
    pub recipe_id: String,
    pub session_id: String,
    pub status: RunStatus,
    pub created_at: String,
    pub updated_at: String,
    pub completed_at: Option<String>,
    pub task: RunTask,
    pub current_step_index: usize,
    pub total_steps: usize,
    /// `"a"`, `"b"`, `"dod"`, or null when not running.
    pub phase: Option<String>,
    pub error: Option<String>,
    /// The review loop's iterations and outcome, for a recipe with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewState>,
    /// The scene the run writes, as the writer's text stood when the run
    /// was created; delivery compares it with the text at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<SceneMark>,
    /// Started to ask the model afresh (`--fresh`): no step reuses an
    /// earlier identical request's artifact, resumed or not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
}

/// One line of steps.jsonl.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub step_index: usize,
    pub step_id: String,
    pub phase: String,
    pub tool: Option<String>,
    pub agent_archetype: Option<String>,
    pub agent_id: Option<String>,
    pub status: String,
    pub output_slot: String,
    pub receipt_id: Option<String>,
    pub input_slot_refs: Vec<String>,
    pub output_hash: String,
    pub output_preview: String,
    pub started_at: String,
    pub completed_at: String,
    pub error: Option<String>,
}

/// One slot of cache.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum CacheSlot {
    /// A tool's output, which lives in its receipt.
    Pointer {
        receipt_id: String,
        sha256: String,
        summary: String,
    },
    /// An agent's output.
    Artifact {
        agent_id: String,
        text: String,
        sha256: String,
        summary: String,
    },
}

impl CacheSlot {
    pub fn summary(&self) -> &str {
        match self {
            CacheSlot::Pointer { summary, .. } | CacheSlot::Artifact { summary, .. } => summary,
        }
    }
}

pub type Cache = BTreeMap<String, CacheSlot>;

/// The files of one run.
#[derive(Clone, Debug)]
pub struct RunFiles {
    pub dir: PathBuf,
}

impl RunFiles {
    pub fn new(root: &Path, run_id: &str) -> RunFiles {
        RunFiles {
            dir: root.join(RUNS_DIR).join(run_id),
        }
    }

    pub fn manifest(&self) -> PathBuf {
        self.dir.join("run.json")
    }

    pub fn steps(&self) -> PathBuf {
        self.dir.join("steps.jsonl")
    }

    pub fn cache(&self) -> PathBuf {
        self.dir.join("cache.json")
    }

    /// Held (an OS file lock) by the process running the run.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("lock")
    }

    /// Takes the run's lock, which the OS releases when this process ends
    /// however it ends. `None` when another process holds it.
    pub fn try_lock(&self) -> std::io::Result<Option<std::fs::File>> {
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.lock())?;
        Ok(lock.try_lock().is_ok().then_some(lock))
    }

    /// Whether a process is running the run: it holds the run's lock. Taking
    /// the lock to find out releases it at once.
    pub fn is_held(&self) -> bool {
        matches!(self.try_lock(), Ok(None))
    }

    /// Present when someone asked the run to stop.
    pub fn cancel_request(&self) -> PathBuf {
        self.dir.join("cancel")
    }

    pub fn read_manifest(&self) -> Result<RunManifest, RunFileError> {
        let path = self.manifest();
        let text = std::fs::read_to_string(&path).map_err(|error| RunFileError::Unreadable {
            path: path.clone(),
            error,
        })?;
        serde_json::from_str(&text).map_err(|error| RunFileError::Damaged { path, error })
    }

    pub fn read_cache(&self) -> Result<Cache, RunFileError> {
        let path = self.cache();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                serde_json::from_str(&text).map_err(|error| RunFileError::Damaged { path, error })
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Cache::new()),
            Err(error) => Err(RunFileError::Unreadable { path, error }),
        }
    }

    pub fn read_steps(&self) -> Vec<StepRecord> {
        read_jsonl(&self.steps())
    }

    pub fn write_manifest(&self, disk: &Disk, manifest: &RunManifest) -> std::io::Result<()> {
        disk.write_atomic(&self.manifest(), &pretty(manifest)?)
    }

    pub fn write_cache(&self, disk: &Disk, cache: &Cache) -> std::io::Result<()> {
        disk.write_atomic(&self.cache(), &pretty(cache)?)
    }

    pub fn append_step(&self, disk: &Disk, step: &StepRecord) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(step).map_err(std::io::Error::other)?;
        line.push(b'\n');
        disk.append_line(&self.steps(), &line)
    }
}

/// Why a run's file could not be read. The message names the file; the
/// underlying error is part of the message rather than a source, so a chain
/// printed with `{:#}` says it once.
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    #[error("cannot read {}: {error}", path.display())]
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{} is damaged: {error}", path.display())]
    Damaged {
        path: PathBuf,
        error: serde_json::Error,
    },
}

fn pretty(value: &impl Serialize) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Every run under the workspace, newest first.
/// How a run is shown: its status, or `interrupted` for a run that is not
/// finished and that no process is running (its process was stopped or
/// killed): it can be resumed.
pub fn shown_status(root: &Path, manifest: &RunManifest) -> &'static str {
    if !manifest.status.is_finished() && !RunFiles::new(root, &manifest.run_id).is_held() {
        "interrupted"
    } else {
        manifest.status.as_str()
    }
}

pub fn list_runs(root: &Path) -> Vec<RunManifest> {
    let Ok(entries) = std::fs::read_dir(root.join(RUNS_DIR)) else {
        return Vec::new();
    };
    let mut runs: Vec<RunManifest> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                return None; // a run being created
            }
            RunFiles::new(root, &name).read_manifest().ok()
        })
        .collect();
    runs.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| b.run_id.cmp(&a.run_id))
    });
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_json_from_before_the_version_field_reads_as_version_1_and_is_written_with_it() {
        let old = serde_json::json!({
            "run_id": "run_aaaaaaaaaaaa", "recipe_id": "r", "session_id": "sess_aaaaaaaaaaaa",
            "status": "done", "created_at": "t0", "updated_at": "t1", "completed_at": "t1",
            "task": {"description": "x", "session_plan_task_id": null, "initial_args": {}},
            "current_step_index": 1, "total_steps": 1, "phase": null, "error": null,
        });
        let manifest: RunManifest = serde_json::from_value(old).unwrap();
        assert_eq!(manifest.version, 1);
        assert_eq!(manifest.scene, None);
        let written = serde_json::to_value(&manifest).unwrap();
        assert_eq!(written["version"], RUN_FORMAT_VERSION);
        assert!(written.get("scene").is_none(), "{written}");
    }
}

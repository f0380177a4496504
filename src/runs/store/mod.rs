//! Run persistence (appendix A of the execution-modes spec):
//! `.control-room/runs/{runId}/run.json` (the manifest), `steps.jsonl` (one
//! line per completed step, append-only) and `cache.json` (the slot store,
//! rewritten whole after each step).
//!
//! Every whole-file write goes to a temporary file beside the target, is
//! fsynced, then renamed over it (and the folder fsynced), so a reader or a
//! crash sees the old file or the new one, never half of one. An append that
//! fails is truncated back, so `steps.jsonl` never keeps half a line.
//!
//! The types here are the domain's; [`wire`] holds the only types serde
//! reads and writes for these files, with the format's version.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

pub mod wire;

pub use wire::RUN_FORMAT_VERSION;

pub const RUNS_DIR: &str = ".control-room/runs";

pub use crate::storage::{Disk, read_jsonl};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// What a run was asked to do (`task` in run.json).
#[derive(Clone, Debug, PartialEq)]
pub struct RunTask {
    pub description: String,
    pub session_plan_task_id: Option<u64>,
    pub initial_args: Map<String, Value>,
}

/// Why the loop ended a run, as run.json's `review` keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, PartialEq)]
pub struct ReviewState {
    pub iterations: u32,
    pub outcome: Outcome,
    pub reason: Option<String>,
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
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// A run's manifest, as run.json keeps it ([`wire::RunJson`] on disk).
#[derive(Clone, Debug, PartialEq)]
pub struct RunManifest {
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
    /// `"a"` or `"b"`, or null when not running (or checking the
    /// Definition of Done).
    pub phase: Option<String>,
    pub error: Option<String>,
    /// The review loop's iterations and outcome, for a recipe with one.
    pub review: Option<ReviewState>,
    /// The scene the run writes, as the writer's text stood when the run
    /// was created; delivery compares it with the text at the end.
    pub scene: Option<SceneMark>,
    /// Started to ask the model afresh (`--fresh`): no step reuses an
    /// earlier identical request's artifact, resumed or not.
    pub fresh: bool,
}

/// A completed step: a line of steps.jsonl is nothing but this record of
/// what happened (no behaviour of its own), so the wire type is the one
/// type; run.json and cache.json have domain types apart from theirs.
pub use wire::StepLine as StepRecord;

/// A step's output in its named slot, as cache.json keeps it.
#[derive(Clone, Debug, PartialEq)]
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

    /// Reads run.json: a file without a version is version 1; one of a
    /// version this build does not know is an error naming both versions.
    pub fn read_manifest(&self) -> Result<RunManifest, RunFileError> {
        let path = self.manifest();
        let text = std::fs::read_to_string(&path).map_err(|error| RunFileError::Unreadable {
            path: path.clone(),
            error,
        })?;
        let mut manifest = wire::read_manifest(&text).map_err(|error| match error {
            wire::ReadError::Damaged(error) => RunFileError::Damaged { path, error },
            wire::ReadError::Version(found) => RunFileError::Version { path, found },
        })?;
        if manifest.status == RunStatus::Running {
            // run.json is not rewritten after every step: the journal
            // says how far a running run has got.
            let done = self.read_steps().len();
            manifest.current_step_index = manifest.current_step_index.max(done);
        }
        Ok(manifest)
    }

    /// The run's slots: cache.json, with the slot of each line of
    /// steps.jsonl over it. A step is recorded by its line alone, so while a
    /// run has not ended (or after a crash) cache.json lags behind the
    /// journal; the run writes it whole when it ends.
    pub fn read_cache(&self) -> Result<Cache, RunFileError> {
        let mut cache = self.read_cache_file()?;
        for step in self.read_steps() {
            cache.extend(step.slots());
        }
        Ok(cache)
    }

    /// cache.json alone, as it was last written.
    pub fn read_cache_file(&self) -> Result<Cache, RunFileError> {
        let path = self.cache();
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(wire::cache_of)
                .map_err(|error| RunFileError::Damaged { path, error }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Cache::new()),
            Err(error) => Err(RunFileError::Unreadable { path, error }),
        }
    }

    /// The lines of steps.jsonl that parse (a torn last line is skipped).
    pub fn read_steps(&self) -> Vec<StepRecord> {
        read_jsonl::<StepRecord>(&self.steps())
    }

    pub fn write_manifest(&self, disk: &Disk, manifest: &RunManifest) -> std::io::Result<()> {
        disk.write_atomic(&self.manifest(), &pretty(&wire::RunJson::from(manifest))?)
    }

    /// The first `run.json` of a run, in its staging folder
    /// ([`Disk::write_staged`]): the folder is renamed into place after.
    pub fn write_first_manifest(&self, disk: &Disk, manifest: &RunManifest) -> std::io::Result<()> {
        disk.write_staged(&self.manifest(), &pretty(&wire::RunJson::from(manifest))?)
    }

    /// The run's `run.json`, put in place once what was asked of `disk`
    /// before it is durable (see `storage::disk::commit`).
    pub fn write_manifest_after(&self, disk: &Disk, manifest: &RunManifest) -> std::io::Result<()> {
        disk.write_atomic_after(&self.manifest(), &pretty(&wire::RunJson::from(manifest))?)
    }

    /// The run's `cache.json`, put in place once what was asked of `disk`
    /// before it is durable.
    pub fn write_cache(&self, disk: &Disk, cache: &Cache) -> std::io::Result<()> {
        disk.write_atomic_after(&self.cache(), &pretty(&wire::cache_json(cache))?)
    }

    pub fn append_step(&self, disk: &Disk, step: &StepRecord) -> std::io::Result<()> {
        let line = step_line(step)?.into_bytes();
        disk.append_commit(&self.steps(), &line)
    }
}

/// The line of steps.jsonl that keeps `step`, with its newline.
pub fn step_line(step: &StepRecord) -> std::io::Result<String> {
    let mut line = serde_json::to_string(step).map_err(std::io::Error::other)?;
    line.push('\n');
    Ok(line)
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
    #[error("{}", version_message(path, *found))]
    Version { path: PathBuf, found: u32 },
}

impl RunFileError {
    /// Whether the file is not there at all (no such run), rather than
    /// there and unreadable, damaged or of another version.
    pub fn is_missing(&self) -> bool {
        matches!(self, RunFileError::Unreadable { error, .. } if error.kind() == std::io::ErrorKind::NotFound)
    }
}

fn version_message(path: &Path, found: u32) -> String {
    if found > RUN_FORMAT_VERSION {
        format!(
            "{} is in run format version {found}, newer than version {RUN_FORMAT_VERSION}, the newest this build reads; open it with a newer control-room",
            path.display()
        )
    } else {
        format!(
            "{} is in run format version {found}, which no control-room writes (this build reads versions 1 to {RUN_FORMAT_VERSION})",
            path.display()
        )
    }
}

fn pretty(value: &impl Serialize) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

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

/// Every run under the workspace that this build can read, newest first.
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

/// The Definition of Done's issue a run left, if any: its workspace-relative path.
pub fn dod_issue(root: &Path, run_id: &str) -> Option<String> {
    let relative = format!(".control-room/issues/DOD-{run_id}.md");
    root.join(&relative).is_file().then_some(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_json_of_a_newer_version_is_an_error_naming_the_file_and_both_versions() {
        let dir = tempfile::tempdir().unwrap();
        let files = RunFiles::new(dir.path(), "run_aaaaaaaaaaaa");
        std::fs::create_dir_all(&files.dir).unwrap();
        std::fs::write(
            files.manifest(),
            r#"{"version": 7, "run": {"id": "run_aaaaaaaaaaaa"}}"#,
        )
        .unwrap();
        let error = files.read_manifest().unwrap_err();
        assert!(
            matches!(error, RunFileError::Version { found: 7, .. }),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.contains(&files.manifest().display().to_string())
                && message.contains("version 7")
                && message.contains(&format!("version {RUN_FORMAT_VERSION}")),
            "{message}"
        );
        // Not among the runs this build lists, rather than misread.
        assert!(list_runs(dir.path()).is_empty());
    }

    #[test]
    fn a_running_runs_slots_and_progress_are_read_from_its_lines_over_cache_json() {
        let dir = tempfile::tempdir().unwrap();
        let files = RunFiles::new(dir.path(), "run_aaaaaaaaaaaa");
        std::fs::create_dir_all(&files.dir).unwrap();
        let disk = Disk::default();
        let old = CacheSlot::Pointer {
            receipt_id: "rcpt_old".into(),
            sha256: "00".into(),
            summary: "before".into(),
        };
        let cache: Cache = [("files".to_owned(), old)].into_iter().collect();
        files.write_cache(&disk, &cache).unwrap();
        let draft = CacheSlot::Artifact {
            agent_id: "writer".into(),
            text: "Rain.".into(),
            sha256: "01".into(),
            summary: "Rain.".into(),
        };
        let line = |index: usize, slot: &str, value: &CacheSlot, alias: Option<&str>| StepRecord {
            slot: Some(value.into()),
            slot_alias: alias.map(str::to_owned),
            ..StepRecord::for_tests(index, slot, slot)
        };
        let newer = CacheSlot::Pointer {
            receipt_id: "rcpt_new".into(),
            sha256: "02".into(),
            summary: "after".into(),
        };
        files
            .append_step(&disk, &line(0, "files", &newer, None))
            .unwrap();
        files
            .append_step(&disk, &line(1, "draft_1", &draft, Some("draft")))
            .unwrap();
        let read = files.read_cache().unwrap();
        assert_eq!(
            read["files"], newer,
            "a line's slot is newer than cache.json's"
        );
        assert_eq!(read["draft_1"], draft);
        assert_eq!(read["draft"], draft, "the alias is filled too");
        assert_eq!(files.read_cache_file().unwrap(), cache);

        let manifest = RunManifest {
            run_id: "run_aaaaaaaaaaaa".into(),
            recipe_id: "creative_draft_scene".into(),
            session_id: "sess_aaaaaaaaaaaa".into(),
            status: RunStatus::Running,
            created_at: "t0".into(),
            updated_at: "t0".into(),
            completed_at: None,
            task: RunTask {
                description: "draft".into(),
                session_plan_task_id: None,
                initial_args: serde_json::Map::new(),
            },
            current_step_index: 0,
            total_steps: 8,
            phase: Some("b".into()),
            error: None,
            review: None,
            scene: None,
            fresh: false,
        };
        files.write_manifest(&disk, &manifest).unwrap();
        assert_eq!(files.read_manifest().unwrap().current_step_index, 2);
        files
            .write_manifest(
                &disk,
                &RunManifest {
                    status: RunStatus::Failed,
                    ..manifest
                },
            )
            .unwrap();
        assert_eq!(
            files.read_manifest().unwrap().current_step_index,
            0,
            "an ended run's run.json says where it stopped"
        );
    }

    #[test]
    fn a_run_json_of_version_0_is_refused_too() {
        let dir = tempfile::tempdir().unwrap();
        let files = RunFiles::new(dir.path(), "run_aaaaaaaaaaaa");
        std::fs::create_dir_all(&files.dir).unwrap();
        std::fs::write(files.manifest(), r#"{"version": 0}"#).unwrap();
        let message = files.read_manifest().unwrap_err().to_string();
        assert!(
            message.contains("version 0, which no control-room writes"),
            "{message}"
        );
    }
}

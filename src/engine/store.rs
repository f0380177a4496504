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
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub const RUNS_DIR: &str = ".control-room/runs";

/// Where state is written. `Disk::default()` is the real disk; a disk with a
/// byte budget fails like a full one once the budget is spent (for tests of
/// what a full disk leaves behind).
#[derive(Clone, Debug, Default)]
pub struct Disk {
    budget: Option<Arc<AtomicI64>>,
    writes: Option<Arc<AtomicI64>>,
}

impl Disk {
    /// A disk that accepts `bytes` more bytes, then fails with "no space".
    pub fn with_budget(bytes: i64) -> Disk {
        Disk {
            budget: Some(Arc::new(AtomicI64::new(bytes))),
            writes: None,
        }
    }

    /// A disk that accepts `writes` more writes (whole files or appended
    /// lines), then fails every one with "no space".
    pub fn failing_after_writes(writes: i64) -> Disk {
        Disk {
            budget: None,
            writes: Some(Arc::new(AtomicI64::new(writes))),
        }
    }

    fn spend(&self, bytes: usize) -> std::io::Result<()> {
        let full =
            || std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device");
        if let Some(budget) = &self.budget
            && budget.fetch_sub(bytes as i64, Ordering::SeqCst) - (bytes as i64) < 0
        {
            return Err(full());
        }
        if let Some(writes) = &self.writes
            && writes.fetch_sub(1, Ordering::SeqCst) <= 0
        {
            return Err(full());
        }
        Ok(())
    }

    /// Replaces `path` with `bytes` atomically.
    pub fn write_atomic(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let result = (|| {
            let mut file = std::fs::File::create(&temp)?;
            self.spend(bytes.len())?;
            file.write_all(bytes)?;
            file.sync_all()?;
            drop(file);
            std::fs::rename(&temp, path)?;
            sync_dir(dir);
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    /// Writes `bytes` to `path` only if no file is there, as one step: the
    /// bytes go to a temporary file, which is then linked at `path` (a link
    /// never replaces a file). `Ok(false)` when a file was already there,
    /// so two writers racing for one new file cannot both win.
    pub fn create_new(&self, path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let temp = dir.join(format!(
            ".{name}.new-{}-{}",
            std::process::id(),
            NEW_FILES.fetch_add(1, Ordering::SeqCst)
        ));
        let result = (|| {
            let mut file = std::fs::File::create_new(&temp)?;
            self.spend(bytes.len())?;
            file.write_all(bytes)?;
            file.sync_all()?;
            drop(file);
            match std::fs::hard_link(&temp, path) {
                Ok(()) => {
                    sync_dir(dir);
                    Ok(true)
                }
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                Err(error) => Err(error),
            }
        })();
        let _ = std::fs::remove_file(&temp);
        result
    }

    /// Appends one line (which ends in `\n`) and syncs it. On failure the
    /// file is cut back to its old length.
    pub fn append_line(&self, path: &Path, line: &[u8]) -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let before = file.metadata()?.len();
        let result = self
            .spend(line.len())
            .and_then(|()| file.write_all(line))
            .and_then(|()| file.sync_data());
        if result.is_err() {
            let _ = file.set_len(before);
        }
        result
    }
}

/// Tells apart the temporary files of one process's new files.
static NEW_FILES: AtomicI64 = AtomicI64::new(0);

fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Reads a JSON Lines file, skipping lines that do not parse (a line torn by
/// power loss can only be the last).
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Vec<T> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

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

/// run.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// `"a"`, `"b"`, `"dod"`, or null when not running.
    pub phase: Option<String>,
    pub error: Option<String>,
    /// The review loop's iterations and outcome, for a recipe with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<super::review::ReviewState>,
    /// The scene the run writes, as the writer's text stood when the run
    /// was created; delivery compares it with the text at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<super::delivery::SceneMark>,
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

    /// Present when someone asked the run to stop.
    pub fn cancel_request(&self) -> PathBuf {
        self.dir.join("cancel")
    }

    pub fn read_manifest(&self) -> anyhow::Result<RunManifest> {
        let path = self.manifest();
        let text = std::fs::read_to_string(&path)
            .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|error| anyhow::anyhow!("{} is damaged: {error}", path.display()))
    }

    pub fn read_cache(&self) -> anyhow::Result<Cache> {
        let path = self.cache();
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|error| anyhow::anyhow!("{} is damaged: {error}", path.display())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Cache::new()),
            Err(error) => Err(anyhow::anyhow!("cannot read {}: {error}", path.display())),
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

fn pretty(value: &impl Serialize) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Every run under the workspace, newest first.
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
    fn atomic_writes_replace_whole_files_and_a_full_disk_keeps_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        Disk::default().write_atomic(&path, b"{\"v\":1}").unwrap();
        let full = Disk::with_budget(3);
        let error = full.write_atomic(&path, b"{\"v\":2}").unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"v\":1}");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "temporary files left: {leftovers:?}");
    }

    #[test]
    fn two_writers_of_one_new_scene_cannot_both_win() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SCN-new.md");
        let won: Vec<bool> = std::thread::scope(|scope| {
            let writers: Vec<_> = (0..8)
                .map(|n| {
                    let path = &path;
                    scope.spawn(move || {
                        Disk::default()
                            .create_new(path, format!("draft {n}\n").as_bytes())
                            .unwrap()
                    })
                })
                .collect();
            writers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(won.iter().filter(|won| **won).count(), 1, "{won:?}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("draft "), "{text}");
        // A file that is there is never replaced, and no temporary file stays.
        assert!(!Disk::default().create_new(&path, b"other").unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_append_leaves_no_partial_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("steps.jsonl");
        let disk = Disk::with_budget(10);
        disk.append_line(&path, b"{\"a\":1}\n").unwrap();
        assert!(disk.append_line(&path, b"{\"b\":2}\n").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\":1}\n");
        let values: Vec<Value> = read_jsonl(&path);
        assert_eq!(values.len(), 1);
    }
}

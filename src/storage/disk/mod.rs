//! Where state is written: whole files replaced atomically (temporary file,
//! fsync, rename, folder fsync), new files created only where none is, and
//! JSON Lines appended a whole line at a time. Every write of the engine,
//! the evidence and the knowledge base goes through [`Disk`], which tests
//! can make fail like a full disk.

pub mod commit;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde::de::DeserializeOwned;

use commit::Committer;

/// Where state is written. `Disk::default()` is the real disk; a disk with a
/// byte budget fails like a full one once the budget is spent (for tests of
/// what a full disk leaves behind).
#[derive(Clone, Debug, Default)]
pub struct Disk {
    budget: Option<Arc<AtomicI64>>,
    writes: Option<Arc<AtomicI64>>,
    /// Where the syncs go on a deferring disk ([`Disk::deferring`]).
    pub(super) committer: Option<Committer>,
}

impl Disk {
    /// A disk that accepts `bytes` more bytes, then fails with "no space".
    pub fn with_budget(bytes: i64) -> Disk {
        Disk {
            budget: Some(Arc::new(AtomicI64::new(bytes))),
            ..Disk::default()
        }
    }

    /// A disk that accepts `writes` more writes (whole files or appended
    /// lines), then fails every one with "no space".
    pub fn failing_after_writes(writes: i64) -> Disk {
        Disk {
            writes: Some(Arc::new(AtomicI64::new(writes))),
            ..Disk::default()
        }
    }

    pub(super) fn spend(&self, bytes: usize) -> std::io::Result<()> {
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

    /// Replaces `path` with `bytes` atomically. On a deferring disk the
    /// bytes are written now and the file is in place once its committer
    /// has synced it.
    pub fn write_atomic(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        self.replace(path, bytes, false)
    }

    /// [`Disk::write_atomic`], put in place only once everything asked for
    /// before it is durable, like a commit line: a run's last `run.json`
    /// is never durable before the journal's lines it sums up. On a disk
    /// that defers nothing, at once.
    pub fn write_atomic_after(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        self.replace(path, bytes, true)
    }

    fn replace(&self, path: &Path, bytes: &[u8], after: bool) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        // Two writes of one file may be waiting for the committer at once:
        // each has a temporary file of its own.
        let temp = dir.join(format!(
            ".{name}.tmp-{}-{}",
            std::process::id(),
            NEW_FILES.fetch_add(1, Ordering::SeqCst)
        ));
        let result = (|| {
            let mut file = std::fs::File::create(&temp)?;
            self.spend(bytes.len())?;
            file.write_all(bytes)?;
            if let Some(committer) = &self.committer {
                // From here the committer removes the temporary file if it
                // never renames it.
                return committer.replace(file, temp.clone(), path.to_path_buf(), after);
            }
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

    /// Writes a new file in a folder no reader sees yet, one that is renamed
    /// into place whole once written (a run's staging folder): created,
    /// written and synced, without [`Disk::write_atomic`]'s temporary file
    /// and folder sync. A journaling filesystem makes its entries durable in
    /// order, so the folder's rename, once durable, carries the file's entry;
    /// a crash before the rename leaves only the hidden folder.
    pub fn write_staged(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let mut file = std::fs::File::create_new(path)?;
        self.spend(bytes.len())?;
        file.write_all(bytes)?;
        file.sync_all()
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

    /// Appends one line (which ends in `\n`) and syncs it (on a deferring
    /// disk, its committer syncs it). On failure the file is cut back to its
    /// old length.
    pub fn append_line(&self, path: &Path, line: &[u8]) -> std::io::Result<()> {
        let mut file = self.open_for_append(path)?;
        self.append_unsynced(&mut file, line)?;
        match &self.committer {
            Some(committer) => committer.appended(file),
            None => file.sync_data(),
        }
    }

    /// Opens `path` to append to, making its folder if need be.
    pub(super) fn open_for_append(&self, path: &Path) -> std::io::Result<std::fs::File> {
        // Read too: whether the last line was torn (see `append_unsynced`).
        let open = || {
            std::fs::OpenOptions::new()
                .create(true)
                .read(true)
                .append(true)
                .open(path)
        };
        match open() {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                open()
            }
            opened => opened,
        }
    }
}

/// Tells apart the temporary files of one process's new files.
static NEW_FILES: AtomicI64 = AtomicI64::new(0);

pub(super) fn sync_dir(dir: &Path) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn a_line_appended_after_a_torn_line_starts_a_line_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tool_receipts.jsonl");
        // A process killed inside the write of its second line.
        std::fs::write(&path, "{\"a\":1}\n{\"b\":2, \"output\": \"the tide").unwrap();
        Disk::default().append_line(&path, b"{\"c\":3}\n").unwrap();
        Disk::default().append_line(&path, b"{\"d\":4}\n").unwrap();
        let read: Vec<Value> = read_jsonl(&path);
        assert_eq!(
            read,
            vec![json!({"a": 1}), json!({"c": 3}), json!({"d": 4})]
        );
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .ends_with("the tide\n{\"c\":3}\n{\"d\":4}\n")
        );
    }

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

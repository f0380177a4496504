//! Group commit: a run's writes made durable on a thread of their own, in
//! the order they were asked for, with one sync covering as many of them as
//! came in meanwhile.
//!
//! A [`Disk`](super::Disk) that defers to a [`Committer`] writes at once
//! what a reader may want at once (an appended line is in the file when
//! `append_line` returns) and leaves the syncs to the committer:
//! - a whole file (`write_atomic`) is written under a temporary name; the
//!   committer syncs it, renames it into place and syncs its folder, so a
//!   file under its real name is always whole, even after a power cut;
//! - an appended line is synced by the committer;
//! - a **commit line** (`append_commit`: a step's line in `steps.jsonl`) is
//!   written by the committer only once everything asked for before it is
//!   durable, so a durable commit line never points at a receipt a power cut
//!   lost. The steps that came in while the committer was busy make one
//!   batch: its files are made durable together (on Linux two `syncfs`
//!   calls, whatever their number), then its lines are written and share
//!   one sync of their file: at once when no work waits, else the next
//!   batch's first sync covers them (a run whose steps come faster than
//!   the disk syncs pays two syncs a batch, not three). A file asked for
//!   after a line may so be durable before it, as `run.json` may be ahead
//!   of `steps.jsonl`: a resume reads the journal;
//! - a whole file written **after** (`write_atomic_after`: a run's last
//!   `run.json` and its `cache.json`) is put in place like a commit line,
//!   once everything asked for before it is durable. Its bytes are synced
//!   in the batch's first round, so a run's end costs one round more than
//!   its last lines, not a round for its files and two syncs of its own.
//!
//! A crash (kill -9 or power) loses at most the commits not yet written,
//! which a resume runs again. The first failure (a full disk) stops the
//! committer: nothing asked for after it is written, and every later call,
//! and [`Committer::flush`], returns it.

use std::collections::BTreeSet;
use std::io::{Read, Seek, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Disk;
#[cfg(not(target_os = "linux"))]
use super::sync_dir;

/// How long written files wait for a commit line to cover them before the
/// committer syncs them anyway: a step's files and its line share their
/// syncs, and a file written before a long model call is in place soon.
const SETTLE_AFTER: Duration = Duration::from_millis(10);

/// What the committer makes durable, in order.
enum Work {
    /// A whole file written under `temp`: sync it, then rename it to
    /// `path`; when `after`, once everything before it is durable.
    Replace {
        file: std::fs::File,
        temp: Temporary,
        path: PathBuf,
        after: bool,
    },
    /// Lines appended to this file: sync them.
    Appended(std::fs::File),
    /// A line to append to `path` once everything before it is durable.
    Commit { path: PathBuf, line: Vec<u8> },
    /// Answer once everything before it is durable.
    Flush(mpsc::Sender<()>),
}

/// A temporary file, removed unless it was renamed into place: work the
/// committer drops after a failure leaves no litter.
struct Temporary(Option<PathBuf>);

impl Temporary {
    fn rename_to(mut self, path: &std::path::Path) -> std::io::Result<()> {
        let temp = self.0.take().expect("renamed once");
        std::fs::rename(&temp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Some(temp) = self.0.take() {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// The thread that makes a run's writes durable. Dropping the last handle
/// lets the thread finish what it was given and end.
#[derive(Clone)]
pub struct Committer {
    sender: mpsc::Sender<Work>,
    failure: Arc<Mutex<Option<(std::io::ErrorKind, String)>>>,
}

impl std::fmt::Debug for Committer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Committer")
    }
}

impl Committer {
    /// Starts the committer; `disk` writes the commit lines (and counts
    /// them against its budget, for tests of a full disk).
    pub fn start(disk: Disk) -> Committer {
        let (sender, receiver) = mpsc::channel();
        let failure = Arc::new(Mutex::new(None));
        let kept = failure.clone();
        std::thread::Builder::new()
            .name("control-room-commit".into())
            .spawn(move || run(&disk, &receiver, &kept))
            .expect("a thread starts");
        Committer { sender, failure }
    }

    /// The first failure, if the committer has stopped.
    fn failure(&self) -> std::io::Result<()> {
        match &*self.failure.lock().unwrap_or_else(|e| e.into_inner()) {
            Some((kind, message)) => Err(std::io::Error::new(*kind, message.clone())),
            None => Ok(()),
        }
    }

    fn push(&self, work: Work) -> std::io::Result<()> {
        self.failure()?;
        self.sender
            .send(work)
            .map_err(|_| std::io::Error::other("the committer has stopped"))
    }

    pub(super) fn replace(
        &self,
        file: std::fs::File,
        temp: PathBuf,
        path: PathBuf,
        after: bool,
    ) -> std::io::Result<()> {
        self.push(Work::Replace {
            file,
            temp: Temporary(Some(temp)),
            path,
            after,
        })
    }

    pub(super) fn appended(&self, file: std::fs::File) -> std::io::Result<()> {
        self.push(Work::Appended(file))
    }

    pub(super) fn commit(&self, path: PathBuf, line: Vec<u8>) -> std::io::Result<()> {
        self.push(Work::Commit { path, line })
    }

    /// Waits until everything asked for so far is durable; the first
    /// failure if there was one.
    pub fn flush(&self) -> std::io::Result<()> {
        let (done, wait) = mpsc::channel();
        // Sent even after a failure: once it is reached, what was sent
        // before it is durable or (after the failure) dropped, its
        // temporary files removed. A flush after a failure is answered by
        // dropping its sender.
        if self.sender.send(Work::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
        self.failure()
    }
}

fn run(
    disk: &Disk,
    receiver: &mpsc::Receiver<Work>,
    failure: &Mutex<Option<(std::io::ErrorKind, String)>>,
) {
    let failed = |error: std::io::Error| {
        *failure.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((error.kind(), error.to_string()));
    };
    let mut pending = Pending::default();
    loop {
        // Work waits for a commit line to cover it, or for a pause. Lines
        // written unsynced share the next batch's first sync when it is
        // already waiting; else they are synced before the committer waits.
        let first = match receiver.try_recv() {
            Ok(work) => Ok(work),
            Err(mpsc::TryRecvError::Disconnected) => Err(mpsc::RecvTimeoutError::Disconnected),
            Err(mpsc::TryRecvError::Empty) => match pending.sync_lines() {
                Err(error) => {
                    pending = Pending::default();
                    failed(error);
                    continue;
                }
                Ok(()) if pending.is_empty() => receiver
                    .recv()
                    .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
                Ok(()) => receiver.recv_timeout(SETTLE_AFTER),
            },
        };
        let first = match first {
            Ok(work) => work,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(error) = pending.make_durable() {
                    pending = Pending::default();
                    failed(error);
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        // A flush is answered once the whole batch it came in is durable,
        // or, after a failure, once the batch's work is dropped and its
        // temporary files removed: its sender is dropped last.
        let mut flushes = Vec::new();
        let batch: Vec<Work> = std::iter::once(first)
            .chain(receiver.try_iter())
            .filter_map(|work| match work {
                Work::Flush(done) => {
                    flushes.push(done);
                    None
                }
                work => Some(work),
            })
            .collect();
        if failure.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
            // Nothing after a failure is written.
            drop(batch);
            drop(flushes);
            continue;
        }
        let mut result = pending.take(disk, batch);
        if result.is_ok() && !flushes.is_empty() {
            result = pending.make_durable();
        }
        match result {
            Ok(()) => {
                for done in flushes {
                    let _ = done.send(());
                }
            }
            Err(error) => {
                pending = Pending::default();
                failed(error);
                drop(flushes);
            }
        }
    }
    // The last handle is gone: what is still waiting is made durable.
    let _ = pending.make_durable();
}

/// What the committer holds until a commit line, a flush or a pause needs
/// it durable: one sync then covers each folder however many files went
/// into it.
#[derive(Default)]
struct Pending {
    replaced: Vec<(std::fs::File, Temporary, PathBuf)>,
    appended: Vec<std::fs::File>,
    /// The files of commit lines written but not yet synced.
    lines: Vec<std::fs::File>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.replaced.is_empty() && self.appended.is_empty() && self.lines.is_empty()
    }

    /// Syncs the commit lines written since the last sync.
    fn sync_lines(&mut self) -> std::io::Result<()> {
        for file in std::mem::take(&mut self.lines) {
            counted_sync();
            file.sync_data()?;
        }
        Ok(())
    }

    /// Takes one batch. Whole files and appended lines wait; the batch's
    /// commit lines are written, in order, once everything in the batch is
    /// durable (one round of syncs however many steps the batch holds),
    /// and left for the next sync (the committer's next batch, or its own
    /// before it waits): the committer does not wait for more work to make
    /// a step durable. Files written after are put in place once the lines
    /// are synced, their bytes synced in the first round.
    fn take(&mut self, disk: &Disk, batch: Vec<Work>) -> std::io::Result<()> {
        let mut lines: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        let mut after = Vec::new();
        for work in batch {
            match work {
                Work::Replace {
                    file,
                    temp,
                    path,
                    after: false,
                } => self.replaced.push((file, temp, path)),
                Work::Replace {
                    file,
                    temp,
                    path,
                    after: true,
                } => after.push((file, temp, path)),
                Work::Appended(file) => self.appended.push(file),
                Work::Commit { path, line } => lines.push((path, line)),
                Work::Flush(_) => unreachable!("flushes are taken out of the batch"),
            }
        }
        if lines.is_empty() && after.is_empty() {
            return Ok(());
        }
        let bytes_after: Vec<&std::fs::File> = after.iter().map(|(file, ..)| file).collect();
        self.make_durable_with(&bytes_after)?;
        let mut journals: Vec<(PathBuf, std::fs::File)> = Vec::new();
        for (path, line) in lines {
            let file = match journals.iter().position(|(p, _)| *p == path) {
                Some(at) => &mut journals[at].1,
                None => {
                    let file = disk.open_for_append(&path)?;
                    journals.push((path, file));
                    &mut journals.last_mut().expect("just pushed").1
                }
            };
            disk.append_unsynced(file, &line)?;
        }
        self.lines
            .extend(journals.into_iter().map(|(_, journal)| journal));
        if after.is_empty() {
            return Ok(());
        }
        self.sync_lines()?;
        put_in_place(after)
    }

    /// Syncs every waiting file and renames each whole file into place,
    /// then syncs the folders they went into: two rounds of syncs
    /// ([`sync_files`], [`sync_folders`]) however many files wait.
    fn make_durable(&mut self) -> std::io::Result<()> {
        self.make_durable_with(&[])
    }

    /// [`Pending::make_durable`], syncing the bytes of `also` in its first
    /// round (files to be put in place later), and the commit lines left
    /// unsynced.
    fn make_durable_with(&mut self, also: &[&std::fs::File]) -> std::io::Result<()> {
        let appended = std::mem::take(&mut self.appended);
        let replaced = std::mem::take(&mut self.replaced);
        let lines = std::mem::take(&mut self.lines);
        sync_files(
            appended
                .iter()
                .chain(replaced.iter().map(|(file, ..)| file))
                .chain(also.iter().copied())
                .chain(lines.iter()),
        )?;
        put_in_place(replaced)
    }
}

/// Renames whole files, their bytes already durable, into place, then
/// syncs the folders they went into (nothing when there is none).
fn put_in_place(files: Vec<(std::fs::File, Temporary, PathBuf)>) -> std::io::Result<()> {
    let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
    let mut renamed = Vec::with_capacity(files.len());
    for (file, temp, path) in files {
        temp.rename_to(&path)?;
        folders.insert(path.parent().map(PathBuf::from).unwrap_or_default());
        renamed.push(file);
    }
    sync_folders(&folders, &renamed)
}

/// Makes the data of `files` durable. On Linux one `syncfs` a filesystem
/// they are on: each file's `fsync` would commit the filesystem's journal
/// and flush the disk's cache once per file (about 0.4 ms each on a
/// virtual disk), `syncfs` once for them all. It also writes what other
/// programs left unwritten on that filesystem, and reports a write error
/// (Linux 5.8 on) however it came. Elsewhere, one sync a file.
fn sync_files<'f>(files: impl Iterator<Item = &'f std::fs::File>) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let mut devices: Vec<u64> = Vec::new();
        for file in files {
            let device = file.metadata()?.dev();
            if !devices.contains(&device) {
                devices.push(device);
                counted_sync();
                // SAFETY: the descriptor is open for as long as `file` lives.
                if unsafe { libc::syncfs(file.as_raw_fd()) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        for file in files {
            counted_sync();
            file.sync_all()?;
        }
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// The syncs this thread has asked for, for the tests of their count.
    static SYNCS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn counted_sync() {
    #[cfg(test)]
    SYNCS.with(|syncs| syncs.set(syncs.get() + 1));
}

/// Makes the renames into `folders` durable: on Linux by [`sync_files`]
/// of the files renamed (their folders are on their filesystems), each
/// folder synced elsewhere.
fn sync_folders(folders: &BTreeSet<PathBuf>, renamed: &[std::fs::File]) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let _ = folders;
        sync_files(renamed.iter())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = renamed;
        for folder in folders {
            sync_dir(folder);
        }
        Ok(())
    }
}

impl Disk {
    /// This disk, its syncs left to `committer` (see the module's note).
    pub fn deferring(&self, committer: &Committer) -> Disk {
        let mut disk = self.clone();
        disk.committer = Some(committer.clone());
        disk
    }

    /// Appends a commit line: on a deferring disk, once everything asked
    /// for before it is durable; on any other, at once and synced.
    pub fn append_commit(&self, path: &std::path::Path, line: &[u8]) -> std::io::Result<()> {
        match &self.committer {
            Some(committer) => committer.commit(path.to_path_buf(), line.to_vec()),
            None => self.append_line(path, line),
        }
    }

    /// Waits until this disk's deferred writes are durable (at once on a
    /// disk that defers nothing).
    pub fn flush(&self) -> std::io::Result<()> {
        match &self.committer {
            Some(committer) => committer.flush(),
            None => Ok(()),
        }
    }

    /// Writes `line` at the end of `file`, cut back on failure, unsynced.
    /// A file whose last line was torn (a process killed inside a write of
    /// more than a page) gets the line on a line of its own: appended to the
    /// torn one, it would not parse, and readers would skip both.
    pub(super) fn append_unsynced(
        &self,
        file: &mut std::fs::File,
        line: &[u8],
    ) -> std::io::Result<()> {
        let before = file.metadata()?.len();
        let torn = before > 0 && {
            let mut last = [0u8];
            file.seek(std::io::SeekFrom::End(-1))?;
            file.read_exact(&mut last)?;
            last[0] != b'\n'
        };
        let line: std::borrow::Cow<[u8]> = if torn {
            [b"\n", line].concat().into()
        } else {
            line.into()
        };
        let result = self.spend(line.len()).and_then(|()| file.write_all(&line));
        if result.is_err() {
            let _ = file.set_len(before);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn deferred_writes_are_in_place_and_commit_lines_written_once_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let committer = Committer::start(Disk::default());
        let disk = Disk::default().deferring(&committer);
        let receipts = dir.path().join("receipts.jsonl");
        let steps = dir.path().join("steps.jsonl");
        disk.write_atomic(&dir.path().join("packet.json"), b"{}")
            .unwrap();
        disk.append_line(&receipts, b"{\"r\":1}\n").unwrap();
        // An appended line is in its file at once, for the run to read.
        assert_eq!(std::fs::read_to_string(&receipts).unwrap(), "{\"r\":1}\n");
        disk.append_commit(&steps, b"{\"step\":0}\n").unwrap();
        disk.write_atomic(&dir.path().join("packet.json"), b"{\"v\":2}")
            .unwrap();
        disk.append_commit(&steps, b"{\"step\":1}\n").unwrap();
        disk.flush().unwrap();
        assert_eq!(
            std::fs::read_to_string(&steps).unwrap(),
            "{\"step\":0}\n{\"step\":1}\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("packet.json")).unwrap(),
            "{\"v\":2}",
            "the later write of a file wins"
        );
        assert_eq!(
            names(dir.path()),
            ["packet.json", "receipts.jsonl", "steps.jsonl"],
            "no temporary file is left"
        );
    }

    #[test]
    fn a_commit_line_is_not_written_when_a_file_before_it_cannot_be_put_in_place() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the receipt should go: renaming a file over it fails.
        std::fs::create_dir_all(dir.path().join("receipt.json/taken")).unwrap();
        let committer = Committer::start(Disk::default());
        let disk = Disk::default().deferring(&committer);
        let steps = dir.path().join("steps.jsonl");
        disk.write_atomic(&dir.path().join("receipt.json"), b"{}")
            .unwrap();
        disk.append_commit(&steps, b"{\"step\":0}\n").unwrap();
        let error = disk.flush().unwrap_err();
        assert!(
            !steps.exists(),
            "a step line was written before its receipt"
        );
        // The failure stops the committer: later work is refused with it.
        let later = disk.append_commit(&steps, b"{\"step\":1}\n").unwrap_err();
        assert_eq!(later.kind(), error.kind());
        assert_eq!(disk.flush().unwrap_err().kind(), error.kind());
        assert_eq!(
            names(dir.path()),
            ["receipt.json"],
            "the temporary file is removed"
        );
    }

    /// A whole file written under a temporary name, as the committer gets it.
    fn written(dir: &std::path::Path, name: &str, after: bool) -> Work {
        let temp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&temp, b"{}").unwrap();
        Work::Replace {
            file: std::fs::File::open(&temp).unwrap(),
            temp: Temporary(Some(temp)),
            path: dir.join(name),
            after,
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_commit_line_with_work_behind_it_is_synced_by_that_works_first_sync() {
        // Two steps taken one batch after the other, as the committer takes
        // them when a run's steps come faster than the disk syncs.
        let dir = tempfile::tempdir().unwrap();
        let steps = dir.path().join("steps.jsonl");
        let step = |n: usize| {
            vec![
                written(dir.path(), &format!("receipt-{n}.json"), false),
                Work::Commit {
                    path: steps.clone(),
                    line: format!("{{\"step\":{n}}}\n").into_bytes(),
                },
            ]
        };
        let syncs = || SYNCS.with(std::cell::Cell::get);
        let before = syncs();
        let mut pending = Pending::default();
        pending.take(&Disk::default(), step(0)).unwrap();
        assert!(dir.path().join("receipt-0.json").exists());
        assert_eq!(std::fs::read_to_string(&steps).unwrap(), "{\"step\":0}\n");
        assert_eq!(
            syncs() - before,
            2,
            "the receipt's bytes, then its rename; the line waits for the next sync"
        );
        pending.take(&Disk::default(), step(1)).unwrap();
        assert_eq!(
            syncs() - before,
            4,
            "the first line is synced with the second receipt's bytes"
        );
        assert_eq!(
            std::fs::read_to_string(&steps).unwrap(),
            "{\"step\":0}\n{\"step\":1}\n"
        );
        // No more work: the committer syncs the last line before it waits.
        assert!(!pending.is_empty());
        pending.sync_lines().unwrap();
        assert_eq!(syncs() - before, 5);
        assert!(pending.is_empty());
    }

    #[test]
    fn a_file_written_after_is_not_put_in_place_before_the_lines_before_it() {
        // One batch, as the committer takes it (no thread to race): a file
        // written before a line, the line, a file written after it.
        let dir = tempfile::tempdir().unwrap();
        let written = |name: &str, after: bool| written(dir.path(), name, after);
        // A folder where the journal should be: its line cannot be written.
        let steps = dir.path().join("steps.jsonl");
        std::fs::create_dir_all(steps.join("taken")).unwrap();
        let batch = vec![
            written("cache.json", false),
            Work::Commit {
                path: steps,
                line: b"{\"step\":7}\n".to_vec(),
            },
            written("run.json", true),
        ];
        Pending::default()
            .take(&Disk::default(), batch)
            .unwrap_err();
        assert_eq!(
            names(dir.path()),
            ["cache.json", "steps.jsonl"],
            "the file before the line is in place, the one written after it is not, and no temporary file is left"
        );

        let dir = tempfile::tempdir().unwrap();
        let steps = dir.path().join("steps.jsonl");
        let committer = Committer::start(Disk::default());
        let disk = Disk::default().deferring(&committer);
        disk.write_atomic_after(&dir.path().join("run.json"), b"{\"v\":1}")
            .unwrap();
        disk.append_commit(&steps, b"{\"step\":0}\n").unwrap();
        disk.write_atomic_after(&dir.path().join("run.json"), b"{\"v\":2}")
            .unwrap();
        disk.flush().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("run.json")).unwrap(),
            "{\"v\":2}",
            "the later write of a file wins"
        );
        assert_eq!(std::fs::read_to_string(&steps).unwrap(), "{\"step\":0}\n");
        assert_eq!(names(dir.path()), ["run.json", "steps.jsonl"]);
    }

    #[test]
    fn a_full_disk_met_by_the_committer_is_returned_to_the_next_call() {
        let dir = tempfile::tempdir().unwrap();
        let full = Disk::failing_after_writes(1);
        let committer = Committer::start(full.clone());
        let disk = full.deferring(&committer);
        let steps = dir.path().join("steps.jsonl");
        disk.append_commit(&steps, b"{\"step\":0}\n").unwrap();
        disk.append_commit(&steps, b"{\"step\":1}\n").unwrap();
        let error = disk.flush().unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::StorageFull);
        assert_eq!(error.to_string(), "No space left on device");
        assert_eq!(std::fs::read_to_string(&steps).unwrap(), "{\"step\":0}\n");
    }
}

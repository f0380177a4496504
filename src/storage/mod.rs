//! The storage layer, below the engine, the evidence validator and the
//! knowledge base: atomic whole-file writes, create-new, JSON Lines appends
//! ([`Disk`]), and their syncs grouped on a thread of their own
//! ([`Committer`]); ids and timestamps; hashes; the workspace-relative path check
//! every untrusted path goes through; and the file spans receipts record
//! (`FileRef`).
//!
//! ## Parts
//!
//! `Disk` (atomic whole-file writes, create-new, line appends (after a line torn by a kill, on
//! a line of their own), a failing disk for tests); `commit` the `Committer`, a run's syncs on
//! a thread of their own: a deferring `Disk` writes at once, and the committer syncs, renames
//! whole files into place and writes a step's line only once what came before it is durable,
//! one round of syncs for as much as came in meanwhile (on Linux a `syncfs`, not one sync a
//! file; a batch's lines are synced by the next batch's first sync when work already waits),
//! and puts a file written *after* (a run's last `run.json`, its `cache.json`) in place once
//! the lines before it are; ids and times, hashes, the workspace-relative path check every
//! untrusted path goes through, and the file spans receipts record.

mod disk;
mod file_ref;
mod hash;
mod ids;
mod paths;

pub use disk::commit::Committer;
pub use disk::{Disk, read_jsonl};
pub use file_ref::{EXCERPT_CHARS, FileRef, excerpt};
pub use hash::{hex, sha256_hex};
pub use ids::{new_id, now};
pub use paths::{PathError, check_relative_path};

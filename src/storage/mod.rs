//! The storage layer, below the engine, the evidence validator and the
//! knowledge base: atomic whole-file writes, create-new, JSON Lines appends
//! ([`Disk`]), and their syncs grouped on a thread of their own
//! ([`Committer`]); ids and timestamps; hashes; the workspace-relative path check
//! every untrusted path goes through; and the signed tool receipts with the
//! file spans they record.

mod commit;
mod disk;
mod file_ref;
mod hash;
mod ids;
mod paths;
pub mod receipts;

pub use commit::Committer;
pub use disk::{Disk, read_jsonl};
pub use file_ref::{EXCERPT_CHARS, FileRef, excerpt};
pub use hash::{hex, sha256_hex};
pub use ids::{new_id, now};
pub use paths::{PathError, check_relative_path};

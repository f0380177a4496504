//! Which files each tool receipt read, by the receipt's id, as the runner
//! wrote them (or read them, for a run resumed): an agent step may name the
//! files of the receipts its input slots cite, and finding them must not
//! read and parse the session's whole receipts file again at every step (a
//! planning session's file holds every run's receipts).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use crate::receipts::{self, ToolReceipt};

/// The files of the tool receipts a runner has met, shared by its clones.
#[derive(Clone, Debug, Default)]
pub struct CitedFiles(Arc<Mutex<HashMap<String, Arc<[String]>>>>);

impl CitedFiles {
    /// Remembers the files of a receipt just written.
    pub(super) fn wrote(&self, receipt: &ToolReceipt) {
        self.lock()
            .insert(receipt.receipt_id.clone(), files_of(receipt));
    }

    /// The files of the receipts `cited` (ids of `session_id`'s receipts);
    /// the session's receipts are read from disk only when one of them is
    /// not known yet. An id no receipt has adds nothing.
    pub(super) fn files(
        &self,
        root: &Path,
        session_id: &str,
        cited: &HashSet<&str>,
    ) -> Vec<String> {
        let mut known = self.lock();
        if cited.iter().any(|id| !known.contains_key(*id)) {
            for receipt in receipts::load(root, session_id) {
                if cited.contains(receipt.receipt_id.as_str()) {
                    let files = files_of(&receipt);
                    known.insert(receipt.receipt_id, files);
                }
            }
        }
        cited
            .iter()
            .filter_map(|id| known.get(*id))
            .flat_map(|files| files.iter().cloned())
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<[String]>>> {
        // Each entry is whole: a panic elsewhere leaves nothing half made.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn files_of(receipt: &ToolReceipt) -> Arc<[String]> {
    receipt
        .file_refs
        .iter()
        .map(|file| file.path.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Disk;

    fn receipt(id: &str, files: &[&str]) -> ToolReceipt {
        let refs: Vec<serde_json::Value> = files
            .iter()
            .map(|path| {
                serde_json::json!({"path": path, "start_line": 1, "end_line": 1,
                    "sha256": "00".repeat(32), "excerpt": ""})
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "version": 1, "receipt_id": id, "run_id": "run_a", "session_id": "sess_a",
            "step_id": "discover", "tool": "file_locator", "args": {}, "output": {},
            "output_sha256": "00", "output_size": 2, "summary": "", "file_refs": refs,
            "started_at": "", "finished_at": "",
        }))
        .unwrap()
    }

    #[test]
    fn a_receipt_the_runner_wrote_is_not_read_again_and_one_it_did_not_is_read_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let before = receipt("rcpt_before", &["Story/Scenes/SCN-a.md"]);
        receipts::append(root, &Disk::default(), &before).unwrap();
        let cited = CitedFiles::default();
        // A run resumed: its earlier receipt is on disk only.
        let ids: HashSet<&str> = ["rcpt_before"].into();
        assert_eq!(cited.files(root, "sess_a", &ids), ["Story/Scenes/SCN-a.md"]);

        // Written by the runner: known without the file, which is gone.
        let written = receipt(
            "rcpt_now",
            &["Compendium/Characters/CHAR-b.md", "Story/Outline.md"],
        );
        receipts::append(root, &Disk::default(), &written).unwrap();
        cited.wrote(&written);
        std::fs::remove_file(receipts::receipts_path(root, "sess_a")).unwrap();
        let ids: HashSet<&str> = ["rcpt_before", "rcpt_now"].into();
        let mut files = cited.files(root, "sess_a", &ids);
        files.sort();
        assert_eq!(
            files,
            [
                "Compendium/Characters/CHAR-b.md",
                "Story/Outline.md",
                "Story/Scenes/SCN-a.md"
            ]
        );
        // An id no receipt has names nothing.
        let ids: HashSet<&str> = ["rcpt_never"].into();
        assert!(cited.files(root, "sess_a", &ids).is_empty());
    }
}

//! Every tool receipt of the workspace, by id, with its signature checked:
//! what evidence may cite. Logs under `.control-room/audit/sessions/` are
//! read again only when their size or modification time changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::receipts::{self, SigningKey, ToolReceipt};
use crate::storage as store;

/// Where session logs live, relative to the root.
pub const SESSIONS_DIR: &str = ".control-room/audit/sessions";

/// What the book knows of a receipt id.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup<'a> {
    Verified(&'a ToolReceipt),
    /// In a log, but its signature does not verify: treated as unknown.
    Tampered {
        session_id: &'a str,
    },
    Unknown,
}

#[derive(Clone, Debug)]
enum Entry {
    Verified(Arc<ToolReceipt>),
    Tampered { session_id: String },
}

#[derive(Clone, Debug, Default)]
struct Log {
    stamp: Option<(u64, SystemTime)>,
    ids: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct ReceiptBook {
    key: Option<SigningKey>,
    logs: HashMap<PathBuf, Log>,
    entries: HashMap<String, Entry>,
}

impl ReceiptBook {
    /// The receipts of every session of the workspace at `root`.
    pub fn load(root: &Path) -> ReceiptBook {
        let mut book = ReceiptBook {
            key: SigningKey::load(root),
            ..ReceiptBook::default()
        };
        book.refresh(root);
        book
    }

    /// Receipts held in memory (a round not yet closed), checked with `key`.
    pub fn with_receipts<'r>(
        key: &SigningKey,
        receipts: impl IntoIterator<Item = &'r ToolReceipt>,
    ) -> ReceiptBook {
        let mut book = ReceiptBook {
            key: Some(key.clone()),
            ..ReceiptBook::default()
        };
        for receipt in receipts {
            book.add(receipt.clone());
        }
        book
    }

    /// Reads the logs that changed since they were last read.
    pub fn refresh(&mut self, root: &Path) {
        if self.key.is_none() {
            self.key = SigningKey::load(root);
        }
        let Ok(entries) = std::fs::read_dir(root.join(SESSIONS_DIR)) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path().join("tool_receipts.jsonl");
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let stamp = Some((
                meta.len(),
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            ));
            if self.logs.get(&path).is_some_and(|log| log.stamp == stamp) {
                continue;
            }
            if let Some(old) = self.logs.remove(&path) {
                for id in old.ids {
                    self.entries.remove(&id);
                }
            }
            let mut log = Log {
                stamp,
                ids: Vec::new(),
            };
            for receipt in store::read_jsonl::<ToolReceipt>(&path) {
                log.ids.push(receipt.receipt_id.clone());
                self.add(receipt);
            }
            self.logs.insert(path, log);
        }
    }

    fn add(&mut self, receipt: ToolReceipt) {
        let id = receipt.receipt_id.clone();
        if self.key.as_ref().is_some_and(|key| receipt.verify(key)) {
            self.entries.insert(id, Entry::Verified(Arc::new(receipt)));
        } else if !matches!(self.entries.get(&id), Some(Entry::Verified(_))) {
            // A verified copy wins over a tampered one with the same id.
            let session_id = receipt.session_id;
            self.entries.insert(id, Entry::Tampered { session_id });
        }
    }

    pub fn get(&self, id: &str) -> Lookup<'_> {
        match self.entries.get(id) {
            Some(Entry::Verified(receipt)) => Lookup::Verified(receipt),
            Some(Entry::Tampered { session_id }) => Lookup::Tampered { session_id },
            None => Lookup::Unknown,
        }
    }

    /// The verified receipt `id`, if any.
    pub fn verified(&self, id: &str) -> Option<&ToolReceipt> {
        match self.get(id) {
            Lookup::Verified(receipt) => Some(receipt),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A receipt as hover shows it: Markdown.
pub fn describe(receipt: &ToolReceipt) -> String {
    let mut out = format!(
        "**Tool receipt `{}`** (signature verified)\n\n`{}` in {} (step `{}`), {} → {}\n\n",
        receipt.receipt_id,
        receipt.tool,
        receipt.session_id,
        receipt.step_id,
        receipt.started_at,
        receipt.finished_at
    );
    let args = serde_json::to_string(&receipt.args).unwrap_or_default();
    out.push_str(&format!("Arguments: `{args}`\n\n"));
    out.push_str(&format!(
        "Output: {} bytes, sha256 `{}`\n\n",
        receipt.output_size,
        &receipt.output_sha256[..receipt.output_sha256.len().min(12)]
    ));
    if !receipt.summary.is_empty() {
        out.push_str(&format!("{}\n\n", receipt.summary.trim()));
    }
    if !receipt.file_refs.is_empty() {
        out.push_str("Files read:\n");
        for file in &receipt.file_refs {
            out.push_str(&format!(
                "- `{}` lines {}–{} (sha256 `{}`)\n",
                file.path,
                file.start_line,
                file.end_line,
                &file.sha256[..file.sha256.len().min(12)]
            ));
        }
    }
    out
}

/// The receipt id under `offset` in `line`, if any, with where it starts.
pub fn receipt_at(line: &str, offset: usize) -> Option<(usize, &str)> {
    let is_id_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = line.as_bytes();
    let mut start = offset.min(bytes.len());
    while start > 0 && is_id_byte(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = offset.min(bytes.len());
    while end < bytes.len() && is_id_byte(bytes[end]) {
        end += 1;
    }
    let word = &line[start..end];
    receipts::is_receipt_id(word).then_some((start, word))
}

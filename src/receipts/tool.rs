//! Tool receipts (evidence-rules.md): every phase A tool call leaves a signed
//! record of what it was asked, what it read and what it returned, appended to
//! `.control-room/audit/sessions/{sessionId}/tool_receipts.jsonl`. A receipt
//! whose signature does not verify is treated as unknown.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::signing::{SigningKey, canonical};
use crate::storage::{Disk, FileRef, read_jsonl};

/// `rcpt_` and 12 lowercase hex digits.
pub fn is_receipt_id(text: &str) -> bool {
    text.strip_prefix("rcpt_").is_some_and(|hex| {
        hex.len() == 12
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The version of the tool receipt's format this build writes.
pub const TOOL_RECEIPT_VERSION: u32 = 1;

/// A tool call's signed receipt: the wire format of `tool_receipts.jsonl`.
///
/// It is also what the engine and the evidence validator hold, on purpose:
/// a receipt is built, signed, written, read back and verified, and then
/// only its fields are read. Its signature covers it as written, version
/// field included or absent, so a separate domain copy would have to carry
/// the wire's version to be verified again (the conference verifies the
/// receipts of a round held in memory).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolReceipt {
    /// The format's version ([`TOOL_RECEIPT_VERSION`] when written). Absent
    /// in receipts written before the field: they are read as version 1 and
    /// verify as they were signed, since the signature covers the receipt
    /// as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    pub receipt_id: String,
    /// The run (or conference) the call belongs to.
    pub run_id: String,
    pub session_id: String,
    pub step_id: String,
    pub tool: String,
    /// The arguments after `$ref` resolution.
    pub args: Value,
    /// The full output.
    pub output: Value,
    pub output_sha256: String,
    /// Bytes of the output's JSON text.
    pub output_size: usize,
    pub summary: String,
    pub file_refs: Vec<FileRef>,
    pub started_at: String,
    pub finished_at: String,
    /// `hmac-sha256:` and 64 hex digits.
    #[serde(default)]
    pub signature: String,
}

impl ToolReceipt {
    pub fn sign(&mut self, key: &SigningKey) {
        self.signature = key.sign(&canonical(self));
    }

    /// Whether `key` signed this receipt, and its version is one this
    /// build reads: a receipt of a newer format never counts, even signed,
    /// rather than be read as this build's.
    pub fn verify(&self, key: &SigningKey) -> bool {
        self.version
            .is_none_or(|version| (1..=TOOL_RECEIPT_VERSION).contains(&version))
            && key.verify(&canonical(self), &self.signature)
    }
}

/// The receipt log of a session.
pub fn receipts_path(root: &Path, session_id: &str) -> PathBuf {
    root.join(".control-room/audit/sessions")
        .join(session_id)
        .join("tool_receipts.jsonl")
}

/// Appends a signed receipt to its session's log.
pub fn append(root: &Path, disk: &Disk, receipt: &ToolReceipt) -> std::io::Result<()> {
    let path = receipts_path(root, &receipt.session_id);
    let mut line = serde_json::to_vec(receipt).map_err(std::io::Error::other)?;
    line.push(b'\n');
    disk.append_line(&path, &line)
}

/// Every receipt of a session that parses (a torn last line is skipped).
pub fn load(root: &Path, session_id: &str) -> Vec<ToolReceipt> {
    read_jsonl(&receipts_path(root, session_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn receipt() -> ToolReceipt {
        ToolReceipt {
            version: Some(TOOL_RECEIPT_VERSION),
            receipt_id: "rcpt_0123456789ab".into(),
            run_id: "run_0123456789ab".into(),
            session_id: "sess_0123456789ab".into(),
            step_id: "discover".into(),
            tool: "file_locator".into(),
            args: json!({"search_criteria": "the gate"}),
            output: json!({"matches": []}),
            output_sha256: "00".repeat(32),
            output_size: 14,
            summary: "0 files found".into(),
            file_refs: vec![],
            started_at: "2026-11-22T10:00:00Z".into(),
            finished_at: "2026-11-22T10:00:00Z".into(),
            signature: String::new(),
        }
    }

    #[test]
    fn a_signed_receipt_verifies_and_any_changed_byte_does_not() {
        let key = SigningKey::for_tests(&[7; 32]);
        let mut signed = receipt();
        signed.sign(&key);
        assert!(signed.verify(&key));
        assert!(
            !signed.verify(&SigningKey::for_tests(&[8; 32])),
            "another workspace's key"
        );
        let line = serde_json::to_string(&signed).unwrap();
        // Change each byte of the serialised receipt in turn: whatever still
        // parses as a receipt must fail verification.
        let mut still_parsed = 0;
        for index in 0..line.len() {
            let mut bytes = line.clone().into_bytes();
            bytes[index] ^= 0x01;
            let Ok(tampered) = serde_json::from_slice::<ToolReceipt>(&bytes) else {
                continue;
            };
            if tampered == signed {
                continue; // e.g. a changed byte inside insignificant syntax
            }
            still_parsed += 1;
            assert!(
                !tampered.verify(&key),
                "byte {index} changed and the receipt still verifies"
            );
        }
        assert!(
            still_parsed > 100,
            "only {still_parsed} tampered receipts parsed"
        );
    }

    #[test]
    fn a_receipt_from_before_the_version_field_still_verifies() {
        let key = SigningKey::for_tests(&[7; 32]);
        // Signed as a receipt was written before the field existed.
        let mut old = receipt();
        old.version = None;
        old.sign(&key);
        let line = serde_json::to_string(&old).unwrap();
        assert!(!line.contains("\"version\""), "{line}");
        let read: ToolReceipt = serde_json::from_str(&line).unwrap();
        assert!(read.verify(&key));
        // A receipt written now carries its version, under the signature.
        let mut new = receipt();
        new.sign(&key);
        let line = serde_json::to_string(&new).unwrap();
        assert!(line.contains("\"version\":1"), "{line}");
        let mut read: ToolReceipt = serde_json::from_str(&line).unwrap();
        assert!(read.verify(&key));
        read.version = Some(2);
        assert!(!read.verify(&key), "the version is signed");
    }

    #[test]
    fn a_receipt_of_a_newer_version_never_verifies_even_signed() {
        let key = SigningKey::for_tests(&[7; 32]);
        let mut newer = receipt();
        newer.version = Some(TOOL_RECEIPT_VERSION + 1);
        newer.sign(&key);
        assert!(!newer.verify(&key));
        let mut current = receipt();
        current.sign(&key);
        assert!(current.verify(&key));
    }

    #[test]
    fn receipt_ids_have_twelve_hex_digits() {
        assert!(is_receipt_id("rcpt_0123456789ab"));
        assert!(!is_receipt_id("rcpt_0123456789AB"));
        assert!(!is_receipt_id("rcpt_0123456789a"));
        assert!(!is_receipt_id("receipt_0123456789ab"));
    }
}

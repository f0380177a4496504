//! Tool receipts (evidence-rules.md): every phase A tool call leaves a signed
//! record of what it was asked, what it read and what it returned, appended to
//! `.control-room/audit/sessions/{sessionId}/tool_receipts.jsonl`.
//!
//! Receipts are signed with HMAC-SHA256 over their canonical JSON (keys
//! sorted, no whitespace, without the signature), keyed by a per-workspace
//! secret in `.control-room/audit/secret.key`, created on first use and kept
//! out of git by a generated `.control-room/.gitignore`. A receipt whose
//! signature does not verify is treated as unknown.

use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

use super::disk::{self as store, Disk};
use super::file_ref::FileRef;

pub const SECRET_FILE: &str = ".control-room/audit/secret.key";
pub const GITIGNORE_FILE: &str = ".control-room/.gitignore";
const GITIGNORE: &str = "# Written by control-room. The receipt-signing key never leaves this machine;\n\
# run locks, scene locks and cancel requests are per process; the graph's\n\
# memo is a cache of this machine's.\n\
audit/secret.key\n\
runs/*/lock\n\
runs/*/cancel\n\
locks/\n\
graph/\n";

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

/// The canonical JSON a receipt's signature covers: the receipt without its
/// `signature` field (serde_json's maps are sorted by key).
pub fn canonical(receipt: &impl Serialize) -> Vec<u8> {
    let mut value = serde_json::to_value(receipt).expect("a receipt serialises");
    if let Value::Object(object) = &mut value {
        object.remove("signature");
    }
    serde_json::to_vec(&value).expect("a value serialises")
}

/// The per-workspace secret. Its bytes never appear in output.
#[derive(Clone)]
pub struct SigningKey(Vec<u8>);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(..)")
    }
}

impl SigningKey {
    /// Reads the workspace's key, creating it (and the `.gitignore` that keeps
    /// it out of git) on first use.
    pub fn load_or_create(root: &Path, disk: &Disk) -> std::io::Result<SigningKey> {
        let path = root.join(SECRET_FILE);
        ensure_gitignore(root, disk)?;
        match std::fs::read_to_string(&path) {
            Ok(text) => unhex(text.trim()).filter(|bytes| bytes.len() >= 32).map(SigningKey).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{SECRET_FILE} is damaged; delete it to create a new one (old receipts will no longer verify)"),
                )
            }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let mut bytes = vec![0u8; 32];
                getrandom::fill(&mut bytes).map_err(|error| std::io::Error::other(error.to_string()))?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                disk.write_atomic(&path, format!("{}\n", hex(&bytes)).as_bytes())?;
                restrict_permissions(&path);
                // Another process may have won the race: use what is on disk.
                let text = std::fs::read_to_string(&path)?;
                unhex(text.trim()).map(SigningKey).ok_or_else(|| std::io::Error::other("the new key is unreadable"))
            }
            Err(error) => Err(error),
        }
    }

    /// Reads the workspace's key without creating it; `None` if there is
    /// none yet (then no receipt verifies) or it is damaged.
    pub fn load(root: &Path) -> Option<SigningKey> {
        let text = std::fs::read_to_string(root.join(SECRET_FILE)).ok()?;
        unhex(text.trim())
            .filter(|bytes| bytes.len() >= 32)
            .map(SigningKey)
    }

    fn mac(&self, bytes: &[u8]) -> Vec<u8> {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("any key length works");
        mac.update(bytes);
        mac.finalize().into_bytes().to_vec()
    }

    /// `hmac-sha256:HEX` of `bytes`.
    pub fn sign(&self, bytes: &[u8]) -> String {
        format!("hmac-sha256:{}", hex(&self.mac(bytes)))
    }

    /// Whether `signature` is this key's signature of `bytes` (in constant time).
    pub fn verify(&self, bytes: &[u8], signature: &str) -> bool {
        let Some(signature) = signature.strip_prefix("hmac-sha256:") else {
            return false;
        };
        let Some(expected) = unhex(signature) else {
            return false;
        };
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("any key length works");
        mac.update(bytes);
        mac.verify_slice(&expected).is_ok()
    }

    #[cfg(test)]
    pub(crate) fn for_tests(bytes: &[u8]) -> SigningKey {
        SigningKey(bytes.to_vec())
    }
}

#[cfg(unix)]
fn restrict_permissions(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn restrict_permissions(_path: &Path) {}

/// Writes `.control-room/.gitignore`, or adds to the one there the lines it
/// lacks (a workspace from an earlier version lacks the newer ones), keeping
/// the writer's own lines.
fn ensure_gitignore(root: &Path, disk: &Disk) -> std::io::Result<()> {
    let path = root.join(GITIGNORE_FILE);
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error),
    };
    if current.is_empty() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        return disk.write_atomic(&path, GITIGNORE.as_bytes());
    }
    let missing: Vec<&str> = GITIGNORE
        .lines()
        .filter(|line| !line.starts_with('#') && !current.lines().any(|have| have == *line))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut text = current;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    disk.write_atomic(&path, text.as_bytes())
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
    store::read_jsonl(&receipts_path(root, session_id))
}

pub use super::hash::hex;

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn receipt() -> ToolReceipt {
        ToolReceipt {
            version: Some(crate::storage::receipts::TOOL_RECEIPT_VERSION),
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
    fn an_older_gitignore_gets_the_lines_it_lacks_and_keeps_the_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(GITIGNORE_FILE);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "audit/secret.key\nmy-notes/\n").unwrap();
        ensure_gitignore(dir.path(), &Disk::default()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("audit/secret.key\nmy-notes/\n"), "{text}");
        assert!(text.lines().any(|line| line == "locks/"), "{text}");
        assert_eq!(text.matches("audit/secret.key").count(), 1, "{text}");
        // In step already: left alone.
        ensure_gitignore(dir.path(), &Disk::default()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    #[test]
    fn receipt_ids_have_twelve_hex_digits() {
        assert!(is_receipt_id("rcpt_0123456789ab"));
        assert!(!is_receipt_id("rcpt_0123456789AB"));
        assert!(!is_receipt_id("rcpt_0123456789a"));
        assert!(!is_receipt_id("receipt_0123456789ab"));
    }

    #[test]
    fn the_key_is_created_once_and_kept_out_of_git() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::default();
        let first = SigningKey::load_or_create(dir.path(), &disk).unwrap();
        let second = SigningKey::load_or_create(dir.path(), &disk).unwrap();
        assert_eq!(first.0, second.0);
        assert_eq!(first.0.len(), 32);
        let ignore = std::fs::read_to_string(dir.path().join(GITIGNORE_FILE)).unwrap();
        assert!(
            ignore.lines().any(|line| line == "audit/secret.key"),
            "{ignore}"
        );
        assert!(!format!("{first:?}").contains(&hex(&first.0)));
    }
}

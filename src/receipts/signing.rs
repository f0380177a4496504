//! The workspace's signing key: receipts of every kind are signed with
//! HMAC-SHA256 over their canonical JSON (keys sorted, no whitespace,
//! without the signature), keyed by a per-workspace secret in
//! `.control-room/audit/secret.key`, created on first use and kept out of
//! git by a generated `.control-room/.gitignore`.

use std::path::Path;

use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use serde_json::Value;
use sha2::Sha256;

use crate::storage::Disk;

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

pub use crate::storage::hex;

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

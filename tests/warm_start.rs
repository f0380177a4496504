//! A restart on an unchanged manuscript reads each file's syntax from the
//! index's cache (`.control-room/index/`), and says exactly what a cold
//! start says: through `check` and through the language server, with a file
//! changed since the cache was saved and with a corrupt cache.

use crate::support::lsp_client;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use lsp_client::{Client, example_copy, uri};

const CACHE: &str = ".control-room/index/syntax.bin";

fn check(root: &Path) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", root.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "check printed no JSON ({error}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn cold_copy() -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = example_copy();
    let _ = std::fs::remove_dir_all(root.join(".control-room"));
    (dir, root)
}

#[test]
fn check_reads_from_its_cache_what_it_reads_afresh() {
    let (_dir, root) = cold_copy();
    let cold = check(&root);
    let saved = std::fs::read(root.join(CACHE)).expect("a cold check saves the cache");
    assert_eq!(check(&root), cold);
    assert_eq!(
        std::fs::read(root.join(CACHE)).unwrap(),
        saved,
        "a warm check with nothing to add leaves the cache as it was"
    );
    // A scene changed since: a new heading and quote the cache never saw.
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let text = std::fs::read_to_string(&scene).unwrap();
    let changed = text.replacen(
        "\n\n",
        "\n\n## Later\n\n> Nobody saw Maren Kell at the gate.\n\n",
        1,
    );
    assert_ne!(changed, text);
    std::fs::write(&scene, changed).unwrap();
    let warm = check(&root);
    std::fs::remove_dir_all(root.join(".control-room/index")).unwrap();
    assert_eq!(warm, check(&root));
    // A cache whose bytes were damaged is read as no cache.
    let mut bytes = std::fs::read(root.join(CACHE)).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(root.join(CACHE), &bytes).unwrap();
    assert_eq!(check(&root), warm);
}

/// Starts the server on `root`, waits for its index and the diagnostics of
/// `scene`; returns them and the index's closing message.
fn start(root: &Path, scene: &Path) -> (Value, String) {
    let mut client = Client::spawn(&[]);
    client.initialize(root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let end = client
        .seen
        .iter()
        .find(|message| {
            message["method"] == "$/progress" && message["params"]["value"]["kind"] == "end"
        })
        .map(|message| message["params"]["value"]["message"].clone())
        .unwrap();
    // Nothing is open: the scene's diagnostics come with the whole manuscript's.
    let diagnostics = client.diagnostics_since(0, &uri(scene), |_| true)["diagnostics"].clone();
    // The cache is saved after the index, beside the first diagnostics.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !root.join(CACHE).is_file() {
        assert!(Instant::now() < deadline, "the server saved no cache");
        std::thread::sleep(Duration::from_millis(20));
    }
    client.shutdown();
    (diagnostics, end.as_str().unwrap_or_default().to_owned())
}

#[test]
fn a_warm_start_reads_every_unchanged_file_from_the_cache_and_publishes_what_a_cold_start_did() {
    let (_dir, root) = cold_copy();
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let (cold, cold_end) = start(&root, &scene);
    assert!(!cold.as_array().unwrap().is_empty(), "{cold}");
    let files: usize = cold_end
        .split(' ')
        .next()
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("{cold_end:?} counts the files"));
    assert_eq!(cold_end, format!("{files} files indexed"));
    let (warm, warm_end) = start(&root, &scene);
    assert_eq!(
        warm_end,
        format!("{files} files indexed, {files} unchanged since the last start")
    );
    assert_eq!(warm, cold);
}

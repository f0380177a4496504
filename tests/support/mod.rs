//! What the integration tests share: fixture workspaces (here), the LSP
//! client that drives the real binary (`lsp_client`), a fake model server
//! for exact cases (`model_server`) and the real local one
//! (`real_model_server`).
//!
//! Fixtures:
//! Every folder under `tests/fixtures/` is a small manuscript. Tests never
//! load a fixture in place: [`materialise`] copies it into a temporary folder
//! (so the repository's own `.gitignore` and paths play no part, and tests
//! may write into it) and then writes the files that cannot be committed:
//! bytes that are not text, files that a fixture's own `.gitignore` would
//! keep out of git, and files under `target/`, which the repository ignores.

pub mod lsp_client;
pub mod model_server;
pub mod real_model_server;

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// The diagnostic codes of the contract (`docs/manuscript-format.md`),
/// which the quality and false-alarm tests count.
pub const CONTRACT_CODES: &[&str] = &[
    "front-matter",
    "unknown-reference",
    "duplicate-id",
    "dead-character",
    "attribute-mismatch",
    "name-typo",
    "missing-scene",
    "orphan-scene",
    "timeline-order",
    "anti-pattern",
    "card-spelling",
    "pov-leak",
    "presence",
    "two-places",
    "unknown-speaker",
    "possession",
    "wound",
    "secret",
    "travel-time",
    "lifespan",
    "story-bible",
    "voice-drift",
    "pacing-plateau",
    "beat-progress",
    "cast-function",
    "motif-gap",
];

/// A file in each fixture that says what the case is about; it is not
/// Markdown, so it is never indexed.
pub const DESCRIPTION_FILE: &str = "fixture.txt";

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
}

/// The name of every fixture folder, sorted.
pub fn case_names() -> Vec<String> {
    folder_names(&fixtures_dir())
}

/// The names of the folders directly under `dir`, sorted.
pub fn folder_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()))
        .map(|entry| entry.expect("folder entries can be read"))
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| {
            entry
                .file_name()
                .into_string()
                .expect("case folder names are UTF-8")
        })
        .collect();
    names.sort();
    names
}

pub fn snapshots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("snapshots")
}

/// The snapshot insta keeps for `case` of the test module `module`:
/// `tests/snapshots/<crate>__<module>__<case>.snap`.
pub fn snapshot_file(module: &str, case: &str) -> PathBuf {
    snapshots_dir().join(format!(
        "{}__{module}__{case}.snap",
        env!("CARGO_CRATE_NAME")
    ))
}

/// Asserts that every snapshot of the test module `module` has its case,
/// so a renamed case leaves no stale snapshot behind that nobody reviews.
pub fn assert_every_snapshot_has_a_case(module: &str, cases: &[String]) {
    let prefix = format!("{}__{module}", env!("CARGO_CRATE_NAME"));
    let Ok(entries) = fs::read_dir(snapshots_dir()) else {
        return;
    };
    for entry in entries {
        let name = entry
            .expect("snapshot entries can be read")
            .file_name()
            .into_string()
            .expect("UTF-8 names");
        let Some(case) = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_prefix("__"))
            .and_then(|rest| rest.strip_suffix(".snap"))
        else {
            continue;
        };
        assert!(
            cases.iter().any(|known| known == case),
            "snapshot {name} has no case folder named {case}"
        );
    }
}

/// What the case is about, from its description file.
pub fn description(case: &str) -> String {
    let path = fixtures_dir().join(case).join(DESCRIPTION_FILE);
    fs::read_to_string(&path)
        .unwrap_or_else(|error| {
            panic!(
                "{} must say what the case is about: {error}",
                path.display()
            )
        })
        .trim()
        .to_owned()
}

/// A temporary copy of the fixture `case`, with its run-time files written.
pub fn materialise(case: &str) -> TempDir {
    let source = fixtures_dir().join(case);
    assert!(source.is_dir(), "no fixture folder {}", source.display());
    let copy = tempfile::Builder::new()
        .prefix(&format!("control-room-{case}-"))
        .tempdir()
        .expect("a temporary folder can be created");
    copy_tree(&source, copy.path());
    write_run_time_files(case, copy.path());
    copy
}

/// Copies a folder and everything under it.
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", to.display()));
    for entry in
        fs::read_dir(from).unwrap_or_else(|error| panic!("cannot list {}: {error}", from.display()))
    {
        let entry = entry.expect("directory entries can be read");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file types can be read").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target)
                .unwrap_or_else(|error| panic!("cannot copy {}: {error}", entry.path().display()));
        }
    }
}

fn write(root: &Path, path: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().expect("fixture files live in a folder"))
        .expect("folders can be created");
    fs::write(&path, bytes)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
}

/// Files a case needs that are not committed; see each fixture's description.
fn write_run_time_files(case: &str, root: &Path) {
    match case {
        "bad-files" => {
            // "Café" in Latin-1: the byte 0xE9 is not UTF-8.
            write(
                root,
                "Story/Scenes/SCN-latin1.md",
                b"---\ntitle: Caf\xe9\npov: Kael\n---\n\nKael ordered a caf\xe9.\n",
            );
            write(
                root,
                "Compendium/Characters/CHAR-binary.md",
                b"---\nname: Ghost\n---\n\x00\x00\x01\x02binary",
            );
            let mut huge = b"---\ntitle: Huge\npov: Nobody\n---\n\n".to_vec();
            huge.resize(8 * 1024 * 1024 + 1, b'a');
            write(root, "Story/Scenes/SCN-huge.md", huge);
            write(
                root,
                "Story/Scenes/SCN-bom.md",
                "\u{feff}---\ntitle: Bom\npov: Brannoc\n---\n\n# Bom\n\nKael.\n",
            );
            write(
                root,
                "Story/Scenes/SCN-crlf.md",
                "---\r\ntitle: Crlf\r\npov: Kael\r\ncharacters: [Kael, Brannoc]\r\n---\r\n\r\n# Crlf\r\n\r\nKael.\r\n",
            );
        }
        "gitignore-and-hidden" => {
            let would_be_a_problem =
                "---\ntype: scene\ntitle: Not indexed\npov: Nobody\n---\n\n# Not indexed\n";
            write(root, "Story/Scenes/drafts/SCN-draft.md", would_be_a_problem);
            write(
                root,
                "Story/Scenes/SCN-ideas.scratch.md",
                would_be_a_problem,
            );
            write(root, "target/SCN-built.md", would_be_a_problem);
        }
        _ => {}
    }
}

/// A temporary copy of the bundled example, without any `.control-room/`.
pub fn example_copy(prefix: &str) -> TempDir {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road");
    copy_tree(&source, dir.path());
    let _ = fs::remove_dir_all(dir.path().join(".control-room"));
    dir
}

/// A command's stdout and stderr, as text.
pub fn output_text(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The ids of the workspace's runs.
pub fn run_ids(root: &Path) -> Vec<String> {
    fs::read_dir(root.join(".control-room/runs"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect()
}

/// The id of the workspace's one run.
pub fn only_run(root: &Path) -> String {
    let runs = run_ids(root);
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

/// A JSON file, parsed, or a panic naming it.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}\n{text}", path.display()))
}

/// The agent receipt of step `step` of run `run_id` (its last, if the
/// step ran more than once).
pub fn agent_receipt(root: &Path, run_id: &str, step: &str) -> serde_json::Value {
    let dir = root.join(format!(".control-room/audit/issues/{run_id}"));
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains("__receipt__"))
        .collect();
    paths.sort();
    paths
        .iter()
        .rev()
        .map(|path| read_json(path))
        .find(|receipt| receipt["step_id"] == step)
        .unwrap_or_else(|| panic!("no receipt for {step}"))
}

/// Turns grammar off in the manuscript at `root`'s configuration, for a
/// test of other codes on a whole novel: harper would read every paragraph
/// of it first (minutes in a debug build), for findings the test ignores.
pub fn grammar_off(root: &Path) {
    let config = root.join("control-room.toml");
    let mut text = fs::read_to_string(&config).unwrap_or_default();
    assert!(
        !text.lines().any(|line| line.trim() == "[language]"),
        "{} has a [language] table already: set its grammar there",
        config.display()
    );
    text.push_str("\n[language]\ngrammar = \"off\"\n");
    fs::write(&config, text)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", config.display()));
}

/// Runs the real binary with `args` on the manuscript at `root`.
pub fn control_room(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(args)
        .arg("--dir")
        .arg(root)
        .output()
        .expect("the binary runs")
}

/// The binary run on the manuscript at `root` with `args`, its model
/// settings only from the manuscript's configuration (none from this
/// process's environment) and `envs` set.
pub fn control_room_with(
    root: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"));
    command.args(args).arg("--dir").arg(root);
    for name in [
        "CONTROL_ROOM_LLM_PROVIDER",
        "CONTROL_ROOM_LLM_BASE_URL",
        "CONTROL_ROOM_LLM_MODEL",
    ] {
        command.env_remove(name);
    }
    command.envs(envs.iter().copied());
    command.output().expect("the binary runs")
}

/// `control-room health --json` on the manuscript at `root`.
pub fn health_report(root: &Path) -> serde_json::Value {
    let output = control_room(root, &["health", "--json"]);
    assert!(output.status.success(), "{}", output_text(&output));
    serde_json::from_slice(&output.stdout).expect("the report is JSON")
}

/// The check `id` (`A1`…`C2`) of a health report.
pub fn health_check(report: &serde_json::Value, id: &str) -> serde_json::Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|check| check["id"] == id)
        .unwrap_or_else(|| panic!("no check {id}: {report}"))
        .clone()
}

/// A runner of the workspace at `root`, its agents answered by `model`,
/// its state written through `disk`.
pub fn runner(
    root: &Path,
    disk: control_room::runs::store::Disk,
    model: std::sync::Arc<dyn control_room::llm::model::Model>,
) -> control_room::runs::runner::Runner {
    use control_room::index::Workspace;
    use control_room::runs::prompts::Prompts;
    use control_room::runs::recipe::Registry;
    let templates = Prompts::load(root);
    control_room::runs::runner::Runner {
        workspace: std::sync::Arc::new(Workspace::load(root)),
        registry: std::sync::Arc::new(Registry::load(root, &templates)),
        prompts: std::sync::Arc::new(templates),
        model: Some(model),
        disk,
        sinks: Vec::new(),
        reuse: false,
        graph: Default::default(),
        cited: Default::default(),
    }
}

/// Writes the knowledge base of the workspace at `root`: a writer's
/// `character` decision of the scene SCN-the-high-tide for each (key, value).
pub fn write_character_decisions(root: &Path, decisions: &[(&str, &str)]) -> PathBuf {
    let kb = root.join(".control-room/kb/decisions.jsonl");
    fs::create_dir_all(kb.parent().unwrap()).unwrap();
    let text: String = decisions
        .iter()
        .map(|(key, value)| {
            serde_json::json!({"category": "character", "key": key, "value": value,
                "source": "writer", "scene": "SCN-the-high-tide",
                "created_at": "2026-11-20T10:00:00.000Z",
                "updated_at": "2026-11-20T10:00:00.000Z", "promoted": false})
            .to_string()
                + "\n"
        })
        .collect();
    fs::write(&kb, text).unwrap();
    kb
}

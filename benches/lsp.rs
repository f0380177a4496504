//! Benchmarks of the language server as an editor meets it: the real binary,
//! spoken to over stdio, on a generated 1M-word manuscript (500 scenes).
//!
//! Targets (issue "Foundation"):
//! - `lsp/first_diagnostics_after_initialized`: the scene the writer opens gets
//!   its diagnostics ≤ 100 ms after `initialized`, at any workspace size.
//! - `lsp/did_change_to_diagnostics`: one sentence typed into a 5,000-word open
//!   scene → its diagnostics published (debounce set to 0, so excluded) ≤ 10 ms
//!   median, ≤ 25 ms p99.
//! - `cli/check_whole_process_1M_words`: `control-room check` as a process ≤ 1.5 s.
//! - peak RSS with 20 scenes open at 1M words ≤ 100 MB (printed, not timed).
//!
//! Run with `cargo bench --bench lsp` (builds the release binary first);
//! `CONTROL_ROOM_BENCH_GRAMMAR=open` turns grammar on in the open scenes;
//! `CONTROL_ROOM_BENCH_HEALTH=off` turns the story's health's diagnostics
//! off, for its cost.

#[path = "support/corpus.rs"]
mod corpus;
#[path = "../tests/lsp_support/mod.rs"]
mod lsp_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

use lsp_support::{Client, uri};

struct Manuscript {
    _dir: tempfile::TempDir,
    root: PathBuf,
    scenes: Vec<PathBuf>,
}

fn manuscript() -> Manuscript {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("novel");
    let generated =
        corpus::generate(&corpus::CorpusSpec::large(), &root).expect("the corpus is written");
    corpus::add_continuity_data(&root, &generated).expect("continuity data is written");
    // No debounce: the benchmark measures the server's own work.
    // `CONTROL_ROOM_BENCH_GRAMMAR=open` measures it with grammar on.
    let grammar = std::env::var("CONTROL_ROOM_BENCH_GRAMMAR")
        .map(|scope| format!("[language]\ngrammar = \"{scope}\"\n"))
        .unwrap_or_default();
    // `CONTROL_ROOM_BENCH_HEALTH=off` turns the story's health's diagnostics
    // off (the server then never measures the book for them).
    let health = if std::env::var("CONTROL_ROOM_BENCH_HEALTH").is_ok_and(|value| value == "off") {
        "[diagnostics.severity]\npacing-plateau = \"off\"\nbeat-progress = \"off\"\ncast-function = \"off\"\nmotif-gap = \"off\"\n"
    } else {
        ""
    };
    std::fs::write(
        root.join("control-room.toml"),
        format!("[diagnostics]\ndebounce_ms = 0\n{health}{grammar}"),
    )
    .unwrap();
    let root = root.canonicalize().unwrap();
    let scenes = generated
        .scene_paths
        .iter()
        .map(|path| path.canonicalize().unwrap())
        .collect();
    Manuscript {
        _dir: dir,
        root,
        scenes,
    }
}

fn start(root: &Path, capabilities: Value) -> Client {
    let mut client = Client::spawn(&[]);
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(root), "capabilities": capabilities}),
    );
    client
}

fn first_diagnostics(c: &mut Criterion, manuscript: &Manuscript) {
    let scene = &manuscript.scenes[manuscript.scenes.len() / 2];
    let scene_uri = uri(scene);
    let text = std::fs::read_to_string(scene).unwrap();
    let mut group = c.benchmark_group("lsp");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("first_diagnostics_after_initialized", |bench| {
        bench.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let mut client = start(&manuscript.root, json!({}));
                let started = Instant::now();
                client.notify("initialized", json!({}));
                client.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": scene_uri, "languageId": "markdown", "version": 1, "text": text}}),
                );
                client.diagnostics_for(&scene_uri, |_| true);
                total += started.elapsed();
                client.shutdown();
            }
            total
        });
    });
    group.finish();
}

fn did_change(c: &mut Criterion, manuscript: &Manuscript) {
    // A 5,000-word scene: the first scene with the prose of the next ones appended.
    let scene = &manuscript.scenes[0];
    let mut text = std::fs::read_to_string(scene).unwrap();
    for other in &manuscript.scenes[1..3] {
        let other = std::fs::read_to_string(other).unwrap();
        let body = other.splitn(3, "---\n").nth(2).unwrap_or(&other);
        text.push_str(body);
    }
    std::fs::write(scene, &text).unwrap();
    let scene_uri = uri(scene);
    let mut client = start(
        &manuscript.root,
        json!({"window": {"workDoneProgress": true}}),
    );
    client.notify("initialized", json!({}));
    client.wait_for_index();
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": scene_uri, "languageId": "markdown", "version": 1, "text": text}}),
    );
    client.diagnostics_for(&scene_uri, |_| true);
    let middle_line = text.lines().count() / 2;
    let sentence = "The lamp guttered and went out. ";
    let mut version = 1;
    let mut inserted = false;
    let mut each: Vec<Duration> = Vec::new();
    let mut group = c.benchmark_group("lsp");
    group
        .sample_size(200)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("did_change_to_diagnostics", |bench| {
        bench.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                version += 1;
                let start = json!({"line": middle_line, "character": 0});
                let (range, new_text) = if inserted {
                    let end = json!({"line": middle_line, "character": sentence.encode_utf16().count()});
                    (json!({"start": start, "end": end}), "")
                } else {
                    (json!({"start": start, "end": start}), sentence)
                };
                inserted = !inserted;
                let started = Instant::now();
                client.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": scene_uri, "version": version}, "contentChanges": [{"range": range, "text": new_text}]}),
                );
                client.wait_for(|message| {
                    message["method"] == "textDocument/publishDiagnostics"
                        && message["params"]["uri"] == scene_uri.as_str()
                        && message["params"]["version"] == version
                });
                let elapsed = started.elapsed();
                each.push(elapsed);
                total += elapsed;
            }
            total
        });
    });
    group.finish();
    // Criterion reports means of samples; the target also bounds the tail.
    each.sort();
    if each.is_empty() {
        // Filtered out on the command line.
        client.shutdown();
        return;
    }
    let quantile = |q: f64| each[((each.len() - 1) as f64 * q).round() as usize];
    println!(
        "lsp/did_change_to_diagnostics over {} edits: median {:.2?}, p99 {:.2?}",
        each.len(),
        quantile(0.5),
        quantile(0.99)
    );
    client.seen.clear();
    client.shutdown();
}

fn peak_rss(manuscript: &Manuscript) {
    let mut client = start(
        &manuscript.root,
        json!({"window": {"workDoneProgress": true}}),
    );
    client.notify("initialized", json!({}));
    client.wait_for_index();
    for (index, scene) in manuscript
        .scenes
        .iter()
        .step_by(manuscript.scenes.len() / 20)
        .take(20)
        .enumerate()
    {
        let text = std::fs::read_to_string(scene).unwrap();
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(scene), "languageId": "markdown", "version": index + 1, "text": text}}),
        );
        client.diagnostics_for(&uri(scene), |_| true);
    }
    let references = client.request("workspace/symbol", json!({"query": "a"}));
    assert!(
        references
            .as_array()
            .is_some_and(|symbols| !symbols.is_empty())
    );
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", client.pid())).unwrap_or_default();
    let peak = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .unwrap_or("VmHWM: unknown");
    println!(
        "lsp/peak_rss_20_open_scenes_1M_words: {}",
        peak.trim_start_matches("VmHWM:").trim()
    );
    client.shutdown();
}

/// `control-room check` of the whole manuscript, as a process (target ≤ 1.5 s).
fn check_process(c: &mut Criterion, manuscript: &Manuscript) {
    let mut group = c.benchmark_group("cli");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(15));
    group.bench_function("check_whole_process_1M_words", |bench| {
        bench.iter(|| {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
                .args(["check", "--format", "json"])
                .arg(&manuscript.root)
                .output()
                .expect("control-room check runs");
            assert!(
                output.status.code().is_some_and(|code| code <= 1),
                "check could not run"
            );
            output.stdout.len()
        });
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let manuscript = manuscript();
    check_process(c, &manuscript);
    first_diagnostics(c, &manuscript);
    did_change(c, &manuscript);
    peak_rss(&manuscript);
}

criterion_group!(lsp, benches);
criterion_main!(lsp);

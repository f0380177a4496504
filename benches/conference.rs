//! Conference benchmarks.
//!
//! Targets (issue "Conference rounds and evidence validation"):
//! - `conference/validate_50_replies`: validating a transcript of 50 replies
//!   (each an Evidence line quoting one of 50 generated scenes of ~2,000
//!   words, citing a signed receipt that read it) with a fresh validator,
//!   so every cited scene is normalised and hashed again: ≤ 5 ms median.
//! - `conference/phase2_six_agents`: a round whose Chief stops at once and
//!   whose six agents are answered by the fake model server of the tests over
//!   real HTTP after a delay of 200 ms each. Phase 2 should take about one
//!   model latency, not six; the same round with one agent at a time is
//!   measured beside it for comparison.
//!
//! Run with `cargo bench --bench conference`.

#[path = "support/corpus.rs"]
mod corpus;
#[path = "../tests/support/model_server/mod.rs"]
mod model_server;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

use control_room::conference::envelope::Policy;
use control_room::conference::{Conference, Request};
use control_room::evidence::{ReceiptBook, Validator, WorkspaceSources};
use control_room::index::Workspace;
use control_room::llm::config::Layer;
use control_room::llm::{self, LlmConfig};
use control_room::receipts::{SigningKey, ToolReceipt};
use control_room::runs::prompts::Prompts;
use control_room::runs::store::Disk;
use control_room::tools::{FileRef, sha256_hex};
use model_server::{Answer, FakeModelServer, step_marker};

const ROUND: &str = "conf_0123456789ab";
const DELAY: Duration = Duration::from_millis(200);

/// 50 replies, each quoting a sentence of its own scene, and the receipts they cite.
fn transcript(workspace: &Workspace, key: &SigningKey) -> (String, Vec<ToolReceipt>) {
    let mut scenes: Vec<_> = workspace
        .files()
        .filter(|file| file.scene().is_some())
        .collect();
    scenes.sort_by(|a, b| a.path.cmp(&b.path));
    assert!(scenes.len() >= 50, "{} scenes", scenes.len());
    let mut text = format!("---\nconference_id: {ROUND}\n---\n# Conference\n\n## Replies\n");
    let mut receipts = Vec::new();
    for (index, scene) in scenes.iter().take(50).enumerate() {
        let id = format!("rcpt_{index:012x}");
        let mut receipt = ToolReceipt {
            version: Some(control_room::receipts::TOOL_RECEIPT_VERSION),
            receipt_id: id.clone(),
            run_id: ROUND.into(),
            session_id: ROUND.into(),
            step_id: format!("tools_{index}"),
            tool: "file_locator".into(),
            args: json!({}),
            output: json!({}),
            output_sha256: String::new(),
            output_size: 0,
            summary: String::new(),
            file_refs: vec![FileRef {
                path: scene.path.to_string(),
                start_line: 1,
                end_line: 2,
                sha256: sha256_hex(scene.text.as_bytes()),
                excerpt: String::new(),
            }],
            started_at: String::new(),
            finished_at: String::new(),
            signature: String::new(),
        };
        receipt.sign(key);
        receipts.push(receipt);
        // A quote from the middle of the scene, free of quote marks.
        let body = &scene.text[scene.text.len() / 2..];
        let line = body
            .lines()
            .map(str::trim)
            .find(|line| line.len() > 80 && !line.contains(['"', '“', '”']))
            .expect("a plain line");
        let end = line.char_indices().nth(60).map_or(line.len(), |(at, _)| at);
        text.push_str(&format!(
            "\n### writer\n\n> Opinion {index}.\n> Evidence: \"{}\" in {} (receipt_id: {id})\n",
            &line[..end],
            scene.path
        ));
    }
    (text, receipts)
}

fn median_and_p99(name: &str, mut samples: Vec<Duration>) {
    if samples.is_empty() {
        return; // filtered out
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name}: median {:.2} ms, p99 {:.2} ms over {} runs",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        samples.len()
    );
}

fn validation(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let spec = corpus::CorpusSpec {
        scenes: 60,
        ..corpus::CorpusSpec::small()
    };
    corpus::generate(&spec, dir.path()).unwrap();
    let workspace = Workspace::load(dir.path());
    let key = SigningKey::load_or_create(dir.path(), &Disk::default()).unwrap();
    let (text, receipts) = transcript(&workspace, &key);
    let book = ReceiptBook::with_receipts(&key, &receipts);
    let sources = WorkspaceSources {
        workspace: &workspace,
    };
    let problems = Validator::new(&sources, &book).document(&text);
    assert!(problems.is_empty(), "{problems:?}");
    let mut samples = Vec::new();
    c.bench_function("conference/validate_50_replies", |b| {
        b.iter(|| {
            let started = Instant::now();
            let problems = Validator::new(&sources, &book).document(&text);
            samples.push(started.elapsed());
            problems
        })
    });
    median_and_p99("conference/validate_50_replies", samples);
}

fn connect(url: &str) -> Arc<dyn control_room::llm::model::Model> {
    let settings = json!({"provider": "openai", "base_url": url, "model": "llama3.1:8b", "max_retries": 0, "concurrency": 6});
    let layer = Layer::from_json("bench", &settings).unwrap();
    let config = LlmConfig::resolve(&[layer]).unwrap();
    llm::connect(&config, Path::new("."), &|_| None, None).unwrap()
}

fn phase_two(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    corpus::generate(&corpus::CorpusSpec::with_scenes(5), dir.path()).unwrap();
    let server = FakeModelServer::start();
    server.on(
        &step_marker("tools", "chief"),
        vec![Answer::text(json!({"done": "enough"}).to_string())],
    );
    server.on(
        "",
        vec![Answer::Delayed(DELAY, Box::new(Answer::text("ABSTAIN")))],
    );
    let conference = Conference {
        workspace: Arc::new(Workspace::load(dir.path())),
        prompts: Arc::new(Prompts::bundled()),
        model: connect(&server.url),
        key: SigningKey::load_or_create(dir.path(), &Disk::default()).unwrap(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("conference");
    group.sample_size(10);
    for (name, concurrency) in [
        ("phase2_six_agents", 6),
        ("phase2_six_agents_one_at_a_time", 1),
    ] {
        let mut samples = Vec::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut request = Request::new("Does the opening hold?");
                request.policy = Policy {
                    require_tool_first: false,
                    ..Policy::default()
                };
                request.concurrency = concurrency;
                let round = runtime
                    .block_on(conference.convene(
                        request,
                        &|_| {},
                        &tokio_util::sync::CancellationToken::new(),
                    ))
                    .unwrap();
                samples.push(Duration::from_millis(round.phase2_ms as u64));
                round
            })
        });
        median_and_p99(&format!("conference/{name} (phase 2 only)"), samples);
    }
    group.finish();
}

criterion_group!(benches, validation, phase_two);
criterion_main!(benches);

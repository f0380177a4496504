//! Benchmarks of recipe runs started from the editor: the real binary, spoken
//! to over stdio, on a copy of the bundled example (examples/salt-road), its
//! agents' model requests sent over real HTTP to the fake model server of the
//! tests, which never answers them (`Answer::Hang`), so runs stay in flight
//! for as long as the benchmark needs them.
//!
//! Targets (issue "Recipe runs started from the editor"):
//! - `runs/execute_command_to_first_progress_report`: from sending
//!   `workspace/executeCommand` `controlRoom.runRecipe` to the first
//!   `$/progress` of that run whose `value.kind` is `"report"` (the first
//!   phase A tool step, "[1/8] discover (file_locator)") ≤ 50 ms median. The
//!   run is then cancelled and its progress `end` awaited, untimed, so runs do
//!   not pile up.
//! - `runs/hover_with_three_runs_in_flight`: `textDocument/hover` on a
//!   character name in an open scene while three runs are in flight, each
//!   waiting on its model request ≤ 10 ms median.
//!
//! - `runs/streamed_first_words`: a second server whose planner streams its
//!   brief at 50 tokens a second (a word every 20 ms); from the fake server
//!   sending the first word to the editor receiving the `$/progress` report
//!   that shows it ≤ 100 ms. Each iteration also times every word after it,
//!   from its chunk being sent to the report that counts it, printed as
//!   `runs/streamed_chunk_to_report` (target ≤ 5 ms median).
//!
//! Besides criterion's own figures, each benchmark prints the median and p99
//! of its individual iterations.
//!
//! Run with `cargo bench --bench runs` (builds the release binary first).

#[path = "../tests/support/lsp_client/mod.rs"]
mod lsp_client;
#[path = "../tests/support/model_server/mod.rs"]
mod model_server;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use serde_json::{Value, json};

use lsp_client::{Client, example_copy, position_of, uri};
use model_server::{Answer, FakeModelServer};

/// Existing scenes of the example, drafted in turn, so the timings are not
/// those of one scene's files.
const SCENES: [&str; 6] = [
    "SCN-the-arrival",
    "SCN-the-gate",
    "SCN-the-saltmaster",
    "SCN-the-fall",
    "SCN-the-vigil",
    "SCN-the-high-tide",
];

/// A language server on a copy of the example whose model never answers.
struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    model: FakeModelServer,
    client: Client,
}

fn setup() -> Setup {
    // Every model request hangs, so a run stays in flight at its first agent
    // step (after the three phase A tool steps) until it is cancelled.
    setup_with(|_| {})
}

/// A language server on a copy of the example whose model answers by
/// `rules`, then hangs on every other request.
fn setup_with(rules: impl FnOnce(&FakeModelServer)) -> Setup {
    let (dir, root) = example_copy();
    let model = FakeModelServer::start();
    rules(&model);
    model.on("", vec![Answer::Hang]);
    // As tests/runs.rs configures it, with a timeout far longer than the
    // benchmark, so no hanging request fails and ends its run meanwhile.
    std::fs::write(
        root.join("control-room.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"llama3.1:8b\"\nmax_retries = 0\ntimeout_s = 3600\n",
            model.url
        ),
    )
    .unwrap();
    let mut client = Client::spawn(&[]);
    // A client that does progress, shows documents and applies edits with
    // versions and file creation, as VS Code does. Server requests
    // (`window/workDoneProgress/create`…) are answered `null`.
    client.initialize(
        &root,
        json!({
            "window": {"workDoneProgress": true, "showDocument": {"support": true}},
            "workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}},
        }),
    );
    client.wait_for_index();
    Setup {
        _dir: dir,
        root,
        model,
        client,
    }
}

fn run_token(run_id: &str) -> String {
    format!("control-room/run/{run_id}")
}

fn is_progress(message: &Value, token: &str, kind: &str) -> bool {
    message["method"] == "$/progress"
        && message["params"]["token"] == token
        && message["params"]["value"]["kind"] == kind
}

/// Sends `controlRoom.runRecipe` for `creative_draft_scene` on `scene` and
/// returns the run's progress token once its reply has come.
fn start_run(client: &mut Client, scene: &str) -> String {
    let reply = client.request_raw(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runRecipe", "arguments": [
            {"recipe": "creative_draft_scene", "scene": scene}]}),
    );
    let run_id = reply["result"]["run_id"]
        .as_str()
        .unwrap_or_else(|| panic!("the run did not start: {reply}"));
    run_token(run_id)
}

/// Waits for the first progress of `token` of this `kind`, which may have
/// come already (before the reply that named the run).
fn wait_for_progress(client: &mut Client, token: &str, kind: &str) {
    if !client.seen.iter().any(|m| is_progress(m, token, kind)) {
        client.wait_for(|m| is_progress(m, token, kind));
    }
}

/// Cancels the run of `token` from its progress's cancel button and waits
/// for its progress to end.
fn cancel(client: &mut Client, token: &str) {
    client.notify("window/workDoneProgress/cancel", json!({"token": token}));
    wait_for_progress(client, token, "end");
    let end = client
        .seen
        .iter()
        .rev()
        .find(|m| is_progress(m, token, "end"))
        .unwrap();
    assert_eq!(end["params"]["value"]["message"], "cancelled", "{end}");
}

/// Prints the median and p99 of individual iterations (criterion's own
/// figures are over samples of several iterations each).
fn print_quantiles(name: &str, each: &mut [Duration]) {
    if each.is_empty() {
        // Filtered out on the command line.
        return;
    }
    each.sort();
    let quantile = |q: f64| each[((each.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name} over {} iterations: median {:.2?}, p99 {:.2?}",
        each.len(),
        quantile(0.5),
        quantile(0.99)
    );
}

/// Target 1: `executeCommand` → the run's first progress report.
fn first_progress_report(c: &mut Criterion, setup: &mut Setup) {
    let client = &mut setup.client;
    let mut next_scene = 0;
    let mut each: Vec<Duration> = Vec::new();
    // The part of each that is the reply to `executeCommand` (the run
    // created, not yet begun), to tell where the time goes.
    let mut replies: Vec<Duration> = Vec::new();
    let mut group = c.benchmark_group("runs");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(15))
        .sampling_mode(SamplingMode::Flat);
    group.bench_function("execute_command_to_first_progress_report", |bench| {
        bench.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let scene = SCENES[next_scene % SCENES.len()];
                next_scene += 1;
                // Only this run's messages matter from here on.
                client.seen.clear();
                let started = Instant::now();
                let token = start_run(client, scene);
                replies.push(started.elapsed());
                wait_for_progress(client, &token, "report");
                let elapsed = started.elapsed();
                each.push(elapsed);
                total += elapsed;
                // Untimed: the run has reached its hanging model request (or
                // is on its way to it); cancel it and wait for its end.
                cancel(client, &token);
            }
            total
        });
    });
    group.finish();
    // The last run's first report is its first phase A tool step.
    let first = setup.client.seen.iter().find(|m| {
        m["method"] == "$/progress"
            && m["params"]["token"]
                .as_str()
                .is_some_and(|token| token.starts_with("control-room/run/"))
            && m["params"]["value"]["kind"] == "report"
    });
    if let Some(first) = first {
        assert_eq!(
            first["params"]["value"]["message"],
            "[1/8] discover (file_locator)"
        );
    }
    print_quantiles("runs/execute_command_to_first_progress_report", &mut each);
    print_quantiles(
        "  of which the reply to executeCommand (run created)",
        &mut replies,
    );
    setup.client.seen.clear();
}

/// Target 2: hover on "Kael" in an open scene with three runs in flight.
fn hover_with_runs_in_flight(c: &mut Criterion, setup: &mut Setup) {
    let client = &mut setup.client;
    let arrival: &Path = &setup.root.join("Story/Scenes/SCN-the-arrival.md");
    let arrival_uri = uri(arrival);
    let text = client.open(arrival, 1);
    client.diagnostics_for(&arrival_uri, |_| true);
    let kael = position_of(&text, "Kael had walked", 0);
    let hover = json!({"textDocument": {"uri": arrival_uri}, "position": kael});

    // Three runs on three other scenes, each up to its first agent step,
    // the scene brief, whose model request hangs. Waiting here also answers
    // the server's `window/workDoneProgress/create` requests, without which
    // a run does not begin.
    let requests_before = setup.model.received().len();
    let tokens: Vec<String> = ["SCN-the-gate", "SCN-the-vigil", "SCN-the-fall"]
        .iter()
        .map(|scene| start_run(client, scene))
        .collect();
    for token in &tokens {
        let at_brief = |m: &Value| {
            is_progress(m, token, "report")
                && m["params"]["value"]["message"] == "[4/8] brief (planner)"
        };
        if !client.seen.iter().any(at_brief) {
            client.wait_for(at_brief);
        }
    }
    // The model requests follow the brief's report at once.
    let deadline = Instant::now() + Duration::from_secs(20);
    while setup.model.received().len() < requests_before + 3 {
        assert!(
            Instant::now() < deadline,
            "the three runs did not send their model requests"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let runs = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.listRuns", "arguments": []}),
    );
    let in_flight = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|run| run["in_flight"] == true)
        .count();
    assert_eq!(in_flight, 3, "{runs:#}");

    // The hover is the character's card.
    let card = client.request("textDocument/hover", hover.clone());
    let markdown = card["contents"]["value"].as_str().unwrap_or_default();
    assert!(markdown.contains("**Kael Maren**"), "{card:#}");

    let mut each: Vec<Duration> = Vec::new();
    let mut group = c.benchmark_group("runs");
    group
        .sample_size(100)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("hover_with_three_runs_in_flight", |bench| {
        bench.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let started = Instant::now();
                let reply = client.request_raw("textDocument/hover", hover.clone());
                let elapsed = started.elapsed();
                assert!(reply.get("error").is_none(), "{reply}");
                each.push(elapsed);
                total += elapsed;
            }
            total
        });
    });
    group.finish();

    // The runs were in flight all along: none has ended.
    for token in &tokens {
        assert!(
            !client.seen.iter().any(|m| is_progress(m, token, "end")),
            "a run ended during the benchmark"
        );
    }
    print_quantiles("runs/hover_with_three_runs_in_flight", &mut each);
    for token in &tokens {
        cancel(client, token);
    }
}

/// The words the planner streams in the streaming benchmark.
const STREAMED_WORDS: usize = 40;

/// Targets 3 and 4: a streamed reply's words reach the editor's progress.
fn streamed_words(c: &mut Criterion) {
    let brief = "POV: Kael ".repeat(STREAMED_WORDS / 2);
    let Setup {
        _dir: _workspace,
        model,
        mut client,
        ..
    } = setup_with(|model| {
        model.on(
            "<current_step>brief (planner)</current_step>",
            vec![Answer::Paced(brief, Duration::from_millis(20))],
        );
    });
    let words_of = |message: &Value, token: &str| -> Option<usize> {
        if !is_progress(message, token, "report") {
            return None;
        }
        let text = message["params"]["value"]["message"].as_str()?;
        let (_, rest) = text.split_once("brief: ")?;
        rest.split_once(" words")?.0.parse().ok()
    };
    let mut first: Vec<Duration> = Vec::new();
    let mut each: Vec<Duration> = Vec::new();
    let mut next_scene = 0;
    let mut group = c.benchmark_group("runs");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.bench_function("streamed_first_words", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let scene = SCENES[next_scene % SCENES.len()];
                next_scene += 1;
                let before = model.sent().len();
                let token = start_run(&mut client, scene);
                // Every report of the brief's words, timed as it arrives.
                let mut arrived: Vec<(usize, Instant)> = Vec::new();
                while arrived
                    .last()
                    .is_none_or(|(words, _)| *words < STREAMED_WORDS)
                {
                    let message = client.wait_for(|m| words_of(m, &token).is_some());
                    arrived.push((words_of(&message, &token).unwrap(), Instant::now()));
                }
                let sent = model.sent();
                let sent = &sent[before..];
                let latency = |(words, at): &(usize, Instant)| at.duration_since(sent[words - 1]);
                let first_words = latency(&arrived[0]);
                first.push(first_words);
                total += first_words;
                each.extend(arrived[1..].iter().map(latency));
                cancel(&mut client, &token);
            }
            total
        });
    });
    group.finish();
    print_quantiles("runs/streamed_first_words", &mut first);
    print_quantiles("runs/streamed_chunk_to_report", &mut each);
    client.shutdown();
}

fn benches(c: &mut Criterion) {
    let mut setup = setup();
    first_progress_report(c, &mut setup);
    hover_with_runs_in_flight(c, &mut setup);
    setup.client.shutdown();
    streamed_words(c);
}

criterion_group!(runs, benches);
criterion_main!(runs);

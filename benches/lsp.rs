//! The language server as an editor meets it, measured from outside the
//! process over stdio, on a generated 1M-word manuscript (500 scenes, 651
//! files): fresh starts of the real binary, the same client for any server.
//!
//! Run with `cargo bench --bench lsp` (builds the release binary first).
//! It prints one table of medians and 99th percentiles:
//!
//! | measure | what is timed | target |
//! |---|---|---|
//! | `first diagnostics while indexing` | `didOpen` sent right after `initialized` → the scene's first `publishDiagnostics` parsed by this client's reading thread, default settings | ≤ 20 ms |
//! | `first diagnostics, indexed` | `didOpen` of another scene once the index is ready → its first `publishDiagnostics` parsed, default settings | ≤ 20 ms |
//! | `index ready` | `initialized` → the index's `$/progress` end (servers that report none: n/a) | ≤ 300 ms warm |
//! | `server CPU per start` | the server's user and system CPU from its start to its index ready (`/proc`) | ≤ 0.5 s warm |
//! | `20 scenes opened → all diagnosed` | 20 `didOpen`s at once → a `publishDiagnostics` for each | |
//! | `peak memory, 20 scenes open` | the server's `VmHWM` once they are diagnosed | ≤ 64 MB |
//! | `peak memory over a start` | the server's `VmHWM` at the start's end, after the references (the index, the pass over the whole manuscript, the twenty scenes: the peak a writer's machine meets) | |
//! | `warm: peak memory, …` | the same two on the warm starts, whose grammar memo holds the open scenes (harper is not loaded) | |
//! | `references of the protagonist` | `textDocument/references` at his name in prose, to the answer parsed by this client's reading thread (the count of results is printed) | |
//! | `references: the answer read` | the same, to the answer's last byte read, before this client parses it (the server's part) | ≤ 50 ms |
//! | `references: handed to the waiting thread` | the same, to the answer in the hands of the thread that asked (this client's own costs added: the hand-over between its threads, the copy it keeps of each message) | |
//! | `references: this client's parse of the answer alone` | the answer written again as compact JSON (the server's bytes but for the order of keys) and parsed again by `serde_json` into a `Value` on the asking thread, between two requests: the client's part of the first figure, which no server answering these locations can take away | |
//! | `didChange → diagnostics` | one sentence typed after the first sentence of a paragraph in the middle of a 5,000-word open scene, or deleted, → its `publishDiagnostics` (of that version, where the server says one) parsed by this client's reading thread, debounce 0 | ≤ 5 ms median, ≤ 10 ms p99 |
//! | `didChange → diagnostics: the notification read` | the same, to the notification's last byte read, before this client parses it (the server's part: the scene's 160 diagnostics are about 72 KB of JSON) | |
//! | `didChange → diagnostics: handed to the waiting thread` | the same, to the notification in the hands of the thread that waits for it (this client's own costs added) | |
//!
//! Environment:
//! - `CONTROL_ROOM_BENCH_SERVER`: the command line of another server to
//!   measure the same way, e.g. `markdown-oxide` or `harper-ls --stdio`
//!   (split on spaces); by default control-room's `lsp`.
//! - `CONTROL_ROOM_BENCH_STARTS`: fresh starts (default 5); `CONTROL_ROOM_BENCH_EDITS`:
//!   edits timed (default 200).
//! - `CONTROL_ROOM_BENCH_WARM_STARTS`: starts after the cold ones that keep
//!   what the one before left under `.control-room/` (default 5): their first
//!   diagnostics while indexing, index ready and CPU are printed apart. Each
//!   cold start begins without `.control-room/`.
//! - `CONTROL_ROOM_BENCH_GRAMMAR=off`: grammar off (by default it is on in
//!   the open scenes; `all`: everywhere);
//!   `CONTROL_ROOM_BENCH_HEALTH=off`: the story's health's diagnostics off.
//! - `CONTROL_ROOM_BENCH_REFERENCES`: references asked at each start
//!   (default 20); 0 measures the start's peak without them.
//! - `CONTROL_ROOM_BENCH_LINGER_S`: seconds each start waits before its
//!   shutdown, for a server run under a profiler to finish its work.
//! - `CONTROL_ROOM_CLIENT_TIMEOUT_S`: how long the client waits for a
//!   message (default 20 s), for a server run under a profiler.
//!
//! The peak memory counts the server's code that is resident, and how much
//! of it is depends on how the binary's pages sit in the page cache: a
//! binary just written or copied maps in larger folios than one read back
//! from disk (the same build, a fresh copy against an older one: 0.7 MB
//! more of its code resident). Compare two builds after
//! `echo 3 > /proc/sys/vm/drop_caches`, or both freshly copied.
//!
//! The debounce is set to 0 for the edits through the editor setting
//! `controlRoom.diagnostics.debounceMs` (`workspace/didChangeConfiguration`),
//! which other servers ignore; every other measure uses the defaults.

#[path = "support/corpus.rs"]
mod corpus;
#[path = "../tests/support/lsp_client/mod.rs"]
mod lsp_client;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use lsp_client::{Client, uri};

struct Manuscript {
    _dir: tempfile::TempDir,
    root: PathBuf,
    scenes: Vec<PathBuf>,
    probe: corpus::Probe,
}

fn manuscript() -> Manuscript {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("novel");
    let generated =
        corpus::generate(&corpus::CorpusSpec::large(), &root).expect("the corpus is written");
    corpus::add_continuity_data(&root, &generated).expect("continuity data is written");
    let grammar = std::env::var("CONTROL_ROOM_BENCH_GRAMMAR")
        .map(|scope| format!("[language]\ngrammar = \"{scope}\"\n"))
        .unwrap_or_default();
    let health = if std::env::var("CONTROL_ROOM_BENCH_HEALTH").is_ok_and(|value| value == "off") {
        "[diagnostics.severity]\npacing-plateau = \"off\"\nbeat-progress = \"off\"\ncast-function = \"off\"\nmotif-gap = \"off\"\n"
    } else {
        ""
    };
    std::fs::write(root.join("control-room.toml"), format!("{health}{grammar}")).unwrap();
    let root = root.canonicalize().unwrap();
    let scenes: Vec<PathBuf> = generated
        .scene_paths
        .iter()
        .map(|path| path.canonicalize().unwrap())
        .collect();
    // A 5,000-word scene for the edits: the last scene with the prose of
    // the two before it appended.
    let long = &scenes[scenes.len() - 1];
    let mut text = std::fs::read_to_string(long).unwrap();
    for other in &scenes[scenes.len() - 3..scenes.len() - 1] {
        let other = std::fs::read_to_string(other).unwrap();
        text.push_str(other.splitn(3, "---\n").nth(2).unwrap_or(&other));
    }
    std::fs::write(long, &text).unwrap();
    let probe = probe_after_continuity(generated.probe.expect("the protagonist is mentioned"));
    Manuscript {
        _dir: dir,
        root,
        scenes,
        probe,
    }
}

/// The probe where it is once the continuity data added its lines: the
/// first whole-word mention of the name in the scene's prose.
fn probe_after_continuity(probe: corpus::Probe) -> corpus::Probe {
    let path = probe.path.canonicalize().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let body_starts = text
        .match_indices("---\n")
        .nth(1)
        .map_or(0, |(at, _)| at + 4);
    let is_word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let at = text[body_starts..]
        .match_indices(&probe.word)
        .map(|(at, _)| body_starts + at)
        .find(|&at| {
            !is_word(text[..at].chars().next_back())
                && !is_word(text[at + probe.word.len()..].chars().next())
        })
        .expect("the name is in the scene's prose");
    let line_start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    corpus::Probe {
        line: text[..at].matches('\n').count(),
        character: text[line_start..at].encode_utf16().count(),
        path,
        word: probe.word,
    }
}

/// The server under measure.
struct Server {
    program: PathBuf,
    args: Vec<String>,
    name: String,
}

impl Server {
    /// Whether it is a control-room binary (this one or another build),
    /// which always reports its index's progress.
    fn is_control_room(&self) -> bool {
        self.program
            .file_name()
            .is_some_and(|name| name == "control-room")
    }
}

impl Server {
    fn from_env() -> Server {
        match std::env::var("CONTROL_ROOM_BENCH_SERVER") {
            Ok(line) if !line.trim().is_empty() => {
                let mut words = line.split_whitespace().map(str::to_owned);
                let program = PathBuf::from(words.next().unwrap());
                Server {
                    program,
                    args: words.collect(),
                    name: line.trim().to_owned(),
                }
            }
            _ => Server {
                program: PathBuf::from(env!("CARGO_BIN_EXE_control-room")),
                args: vec!["lsp".to_owned()],
                name: "control-room".to_owned(),
            },
        }
    }

    fn start(&self, root: &Path) -> Client {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let mut client = Client::command(&self.program, &args, &[]);
        // An editor answers `workspace/configuration` with one value per item.
        client.responder = Some(Box::new(|request: &Value| {
            (request["method"] == "workspace/configuration").then(|| {
                let items = request["params"]["items"].as_array().map_or(0, Vec::len);
                Value::Array(vec![Value::Null; items])
            })
        }));
        client.request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": uri(root),
                "rootPath": root,
                "workspaceFolders": [{"uri": uri(root), "name": "novel"}],
                "capabilities": {
                    "window": {"workDoneProgress": true},
                    "workspace": {"configuration": true, "workspaceFolders": true},
                    "textDocument": {"publishDiagnostics": {"versionSupport": true},
                                     "synchronization": {"didSave": true}},
                },
            }),
        );
        client
    }
}

/// Samples of one measure.
#[derive(Default)]
struct Samples {
    each: Vec<Duration>,
    /// A figure printed beside the times (a count of results, a size).
    note: String,
}

impl Samples {
    fn quantile(&self, q: f64) -> Option<Duration> {
        let mut sorted = self.each.clone();
        sorted.sort();
        (!sorted.is_empty()).then(|| sorted[((sorted.len() - 1) as f64 * q).round() as usize])
    }
}

fn is_diagnostics_for(message: &Value, uri: &str) -> bool {
    message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri
}

fn is_index_end(message: &Value) -> bool {
    message["method"] == "$/progress" && message["params"]["value"]["kind"] == "end"
}

fn open(client: &mut Client, path: &Path, version: i32) {
    let text = std::fs::read_to_string(path).unwrap();
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(path), "languageId": "markdown", "version": version, "text": text}}),
    );
}

/// The server's CPU (user and system) and peak resident memory so far.
fn cpu_and_peak(pid: u32) -> (Duration, Option<u64>) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime
    // are the 14th and 15th of the line, in clock ticks (100 a second).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&at| fields.get(at)?.parse::<u64>().ok())
        .sum();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok());
    (Duration::from_millis(ticks * 10), peak)
}

#[derive(Default)]
struct Figures {
    while_indexing: Samples,
    indexed: Samples,
    ready: Samples,
    cpu: Samples,
    twenty: Samples,
    peak_kb: Vec<u64>,
    start_peak_kb: Vec<u64>,
    references: Samples,
    references_read: Samples,
    references_handled: Samples,
    references_parse: Samples,
    edits: Samples,
    edits_read: Samples,
    edits_handled: Samples,
}

/// From `since` to the last message waited for, parsed by the client's
/// reading thread.
fn parsed_since(client: &Client, since: Instant) -> Duration {
    client.parsed.expect("a message was waited for") - since
}

/// One fresh start: everything but the edits.
fn one_start(server: &Server, manuscript: &Manuscript, figures: &mut Figures) {
    let scenes = &manuscript.scenes;
    // The last start's messages were freed in small pieces: the allocator
    // gathers them on the next large request, which took about 40 ms of
    // this client's time inside the first timed measure when it fell there.
    std::hint::black_box(vec![0u8; 1 << 16]);
    let mut client = server.start(&manuscript.root);
    let started = Instant::now();
    client.notify("initialized", json!({}));
    // The writer's scene was open when the editor started.
    let first = &scenes[scenes.len() / 2];
    let first_uri = uri(first);
    let opened = Instant::now();
    open(&mut client, first, 1);
    client.wait_for(|message| is_diagnostics_for(message, &first_uri));
    figures
        .while_indexing
        .each
        .push(parsed_since(&client, opened));
    // The index: its progress end, where the server reports one.
    let reported = client.seen.iter().any(|message| {
        message["method"] == "$/progress" && message["params"]["value"]["kind"] == "begin"
    });
    let ready = if client.seen.iter().any(is_index_end) {
        Some(started.elapsed())
    } else if reported || server.is_control_room() {
        client.wait_for(is_index_end);
        Some(started.elapsed())
    } else {
        None
    };
    if let Some(ready) = ready {
        figures.ready.each.push(ready);
        figures.cpu.each.push(cpu_and_peak(client.pid()).0);
    }
    let second = &scenes[scenes.len() / 3];
    let second_uri = uri(second);
    let opened = Instant::now();
    open(&mut client, second, 1);
    client.wait_for(|message| is_diagnostics_for(message, &second_uri));
    figures.indexed.each.push(parsed_since(&client, opened));
    // Twenty scenes at once, as a restored editor session opens them.
    let twenty: Vec<&PathBuf> = scenes
        .iter()
        .step_by(scenes.len() / 20)
        .filter(|path| *path != first && *path != second)
        .take(20)
        .collect();
    let mut waiting: Vec<String> = twenty.iter().map(|path| uri(path)).collect();
    let opened = Instant::now();
    for path in &twenty {
        open(&mut client, path, 1);
    }
    while !waiting.is_empty() {
        let message = client.wait_for(|message| {
            message["method"] == "textDocument/publishDiagnostics"
                && waiting
                    .iter()
                    .any(|wanted| message["params"]["uri"] == wanted.as_str())
        });
        waiting.retain(|wanted| message["params"]["uri"] != wanted.as_str());
    }
    figures.twenty.each.push(opened.elapsed());
    if let (_, Some(peak)) = cpu_and_peak(client.pid()) {
        figures.peak_kb.push(peak);
    }
    // References of the protagonist, at his name in a scene's prose.
    let probe = &manuscript.probe;
    open(&mut client, &probe.path, 1);
    for _ in 0..number("CONTROL_ROOM_BENCH_REFERENCES", 20) {
        let asked = Instant::now();
        let answer = client.request_raw(
            "textDocument/references",
            json!({"textDocument": {"uri": uri(&probe.path)},
                   "position": {"line": probe.line, "character": probe.character},
                   "context": {"includeDeclaration": false}}),
        );
        figures.references_handled.each.push(asked.elapsed());
        figures.references.each.push(parsed_since(&client, asked));
        if let Some(read) = client.received {
            figures.references_read.each.push(read - asked);
        }
        // The same bytes parsed again, alone: what this client's parse
        // of the answer costs whatever the server does.
        let bytes = serde_json::to_vec(&answer).expect("a JSON value serialises");
        let parsing = Instant::now();
        let parsed: Value = serde_json::from_slice(&bytes).expect("it parses again");
        figures.references_parse.each.push(parsing.elapsed());
        drop(parsed);
        figures.references.note = match answer["result"].as_array() {
            Some(found) => format!("{} results", found.len()),
            None if answer.get("error").is_some() => "an error".to_owned(),
            None => "no result".to_owned(),
        };
    }
    if let (_, Some(peak)) = cpu_and_peak(client.pid()) {
        figures.start_peak_kb.push(peak);
    }
    // A profiled server is given the time to finish
    // the pass over the whole manuscript that follows the index.
    let linger = number("CONTROL_ROOM_BENCH_LINGER_S", 0);
    if linger > 0 {
        std::thread::sleep(Duration::from_secs(linger as u64));
    }
    client.seen.clear();
    let _ = client.request_raw("shutdown", Value::Null);
    client.notify("exit", Value::Null);
}

/// One start with the long scene open: `count` one-sentence edits.
fn edits(server: &Server, manuscript: &Manuscript, count: usize, figures: &mut Figures) {
    let mut client = server.start(&manuscript.root);
    client.notify("initialized", json!({}));
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"controlRoom": {"diagnostics": {"debounceMs": 0}}}}),
    );
    let long = &manuscript.scenes[manuscript.scenes.len() - 1];
    let long_uri = uri(long);
    let text = std::fs::read_to_string(long).unwrap();
    open(&mut client, long, 1);
    client.wait_for(|message| is_diagnostics_for(message, &long_uri));
    if server.is_control_room() {
        client.wait_for_index();
    }
    // Settled: the publishes of the index's end are in.
    std::thread::sleep(Duration::from_millis(500));
    // A sentence typed after the first sentence of a paragraph in the
    // middle of the scene, then deleted.
    let lines: Vec<&str> = text.lines().collect();
    let (line, character) = (lines.len() / 2..lines.len())
        .find_map(|at| {
            let dot = lines[at].find(". ")?;
            Some((at, lines[at][..dot + 2].encode_utf16().count()))
        })
        .expect("a paragraph of two sentences in the second half of the scene");
    let sentence = "The lamp guttered and went out. ";
    let mut version = 1;
    for at in 0..count {
        version += 1;
        let start = json!({"line": line, "character": character});
        let (range, new_text) = if at % 2 == 1 {
            let end =
                json!({"line": line, "character": character + sentence.encode_utf16().count()});
            (json!({"start": start, "end": end}), "")
        } else {
            (json!({"start": start, "end": start}), sentence)
        };
        client.seen.clear();
        let sent = Instant::now();
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": long_uri, "version": version}, "contentChanges": [{"range": range, "text": new_text}]}),
        );
        client.wait_for(|message| {
            is_diagnostics_for(message, &long_uri)
                && message["params"]["version"]
                    .as_i64()
                    .is_none_or(|said| said == version)
        });
        figures.edits_handled.each.push(sent.elapsed());
        figures.edits.each.push(parsed_since(&client, sent));
        if let Some(read) = client.received {
            figures.edits_read.each.push(read - sent);
        }
    }
    if let (_, Some(peak)) = cpu_and_peak(client.pid()) {
        figures.start_peak_kb.push(peak);
    }
    client.seen.clear();
    let _ = client.request_raw("shutdown", Value::Null);
    client.notify("exit", Value::Null);
}

fn number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo test --benches` runs each bench once with `--bench` absent:
    // one start and a few edits then, as a smoke test.
    let smoke = !std::env::args().any(|argument| argument == "--bench");
    let server = Server::from_env();
    let manuscript = manuscript();
    let starts = if smoke {
        1
    } else {
        number("CONTROL_ROOM_BENCH_STARTS", 5)
    };
    let count = if smoke {
        4
    } else {
        number("CONTROL_ROOM_BENCH_EDITS", 200)
    };
    let warm_starts = if smoke {
        1
    } else {
        number("CONTROL_ROOM_BENCH_WARM_STARTS", 5)
    };
    let mut figures = Figures::default();
    for _ in 0..starts {
        let _ = std::fs::remove_dir_all(manuscript.root.join(".control-room"));
        one_start(&server, &manuscript, &mut figures);
        // Let the server exit before the next one starts.
        std::thread::sleep(Duration::from_millis(300));
    }
    // The last cold start left its cache: restarts on the same manuscript.
    let mut warm = Figures::default();
    for _ in 0..warm_starts {
        one_start(&server, &manuscript, &mut warm);
        std::thread::sleep(Duration::from_millis(300));
    }
    edits(&server, &manuscript, count, &mut figures);
    let median_mb = |peaks: &[u64]| {
        let mut peaks = peaks.to_vec();
        peaks.sort_unstable();
        peaks.get(peaks.len() / 2).map_or("n/a".to_owned(), |kb| {
            format!("{:.1} MB", *kb as f64 / 1000.0)
        })
    };
    let peak = median_mb(&figures.peak_kb);
    let start_peak = median_mb(&figures.start_peak_kb);
    figures.cpu.note = "CPU time".to_owned();
    println!(
        "\n{} on 1M words ({starts} cold starts, {warm_starts} warm starts, {count} edits)\n",
        server.name,
    );
    warm.cpu.note = "CPU time".to_owned();
    println!("| measure | median | p99 | n | |\n|---|---|---|---|---|");
    for (name, samples) in [
        (
            "didOpen while indexing → first diagnostics",
            &figures.while_indexing,
        ),
        ("didOpen, indexed → first diagnostics", &figures.indexed),
        ("initialized → index ready", &figures.ready),
        ("server CPU, start to index ready", &figures.cpu),
        (
            "warm: didOpen while indexing → first diagnostics",
            &warm.while_indexing,
        ),
        ("warm: initialized → index ready", &warm.ready),
        ("warm: server CPU, start to index ready", &warm.cpu),
        ("20 scenes opened → all diagnosed", &figures.twenty),
        ("references of the protagonist", &figures.references),
        ("references: the answer read", &figures.references_read),
        (
            "references: handed to the waiting thread",
            &figures.references_handled,
        ),
        (
            "references: this client's parse of the answer alone",
            &figures.references_parse,
        ),
        ("didChange → diagnostics (debounce 0)", &figures.edits),
        (
            "didChange → diagnostics: the notification read",
            &figures.edits_read,
        ),
        (
            "didChange → diagnostics: handed to the waiting thread",
            &figures.edits_handled,
        ),
    ] {
        let show = |value: Option<Duration>| {
            value.map_or("n/a".to_owned(), |value| {
                format!("{:.2} ms", value.as_secs_f64() * 1000.0)
            })
        };
        println!(
            "| {name} | {} | {} | {} | {} |",
            show(samples.quantile(0.5)),
            show(samples.quantile(0.99)),
            samples.each.len(),
            samples.note
        );
    }
    println!(
        "| peak memory, 20 scenes open (median VmHWM) | {peak} | | {} | |",
        figures.peak_kb.len()
    );
    println!(
        "| peak memory over a start (median VmHWM at its end) | {start_peak} | | {} | |",
        figures.start_peak_kb.len()
    );
    println!(
        "| warm: peak memory, 20 scenes open | {} | | {} | |",
        median_mb(&warm.peak_kb),
        warm.peak_kb.len()
    );
    println!(
        "| warm: peak memory over a start | {} | | {} | |",
        median_mb(&warm.start_peak_kb),
        warm.start_peak_kb.len()
    );
}

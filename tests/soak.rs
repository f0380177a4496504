//! A long editing session, compressed: the real server over stdio, a writer
//! who opens scenes, types in bursts, asks for hovers, completions, symbols
//! and code actions, changes files on disk behind the editor's back, drafts
//! a scene with a run (agents answered by the fake model server) and cancels
//! another, minute after minute. The server's resident memory (`VmRSS` of
//! `/proc/<pid>/status`) is sampled after each minute; its growth after the
//! first minute must stay bounded, and every request, version and run must
//! be answered.
//!
//! `cargo test --test integration soak::` plays 12 minutes (every kind of event at least
//! twice, in seconds). `CONTROL_ROOM_SOAK_MINUTES=30 cargo test --release
//! --test integration soak:: -- --nocapture` plays a half-hour session and prints each
//! minute's memory, for the figures.

use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;
use std::time::{Duration, Instant};

use lsp_client::editor::{capabilities, configure, editor, progress};
use lsp_client::{Client, example_copy, uri};
use model_server::{Answer, FakeModelServer, scripted_reply, serve_draft_scene, step_marker};
use serde_json::json;

/// The server's resident memory now, in MB.
fn resident_mb(client: &Client) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", client.pid())).unwrap();
    let kilobytes: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("the kernel reports the resident set");
    kilobytes / 1024.0
}

/// Waits for the diagnostics of `version` of `document`.
fn diagnostics_of(client: &mut Client, document: &str, version: i64) {
    client.wait_for(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == document
            && m["params"]["version"] == version
    });
}

/// The editor's side of the session: which scene is open, at which version.
struct Writer {
    client: Client,
    root: std::path::PathBuf,
    versions: std::collections::HashMap<String, i64>,
    runs: usize,
    cancelled: usize,
}

const SCENES: &[&str] = &[
    "SCN-the-arrival",
    "SCN-the-gate",
    "SCN-the-high-tide",
    "SCN-the-saltmaster",
];

impl Writer {
    fn scene(&self, name: &str) -> std::path::PathBuf {
        self.root.join(format!("Story/Scenes/{name}.md"))
    }

    /// A minute of writing in `name`: open it, type four bursts of thirty
    /// keystrokes (some of them deletions), ask what an editor asks after
    /// each, close it.
    fn write_in(&mut self, name: &str) {
        let path = self.scene(name);
        let document = uri(&path);
        let version = self.versions.entry(name.to_owned()).or_insert(0);
        *version += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let line = text.lines().count() as u64 / 2;
        self.client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": document, "languageId": "markdown", "version": *version, "text": text}}),
        );
        for _burst in 0..4 {
            for keystroke in 0..30 {
                *version += 1;
                let at = json!({"line": line, "character": 0});
                let change = if keystroke % 5 == 4 {
                    // Takes back the word typed before.
                    json!({"range": {"start": at, "end": {"line": line, "character": 5}}, "text": ""})
                } else {
                    json!({"range": {"start": at, "end": at}, "text": "Kael "})
                };
                self.client.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": document, "version": *version}, "contentChanges": [change]}),
                );
            }
            let version = *version;
            diagnostics_of(&mut self.client, &document, version);
            let position = json!({"line": line, "character": 2});
            let at = json!({"textDocument": {"uri": document}, "position": position});
            self.client.request("textDocument/hover", at.clone());
            self.client.request("textDocument/completion", at);
            self.client.request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": document}}),
            );
            self.client.request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": document}, "range": {"start": position, "end": position},
                       "context": {"diagnostics": []}}),
            );
            self.client
                .request("workspace/symbol", json!({"query": "Ka"}));
        }
        self.client.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": document}}),
        );
    }

    /// A card changed on disk (by another tool, or `git pull`).
    fn change_on_disk(&mut self, minute: usize) {
        let card = self.root.join("Compendium/Characters/CHAR-old-tomas.md");
        let text = std::fs::read_to_string(&card).unwrap();
        let age = if minute.is_multiple_of(2) {
            "age: 71"
        } else {
            "age: 72"
        };
        let text = text.replace("age: 71", age).replace("age: 72", age);
        std::fs::write(&card, text).unwrap();
        self.client.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": uri(&card), "type": 2}]}),
        );
    }

    /// Drafts The Vigil again with a run; cancels it at the writer's step
    /// when `cancel`. The run's progress must end either way.
    fn run(&mut self, cancel: bool) {
        // The writer touched the scene since the last run, so no step of
        // that run's is reused and the cancel lands in a step that waits.
        let vigil = self.scene("SCN-the-vigil");
        let mut text = std::fs::read_to_string(&vigil).unwrap();
        text.push_str(&format!(
            "\nThe lamp burned on ({} runs).\n",
            self.runs + self.cancelled
        ));
        std::fs::write(&vigil, text).unwrap();
        self.client.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": uri(&vigil), "type": 2}]}),
        );
        let reply = self.client.request(
            "workspace/executeCommand",
            json!({"command": "controlRoom.runRecipe",
                   "arguments": [{"recipe": "creative_draft_scene", "scene": "SCN-the-vigil"}]}),
        );
        let run_id = reply["run_id"].as_str().expect("a run id").to_owned();
        let token = format!("control-room/run/{run_id}");
        if cancel {
            self.client.wait_for(|m| {
                m["method"] == "$/progress"
                    && m["params"]["token"] == token.as_str()
                    && m["params"]["value"]["message"] == "[5/8] draft (writer)"
            });
            self.client
                .notify("window/workDoneProgress/cancel", json!({"token": token}));
        }
        let end = progress(&mut self.client, &token).pop().unwrap();
        let message = end["message"].as_str().unwrap_or_default().to_owned();
        if cancel {
            assert_eq!(message, "cancelled");
            self.cancelled += 1;
        } else {
            assert!(message.starts_with("done"), "{end}");
            self.runs += 1;
            // The editor applied the draft to the file; the server hears of it.
            self.client.notify(
                "workspace/didChangeWatchedFiles",
                json!({"changes": [{"uri": uri(&vigil), "type": 2}]}),
            );
        }
    }
}

#[test]
fn a_long_editing_session_with_runs_keeps_the_servers_memory_bounded() {
    let minutes: usize = std::env::var("CONTROL_ROOM_SOAK_MINUTES")
        .ok()
        .and_then(|minutes| minutes.parse().ok())
        .unwrap_or(12);
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    // The writer takes long enough for a cancel to land in its step.
    server.on(
        &step_marker("draft", "writer"),
        vec![Answer::Delayed(
            Duration::from_millis(1500),
            Box::new(Answer::text(scripted_reply("draft"))),
        )],
    );
    serve_draft_scene(&server, "");
    configure(&root, &server.url);
    let config = root.join("control-room.toml");
    let settings = std::fs::read_to_string(&config).unwrap();
    assert!(settings.contains("debounce_ms = 150"), "{settings}");
    std::fs::write(
        &config,
        settings.replace("debounce_ms = 150", "debounce_ms = 20"),
    )
    .unwrap();

    let mut client = Client::spawn(&[]);
    client.responder = Some(editor(true, None));
    client.initialize(&root, capabilities());
    client.wait_for_index();
    let mut writer = Writer {
        client,
        root: root.clone(),
        versions: Default::default(),
        runs: 0,
        cancelled: 0,
    };
    let started = Instant::now();
    let mut samples = Vec::new();
    for minute in 0..minutes {
        writer.write_in(SCENES[minute % SCENES.len()]);
        writer.change_on_disk(minute);
        match minute % 6 {
            2 => writer.run(false),
            5 => writer.run(true),
            _ => {}
        }
        // What an editor keeps of the session is not the server's.
        writer.client.seen.clear();
        samples.push(resident_mb(&writer.client));
        println!(
            "soak: minute {:>3}: {:>6.1} MB resident, {:>5.1} s in",
            minute + 1,
            samples[minute],
            started.elapsed().as_secs_f64()
        );
    }
    assert_eq!(writer.runs, (minutes + 3) / 6);
    assert_eq!(writer.cancelled, minutes / 6);
    let first = samples[0];
    let last = *samples.last().unwrap();
    let peak = samples.iter().copied().fold(0.0, f64::max);
    println!(
        "soak: {minutes} minutes in {:.1} s; resident after the first minute {first:.1} MB, \
         at the end {last:.1} MB (growth {:.1} MB), highest {peak:.1} MB",
        started.elapsed().as_secs_f64(),
        last - first,
    );
    // Generous: a leak of what a minute handles (a few documents, a run's
    // files) would pass it within the session; allocator noise would not.
    assert!(
        last < first * 2.0 + 100.0,
        "the server grew from {first:.1} MB to {last:.1} MB: {samples:?}"
    );
    writer.client.shutdown();
    assert!(Path::new(&root.join(".control-room/runs")).is_dir());
}

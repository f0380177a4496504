//! Runs against a model server: the real binary, configured through
//! `control-room.toml` and the environment, talking HTTP to the fake model
//! server; recording, replaying, and keeping API keys out of every file.

mod model_server;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use model_server::{Answer, FakeModelServer};
use serde_json::Value;
use support::{only_run, output_text as text, read_json};
use tempfile::TempDir;

const KEY: &str = "sk-live-abcdefghijklmnopqrstuvwxyz0123";
const KEY_SHAPED: &str = "sk-proj-QQQQQQQQQQQQQQQQQQQQQQQQQQQQ";

fn cassette_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cassettes/draft-the-reckoning.jsonl")
}

fn cli(root: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_control-room"));
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

/// The text each agent slot ended with.
fn slot_texts(root: &Path, run_id: &str) -> Vec<(String, String)> {
    let cache = read_json(&root.join(format!(".control-room/runs/{run_id}/cache.json")));
    let mut texts: Vec<(String, String)> = cache
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, slot)| slot["type"] == "artifact")
        .map(|(name, slot)| (name.clone(), slot["text"].as_str().unwrap().to_owned()))
        .collect();
    texts.sort();
    texts
}

/// Scripts the server to answer each agent of `creative_draft_scene` as the
/// example's scripted dry run does, told apart by their prompt templates.
/// What the prompt of `step` (run by `archetype`) always contains.
fn step_marker(step: &str, archetype: &str) -> String {
    format!("<current_step>{step} ({archetype})</current_step>")
}

fn serve_draft_scene(server: &FakeModelServer, draft_extra: &str) {
    let replies: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples/scripted/draft-the-reckoning.json"),
        )
        .unwrap(),
    )
    .unwrap();
    // The scripted file's format: text, or `{"reply": JSON}`.
    let reply = |step: &str| match &replies[step] {
        Value::String(text) => text.clone(),
        Value::Object(object) if object.contains_key("reply") => object["reply"].to_string(),
        other => other.to_string(),
    };
    // Each step's session state names it, whatever the prompt's tier.
    server.on(
        &step_marker("brief", "planner"),
        vec![Answer::text(reply("brief"))],
    );
    server.on(
        &step_marker("draft", "writer"),
        vec![Answer::text(format!("{}{draft_extra}", reply("draft")))],
    );
    server.on(
        &step_marker("polish", "editor"),
        vec![Answer::text(reply("polish"))],
    );
    server.on(
        &step_marker("continuity", "continuity"),
        vec![Answer::text(reply("continuity"))],
    );
    server.on(
        &step_marker("critique", "critic"),
        vec![Answer::text(reply("critique"))],
    );
}

fn configure(root: &Path, server_url: &str) {
    std::fs::write(
        root.join("control-room.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{server_url}\"\nmodel = \"llama3.1:8b\"\napi_key_env = \"FAKE_PROVIDER_KEY\"\nmax_retries = 1\n"
        ),
    )
    .unwrap();
}

const DRAFT_RECKONING: [&str; 4] = [
    "run",
    "creative_draft_scene",
    "--arg",
    "scene_id=SCN-the-reckoning",
];

#[test]
fn without_a_model_server_the_run_says_how_to_fix_it_then_resumes_when_one_answers() {
    let dir = example();
    let root = dir.path();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/v1",
        closed.local_addr().unwrap().port()
    );
    drop(closed);
    let output = cli(
        root,
        &DRAFT_RECKONING,
        &[("CONTROL_ROOM_LLM_BASE_URL", &url)],
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let run_id = only_run(root);
    let manifest = read_json(&root.join(format!(".control-room/runs/{run_id}/run.json")));
    let error = manifest["error"].as_str().unwrap();
    assert!(
        error.contains(&format!("no model server at {url}")) && error.contains("control-room.toml"),
        "{error}"
    );
    assert!(error.contains("step `brief` (agent planner)"), "{error}");

    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    let output = cli(
        root,
        &["runs", "resume", &run_id],
        &[("CONTROL_ROOM_LLM_BASE_URL", &server.url)],
    );
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(server.received().len(), 5, "one request per agent step");
    let manifest = read_json(&root.join(format!(".control-room/runs/{run_id}/run.json")));
    assert_eq!(manifest["status"], "done");
}

/// Every file under `dir`, recursively.
fn every_file(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(every_file(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_recorded_run_replays_offline_and_no_file_holds_a_key() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    serve_draft_scene(
        &server,
        &format!("\n\nHe wrote {KEY} and {KEY_SHAPED} in the dust."),
    );
    configure(root, &server.url);
    let cassette = root.join("recorded.jsonl");
    let mut args = DRAFT_RECKONING.to_vec();
    let cassette_arg = cassette.display().to_string();
    args.extend(["--record", &cassette_arg]);
    let output = cli(root, &args, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert!(output.status.success(), "{}", text(&output));
    for request in server.received() {
        assert_eq!(request.headers["authorization"], format!("Bearer {KEY}"));
    }
    let recorded_run = only_run(root);
    let recorded = slot_texts(root, &recorded_run);
    let draft = &recorded.iter().find(|(name, _)| name == "draft").unwrap().1;
    assert!(
        draft.ends_with("He wrote [redacted] and [redacted] in the dust."),
        "{draft}"
    );
    // A failed request whose body repeats the key.
    let refusing = FakeModelServer::start();
    refusing.on(
        "",
        vec![Answer::Status {
            code: 401,
            retry_after: None,
            body: format!("{{\"error\": {{\"message\": \"invalid key {KEY}\"}}}}"),
        }],
    );
    // `--fresh`: the same request finished above, so it would be reused.
    let mut fresh = DRAFT_RECKONING.to_vec();
    fresh.push("--fresh");
    let failed = cli(
        root,
        &fresh,
        &[
            ("FAKE_PROVIDER_KEY", KEY),
            ("CONTROL_ROOM_LLM_BASE_URL", &refusing.url),
        ],
    );
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed));
    assert!(text(&failed).contains("HTTP 401"), "{}", text(&failed));
    for output in [&output, &failed] {
        let shown = text(output);
        assert!(
            !shown.contains(KEY) && !shown.contains(KEY_SHAPED),
            "{shown}"
        );
    }
    let files = every_file(root);
    assert!(
        files
            .iter()
            .any(|file| file.ends_with("tool_receipts.jsonl"))
    );
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let content = String::from_utf8_lossy(&bytes);
        assert!(
            !content.contains(KEY) && !content.contains(KEY_SHAPED),
            "{} holds a key",
            file.display()
        );
    }

    // Replayed with no server and no key: the same slots.
    drop(server);
    std::fs::remove_dir_all(root.join(".control-room/runs")).unwrap();
    std::fs::remove_file(root.join("control-room.toml")).unwrap();
    let model = format!("replay:{}", cassette.display());
    let mut args = DRAFT_RECKONING.to_vec();
    args.extend(["--model", &model, "--fresh"]);
    let replayed = cli(root, &args, &[]);
    assert!(replayed.status.success(), "{}", text(&replayed));
    assert_eq!(slot_texts(root, &only_run(root)), recorded);

    // A request never recorded (another scene) fails clearly.
    let other = cli(
        root,
        &[
            "run",
            "creative_draft_scene",
            "--arg",
            "scene_id=SCN-the-gate",
            "--model",
            &model,
        ],
        &[],
    );
    assert_eq!(other.status.code(), Some(1));
    assert!(
        text(&other).contains("has no recorded reply for step `brief` (refine_brief)"),
        "{}",
        text(&other)
    );
}

/// The cassette shipped in `examples/cassettes/` drives the whole recipe
/// offline, for the command the README shows. `UPDATE_CASSETTES=1` records it afresh (after a prompt changes).
#[test]
fn the_shipped_cassette_drives_creative_draft_scene_end_to_end() {
    let dir = example();
    let root = dir.path();
    let cassette = cassette_path();
    if std::env::var_os("UPDATE_CASSETTES").is_some() {
        let server = FakeModelServer::start();
        serve_draft_scene(&server, "");
        let _ = std::fs::remove_file(&cassette);
        let record = cassette.display().to_string();
        let mut args = vec!["run", "draft scene SCN-the-reckoning"];
        args.extend(["--record", &record]);
        let output = cli(root, &args, &[("CONTROL_ROOM_LLM_BASE_URL", &server.url)]);
        assert!(output.status.success(), "{}", text(&output));
        std::fs::remove_dir_all(root.join(".control-room/runs")).unwrap();
    }
    let model = format!("replay:{}", cassette.display());
    let mut args = vec!["run", "draft scene SCN-the-reckoning"];
    args.extend(["--model", &model]);
    let output = cli(root, &args, &[]);
    assert!(
        output.status.success(),
        "{}\n(after changing a prompt, run this test with UPDATE_CASSETTES=1)",
        text(&output)
    );
    let run_id = only_run(root);
    let steps =
        std::fs::read_to_string(root.join(format!(".control-room/runs/{run_id}/steps.jsonl")))
            .unwrap();
    assert_eq!(steps.lines().count(), 8);
    let texts = slot_texts(root, &run_id);
    let edited = &texts
        .iter()
        .find(|(name, _)| name == "edited_draft")
        .unwrap()
        .1;
    assert!(edited.starts_with("# The Reckoning"), "{edited}");
}

fn example() -> TempDir {
    support::example_copy("control-room-models-")
}

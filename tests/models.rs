//! Runs against a model server: the real binary, configured through
//! `control-room.toml` and the environment, talking HTTP to the fake model
//! server; recording, replaying, and keeping API keys out of every file.

use crate::support;
use crate::support::model_server;

use std::path::{Path, PathBuf};
use std::process::Output;

use model_server::{Answer, FakeModelServer, serve_draft_scene, step_marker};
use serde_json::Value;
use support::{only_run, output_text as text, read_json};
use tempfile::TempDir;

const KEY: &str = "sk-live-abcdefghijklmnopqrstuvwxyz0123";
const KEY_SHAPED: &str = "sk-proj-QQQQQQQQQQQQQQQQQQQQQQQQQQQQ";

fn cassette_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cassettes/draft-the-reckoning.jsonl")
}

fn cli(root: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    support::control_room_with(root, args, envs)
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

/// The model of these tests at the medium tier, where every step is one
/// request (at t1 a finding step runs in micro-steps: `tests/packets.rs`).
fn configure(root: &Path, server_url: &str) {
    configure_at(root, server_url, "tier = \"medium\"\n");
}

/// The model of these tests with `more` settings under `[llm]`.
fn configure_at(root: &Path, server_url: &str, more: &str) {
    std::fs::write(
        root.join("control-room.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{server_url}\"\nmodel = \"llama3.1:8b\"\napi_key_env = \"FAKE_PROVIDER_KEY\"\nmax_retries = 1\n{more}"
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
    // One request per agent step; at t1 each finding step (continuity,
    // critique) is a triage, then a finding and its evidence per problem.
    assert_eq!(server.received().len(), 9);
    let manifest = read_json(&root.join(format!(".control-room/runs/{run_id}/run.json")));
    assert_eq!(manifest["status"], "done");
}

/// The `tokens` of each agent step of `run_id`, by step id.
fn step_tokens(root: &Path, run_id: &str) -> Vec<(String, Value)> {
    std::fs::read_to_string(root.join(format!(".control-room/runs/{run_id}/steps.jsonl")))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|step| step["phase"] == "b")
        .map(|step| {
            (
                step["step_id"].as_str().unwrap().to_owned(),
                step["tokens"].clone(),
            )
        })
        .collect()
}

#[test]
fn each_step_says_what_its_calls_cost_and_a_second_run_reads_its_prompts_from_the_cache() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let envs = [("FAKE_PROVIDER_KEY", KEY)];
    let scene = root.join("Story/Scenes/SCN-the-reckoning.md");
    let before = std::fs::read(&scene).ok();
    let output = cli(root, &DRAFT_RECKONING, &envs);
    assert!(output.status.success(), "{}", text(&output));
    let first = only_run(root);
    let steps = step_tokens(root, &first);
    assert!(steps.len() >= 4, "{steps:?}");
    for (step, tokens) in &steps {
        // The server's own figures: four characters a token, a word a token.
        assert!(tokens["prompt"].as_u64().unwrap() > 500, "{step}: {tokens}");
        assert!(tokens["reply"].as_u64().unwrap() > 0, "{step}: {tokens}");
        assert!(tokens["calls"].as_u64().unwrap() >= 1, "{step}: {tokens}");
        assert!(tokens.get("estimated").is_none(), "{step}: {tokens}");
    }
    // Every call asks for its usage and, on a server on this machine, to
    // keep the prompt's evaluated prefix.
    for received in server.received() {
        assert_eq!(received.body["stream_options"]["include_usage"], true);
        assert_eq!(received.body["cache_prompt"], true);
    }
    let shown: Value =
        serde_json::from_slice(&cli(root, &["runs", "show", &first], &[]).stdout).unwrap();
    let summed: u64 = steps
        .iter()
        .map(|(_, tokens)| tokens["prompt"].as_u64().unwrap())
        .sum();
    assert_eq!(
        shown["tokens"]["prompt"].as_u64(),
        Some(summed),
        "{}",
        shown["tokens"]
    );
    let report =
        std::fs::read_to_string(root.join(format!(".control-room/runs/{first}/report.md")))
            .unwrap();
    assert!(report.contains("The model calls cost "), "{report}");

    // The same run again, on the manuscript as it was: each prompt's
    // stable layers, and all of it up to the task packet, are byte for
    // byte those of the first run's.
    match before {
        Some(text) => std::fs::write(&scene, text).unwrap(),
        None => std::fs::remove_file(&scene).unwrap(),
    }
    let mut again = DRAFT_RECKONING.to_vec();
    again.push("--fresh");
    let output = cli(root, &again, &envs);
    assert!(output.status.success(), "{}", text(&output));
    let second = std::fs::read_dir(root.join(".control-room/runs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .find(|id| *id != first)
        .expect("a second run");
    for (step, tokens) in step_tokens(root, &second) {
        let (prompt, cached) = (
            tokens["prompt"].as_u64().unwrap(),
            tokens["cached"].as_u64().unwrap(),
        );
        assert!(
            cached * 10 >= prompt * 9,
            "{step}: {cached} of {prompt} tokens from the cache"
        );
    }
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
    // At the model's own tier (t1), as the replay below runs it.
    configure_at(root, &server.url, "");
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
    // The recorded run delivered its scene; the replay starts from the
    // manuscript the recording saw.
    std::fs::remove_file(root.join("Story/Scenes/SCN-the-reckoning.md")).unwrap();
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
        // Back to the manuscript as it was: no run, and no drafted scene.
        std::fs::remove_dir_all(root.join(".control-room/runs")).unwrap();
        std::fs::remove_file(root.join("Story/Scenes/SCN-the-reckoning.md")).unwrap();
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
    // The recorded model's replies all kept their contract: five steps, the
    // two finding steps of this t1 model in three micro-steps each.
    let shown = cli(root, &["runs", "show", &run_id], &[]);
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        shown["contracts"],
        serde_json::json!({"replies": 9, "broken": 0})
    );
}

fn example() -> TempDir {
    support::example_copy("control-room-models-")
}

/// The bodies the server received for one step, in order.
fn requests_for(server: &FakeModelServer, step: &str, archetype: &str) -> Vec<Value> {
    let marker = step_marker(step, archetype);
    server
        .received()
        .into_iter()
        .filter(|request| request.body.to_string().contains(&marker))
        .map(|request| request.body)
        .collect()
}

/// The agent receipts of a run, oldest first.
fn agent_receipts(root: &Path, run_id: &str) -> Vec<Value> {
    let dir = root.join(format!(".control-room/audit/issues/{run_id}"));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains("__receipt__"))
        .collect();
    paths.sort();
    paths.iter().map(|path| read_json(path)).collect()
}

fn receipt_of<'r>(receipts: &'r [Value], step: &str) -> &'r Value {
    receipts
        .iter()
        .find(|receipt| receipt["step_id"] == step)
        .unwrap_or_else(|| panic!("no receipt for {step}"))
}

const VALID_CONTINUITY: &str = r#"{"pass": true, "findings": [{"severity": "information", "quote": "the keys on their cord", "message": "Matches the card."}]}"#;

#[test]
fn a_reply_that_breaks_its_contract_is_asked_again_quoting_the_error() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    // Prose instead of JSON, then JSON against the schema, then a valid reply
    // wrapped in a reasoning model's <think> block.
    server.on(
        &step_marker("continuity", "continuity"),
        vec![
            Answer::text("Sure! The text looks consistent to me."),
            Answer::text(r#"{"pass": "yes", "findings": []}"#),
            Answer::text(format!(
                "<think>check eyes, names</think>\n{VALID_CONTINUITY}"
            )),
        ],
    );
    // The writer thinks aloud before the prose: the thinking must vanish.
    server.on(
        &step_marker("draft", "writer"),
        vec![Answer::text(
            "<thinking>SECRET PLAN: kill Kael off in act three</thinking>\n<message>Here is the scene.</message>\n<content_update target=\"Story/Scenes/SCN-the-reckoning.md\">\n# The Reckoning\n\nThe tide had left the yard strewn with wrack.\n</content_update>",
        )],
    );
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let output = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert!(output.status.success(), "{}", text(&output));
    let run_id = only_run(root);

    let asked = requests_for(&server, "continuity", "continuity");
    assert_eq!(asked.len(), 3);
    // The schema goes to the server as response_format, not strict (it has
    // optional fields), and every attempt repeats the conversation so far.
    let bundled: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/schemas/check_continuity.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(asked[0]["response_format"]["type"], "json_schema");
    assert_eq!(
        asked[0]["response_format"]["json_schema"]["schema"],
        bundled
    );
    assert_eq!(asked[0]["response_format"]["json_schema"]["strict"], false);
    let messages = |body: &Value| body["messages"].as_array().unwrap().clone();
    assert_eq!(messages(&asked[0]).len(), 2);
    let second = messages(&asked[1]);
    assert_eq!(second.len(), 4);
    assert_eq!(second[2]["role"], "assistant");
    assert_eq!(
        second[2]["content"],
        "Sure! The text looks consistent to me."
    );
    let retry = second[3]["content"].as_str().unwrap();
    assert!(
        retry.starts_with("Your reply could not be used: the reply is not valid JSON"),
        "{retry}"
    );
    assert!(
        retry.contains("exactly one JSON object") && retry.contains("attempt 2 of 3"),
        "{retry}"
    );
    let third = messages(&asked[2]);
    assert_eq!(third.len(), 6);
    let retry = third[5]["content"].as_str().unwrap();
    assert!(
        retry
            .contains("does not follow the schema prompts/schemas/check_continuity.json: at /pass"),
        "{retry}"
    );

    let receipts = agent_receipts(root, &run_id);
    let continuity = receipt_of(&receipts, "continuity");
    assert_eq!(continuity["attempts"], 3);
    assert_eq!(continuity["stop_hook"], false);
    let checks = continuity["checks_performed"].as_array().unwrap();
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["attempt_1", "attempt_2"]);
    assert!(
        checks
            .iter()
            .any(|c| c["check"] == "json_schema" && c["passed"] == true)
    );
    assert_eq!(continuity["actor"]["provider"], "openai");
    assert_eq!(continuity["actor"]["requested_model"], "llama3.1:8b");
    assert_eq!(continuity["actor"]["model"], "llama3.1:8b-20260101");
    assert_eq!(
        continuity["actor"]["decoding"]["requested"]["response_format"],
        "json_schema"
    );

    // The draft is the content update alone; the thinking is nowhere.
    let slots = slot_texts(root, &run_id);
    let draft = &slots.iter().find(|(name, _)| name == "draft").unwrap().1;
    assert_eq!(
        draft,
        "# The Reckoning\n\nThe tide had left the yard strewn with wrack."
    );
    assert_eq!(
        receipt_of(&receipts, "draft")["reasoning_summary"],
        "Here is the scene."
    );
    for file in every_file(root) {
        let content = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(
            !content.contains("SECRET PLAN"),
            "{} holds the thinking",
            file.display()
        );
    }
}

#[test]
fn a_contract_broken_three_times_stops_the_step_with_stop_hook() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    server.on(
        &step_marker("continuity", "continuity"),
        vec![Answer::text("I would rather not answer in JSON.")],
    );
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let output = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let shown = text(&output);
    assert!(shown.contains("step `continuity` (agent continuity) stopped (STOP_HOOK): the reply broke its contract 3 times"), "{shown}");
    assert_eq!(requests_for(&server, "continuity", "continuity").len(), 3);
    // The critic was never asked; the run halts for the writer.
    assert!(requests_for(&server, "critique", "critic").is_empty());
    let run_id = only_run(root);
    let manifest = read_json(&root.join(format!(".control-room/runs/{run_id}/run.json")));
    assert_eq!(manifest["status"], "failed");
    let cache = read_json(&root.join(format!(".control-room/runs/{run_id}/cache.json")));
    assert!(cache.get("continuity_report").is_none());
    assert!(cache.get("edited_draft").is_some());
    let receipts = agent_receipts(root, &run_id);
    let stopped = receipt_of(&receipts, "continuity");
    assert_eq!(stopped["stop_hook"], true);
    assert_eq!(stopped["attempts"], 3);
    assert_eq!(stopped["outputs_produced"], Value::Array(vec![]));
    assert!(
        stopped["stop_reason"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert!(
        stopped["report_excerpt"]
            .as_str()
            .unwrap()
            .starts_with("STOP_HOOK")
    );
    assert!(
        stopped["next_recommended_action"]
            .as_str()
            .unwrap()
            .contains(&format!("runs resume {run_id}"))
    );
    // What the model wrote each time is kept in the run's folder, and the
    // failure and the report say where; the manuscript holds none of it.
    let folder = format!(".control-room/runs/{run_id}/attempts");
    assert!(
        shown.contains(&format!(
            "What the model wrote each time is kept in {folder}/"
        )),
        "{shown}"
    );
    for attempt in 1..=3 {
        let kept = std::fs::read_to_string(root.join(format!("{folder}/continuity.{attempt}.md")))
            .unwrap_or_else(|error| panic!("attempt {attempt}: {error}"));
        assert!(
            kept.starts_with(&format!(
                "<!-- Attempt {attempt} of step `continuity` in run {run_id}: not used, because "
            )) && kept.contains("I would rather not answer in JSON."),
            "{kept}"
        );
    }
    let report =
        std::fs::read_to_string(root.join(format!(".control-room/runs/{run_id}/report.md")))
            .unwrap();
    assert!(
        report.contains(&format!("{folder}/continuity.1.md")),
        "the report links the attempts: {report}"
    );
    for file in every_file(&root.join("Story")) {
        let content = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            !content.contains("I would rather not"),
            "{}",
            file.display()
        );
    }
}

#[test]
fn a_reply_naming_a_path_it_must_not_stops_at_once_and_writes_nothing() {
    // Outside the workspace, as a prose step's content update target.
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    server.on(
        &step_marker("draft", "writer"),
        vec![Answer::text("<content_update target=\"../../etc/passwd\">root::0:0:root:/root:/bin/sh</content_update>")],
    );
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let output = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let shown = text(&output);
    assert!(shown.contains("stopped (STOP_HOOK): the reply names `../../etc/passwd`, which is outside the workspace; nothing was written"), "{shown}");
    // No retry for a path: one request.
    assert_eq!(requests_for(&server, "draft", "writer").len(), 1);
    let run_id = only_run(root);
    let cache = read_json(&root.join(format!(".control-room/runs/{run_id}/cache.json")));
    assert!(cache.get("draft").is_none());
    for file in every_file(root) {
        let content = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(
            !content.contains("root::0:0"),
            "{} holds the reply",
            file.display()
        );
    }
    let receipts = agent_receipts(root, &run_id);
    let guard = receipt_of(&receipts, "draft")["checks_performed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "path_guard")
        .unwrap()
        .clone();
    assert_eq!(guard["passed"], false);

    // Inside the workspace but not an expected artifact, in a JSON finding.
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    server.on(
        &step_marker("continuity", "continuity"),
        vec![Answer::text(r#"{"pass": false, "findings": [{"severity": "error", "quote": "the keys on their cord", "message": "x", "file": "Story/Scenes/SCN-the-gate.md"}]}"#)],
    );
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let output = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let shown = text(&output);
    assert!(shown.contains("the reply names `Story/Scenes/SCN-the-gate.md`, which is not among the step's expected artifacts (Compendium/Characters/CHAR-kael-maren.md"), "{shown}");
    assert_eq!(requests_for(&server, "continuity", "continuity").len(), 1);
}

#[test]
fn an_identical_request_reuses_the_finished_artifact_unless_fresh() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let first = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert!(first.status.success(), "{}", text(&first));
    assert_eq!(server.received().len(), 5);
    let first_run = only_run(root);
    let first_slots = slot_texts(root, &first_run);
    let first_receipts = agent_receipts(root, &first_run);
    // The run delivered its scene; the second starts from the same manuscript.
    std::fs::remove_file(root.join("Story/Scenes/SCN-the-reckoning.md")).unwrap();

    let again = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(server.received().len(), 5, "the second run asked the model");
    let runs = support::run_ids(root);
    let second_run = runs.iter().find(|id| **id != first_run).unwrap();
    assert_eq!(slot_texts(root, second_run), first_slots);
    for (receipt, earlier) in agent_receipts(root, second_run).iter().zip(&first_receipts) {
        assert_eq!(receipt["reused_from"], earlier["receipt_id"]);
        assert!(
            receipt["checks_performed"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["check"] == "idempotency")
        );
    }

    let mut fresh = DRAFT_RECKONING.to_vec();
    fresh.push("--fresh");
    let asked = cli(root, &fresh, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert!(asked.status.success(), "{}", text(&asked));
    assert_eq!(server.received().len(), 10);
}

#[test]
fn a_reply_of_many_megabytes_is_refused_not_stored() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    // The planner runs away: twelve megabytes of "tide".
    server.on(
        &step_marker("brief", "planner"),
        vec![Answer::text("tide ".repeat(12 * 1024 * 1024 / 5))],
    );
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let output = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(
        text(&output).contains("sent a reply of more than 8 MiB; it was not kept"),
        "{}",
        text(&output)
    );
    // Refused once, not retried, and nothing of it kept.
    assert_eq!(requests_for(&server, "brief", "planner").len(), 1);
    let kept: u64 = every_file(root)
        .iter()
        .map(|file| std::fs::metadata(file).unwrap().len())
        .sum();
    assert!(
        kept < 4 * 1024 * 1024,
        "the manuscript and its runs hold {kept} bytes"
    );
}

#[test]
fn runs_resume_keeps_the_runs_fresh() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    // The writer answers the first run, fails the second, then answers.
    server.on(
        &step_marker("draft", "writer"),
        vec![
            Answer::text(model_server::scripted_reply("draft")),
            Answer::status(400),
            Answer::text(model_server::scripted_reply("draft")),
        ],
    );
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let key = [("FAKE_PROVIDER_KEY", KEY)];
    let first = cli(root, &DRAFT_RECKONING, &key);
    assert!(first.status.success(), "{}", text(&first));
    // The same manuscript again, asked afresh; it stops at the writer.
    std::fs::remove_file(root.join("Story/Scenes/SCN-the-reckoning.md")).unwrap();
    let mut fresh = DRAFT_RECKONING.to_vec();
    fresh.push("--fresh");
    let stopped = cli(root, &fresh, &key);
    assert_eq!(stopped.status.code(), Some(1), "{}", text(&stopped));
    let run = support::run_ids(root)
        .into_iter()
        .find(|run| {
            std::fs::read_to_string(root.join(format!(".control-room/runs/{run}/run.json")))
                .unwrap()
                .contains("\"fresh\": true")
        })
        .expect("the fresh run says so in its run.json");
    // Resumed without --fresh, it still asks the model for every step
    // after the writer, though the first run finished identical ones.
    let resumed = cli(root, &["runs", "resume", &run], &key);
    assert!(resumed.status.success(), "{}", text(&resumed));
    for (step, archetype) in [
        ("polish", "editor"),
        ("continuity", "continuity"),
        ("critique", "critic"),
    ] {
        assert_eq!(
            requests_for(&server, step, archetype).len(),
            2,
            "{step} was asked again"
        );
    }
}

#[test]
fn a_reply_that_is_not_json_is_quoted_with_its_control_characters_escaped() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    server.on(
        &step_marker("continuity", "continuity"),
        vec![Answer::text(
            "\u{0}\u{0}\u{1b}[2J\u{1b}]0;pwned\u{7} not json \u{0}",
        )],
    );
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let output = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let shown = [output.stdout.as_slice(), output.stderr.as_slice()].concat();
    assert!(
        !shown
            .iter()
            .any(|byte| *byte == 0 || *byte == 0x1b || *byte == 0x07),
        "{:?}",
        String::from_utf8_lossy(&shown)
    );
    assert!(text(&output).contains("\\u{1b}"), "{}", text(&output));
}

#[test]
fn a_reply_cut_off_at_the_length_limit_is_never_delivered_as_a_finished_scene() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    let cut = serde_json::json!({
        "id": "chatcmpl-cut", "object": "chat.completion", "model": "llama3.1:8b",
        "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant",
            "content": "# The Reckoning\n\nThe tide had left the yard strewn with wrack, and nobody"}}],
    });
    server.on(
        &step_marker("draft", "writer"),
        vec![Answer::Status {
            code: 200,
            retry_after: None,
            body: cut.to_string(),
        }],
    );
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let output = cli(root, &DRAFT_RECKONING, &[("FAKE_PROVIDER_KEY", KEY)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(
        text(&output).contains("cut off at its length limit")
            && text(&output).contains("raise max_tokens under [llm]"),
        "{}",
        text(&output)
    );
    assert!(
        !root.join("Story/Scenes/SCN-the-reckoning.md").exists(),
        "a cut-off draft is not a scene"
    );
    // The writer was asked again for less, with only the start of the
    // runaway reply sent back, then the step stopped.
    let drafts: Vec<_> = server
        .received()
        .into_iter()
        .filter(|request| {
            request
                .body
                .to_string()
                .contains(&step_marker("draft", "writer"))
        })
        .collect();
    assert_eq!(drafts.len(), 3, "asked, then asked twice more for less");
    let retry = drafts[1].body["messages"].as_array().unwrap();
    let last = retry.last().unwrap()["content"].as_str().unwrap();
    assert!(last.contains("much shorter"), "{last}");
    let receipts = std::fs::read_dir(root.join(".control-room/audit/issues"))
        .unwrap()
        .flat_map(|run| std::fs::read_dir(run.unwrap().path()).unwrap())
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .filter(|text| text.contains("\"stop_hook\": true") || text.contains("\"stop_hook\":true"))
        .collect::<Vec<_>>();
    assert_eq!(receipts.len(), 1, "the draft step stopped with its receipt");
    assert!(receipts[0].contains("\"finished\""), "{}", receipts[0]);
}

#[test]
fn the_writer_agent_reads_the_scene_it_redrafts_and_the_edges_of_its_neighbours() {
    let dir = example();
    let root = dir.path();
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    configure(root, &server.url);
    let vigil = std::fs::read_to_string(root.join("Story/Scenes/SCN-the-vigil.md")).unwrap();
    let output = cli(
        root,
        &[
            "run",
            "creative_draft_scene",
            "--arg",
            "scene_id=SCN-the-vigil",
        ],
        &[("FAKE_PROVIDER_KEY", KEY)],
    );
    assert!(output.status.success(), "{}", text(&output));
    let writer = server
        .received()
        .into_iter()
        .find(|request| {
            request
                .body
                .to_string()
                .contains(&step_marker("draft", "writer"))
        })
        .expect("the writer was asked");
    let prompt = writer.body["messages"].to_string();
    // The end of the scene before (SCN-the-fall), the start of the one after
    // (SCN-the-high-tide), and the scene's own text as the writer left it.
    assert!(prompt.contains("It ends: … "), "{prompt}");
    assert!(
        prompt.contains("\\\"Off the wall,\\\" she said. \\\"Now.\\\""),
        "{prompt}"
    );
    assert!(
        prompt.contains("It begins: # High Tide The spring tide came in on the second night"),
        "{prompt}"
    );
    let body = vigil.rsplit("\n---\n").next().unwrap().trim();
    let (title, rest) = body.split_once("\n\n").unwrap();
    let first = rest.split("\n\n").next().unwrap();
    assert!(
        prompt.contains(&format!(
            "The scene as it stands, to redraft:\\n{title}\\n{first}"
        )),
        "{prompt}"
    );
}

//! The story's health checks a model reads (A3 timeline semantics, B1
//! fatal-flaw challenges, C2 theme resonance), through the real binary: the
//! recipe "Read a scene's story health" run on a scene against a scripted
//! model server, each claim kept only where its quote is in the scene, the
//! report scoring what was read; the writer's override kept over the
//! model's later runs, on the command line and over LSP.

use crate::support;
use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;
use std::process::Output;

use model_server::{Answer, FakeModelServer, step_marker};
use serde_json::{Value, json};
use support::{health_check as check, health_report as report, output_text};

const KEY: &str = "sk-live-abcdefghijklmnopqrstuvwxyz0123";
const GATE: &str = "Story/Scenes/SCN-the-gate.md";

fn cli(root: &Path, args: &[&str]) -> Output {
    support::control_room_with(root, args, &[("FAKE_PROVIDER_KEY", KEY)])
}

fn configure(root: &Path, server_url: &str) {
    configure_with(root, server_url, "[health]\nmodel_scenes = 1\n");
}

/// The settings of [`configure`], with `more` after them.
fn configure_with(root: &Path, server_url: &str, more: &str) {
    std::fs::write(
        root.join("control-room.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{server_url}\"\nmodel = \"llama3.1:8b\"\napi_key_env = \"FAKE_PROVIDER_KEY\"\nmax_retries = 1\ntier = \"medium\"\n{more}"
        ),
    )
    .unwrap();
}

/// Scripts the reader of `step` (run by `archetype`) to answer `reply`.
fn answer(server: &FakeModelServer, (step, archetype): (&str, &str), reply: serde_json::Value) {
    server.on(
        &step_marker(step, archetype),
        vec![Answer::text(reply.to_string())],
    );
}

/// Scripts the three readers: the timeline disagrees (one claim quoting
/// the scene, one quoting words it does not have), the flaw is challenged
/// as `flaw` says, the theme weakly answered.
fn serve(server: &FakeModelServer, flaw: &str) {
    answer(
        server,
        ("timeline", "continuity"),
        json!({"verdict": "disagrees", "findings": [
            {"severity": "warning", "quote": "the keys on a cord around her neck",
             "message": "she is asleep at noon, yet the scene is set at night"},
            {"severity": "warning", "quote": "the sun stood high over the yard",
             "message": "noon in a night scene"}
        ]}),
    );
    let challenged = if flaw == "challenged" {
        json!([{"severity": "information", "quote": "\"Thank you,\" Kael said.",
                "message": "he accepts help he did not ask for"}])
    } else {
        json!([])
    };
    answer(
        server,
        ("flaw", "critic"),
        json!({"verdict": flaw, "findings": challenged}),
    );
    answer(
        server,
        ("theme", "critic"),
        json!({"verdict": "weak", "findings": [
            {"severity": "information", "quote": "Before I change my mind.",
             "message": "sharing the weight of the gate, against orders"}
        ]}),
    );
}

fn read_the_gate(root: &Path) {
    let output = cli(
        root,
        &[
            "run",
            "analytical_story_health",
            "--arg",
            &format!("scene_path={GATE}"),
        ],
    );
    assert!(output.status.success(), "{}", output_text(&output));
}

#[test]
fn a_scene_read_by_a_model_is_scored_and_the_writers_override_outlives_later_runs() {
    let dir = support::example_copy("model-health");
    let root = dir.path();
    let server = FakeModelServer::start();
    configure(root, &server.url);

    // Before any run: the three checks say how to get a reading.
    let before = report(root);
    for id in ["A3", "B1", "C2"] {
        let unread = check(&before, id);
        assert_eq!(unread["score"], Value::Null, "{unread}");
        assert!(
            unread["summary"]
                .as_str()
                .unwrap()
                .contains("`control-room health read`"),
            "{unread}"
        );
    }

    serve(&server, "challenged");
    read_the_gate(root);
    let read = report(root);
    let timeline = check(&read, "A3");
    assert_eq!(timeline["score"], 0, "{timeline}");
    let summary = timeline["summary"].as_str().unwrap();
    assert!(summary.starts_with("1 of "), "{summary}");
    assert!(
        summary.contains("1 claims quoting the text, 1 dropped"),
        "the invented quote is dropped: {summary}"
    );
    let finding = &timeline["findings"][0];
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("she is asleep at noon"),
        "{finding}"
    );
    assert_eq!(finding["at"], format!("{GATE}:12"), "{finding}");
    assert_eq!(check(&read, "B1")["score"], 100);
    assert_eq!(check(&read, "C2")["score"], 50);
    // By default one scene of six scores nothing: a check needs three
    // judged scenes, and says so; its findings stay.
    configure_with(root, &server.url, "");
    let one = check(&report(root), "A3");
    assert_eq!(one["score"], Value::Null, "{one}");
    assert!(
        one["summary"]
            .as_str()
            .unwrap()
            .ends_with("; not scored until 3 scenes are judged (2 more)"),
        "{one}"
    );
    assert_eq!(one["findings"].as_array().unwrap().len(), 1, "{one}");
    configure(root, &server.url);
    // The timeline's claim is also an agent's finding, shown at its quote.
    let listed = cli(root, &["findings"]);
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        listed.contains("she is asleep at noon") && !listed.contains("noon in a night scene"),
        "{listed}"
    );

    // The writer disagrees about the flaw; a verdict B1 does not have, or a
    // scene the outline lacks, is refused with the reason.
    let wrong = cli(
        root,
        &["health", "override", "B1", "SCN-the-gate", "strong"],
    );
    assert!(!wrong.status.success());
    assert!(
        output_text(&wrong).contains("`strong` is not a verdict of B1"),
        "{}",
        output_text(&wrong)
    );
    let nowhere = cli(
        root,
        &["health", "override", "B1", "SCN-nowhere", "challenged"],
    );
    assert!(output_text(&nowhere).contains("`SCN-nowhere` is not a scene of the outline"));
    let set = cli(
        root,
        &[
            "health",
            "override",
            "B1",
            "SCN-the-gate",
            "not challenged",
            "--why",
            "thanking her costs him nothing",
        ],
    );
    assert!(set.status.success(), "{}", output_text(&set));
    // A later run says "challenged" again: the writer's reading stands.
    read_the_gate(root);
    let overridden = check(&report(root), "B1");
    assert!(
        overridden["summary"]
            .as_str()
            .unwrap()
            .contains("(1 by the writer)"),
        "{overridden}"
    );
    assert!(
        overridden["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("not challenged (the writer's reading: thanking her costs him nothing)"),
        "{overridden}"
    );

    // A run that fails at the theme (its reply never keeps the contract):
    // the timeline and the flaw it read still count, the theme keeps the
    // last reading that finished.
    let broken = FakeModelServer::start();
    configure(root, &broken.url);
    answer(
        &broken,
        ("timeline", "continuity"),
        json!({"verdict": "agrees", "findings": []}),
    );
    answer(
        &broken,
        ("flaw", "critic"),
        json!({"verdict": "challenged", "findings": [
            {"severity": "information", "quote": "Before I change my mind.",
             "message": "she takes his weight on herself"},
            {"severity": "information", "quote": "words the scene never had",
             "message": "invented"}
        ]}),
    );
    broken.on(
        &step_marker("theme", "critic"),
        vec![Answer::text("The theme is strong here, I think.")],
    );
    // (`--fresh`: the scene is unchanged, so a run would reuse the answers.)
    let failed = cli(
        root,
        &[
            "run",
            "analytical_story_health",
            "--fresh",
            "--arg",
            &format!("scene_path={GATE}"),
        ],
    );
    assert!(!failed.status.success(), "{}", output_text(&failed));
    let after = report(root);
    assert_eq!(check(&after, "A3")["score"], 100, "{after}");
    assert_eq!(check(&after, "C2")["score"], 50, "{after}");

    // Over LSP: the override taken back, the model's reading counts again.
    let mut client = lsp_client::Client::spawn(&[("FAKE_PROVIDER_KEY", KEY)]);
    client.initialize(root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let cleared = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.healthOverride", "arguments": [
            {"check": "B1", "scene": "SCN-the-gate", "verdict": null}
        ]}),
    );
    assert_eq!(cleared["verdict"], Value::Null, "{cleared}");
    let health = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.health", "arguments": [{}]}),
    );
    let flaw = check(&health, "B1");
    assert_eq!(flaw["score"], 100, "{flaw}");
    let summary = flaw["summary"].as_str().unwrap();
    assert!(!summary.contains("by the writer"), "{flaw}");
    // The failed run's claims, read from its reply: the invented one dropped.
    assert!(
        summary.contains("1 claims quoting the text, 1 dropped"),
        "{summary}"
    );
    client.shutdown();
}

#[test]
fn health_read_has_the_model_read_every_written_scene_in_the_outlines_order() {
    let dir = support::example_copy("model-health-read");
    let root = dir.path();
    let server = FakeModelServer::start();
    configure(root, &server.url);
    serve(&server, "not challenged");
    let unknown = cli(root, &["health", "read", "--scene", "SCN-nowhere"]);
    assert!(!unknown.status.success());
    assert!(
        output_text(&unknown).contains("`SCN-nowhere` is not a written scene of the outline"),
        "{}",
        output_text(&unknown)
    );
    let read = cli(root, &["health", "read"]);
    let text = output_text(&read);
    assert!(read.status.success(), "{text}");
    let workspace = control_room::index::Workspace::load(root);
    let catalog = workspace.catalog();
    let written = catalog
        .outline()
        .and_then(|file| file.outline())
        .map_or(0, |outline| {
            outline
                .entries
                .iter()
                .filter(|entry| catalog.scene(&entry.scene_id).is_some())
                .count()
        });
    assert!(text.contains(&format!("read {written} scene(s)")), "{text}");
    let flaw = check(&report(root), "B1");
    let summary = flaw["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(&format!("{written} of ")),
        "every written scene read: {summary}"
    );
    // Every scene leaves the flaw unchallenged: from the fifth on, a run.
    assert_eq!(flaw["score"], 0, "{flaw}");
    assert!(
        flaw["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("goes unchallenged for {written} scenes in a row")),
        "{flaw}"
    );
}

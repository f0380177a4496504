//! Conference rounds end to end: the real binary over stdio (and its CLI),
//! the Chief and six agents answered over real HTTP by the fake model
//! server, the transcript arriving as a file-creating edit, and its evidence
//! validated live as the cited scene changes.

use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use control_room::conference::AGENTS;
use lsp_client::editor::{code_actions, configure, editor_client, progress, text_at};
use lsp_client::{Client, example_copy, position_of, uri};
use model_server::{Answer, FakeModelServer, Reply, step_marker};
use serde_json::{Value, json};

const SCENE: &str = "Story/Scenes/SCN-the-arrival.md";
const QUOTE: &str = "The fortress stood up out of the white like a broken tooth.";
const OTHER_QUOTE: &str = "The great gate was shut, and one lamp burned in the gatehouse window.";
const FIRST_ROUND: &str = "Which files tell of the arrival?";
const SECOND_ROUND: &str = "Does the arrival build dread?";
/// The id the test gives a tampered copy of a receipt.
const TAMPERED: &str = "rcpt_00000000aaaa";

/// The first `prefix` followed by 12 lowercase hex digits in `body`.
fn token(body: &str, prefix: &str) -> String {
    body.match_indices(prefix)
        .map(|(at, _)| &body[at..])
        .find(|rest| {
            rest.len() >= prefix.len() + 12
                && rest[prefix.len()..prefix.len() + 12]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
        .map(|rest| rest[..prefix.len() + 12].to_owned())
        .unwrap_or_else(|| panic!("no {prefix}… in the request"))
}

fn text(reply: impl Into<String>) -> Answer {
    Answer::text(reply)
}

/// The whole cast, as one function of each request: the Chief's turn by how
/// many replies it has made, each agent by its step, both rounds by their
/// question. `earlier` is a receipt of the first round, once known.
fn script(earlier: Arc<Mutex<Option<String>>>) -> Answer {
    Answer::With(Reply(Arc::new(move |body: &str| {
        let first = body.contains(FIRST_ROUND);
        if body.contains(&step_marker("tools", "chief")) {
            let nonce = token(body, "nonce_");
            let step = body.matches("\"role\":\"assistant\"").count();
            let call = |tool: &str, nonce: &str| {
                json!({"tool": tool, "args": {"search_criteria": "arrival", "scene_path": SCENE}, "nonce": nonce}).to_string()
            };
            return text(match (first, step) {
                (true, 0) => call("file_locator", &nonce),
                (false, 0) => call("prose_analyzer", &nonce),
                (false, 1) => call("file_locator", "nonce_000000000000"),
                (false, 2) => call("file_locator", &nonce),
                _ => json!({"done": "the arrival scene and its outline entry"}).to_string(),
            });
        }
        if first {
            return text("ABSTAIN");
        }
        let this_round = token(body, "rcpt_");
        let earlier = earlier
            .lock()
            .unwrap()
            .clone()
            .expect("the first round's receipt");
        let agent = AGENTS
            .iter()
            .copied()
            .find(|agent| body.contains(&step_marker(&format!("opinion_{agent}"), agent)))
            .expect("a phase 2 agent");
        text(match agent {
            "writer" => format!(
                "The first image does the work: a ruin, no smoke, one lamp.\nEvidence: \"{QUOTE}\" in {SCENE} (receipt_id: {this_round})"
            ),
            "planner" => format!(
                "The outline promises a welcome the scene withholds.\nEvidence: \"Kael arrives at dawn and is welcomed\" in Story/SCN-outline.md (receipt_id: {this_round})"
            ),
            "editor" => format!(
                "The gate image is strong.\nEvidence: \"{OTHER_QUOTE}\" in {SCENE} (receipt_id: {earlier})"
            ),
            "continuity" => format!(
                "Iria's post matches her card.\nEvidence: \"{OTHER_QUOTE}\" in {SCENE} (receipt_id: {TAMPERED})"
            ),
            "critic" => "ABSTAIN".to_owned(),
            _ => format!(
                "<message>Two things.\nEvidence: \"{QUOTE}\" in {SCENE}\nEvidence: \"{OTHER_QUOTE}\" in {SCENE}</message>"
            ),
        })
    })))
}

fn conference(client: &mut Client, arguments: Value) -> String {
    let result = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.conference", "arguments": [arguments]}),
    );
    let id = result["conference_id"]
        .as_str()
        .expect("an id at once")
        .to_owned();
    let ends = progress(client, &format!("control-room/conference/{id}"));
    let last = ends.last().unwrap();
    assert_eq!(last["kind"], "end", "{ends:?}");
    assert!(
        last["message"].as_str().unwrap().starts_with("closed"),
        "{ends:?}"
    );
    id
}

fn transcript_file(root: &Path, id: &str) -> std::path::PathBuf {
    root.join(format!(
        ".control-room/issues/CONF-{}.md",
        id.strip_prefix("conf_").unwrap()
    ))
}

/// `text` with the ids and times that change from run to run named instead.
fn redact(text: &str, names: &[(&str, &str)]) -> String {
    let mut text = text.to_owned();
    for (from, to) in names {
        text = text.replace(from, to);
    }
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z").unwrap();
    time.replace_all(&text, "[time]").into_owned()
}

#[test]
fn a_round_validates_every_reply_and_its_evidence_stays_live() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    let earlier = Arc::new(Mutex::new(None));
    server.on("", vec![script(earlier.clone())]);
    let mut client = editor_client(&root, &server.url, true, None);

    // A first round leaves a receipt another round may not cite.
    let first = conference(
        &mut client,
        json!({"question": FIRST_ROUND, "agents": ["critic"]}),
    );
    let log = root.join(format!(
        ".control-room/audit/sessions/{first}/tool_receipts.jsonl"
    ));
    let line = std::fs::read_to_string(&log).unwrap();
    let mut receipt: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let first_receipt = receipt["receipt_id"].as_str().unwrap().to_owned();
    *earlier.lock().unwrap() = Some(first_receipt.clone());
    // A tampered copy: another id and summary under the same signature.
    receipt["receipt_id"] = json!(TAMPERED);
    receipt["summary"] = json!("nothing to see");
    std::fs::write(&log, format!("{line}{receipt}\n")).unwrap();

    // The second round, from "Convene conference" on a selection.
    let scene = root.join(SCENE);
    let scene_text = std::fs::read_to_string(&scene).unwrap();
    let range = json!({"start": position_of(&scene_text, QUOTE, 0), "end": position_of(&scene_text, " No smoke", 0)});
    let action = code_actions(&mut client, &scene, range)
        .into_iter()
        .find(|action| action["title"] == "Convene conference")
        .expect("Convene conference on a selection");
    let mut arguments = action["command"]["arguments"][0].clone();
    assert_eq!(arguments["uri"], uri(&scene));
    arguments["question"] = json!(SECOND_ROUND);
    arguments["tools"] = json!(["file_locator", "canon_checker"]);
    let second = conference(&mut client, arguments);
    let token = format!("control-room/conference/{second}");
    let reports = progress(&mut client, &token);
    assert_eq!(reports[0]["kind"], "begin");
    assert_eq!(reports[0]["cancellable"], true);
    assert!(
        reports
            .iter()
            .any(|report| report["message"] == "phase 2: 6 of 6 replies"),
        "{reports:?}"
    );
    // Each reply shows as the model writes it, the Chief's and the agents'.
    let writing = |who: &str| {
        reports.iter().any(|report| {
            report["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(who) && m.contains(" words … "))
        })
    };
    assert!(writing("phase 1: the Chief: "), "{reports:?}");
    assert!(writing("phase 2: writer: "), "{reports:?}");

    // The transcript arrived as an edit creating its file, then was shown.
    let transcript = transcript_file(&root, &second);
    let created = client
        .seen
        .iter()
        .filter(|m| m["method"] == "workspace/applyEdit")
        .flat_map(|m| {
            m["params"]["edit"]["documentChanges"]
                .as_array()
                .unwrap()
                .clone()
        })
        .any(|change| change["kind"] == "create" && change["uri"] == uri(&transcript));
    assert!(created, "no edit created {}", transcript.display());
    let shown =
        |m: &Value| m["method"] == "window/showDocument" && m["params"]["uri"] == uri(&transcript);
    if !client.seen.iter().any(shown) {
        client.wait_for(shown);
    }
    let written = std::fs::read_to_string(&transcript).unwrap();
    let this_receipt = {
        let start = written.find("→ rcpt_").expect("a call that ran") + "→ ".len();
        written[start..start + 17].to_owned()
    };
    let names = [
        (second.as_str(), "conf_[second]"),
        (first.as_str(), "conf_[first]"),
        (this_receipt.as_str(), "rcpt_[this round]"),
        (first_receipt.as_str(), "rcpt_[first round]"),
    ];

    // The evidence diagnostics of the open transcript.
    let transcript_uri = uri(&transcript);
    client.open(&transcript, 1);
    let published = client.diagnostics_for(&transcript_uri, |d| d.len() >= 4);
    let listed = |diagnostics: &Value| -> String {
        diagnostics
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{} {} “{}”: {}",
                    d["range"]["start"]["line"],
                    d["code"].as_str().unwrap(),
                    text_at(&written, &d["range"]),
                    d["message"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    insta::assert_snapshot!(
        "transcript",
        redact(
            &format!(
                "{written}\n---- diagnostics ----\n{}\n",
                listed(&published["diagnostics"])
            ),
            &names
        )
    );

    // Hover on the writer's receipt shows it.
    let at = position_of(&written, &format!("(receipt_id: {this_receipt})"), 0);
    let at = json!({"line": at["line"], "character": at["character"].as_u64().unwrap() + 14});
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": transcript_uri}, "position": at}),
    );
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(
        shown.contains(&format!("Tool receipt `{this_receipt}`")) && shown.contains("file_locator"),
        "{shown}"
    );

    // Live: the scene changes elsewhere (stale), then loses the quote (quote).
    let writer_line = position_of(&written, &format!("> Evidence: \"{QUOTE}\""), 0)["line"].clone();
    let at_writer =
        |d: &Value, code: &str| d["code"] == code && d["range"]["start"]["line"] == writer_line;
    client.open(&scene, 1);
    let scene_uri = uri(&scene);
    let changed = scene_text.replace("found every seam", "found each seam");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 2}, "contentChanges": [{"text": changed}]}),
    );
    let stale = client.diagnostics_for(&transcript_uri, |d| {
        d.iter().any(|d| at_writer(d, "evidence-stale"))
    });
    assert!(
        !stale["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| at_writer(d, "evidence-quote")),
        "{stale}"
    );
    let stale_one = stale["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| at_writer(d, "evidence-stale"))
        .unwrap()
        .clone();
    assert_eq!(stale_one["severity"], 2, "stale is a warning: {stale_one}");
    let without = changed.replace(QUOTE, "The fortress was dark.");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": scene_uri, "version": 3}, "contentChanges": [{"text": without}]}),
    );
    let gone = client.diagnostics_for(&transcript_uri, |d| {
        d.iter().any(|d| at_writer(d, "evidence-quote"))
    });
    let quote = gone["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| at_writer(d, "evidence-quote"))
        .unwrap();
    assert_eq!(text_at(&written, &quote["range"]), QUOTE);
    assert_eq!(quote["severity"], 1);
    client.shutdown();
}

#[test]
fn the_command_line_convenes_a_round_and_prints_the_transcript_path() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    server.on("", vec![script(Arc::new(Mutex::new(None)))]);
    configure(&root, &server.url);
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args([
            "conference",
            FIRST_ROUND,
            "--agents",
            "critic,editor",
            "--tools",
            "file_locator",
        ])
        .arg(&root)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let path = String::from_utf8(output.stdout).unwrap();
    let written = std::fs::read_to_string(root.join(path.trim())).unwrap();
    assert!(written.contains("### critic — abstained"), "{written}");
    assert!(written.contains("### editor — abstained"), "{written}");
    assert!(!written.contains("### writer"), "{written}");
    assert!(written.contains("1. `file_locator`"), "{written}");

    let refused = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["conference", FIRST_ROUND, "--agents", "poet"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let error = String::from_utf8(refused.stderr).unwrap();
    assert!(error.contains("unknown agent `poet`"), "{error}");
}

#[test]
fn a_conference_in_flight_is_listed_with_the_runs_and_cancelled_by_its_id() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    server.on("", vec![Answer::Hang]);
    let mut client = editor_client(&root, &server.url, true, None);
    let result = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.conference", "arguments": [{"question": FIRST_ROUND}]}),
    );
    let id = result["conference_id"].as_str().unwrap().to_owned();
    let runs = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.listRuns", "arguments": []}),
    );
    let listed = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|run| run["run_id"] == id.as_str())
        .unwrap_or_else(|| panic!("{id} in {runs}"));
    assert_eq!(listed["recipe_id"], "conference");
    assert_eq!(listed["status"], "running");
    assert_eq!(listed["in_flight"], true);

    let cancelled = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.cancelRun", "arguments": [{"run_id": id}]}),
    );
    assert_eq!(cancelled["status"], "cancelling");
    let ends = progress(&mut client, &format!("control-room/conference/{id}"));
    assert_eq!(ends.last().unwrap()["kind"], "end", "{ends:?}");
    let runs = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.listRuns", "arguments": []}),
    );
    assert!(
        !runs
            .as_array()
            .unwrap()
            .iter()
            .any(|run| run["run_id"] == id.as_str()),
        "{runs}"
    );
    client.shutdown();
}

/// `control-room conference` on `root`, asking two agents.
fn convene_on_the_command_line(root: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["conference", FIRST_ROUND, "--agents", "critic,editor"])
        .arg(root)
        .output()
        .unwrap()
}

#[test]
fn a_conference_whose_chief_failed_stops_and_asks_no_agent() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    server.on("", vec![Answer::status(400)]);
    configure(&root, &server.url);
    let output = convene_on_the_command_line(&root);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(error.contains("the Chief's step 1 failed"), "{error}");
    assert!(error.contains("the agents were not asked"), "{error}");
    assert_eq!(server.received().len(), 1, "only the Chief was asked");
}

#[test]
fn a_conference_with_no_grounded_reply_exits_non_zero() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    // The Chief works; every agent fails.
    server.on(
        &step_marker("tools", "chief"),
        vec![script(Arc::new(Mutex::new(None)))],
    );
    server.on("", vec![Answer::status(400)]);
    configure(&root, &server.url);
    let output = convene_on_the_command_line(&root);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let path = String::from_utf8(output.stdout).unwrap();
    assert!(root.join(path.trim()).is_file(), "the transcript is kept");
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(error.contains("no agent gave a grounded reply"), "{error}");
}

#[test]
fn a_local_model_server_is_sent_one_call_at_a_time() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    // The agents answer after 300 ms; asked at once, their requests would
    // arrive together.
    server.on(
        &step_marker("tools", "chief"),
        vec![script(Arc::new(Mutex::new(None)))],
    );
    server.on(
        "",
        vec![Answer::Delayed(
            std::time::Duration::from_millis(300),
            Box::new(text("no evidence line here")),
        )],
    );
    configure(&root, &server.url);
    let output = convene_on_the_command_line(&root);
    // The replies are rejected (the round closes, exit 1): what matters here
    // is when they were asked.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let agents: Vec<std::time::Instant> = server
        .received()
        .into_iter()
        .filter(|request| {
            !request
                .body
                .to_string()
                .contains(&step_marker("tools", "chief"))
        })
        .map(|request| request.at)
        .collect();
    assert_eq!(agents.len(), 2, "two agents asked");
    let apart = agents[1].duration_since(agents[0]);
    assert!(
        apart >= std::time::Duration::from_millis(250),
        "the second call was sent {apart:?} after the first, before the first was answered"
    );
}

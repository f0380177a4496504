//! Every output an edit: canon updates, outline restructuring, prose
//! revisions and foreshadowing passages reach the manuscript as edits, from
//! the command line (written whole, the list of what changed printed, the
//! text before kept in the run) and from the editor (one versioned
//! workspace edit), and an edit whose passage the writer changed meanwhile
//! is never made.

use crate::support::lsp_client;
use crate::support::model_server;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use lsp_client::editor::{configure, editor_client, offset_of, progress, requests};
use lsp_client::{example_copy, uri};
use model_server::{Answer, FakeModelServer, finding_step, step_marker};
use serde_json::{Value, json};

const GATE: &str = "Story/Scenes/SCN-the-gate.md";
const KAEL: &str = "Compendium/Characters/CHAR-kael-maren.md";
const IRIA: &str = "Compendium/Characters/CHAR-iria-vell.md";
const OUTLINE: &str = "Story/SCN-outline.md";

/// A reply of the JSON object `value`.
fn json_reply(value: Value) -> Vec<Answer> {
    vec![Answer::text(value.to_string())]
}

/// A critic's reply that keeps the evaluation schemas.
fn critique() -> Vec<Answer> {
    vec![finding_step(
        &json!({"summary": "Reads well.", "strengths": ["Clear."], "concerns": []}).to_string(),
    )]
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap()
}

fn only_run(root: &Path) -> String {
    let mut runs: Vec<String> = std::fs::read_dir(root.join(".control-room/runs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs.pop().unwrap()
}

fn run_cli(root: &Path, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(args)
        .arg("--dir")
        .arg(root)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn canon_updates_become_edits_of_the_cards_with_the_list_of_what_changed() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    server.on(
        &step_marker("extract", "continuity"),
        vec![Answer::text("- Kael's hair is black, streaked with salt.")],
    );
    server.on(
        &step_marker("update", "librarian"),
        json_reply(json!({"edits": [
            {"file": KAEL, "field": "hair", "value": "black, salt-streaked",
             "why": "“his black hair stiff with salt”"},
            {"file": IRIA, "find": "Keeper of the great gate of the Salt Fortress",
             "replace": "Keeper of the great gate of the Salt Fortress, who let Kael in against orders",
             "why": "she opens the gate"},
            {"file": GATE, "find": "In the lamplight", "replace": "By lamplight",
             "why": "a scene is not a card"},
            {"file": KAEL, "find": "a sentence no card has", "replace": "anything"},
        ]})),
    );
    configure(&root, &server.url);
    let kael_before = read(&root, KAEL);
    let gate_before = read(&root, GATE);

    let (status, stderr) = run_cli(
        &root,
        &[
            "run",
            "structural_canon",
            "--arg",
            &format!("scene_path={GATE}"),
        ],
    );
    assert_eq!(status, 0, "{stderr}");

    // The cards changed, field and text; the scene did not.
    let kael = read(&root, KAEL);
    assert!(kael.contains("hair: \"black, salt-streaked\"\n"), "{kael}");
    assert!(!kael.contains("hair: black\n"), "{kael}");
    assert!(
        read(&root, IRIA).contains("Salt Fortress, who let Kael in against orders"),
        "{}",
        read(&root, IRIA)
    );
    assert_eq!(read(&root, GATE), gate_before);
    // The cards still read: `check` finds no front matter problem in them.
    let check = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", "--format", "json"])
        .arg(&root)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(!report.contains("CHAR-kael-maren"), "{report}");

    // What changed is listed, with what was not and why; the text before
    // each edit is kept in the run.
    assert!(stderr.contains("2 edit(s) made"), "{stderr}");
    assert!(stderr.contains("2 edit(s) not made"), "{stderr}");
    assert!(
        stderr.contains("is not a canon card, which this step may change"),
        "{stderr}"
    );
    assert!(
        stderr.contains("is not in the file as it is now"),
        "{stderr}"
    );
    let run = only_run(&root);
    let kept = root.join(format!(".control-room/runs/{run}/before/{KAEL}"));
    assert_eq!(std::fs::read_to_string(kept).unwrap(), kael_before);
    let report = read(&root, &format!(".control-room/runs/{run}/report.md"));
    assert!(report.contains("- Result: 2 edits made in"), "{report}");
    assert!(report.contains("## Edits"), "{report}");
    assert!(report.contains("Not made, and why:"), "{report}");
}

#[test]
fn an_outline_restructure_is_an_edit_of_the_outline() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    let fall = "- SCN-the-fall: The storm comes in, and the sea takes the saltmaster off the wall.";
    let vigil = "- SCN-the-vigil: Kael and Iria keep the lamp burning through the night.";
    server.on(
        &step_marker("restructure", "planner"),
        json_reply(json!({"edits": [{
            "find": format!("{fall}\n{vigil}"),
            "replace": format!("{vigil}\n{fall}"),
            "why": "the vigil is dated before the fall",
        }]})),
    );
    server.on(&step_marker("critique", "critic"), critique());
    configure(&root, &server.url);
    let before = read(&root, OUTLINE);

    let (status, stderr) = run_cli(&root, &["run", "structural_outline"]);
    assert_eq!(status, 0, "{stderr}");
    let after = read(&root, OUTLINE);
    assert_eq!(
        after,
        before.replace(&format!("{fall}\n{vigil}"), &format!("{vigil}\n{fall}"))
    );
    assert!(stderr.contains("1 edit(s) made"), "{stderr}");
}

#[test]
fn foreshadowing_passages_are_inserted_after_the_paragraph_they_name() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    server.on(
        &step_marker("audit", "critic"),
        vec![Answer::text("The cracked stone pays off without a setup.")],
    );
    server.on(
        &step_marker("plan", "planner"),
        vec![Answer::text("Plant the stone's crack in SCN-the-gate.")],
    );
    let passage = "Somewhere along the sea-wall a lamp guttered, and nobody went to see why.";
    server.on(
        &step_marker("seed", "writer"),
        json_reply(json!({"edits": [{
            "file": GATE, "after": "\"Who keeps yours?\"", "insert": passage,
            "why": "sets up the cracked seventh stone",
        }]})),
    );
    configure(&root, &server.url);
    let before = read(&root, GATE);

    let (status, stderr) = run_cli(&root, &["run", "analytical_foreshadow"]);
    assert_eq!(status, 0, "{stderr}");
    let after = read(&root, GATE);
    let quote = before.find("Who keeps yours?").unwrap();
    let paragraph_end = quote + before[quote..].find("\n\n").unwrap();
    assert_eq!(
        after,
        format!(
            "{}\n\n{passage}{}",
            &before[..paragraph_end],
            &before[paragraph_end..]
        )
    );
}

#[test]
fn prose_revisions_arrive_as_one_versioned_edit_and_a_passage_the_writer_changed_is_not_made() {
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    let long = "In the lamplight Kael's blue eyes looked sore and tired, as if he had not shut them since the ninth waystone.";
    let short = "In the lamplight Kael's blue eyes looked sore. He had not shut them since the ninth waystone.";
    let changed = "She looked at Kael for a long moment";
    // The writer takes a while, so the test can type in the scene meanwhile.
    server.on(
        &step_marker("revise", "writer"),
        vec![Answer::Delayed(
            Duration::from_millis(1500),
            Box::new(Answer::text(
                json!({"edits": [
                    {"find": long, "replace": short, "why": "too long"},
                    {"find": changed, "replace": "She studied Kael for a long moment", "why": "looked ×4"},
                    {"find": "a passage that is nowhere", "replace": "anything"},
                ]})
                .to_string(),
            )),
        )],
    );
    server.on(&step_marker("critique", "critic"), critique());
    let mut client = editor_client(&root, &server.url, true, None);
    let scene = root.join(GATE);
    let text = client.open(&scene, 3);
    assert!(text.contains(long) && text.contains(changed));

    let reply = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runRecipe",
               "arguments": [{"recipe": "analytical_prose", "scene": "SCN-the-gate"}]}),
    );
    let run_id = reply["run_id"].as_str().unwrap().to_owned();
    // The writer rewrites one of the passages while the run works, and saves.
    let typed = text.replace(changed, "She watched Kael for a long moment");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&scene), "version": 4},
               "contentChanges": [{"text": typed}]}),
    );
    std::fs::write(&scene, &typed).unwrap();

    let values = progress(&mut client, &format!("control-room/run/{run_id}"));
    assert_eq!(
        values.last().unwrap()["message"],
        format!("done: 1 edit made in {GATE}")
    );
    let applied = requests(&client, "workspace/applyEdit");
    assert_eq!(applied.len(), 1);
    let changes = applied[0]["params"]["edit"]["documentChanges"]
        .as_array()
        .unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["textDocument"]["uri"], uri(&scene));
    assert_eq!(
        changes[0]["textDocument"]["version"], 4,
        "placed in the text the writer has now"
    );
    let edits = changes[0]["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 1);
    let range = &edits[0]["range"];
    assert_eq!(
        &typed[offset_of(&typed, &range["start"])..offset_of(&typed, &range["end"])],
        long
    );
    // The writer's words stayed; the revision landed beside them.
    let now = read(&root, GATE);
    assert_eq!(now, typed.replace(long, short));

    let report = read(&root, &format!(".control-room/runs/{run_id}/report.md"));
    assert_eq!(
        report.matches("is not in the file as it is now").count(),
        2,
        "{report}"
    );
    let warning = client.wait_for(|m| {
        m["method"] == "window/showMessageRequest" || m["method"] == "window/showMessage"
    });
    assert!(
        warning["params"]["message"]
            .as_str()
            .unwrap()
            .contains("1 edit made in Story/Scenes/SCN-the-gate.md; 2 not made"),
        "{warning}"
    );
    let kept = root.join(format!(".control-room/runs/{run_id}/before/{GATE}"));
    assert_eq!(std::fs::read_to_string(kept).unwrap(), typed);
}

//! The command line and the editor are two front ends of one engine: the
//! same recipe, run once with `control-room run` and once through the
//! server's `controlRoom.runRecipe` (agents answered alike by the fake model
//! server over HTTP), leaves the same text in the manuscript, the same
//! findings and the same report; a resumed run does too, and neither writes
//! over a scene the writer changed since the run began.

use crate::support;
use crate::support::lsp_client;
use crate::support::model_server;

use std::path::{Path, PathBuf};

use lsp_client::editor::{configure, editor_client};
use lsp_client::{Client, example_copy};
use model_server::{Answer, FakeModelServer, serve_draft_scene, step_marker};
use serde_json::{Value, json};
use support::{control_room, output_text, read_json};

const RECIPE: &str = "creative_draft_scene";

/// Waits for the end of run `run_id`'s progress; its last message.
fn wait_for_end(client: &mut Client, run_id: &str) -> String {
    let token = format!("control-room/run/{run_id}");
    let end = client.wait_for(|m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == token.as_str()
            && m["params"]["value"]["kind"] == "end"
    });
    end["params"]["value"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Runs `command` with `arguments` in the editor and waits for its run.
fn editor_run(client: &mut Client, command: &str, arguments: Value) -> (String, String) {
    let reply = client.request(
        "workspace/executeCommand",
        json!({"command": command, "arguments": [arguments]}),
    );
    let run_id = reply["run_id"].as_str().expect("a run id").to_owned();
    let end = wait_for_end(client, &run_id);
    (run_id, end)
}

/// The runs of a workspace (none before its first run).
fn runs(root: &Path) -> Vec<String> {
    if root.join(".control-room/runs").is_dir() {
        support::run_ids(root)
    } else {
        Vec::new()
    }
}

/// The one run that is not among `before`.
fn new_run(root: &Path, before: &[String]) -> String {
    let new: Vec<String> = runs(root)
        .into_iter()
        .filter(|run| !before.contains(run))
        .collect();
    assert_eq!(new.len(), 1, "one new run: {new:?}");
    new[0].clone()
}

/// What a run left for the writer, with its run id made neutral: the
/// report's "Result" line and the findings' messages.
fn left_by(root: &Path, run_id: &str) -> (String, Vec<String>) {
    let dir = root.join(format!(".control-room/runs/{run_id}"));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let result = report
        .lines()
        .find(|line| line.starts_with("- Result:"))
        .unwrap_or_else(|| panic!("no Result line: {report}"))
        .replace(run_id, "RUN");
    let findings = read_json(&dir.join("findings.json"));
    let messages = findings["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["message"].as_str().unwrap().to_owned())
        .collect();
    (result, messages)
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// Two copies of the example, both set up for the fake server.
fn two_copies(server: &FakeModelServer) -> [(tempfile::TempDir, PathBuf); 2] {
    let copies = [example_copy(), example_copy()];
    for (_, root) in &copies {
        configure(root, &server.url);
    }
    copies
}

#[test]
fn the_cli_and_the_editor_deliver_the_same_drafts_findings_and_reports() {
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    let [(_cli_dir, cli), (_editor_dir, editor)] = two_copies(&server);
    let vigil_before = read(&cli, "Story/Scenes/SCN-the-vigil.md");
    let mut client = editor_client(&editor, &server.url, true, None);

    // A new scene, and an existing one the writer did not touch meanwhile.
    for scene in ["SCN-the-reckoning", "SCN-the-vigil"] {
        let path = format!("Story/Scenes/{scene}.md");
        let before = runs(&cli);
        let output = control_room(
            &cli,
            &["run", RECIPE, "--arg", &format!("scene_id={scene}")],
        );
        assert!(output.status.success(), "{}", output_text(&output));
        assert!(
            output_text(&output).contains(&format!("the draft is in {path}")),
            "{}",
            output_text(&output)
        );
        let cli_run = new_run(&cli, &before);

        let (editor_run_id, end) = editor_run(
            &mut client,
            "controlRoom.runRecipe",
            json!({"recipe": RECIPE, "scene": scene}),
        );
        assert!(end.starts_with(&format!("done: {path}")), "{end}");

        assert_eq!(
            read(&cli, &path),
            read(&editor, &path),
            "{scene}: the same text lands through both front ends"
        );
        assert_eq!(
            left_by(&cli, &cli_run),
            left_by(&editor, &editor_run_id),
            "{scene}: the same report result and findings"
        );
        // Every finding is anchored in the report, on the command line too.
        let report = read(&cli, &format!(".control-room/runs/{cli_run}/report.md"));
        assert!(!report.contains("not shown: see below"), "{report}");
        // The text a draft replaced is kept in the run, by both front ends.
        for (root, run) in [(&cli, &cli_run), (&editor, &editor_run_id)] {
            let kept = root.join(format!(".control-room/runs/{run}/scene-before.md"));
            if scene == "SCN-the-vigil" {
                assert_eq!(std::fs::read_to_string(kept).unwrap(), vigil_before);
            } else {
                assert!(!kept.exists(), "a new scene replaced nothing");
            }
        }
    }
    // The existing scene kept its front matter; its body is the draft.
    let vigil_after = read(&cli, "Story/Scenes/SCN-the-vigil.md");
    let front_matter = &vigil_before[..vigil_before.find("\n---\n").unwrap() + 5];
    assert!(vigil_after.starts_with(front_matter), "{vigil_after}");
    assert_ne!(vigil_after, vigil_before);
    client.shutdown();
}

#[test]
fn the_cli_and_the_editor_make_the_same_edits_of_cards_and_report_the_same_refusals() {
    let server = FakeModelServer::start();
    server.on(
        &step_marker("extract", "continuity"),
        vec![Answer::text("- Kael's hair is black, streaked with salt.")],
    );
    let kael = "Compendium/Characters/CHAR-kael-maren.md";
    server.on(
        &step_marker("update", "librarian"),
        vec![Answer::text(
            json!({"edits": [
                {"file": kael, "field": "hair", "value": "black, salt-streaked", "why": "stated"},
                {"file": kael, "find": "a cracked lantern he will not throw away",
                 "replace": "a cracked lantern he carries everywhere", "why": "stated"},
                {"file": kael, "find": "words no card has", "replace": "anything"},
            ]})
            .to_string(),
        )],
    );
    let [(_cli_dir, cli), (_editor_dir, editor)] = two_copies(&server);
    let mut client = editor_client(&editor, &server.url, true, None);
    let scene = "Story/Scenes/SCN-the-gate.md";

    let before = runs(&cli);
    let output = control_room(
        &cli,
        &[
            "run",
            "structural_canon",
            "--arg",
            &format!("scene_path={scene}"),
        ],
    );
    assert!(output.status.success(), "{}", output_text(&output));
    let cli_run = new_run(&cli, &before);
    let (editor_run_id, end) = editor_run(
        &mut client,
        "controlRoom.runRecipe",
        json!({"recipe": "structural_canon", "scene": "SCN-the-gate"}),
    );
    assert!(
        end.starts_with(&format!("done: 2 edits made in {kael}")),
        "{end}"
    );

    assert_eq!(read(&cli, kael), read(&editor, kael), "the same card");
    assert_ne!(read(&cli, kael), read(&example_copy().1, kael));
    let edits = |root: &Path, run: &str| -> String {
        let report = read(root, &format!(".control-room/runs/{run}/report.md"));
        let start = report.find("## Edits").expect("an Edits section");
        let end = report[start + 3..]
            .find("\n## ")
            .map_or(report.len(), |at| at + start + 3);
        report[start..end].to_owned()
    };
    assert_eq!(edits(&cli, &cli_run), edits(&editor, &editor_run_id));
    assert_eq!(
        left_by(&cli, &cli_run).0,
        left_by(&editor, &editor_run_id)
            .0
            .replace(&editor_run_id, "RUN")
    );
    client.shutdown();
}

#[test]
fn resume_in_either_front_end_keeps_a_scene_changed_since_the_run_began() {
    let server = FakeModelServer::start();
    // The writer's first call fails, so the run stops at its draft step;
    // every later call answers.
    server.on(
        &step_marker("draft", "writer"),
        vec![
            Answer::status(400),
            Answer::status(400),
            Answer::text(model_server::scripted_reply("draft")),
        ],
    );
    serve_draft_scene(&server, "");
    let [(_cli_dir, cli), (_editor_dir, editor)] = two_copies(&server);
    let scene = "Story/Scenes/SCN-the-vigil.md";

    let output = control_room(&cli, &["run", RECIPE, "--arg", "scene_id=SCN-the-vigil"]);
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    let cli_run = new_run(&cli, &[]);
    let mut client = editor_client(&editor, &server.url, true, None);
    let (editor_run_id, end) = editor_run(
        &mut client,
        "controlRoom.runRecipe",
        json!({"recipe": RECIPE, "scene": "SCN-the-vigil"}),
    );
    assert!(end.starts_with("failed:"), "{end}");

    // The writer changes the scene while the runs wait.
    for root in [&cli, &editor] {
        let text = read(root, scene) + "\nA line the writer added.\n";
        std::fs::write(root.join(scene), text).unwrap();
    }
    let output = control_room(&cli, &["runs", "resume", &cli_run]);
    assert!(output.status.success(), "{}", output_text(&output));
    let (resumed, end) = editor_run(
        &mut client,
        "controlRoom.resumeRun",
        json!({"run_id": editor_run_id}),
    );
    assert_eq!(resumed, editor_run_id, "the same run goes on");
    assert!(end.starts_with("done: the draft is in"), "{end}");

    for (root, run_id) in [(&cli, &cli_run), (&editor, &editor_run_id)] {
        assert!(
            read(root, scene).ends_with("A line the writer added.\n"),
            "the writer's text stays"
        );
        let beside = format!("Story/Scenes/SCN-the-vigil.draft-{run_id}.md");
        assert!(root.join(&beside).is_file(), "{beside}");
        let result = left_by(root, run_id).0;
        assert!(
            result.starts_with(
                "- Result: written beside the scene as [Story/Scenes/SCN-the-vigil.draft-RUN.md]"
            ) && result.contains("because the scene changed while the run worked"),
            "{result}"
        );
    }
    assert_eq!(
        read(
            &cli,
            &format!("Story/Scenes/SCN-the-vigil.draft-{cli_run}.md")
        ),
        read(
            &editor,
            &format!("Story/Scenes/SCN-the-vigil.draft-{editor_run_id}.md")
        ),
        "the same draft beside the scene"
    );
    client.shutdown();
}

#[test]
fn route_is_the_same_answer_on_the_command_line_and_in_the_editor() {
    let server = FakeModelServer::start();
    let [(_cli_dir, cli), (_editor_dir, editor)] = two_copies(&server);
    let task = "draft scene SCN-the-reckoning";
    let output = control_room(&cli, &["route", task]);
    assert!(output.status.success(), "{}", output_text(&output));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut client = editor_client(&editor, &server.url, true, None);
    let answered = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.route", "arguments": [{"task": task}]}),
    );
    assert_eq!(printed["recipe_id"], "creative_draft_scene");
    // The paths in the arguments are relative, so the two copies agree.
    assert_eq!(printed, answered);
    client.shutdown();
}

/// The knowledge base of a copy, with two decisions that contradict their
/// cards and one that does not.
fn write_decisions(root: &Path) {
    support::write_character_decisions(
        root,
        &[
            ("Kael", "Kael has green eyes now, since the flats."),
            ("Iria Vell", "Iria drowns in the spring tide."),
            ("Kael Maren", "Kael never raises his voice."),
        ],
    );
}

/// A decision's line without the time it was stamped.
fn unstamped(line: &str) -> Value {
    let mut decision: Value = serde_json::from_str(line).unwrap();
    decision.as_object_mut().unwrap().remove("updated_at");
    decision.as_object_mut().unwrap().remove("created_at");
    decision
}

#[test]
fn remember_and_promote_on_the_command_line_change_what_the_editor_changes() {
    use lsp_client::editor::{apply_to_disk, code_actions};
    let server = FakeModelServer::start();
    let [(_cli_dir, cli), (_editor_dir, editor)] = two_copies(&server);
    let scene = "Story/Scenes/SCN-the-gate.md";
    let text = read(&cli, scene);
    let line = text
        .lines()
        .position(|line| line.starts_with("Ysolde Harrow crossed the yard"))
        .unwrap();

    // Remember this: the whole line, by number on the command line and as a
    // selection in the editor.
    let output = control_room(&cli, &["remember", &format!("{scene}:{}", line + 1)]);
    assert!(output.status.success(), "{}", output_text(&output));
    let mut client = editor_client(&editor, &server.url, true, None);
    let scene_path = editor.join(scene);
    client.open(&scene_path, 1);
    let length = text.lines().nth(line).unwrap().encode_utf16().count();
    let selection = json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": length}});
    let remember = code_actions(&mut client, &scene_path, selection)
        .into_iter()
        .find(|action| action["title"] == "Remember this")
        .expect("Remember this on a selection");
    client.request(
        "workspace/executeCommand",
        json!({"command": remember["command"]["command"], "arguments": remember["command"]["arguments"]}),
    );
    let kb = ".control-room/kb/decisions.jsonl";
    let (from_cli, from_editor) = (read(&cli, kb), read(&editor, kb));
    assert_eq!(unstamped(&from_cli), unstamped(&from_editor));
    assert_eq!(unstamped(&from_cli)["category"], "constraint");

    // Promote to card: the first contradiction, by its line on the command
    // line and as the editor's quick fix.
    for root in [&cli, &editor] {
        write_decisions(root);
    }
    let listed = control_room(&cli, &["decisions"]);
    assert_eq!(listed.status.code(), Some(1), "{}", output_text(&listed));
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        listed.starts_with(&format!(
            "{kb}:1: this decision gives Kael Maren green eyes, but the card says grey"
        )),
        "{listed}"
    );
    assert_eq!(listed.lines().count(), 2, "{listed}");
    let output = control_room(&cli, &["promote", "1"]);
    assert!(output.status.success(), "{}", output_text(&output));
    let kb_path = editor.join(kb);
    client.open(&kb_path, 1);
    let shown = client.diagnostics_for(&lsp_client::uri(&kb_path), |d| d.len() == 2);
    let actions = code_actions(
        &mut client,
        &kb_path,
        shown["diagnostics"][0]["range"].clone(),
    );
    let promote = actions
        .iter()
        .find(|action| action["title"] == "Promote to card: Kael Maren")
        .unwrap_or_else(|| panic!("{actions:#?}"));
    apply_to_disk(&promote["edit"]);
    let card = "Compendium/Characters/CHAR-kael-maren.md";
    assert!(read(&cli, card).contains("eyes: green\n"));
    assert_eq!(read(&cli, card), read(&editor, card));
    let (from_cli, from_editor) = (read(&cli, kb), read(&editor, kb));
    for (cli_line, editor_line) in from_cli.lines().zip(from_editor.lines()) {
        assert_eq!(unstamped(cli_line), unstamped(editor_line));
    }
    assert_eq!(
        unstamped(from_cli.lines().next().unwrap())["promoted"],
        true
    );
    // Promoted, the decision is no longer a contradiction.
    let listed = control_room(&cli, &["decisions"]);
    assert_eq!(String::from_utf8(listed.stdout).unwrap().lines().count(), 1);
    client.shutdown();
}

#[test]
fn a_finding_dismissed_on_the_command_line_is_gone_from_the_editor() {
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    let [(_dir, root), (_other, _)] = two_copies(&server);
    let output = control_room(
        &root,
        &["run", RECIPE, "--arg", "scene_id=SCN-the-reckoning"],
    );
    assert!(output.status.success(), "{}", output_text(&output));
    let listed = control_room(&root, &["findings"]);
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(listed.lines().count(), 2, "{listed}");
    let first = listed.lines().next().unwrap();
    assert!(
        first.starts_with("Story/Scenes/SCN-the-reckoning.md:"),
        "{first}"
    );
    let id = first
        .rsplit_once('[')
        .and_then(|(_, id)| id.strip_suffix(']'))
        .unwrap()
        .to_owned();
    let output = control_room(&root, &["findings", "dismiss", &id]);
    assert!(output.status.success(), "{}", output_text(&output));
    let listed = control_room(&root, &["findings"]);
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert!(!listed.contains(&id), "{listed}");

    // The editor shows the one left.
    let mut client = editor_client(&root, &server.url, true, None);
    let scene = root.join("Story/Scenes/SCN-the-reckoning.md");
    client.open(&scene, 1);
    let shown = client.diagnostics_for(&lsp_client::uri(&scene), |d| {
        d.iter().any(|d| d["code"] == "agent-finding")
    });
    let ids: Vec<&Value> = shown["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "agent-finding")
        .map(|d| &d["data"]["finding_id"])
        .collect();
    assert_eq!(ids.len(), 1, "{shown:#}");
    assert_ne!(ids[0], &json!(id));
    client.shutdown();
}

#[test]
fn every_command_finds_the_manuscript_from_a_folder_inside_it() {
    let (_dir, root) = example_copy();
    let inside = root.join("Story/Scenes");
    for args in [
        &["check"][..],
        &["route", "draft scene SCN-the-reckoning"],
        &["runs", "list"],
        &["plan", "list"],
        &["findings"],
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
            .args(args)
            .current_dir(&inside)
            .output()
            .unwrap();
        let code = output.status.code();
        assert!(
            code == Some(0) || (args[0] == "check" && code == Some(1)),
            "{args:?} from inside the manuscript: {}",
            output_text(&output)
        );
    }
    // `check DIR` and `check --dir DIR` are the same.
    let positional = control_room_args(&["check", "--format", "json"], Some(&inside), None);
    let flagged = control_room_args(&["check", "--format", "json", "--dir"], None, Some(&inside));
    assert_eq!(positional, flagged);
    let report: Value = serde_json::from_str(&positional).unwrap();
    assert_eq!(report["root"], root.display().to_string());
    assert!(report["files_indexed"].as_u64().unwrap() > 5, "{report}");
}

/// The binary's stdout for `args`, with the folder as a last argument.
fn control_room_args(args: &[&str], positional: Option<&Path>, flagged: Option<&Path>) -> String {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"));
    command.args(args);
    if let Some(folder) = positional.or(flagged) {
        command.arg(folder);
    }
    String::from_utf8(command.output().unwrap().stdout).unwrap()
}

#[test]
fn the_parity_table_names_every_command_of_both_front_ends() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md"))
            .unwrap();
    let start = readme
        .find("| verb | command line | editor")
        .expect("the parity table");
    let table: String = readme[start..]
        .lines()
        .take_while(|line| line.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n");
    // Every command the server executes.
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    let initialized = client.initialize(&root, json!({}));
    let commands = initialized["capabilities"]["executeCommandProvider"]["commands"]
        .as_array()
        .unwrap();
    assert!(commands.len() >= 12, "{commands:?}");
    for command in commands {
        let command = command.as_str().unwrap();
        assert!(
            table.contains(&format!("`{command}`")),
            "{command} is not in the table"
        );
    }
    client.shutdown();
    // Every subcommand of the command line but the server itself and doctor.
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let subcommands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .lines()
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| !["lsp", "doctor", "help"].contains(name))
        .collect();
    assert!(subcommands.len() >= 12, "{subcommands:?}");
    for name in subcommands {
        assert!(
            table.contains(&format!("`{name}")),
            "`control-room {name}` is not in the table"
        );
    }
}

#[test]
fn two_processes_cannot_draft_one_scene_at_once() {
    let server = FakeModelServer::start();
    // The planner answers late, so the first run is still drafting when the
    // others start.
    server.on(
        &step_marker("brief", "planner"),
        vec![Answer::Delayed(
            std::time::Duration::from_secs(4),
            Box::new(Answer::text(model_server::scripted_reply("brief"))),
        )],
    );
    serve_draft_scene(&server, "");
    let [(_dir, root), (_other, _)] = two_copies(&server);
    let draft = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
            .args([
                "run",
                RECIPE,
                "--arg",
                "scene_id=SCN-the-reckoning",
                "--dir",
            ])
            .arg(&root)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = draft();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while runs(&root).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the first run did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A second process, and the editor, are refused while it drafts.
    let second = draft().wait_with_output().unwrap();
    assert_eq!(second.status.code(), Some(2), "{}", output_text(&second));
    assert!(
        output_text(&second).contains("a run already drafts Story/Scenes/SCN-the-reckoning.md"),
        "{}",
        output_text(&second)
    );
    let mut client = editor_client(&root, &server.url, true, None);
    let refused = client.request_raw(
        "workspace/executeCommand",
        json!({"command": "controlRoom.runRecipe", "arguments": [
            {"recipe": RECIPE, "scene": "SCN-the-reckoning"}]}),
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("a run already drafts")),
        "{refused}"
    );
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", output_text(&first));
    assert_eq!(runs(&root).len(), 1, "only one run was made, and paid for");
    // Once it has ended, the scene is free again.
    let lock = control_room::runs::launch::lock_scene(&root, "Story/Scenes/SCN-the-reckoning.md");
    assert!(lock.unwrap().is_some(), "the lock went with the run");
    client.shutdown();
}

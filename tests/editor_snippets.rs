//! The editor setups in `editors/README.md`, held to what they say: each
//! editor's snippet is read from the README, the command and arguments it
//! names start the real binary over stdio, its settings are sent the way that
//! editor sends them, and the scene with “Kale” must get its name-typo
//! diagnostic at the severity the settings ask for. The Eglot snippets also
//! run in a real Emacs when one (29 or later) is on the `PATH`; without one
//! that test says it skipped, unless `CONTROL_ROOM_REQUIRE_EDITORS=1` makes a
//! missing Emacs a failure.

use crate::support::lsp_client;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lsp_client::{Client, example_copy, uri};
use serde_json::{Value, json};

const SCENE: &str = "Story/Scenes/SCN-the-saltmaster.md";
/// Where “Kale” stands in the scene: line 30, column 24 (1-based).
const KALE_LINE: u64 = 30;
const KALE_COLUMN: u64 = 24;
/// How long the Emacs test may take in all before it is stopped.
const EMACS_TIMEOUT: Duration = Duration::from_secs(50);

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text under `## {heading}`, up to the next `## ` heading.
fn section<'a>(readme: &'a str, heading: &str) -> &'a str {
    let marker = format!("\n## {heading}\n");
    let start = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("editors/README.md has no `## {heading}` section"))
        + marker.len();
    let rest = &readme[start..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// The fenced blocks tagged `language` in `text`, in order.
fn fenced_blocks(text: &str, language: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line == format!("```{language}") => current = Some(String::new()),
            Some(block) if line == "```" => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    assert!(current.is_none(), "a ```{language} block is not closed");
    blocks
}

/// The one fenced block tagged `language` under `## {heading}`.
fn snippet(heading: &str, language: &str) -> String {
    let readme = readme();
    let mut blocks = fenced_blocks(section(&readme, heading), language);
    assert_eq!(
        blocks.len(),
        1,
        "`## {heading}` should hold one ```{language} block"
    );
    blocks.remove(0)
}

/// How an editor starts the server and hands it settings, as its snippet says.
#[derive(Debug)]
struct Launch {
    editor: &'static str,
    command: String,
    args: Vec<String>,
    /// Sent as `initializationOptions`.
    initialization_options: Option<Value>,
    /// Sent in `workspace/didChangeConfiguration` after `initialized`, when
    /// the editor does that.
    configuration: Option<Value>,
}

impl Launch {
    /// The LSP severity the snippet asks for name-typo: as its configuration
    /// change says, else as its initialization options say, else warning.
    /// A change that does not mention it leaves what the options asked for:
    /// that is what the writer who wrote the snippet expects to see.
    fn name_typo_severity(&self) -> u64 {
        let level = |settings: Option<&Value>| {
            let settings = settings?;
            let section = settings.get("controlRoom").unwrap_or(settings);
            section["diagnostics"]["severity"]["name-typo"]
                .as_str()
                .map(str::to_owned)
        };
        let level = level(self.configuration.as_ref())
            .or_else(|| level(self.initialization_options.as_ref()));
        match level.as_deref() {
            None | Some("warning") => 2,
            Some("error") => 1,
            Some("information") => 3,
            Some("hint") => 4,
            Some(other) => panic!("{}: name-typo set to {other:?}", self.editor),
        }
    }
}

fn strings(value: &Value, what: &str) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what} is not a list: {value}"))
        .iter()
        .map(|item| {
            item.as_str()
                .unwrap_or_else(|| panic!("{what} holds a non-string: {item}"))
                .to_owned()
        })
        .collect()
}

/// Helix: `[language-server.control-room]` and the markdown `[[language]]`.
/// Helix sends `config` as initialization options and again as a
/// configuration change once initialized.
fn helix() -> Launch {
    let text = snippet("Helix", "toml");
    let parsed: toml::Value = toml::from_str(&text).expect("the Helix snippet is TOML");
    let parsed = serde_json::to_value(parsed).unwrap();
    let server = &parsed["language-server"]["control-room"];
    assert!(
        server.is_object(),
        "the Helix snippet defines [language-server.control-room]"
    );
    let markdown = parsed["language"]
        .as_array()
        .expect("the Helix snippet has a [[language]]")
        .iter()
        .find(|language| language["name"] == "markdown")
        .expect("the Helix snippet configures the markdown language");
    let servers = markdown["language-servers"]
        .as_array()
        .expect("markdown has language-servers");
    assert!(
        servers.iter().any(|name| name == "control-room"),
        "markdown's language-servers include control-room: {servers:?}"
    );
    let roots = strings(&markdown["roots"], "markdown's roots");
    assert!(
        roots.iter().any(|root| root == "control-room.toml"),
        "the roots find control-room.toml: {roots:?}"
    );
    let config = server.get("config").cloned();
    Launch {
        editor: "Helix",
        command: server["command"]
            .as_str()
            .expect("the server has a command")
            .to_owned(),
        args: server
            .get("args")
            .map_or_else(Vec::new, |args| strings(args, "args")),
        initialization_options: config.clone(),
        configuration: config,
    }
}

/// Zed: `lsp.control-room` and `languages.Markdown.language_servers`. Zed
/// sends `initialization_options` when it starts the server and `settings`
/// as a configuration change.
fn zed() -> Launch {
    let text = snippet("Zed", "json");
    let parsed: Value = serde_json::from_str(&text).expect("the Zed snippet is JSON");
    let server = &parsed["lsp"]["control-room"];
    let servers = strings(
        &parsed["languages"]["Markdown"]["language_servers"],
        "languages.Markdown.language_servers",
    );
    assert!(
        servers.iter().any(|name| name == "control-room"),
        "Markdown's language servers include control-room: {servers:?}"
    );
    Launch {
        editor: "Zed",
        command: server["binary"]["path"]
            .as_str()
            .expect("lsp.control-room.binary.path is set")
            .to_owned(),
        args: strings(
            &server["binary"]["arguments"],
            "lsp.control-room.binary.arguments",
        ),
        initialization_options: server.get("initialization_options").cloned(),
        configuration: Some(server.get("settings").cloned().unwrap_or(json!({}))),
    }
}

/// An Emacs Lisp value, as far as the snippets need: atoms (symbols,
/// keywords, numbers, and `.`), strings and lists; `'x` reads as
/// `(quote x)`.
#[derive(Debug, Clone, PartialEq)]
enum Sexp {
    Atom(String),
    Str(String),
    List(Vec<Sexp>),
}

/// Reads every form in `text`.
fn read_sexps(text: &str) -> Vec<Sexp> {
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let mut forms = Vec::new();
    while let Some(form) = read_sexp(&chars, &mut at) {
        forms.push(form);
    }
    forms
}

fn skip_blank(chars: &[char], at: &mut usize) {
    while *at < chars.len() {
        if chars[*at].is_whitespace() {
            *at += 1;
        } else if chars[*at] == ';' {
            while *at < chars.len() && chars[*at] != '\n' {
                *at += 1;
            }
        } else {
            return;
        }
    }
}

fn read_sexp(chars: &[char], at: &mut usize) -> Option<Sexp> {
    skip_blank(chars, at);
    let first = *chars.get(*at)?;
    *at += 1;
    match first {
        '(' => {
            let mut items = Vec::new();
            loop {
                skip_blank(chars, at);
                match chars.get(*at) {
                    None => panic!("an Emacs Lisp list is not closed"),
                    Some(')') => {
                        *at += 1;
                        return Some(Sexp::List(items));
                    }
                    Some(_) => items.push(read_sexp(chars, at).expect("a list item")),
                }
            }
        }
        ')' => panic!("an Emacs Lisp `)` closes nothing"),
        '\'' | '#' => {
            if first == '#' {
                assert_eq!(chars.get(*at), Some(&'\''), "only #' is read");
                *at += 1;
            }
            let quoted = read_sexp(chars, at).expect("a quoted form");
            Some(Sexp::List(vec![Sexp::Atom("quote".into()), quoted]))
        }
        '"' => {
            let mut text = String::new();
            loop {
                match chars.get(*at) {
                    None => panic!("an Emacs Lisp string is not closed"),
                    Some('"') => {
                        *at += 1;
                        return Some(Sexp::Str(text));
                    }
                    Some('\\') => {
                        text.push(*chars.get(*at + 1).expect("an escaped character"));
                        *at += 2;
                    }
                    Some(&c) => {
                        text.push(c);
                        *at += 1;
                    }
                }
            }
        }
        _ => {
            let mut atom = first.to_string();
            while let Some(&c) = chars.get(*at) {
                if c.is_whitespace() || "()\";'".contains(c) {
                    break;
                }
                atom.push(c);
                *at += 1;
            }
            Some(Sexp::Atom(atom))
        }
    }
}

/// Every list in `forms`, at any depth, depth first.
fn lists(forms: &[Sexp]) -> Vec<&[Sexp]> {
    let mut found = Vec::new();
    for form in forms {
        if let Sexp::List(items) = form {
            found.push(items.as_slice());
            found.extend(lists(items));
        }
    }
    found
}

fn unquote(form: &Sexp) -> &Sexp {
    match form {
        Sexp::List(items) if items.len() == 2 && items[0] == Sexp::Atom("quote".into()) => {
            &items[1]
        }
        other => other,
    }
}

/// A plist as Eglot turns it into JSON: `:key value` pairs become an
/// object, `t` true, `:json-false` false, `nil` null.
fn plist_to_json(form: &Sexp) -> Value {
    match form {
        Sexp::Str(text) => json!(text),
        Sexp::Atom(atom) => match atom.as_str() {
            "t" => json!(true),
            ":json-false" => json!(false),
            "nil" => Value::Null,
            number => serde_json::from_str(number)
                .unwrap_or_else(|_| panic!("cannot read {number} as JSON")),
        },
        Sexp::List(items) => {
            assert!(items.len() % 2 == 0, "a plist has pairs: {items:?}");
            let mut object = serde_json::Map::new();
            for pair in items.chunks(2) {
                let Sexp::Atom(key) = &pair[0] else {
                    panic!("a plist key is a keyword: {:?}", pair[0]);
                };
                let key = key
                    .strip_prefix(':')
                    .unwrap_or_else(|| panic!("a plist key is a keyword: {key}"));
                object.insert(key.to_owned(), plist_to_json(&pair[1]));
            }
            Value::Object(object)
        }
    }
}

/// The value after `name .` in a dotted pair anywhere in `forms`.
fn dotted_value<'a>(forms: &'a [Sexp], name: &str) -> Option<&'a Sexp> {
    lists(forms).into_iter().find_map(|items| match items {
        [Sexp::Atom(head), Sexp::Atom(dot), value] if head == name && dot == "." => Some(value),
        _ => None,
    })
}

/// The two Emacs blocks: the init file and the manuscript's `.dir-locals.el`.
fn eglot_snippets() -> (String, String) {
    let readme = readme();
    let mut blocks = fenced_blocks(section(&readme, "Emacs (Eglot)"), "elisp");
    assert_eq!(
        blocks.len(),
        2,
        "`## Emacs (Eglot)` should hold two ```elisp blocks: the init file and .dir-locals.el"
    );
    let dir_locals = blocks.pop().unwrap();
    (blocks.pop().unwrap(), dir_locals)
}

/// Emacs with Eglot: the `eglot-server-programs` entry of the init file and
/// the `eglot-workspace-configuration` of `.dir-locals.el`. Eglot sends
/// `:initializationOptions` (when the entry has them) and then, always, the
/// workspace configuration (`{}` when none is set).
fn eglot() -> Launch {
    let (init, dir_locals) = eglot_snippets();
    let forms = read_sexps(&init);
    let entry = lists(&forms)
        .into_iter()
        .find_map(|items| match items {
            [Sexp::Atom(add), place, entry]
                if add == "add-to-list"
                    && *unquote(place) == Sexp::Atom("eglot-server-programs".into()) =>
            {
                Some(unquote(entry))
            }
            _ => None,
        })
        .expect("the Emacs snippet adds to eglot-server-programs");
    let Sexp::List(entry) = entry else {
        panic!("the eglot-server-programs entry is a (MODES . CONTACT) pair: {entry:?}");
    };
    let [modes, Sexp::Atom(dot), Sexp::List(contact)] = entry.as_slice() else {
        panic!("the eglot-server-programs entry is a (MODES . CONTACT) pair: {entry:?}");
    };
    assert_eq!(dot, ".", "the entry is a dotted pair");
    let modes = match modes {
        Sexp::List(modes) => modes.clone(),
        mode => vec![mode.clone()],
    };
    assert!(
        modes.contains(&Sexp::Atom("markdown-mode".into())),
        "the entry is for markdown-mode: {modes:?}"
    );
    let mut words = Vec::new();
    let mut initialization_options = None;
    let mut rest = contact.iter();
    while let Some(item) = rest.next() {
        match item {
            Sexp::Str(word) => words.push(word.clone()),
            Sexp::Atom(key) if key == ":initializationOptions" => {
                initialization_options = Some(plist_to_json(unquote(
                    rest.next().expect(":initializationOptions has a value"),
                )));
            }
            other => panic!("unexpected {other:?} in the Eglot contact"),
        }
    }
    assert!(!words.is_empty(), "the Eglot contact names a program");
    let configuration = dotted_value(&read_sexps(&dir_locals), "eglot-workspace-configuration")
        .map_or(json!({}), |plist| plist_to_json(unquote(plist)));
    Launch {
        editor: "Emacs (Eglot)",
        command: words.remove(0),
        args: words,
        initialization_options,
        configuration: Some(configuration),
    }
}

/// The server started as `launch` says, as an editor would.
fn start(launch: &Launch) -> Client {
    let name = Path::new(&launch.command)
        .file_name()
        .and_then(|name| name.to_str());
    assert_eq!(
        name,
        Some("control-room"),
        "the {} snippet starts {:?}",
        launch.editor,
        launch.command
    );
    let args: Vec<&str> = launch.args.iter().map(String::as_str).collect();
    Client::launch(&args, &[])
}

/// Starts the server as `launch` says, opens the scene with “Kale” and
/// expects its name-typo diagnostic at the severity the settings give it.
fn check_against_the_server(launch: &Launch) {
    let (_dir, root) = example_copy();
    let mut server = start(launch);
    let root_uri = uri(&root);
    let mut params = json!({
        "processId": null,
        "rootUri": root_uri,
        "workspaceFolders": [{"uri": root_uri, "name": "salt-road"}],
        "capabilities": {},
    });
    if let Some(options) = &launch.initialization_options {
        params["initializationOptions"] = options.clone();
    }
    let result = server.request("initialize", params);
    assert_eq!(result["serverInfo"]["name"], "control-room");
    server.notify("initialized", json!({}));
    if let Some(settings) = &launch.configuration {
        server.notify(
            "workspace/didChangeConfiguration",
            json!({"settings": settings}),
        );
    }
    let scene = root.join(SCENE);
    let scene_uri = uri(&scene);
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {
            "uri": scene_uri,
            "languageId": "markdown",
            "version": 1,
            "text": std::fs::read_to_string(&scene).unwrap(),
        }}),
    );
    let severity = launch.name_typo_severity();
    server.wait_for(|message| {
        message["method"] == "textDocument/publishDiagnostics"
            && message["params"]["uri"] == scene_uri
            && message["params"]["diagnostics"]
                .as_array()
                .is_some_and(|diagnostics| {
                    diagnostics.iter().any(|diagnostic| {
                        diagnostic["code"] == "name-typo"
                            && diagnostic["range"]["start"]
                                == json!({"line": KALE_LINE - 1, "character": KALE_COLUMN - 1})
                            && diagnostic["severity"] == severity
                    })
                })
    });
    let complaints: Vec<&Value> = server
        .seen
        .iter()
        .filter(|message| {
            matches!(
                message["method"].as_str(),
                Some("window/logMessage" | "window/showMessage")
            ) && message["params"]["type"]
                .as_u64()
                .is_some_and(|kind| kind <= 2)
        })
        .collect();
    assert!(
        complaints.is_empty(),
        "{}: the server complained about the settings: {complaints:#?}",
        launch.editor
    );
    server.shutdown();
}

#[test]
fn the_readme_has_a_section_for_each_editor_in_order() {
    let readme = readme();
    let headings: Vec<&str> = readme
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .collect();
    let editors = ["VS Code", "Neovim", "Helix", "Zed", "Emacs (Eglot)"];
    let positions: Vec<usize> = editors
        .iter()
        .map(|editor| {
            headings
                .iter()
                .position(|heading| heading == editor)
                .unwrap_or_else(|| panic!("editors/README.md has no `## {editor}`: {headings:?}"))
        })
        .collect();
    assert!(
        positions.is_sorted(),
        "the editors' sections come in the order {editors:?}: {headings:?}"
    );
    let intro = &readme[..readme.find("\n## ").unwrap()];
    assert!(
        intro.contains("cargo install --path .") && intro.contains("control-room.toml"),
        "the introduction says how to install the server and how the root is found"
    );
}

#[test]
fn the_helix_snippet_starts_the_server() {
    check_against_the_server(&helix());
}

#[test]
fn the_zed_snippet_starts_the_server() {
    check_against_the_server(&zed());
}

#[test]
fn the_eglot_snippet_starts_the_server() {
    check_against_the_server(&eglot());
}

/// A snippet that names arguments the binary refuses must fail the check;
/// otherwise the checks above prove nothing about the arguments.
#[test]
#[should_panic(expected = "exited with")]
fn arguments_the_binary_refuses_fail_the_check() {
    let mut launch = helix();
    launch.args = vec!["--stdio".to_owned()];
    check_against_the_server(&launch);
}

/// The major version of the `emacs` on the `PATH`, if there is one.
fn emacs_version() -> Option<(u32, String)> {
    let output = Command::new("emacs").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let first = text.lines().next()?.to_owned();
    let version = first.strip_prefix("GNU Emacs ")?;
    let major = version.split('.').next()?.parse().ok()?;
    Some((major, first))
}

/// Says why the Emacs test did not run: a skip, printed past the test
/// harness's capture so that it shows, or a failure when
/// `CONTROL_ROOM_REQUIRE_EDITORS=1`.
fn skip(reason: &str) {
    let install = "install Emacs 29 or later; on Debian 12: \
                   `apt-get install -t bookworm-backports emacs-nox` with bookworm-backports \
                   in the apt sources";
    if std::env::var("CONTROL_ROOM_REQUIRE_EDITORS").as_deref() == Ok("1") {
        panic!("{reason} ({install}), and CONTROL_ROOM_REQUIRE_EDITORS=1 requires it");
    }
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {reason} ({install}); the Eglot snippets were not run in Emacs"
    );
}

#[test]
fn the_eglot_snippets_work_in_a_real_emacs() {
    let Some((major, version)) = emacs_version() else {
        skip("emacs not found");
        return;
    };
    if major < 29 {
        skip(&format!("{version} is older than 29 and has no Eglot"));
        return;
    }
    let launch = eglot();
    let expected_type = match launch.name_typo_severity() {
        1 => "eglot-error",
        2 => "eglot-warning",
        _ => "eglot-note",
    };
    let (dir, root) = example_copy();
    // The manuscript lies in a Git repository, as a writer's often does: the
    // snippet must still give the server the manuscript as its root.
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let report = dir.path().join("report.json");
    let bin = Path::new(env!("CARGO_BIN_EXE_control-room"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/emacs/eglot-test.el");
    let log = dir.path().join("emacs.log");
    let started = Instant::now();
    let mut emacs = Command::new("emacs")
        .args(["--batch", "-Q", "-l"])
        .arg(&script)
        .env("PATH", path)
        .env("HOME", &home)
        .env("CONTROL_ROOM_MANUSCRIPT", &root)
        .env("CONTROL_ROOM_REPORT", &report)
        .env("CONTROL_ROOM_SCENE", SCENE)
        .env("CONTROL_ROOM_EXPECT_CODE", "name-typo")
        .env("CONTROL_ROOM_EXPECT_TYPE", expected_type)
        .env("CONTROL_ROOM_WAIT_SECONDS", "20")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(dir.path().join("emacs.err")).unwrap())
        .spawn()
        .expect("emacs starts");
    let status = loop {
        if let Some(status) = emacs.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > EMACS_TIMEOUT {
            let _ = emacs.kill();
            break emacs.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = format!(
        "{}{}",
        std::fs::read_to_string(&log).unwrap_or_default(),
        std::fs::read_to_string(dir.path().join("emacs.err")).unwrap_or_default()
    );
    assert!(
        started.elapsed() <= EMACS_TIMEOUT,
        "{version} ran past {EMACS_TIMEOUT:?}:\n{output}"
    );
    assert!(status.success(), "{version} failed ({status}):\n{output}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(&report)
            .unwrap_or_else(|e| panic!("no report from {version} ({e}):\n{output}")),
    )
    .unwrap();
    let mut command = vec![launch.command.clone()];
    command.extend(launch.args.iter().cloned());
    assert_eq!(
        strings(&report["command"], "the command Eglot ran"),
        command,
        "Eglot ran the snippet's command"
    );
    let eglot_root = PathBuf::from(report["root"].as_str().expect("the report has a root"));
    assert_eq!(
        eglot_root.canonicalize().unwrap(),
        root,
        "Eglot gave the server the manuscript as its root, not the Git repository"
    );
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics.iter().any(|diagnostic| {
            diagnostic["code"] == "name-typo"
                && diagnostic["line"] == KALE_LINE
                && diagnostic["column"] == KALE_COLUMN
                && diagnostic["text"] == "Kale"
                && diagnostic["type"] == expected_type
        }),
        "Flymake shows the name typo on “Kale” as {expected_type}: {report:#}"
    );
    assert_eq!(report["exit_status"], 0, "the server exited cleanly");
    eprintln!(
        "{version}: Eglot got the diagnostics in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

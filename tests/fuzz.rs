//! Fuzz targets, run by `cargo test`: the readers of untrusted input (the
//! LSP framing, front matter, Markdown and the checks and semantic tokens
//! over it, recipes, model replies and their contract, Evidence lines, the
//! voice's tournament files and gold standard) fed
//! with the seed corpus of `tests/fuzz-corpus/<target>/` mutated (bytes and
//! format tokens inserted, ranges deleted, duplicated, spliced from another
//! seed, the end cut) or with tokens alone. Each target asserts that it
//! never panics and the invariants that are cheap to state: ranges inside
//! the text and on character boundaries, no `<thinking>` in what a reply
//! gives, a frame passed on only when it is a message, an incremental parse
//! equal to a fresh one.
//!
//! They are proptest properties rather than cargo-fuzz targets because
//! cargo-fuzz needs a nightly compiler for its sanitizer and coverage flags,
//! and CI has the stable toolchain only; a coverage-guided build of the
//! whole crate would also cost CI several minutes before the first input.
//! Each target runs `CONTROL_ROOM_FUZZ_CASES` inputs (2,000 by default,
//! about ten seconds in all in a debug build); a longer run:
//! `CONTROL_ROOM_FUZZ_CASES=100000 cargo test --release --test integration fuzz::`.
//! A failing input is shrunk, printed, and kept in
//! `tests/fuzz.proptest-regressions` to be replayed first from then on.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Value, json};

use control_room::checks;
use control_room::evidence::{self, ReceiptBook, SourceKind, Sources};
use control_room::ide;
use control_room::index::{SourceFile, Workspace};
use control_room::llm::protocol;
use control_room::lsp::framing::{Closed, Shutdown, pump_input};
use control_room::runs::contract::{self, PathGuard};
use control_room::runs::prompts::{Output, Prompts};
use control_room::runs::recipe;
use control_room::syntax::markdown::TextEdit;
use control_room::syntax::{MarkdownParser, front_matter};
use control_room::text::TextRange;

fn config() -> ProptestConfig {
    let cases = std::env::var("CONTROL_ROOM_FUZZ_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(2000);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// Pieces of every format the targets read, for mutations to insert.
const TOKENS: &[&str] = &[
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "\u{feff}",
    "é",
    "😀",
    "漢字",
    "\u{0}",
    "---\n",
    "...\n",
    "#",
    "## ",
    "> ",
    "- ",
    "1. ",
    "*",
    "_",
    "`",
    "```",
    "```json\n",
    "~~~",
    "[",
    "](",
    ")",
    "<",
    ">",
    "</",
    "/>",
    "<!--",
    "-->",
    "|",
    "\\",
    "$",
    "https://",
    "www.",
    "\"",
    "“",
    "”",
    "'",
    ":",
    ": ",
    "&a ",
    "*a",
    "!!str ",
    "{",
    "}",
    "[]",
    "{}",
    ",",
    "null",
    "true",
    "0",
    "-1",
    "1e999",
    "Content-Length: ",
    "Content-Length: 0\r\n\r\n",
    "\r\n\r\n",
    "\"jsonrpc\":\"2.0\"",
    "\"id\":1,",
    "\"method\":\"",
    "$/",
    "<thinking>",
    "</thinking>",
    "<think>",
    "</think>",
    "<message>",
    "</message>",
    "<action type=\"a\">",
    "</action>",
    "<content_update target=\"",
    "</content_update>",
    "Evidence: ",
    "**Evidence:** ",
    "rcpt_",
    " in Story/Scenes/SCN-a.md",
    "line 3",
    "SCN-",
    "{\"$ref\": \"task.args.x\"}",
    "\"step_id\": ",
    "Kael",
    "Kale",
    "Iria",
];

/// One change to a seed. Offsets wrap around the input's length.
#[derive(Clone, Debug)]
enum Mutation {
    Token {
        at: usize,
        token: usize,
    },
    Byte {
        at: usize,
        byte: u8,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Duplicate {
        at: usize,
        len: usize,
    },
    Splice {
        at: usize,
        seed: usize,
        from: usize,
        len: usize,
    },
    Truncate {
        at: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any::<usize>()).prop_map(|(at, token)| Mutation::Token { at, token }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Byte { at, byte }),
        2 => (any::<usize>(), 0usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (any::<usize>(), 0usize..256).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        1 => (any::<usize>(), any::<usize>(), any::<usize>(), 0usize..128)
            .prop_map(|(at, seed, from, len)| Mutation::Splice { at, seed, from, len }),
        1 => any::<usize>().prop_map(|at| Mutation::Truncate { at }),
    ]
}

fn mutate(seed: &[u8], mutations: &[Mutation], seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for mutation in mutations {
        let at = |offset: usize, bytes: &Vec<u8>| offset % (bytes.len() + 1);
        match *mutation {
            Mutation::Token { at: offset, token } => {
                let start = at(offset, &bytes);
                let token = TOKENS[token % TOKENS.len()].as_bytes();
                bytes.splice(start..start, token.iter().copied());
            }
            Mutation::Byte { at: offset, byte } => {
                let start = at(offset, &bytes);
                bytes.insert(start, byte);
            }
            Mutation::Delete { at: offset, len } => {
                let start = at(offset, &bytes);
                let end = (start + len).min(bytes.len());
                bytes.drain(start..end);
            }
            Mutation::Duplicate { at: offset, len } => {
                let start = at(offset, &bytes);
                let end = (start + len).min(bytes.len());
                let copy = bytes[start..end].to_vec();
                bytes.splice(end..end, copy);
            }
            Mutation::Splice {
                at: offset,
                seed,
                from,
                len,
            } => {
                let other = &seeds[seed % seeds.len()];
                let from = from % (other.len() + 1);
                let piece = &other[from..(from + len).min(other.len())];
                let start = at(offset, &bytes);
                bytes.splice(start..start, piece.iter().copied());
            }
            Mutation::Truncate { at: offset } => {
                let end = at(offset, &bytes);
                bytes.truncate(end);
            }
        }
    }
    bytes
}

/// The seeds of `target`, read once.
fn seeds(target: &str) -> &'static [Vec<u8>] {
    /// Each target's name and seeds.
    type Corpora = std::sync::Mutex<Vec<(String, &'static [Vec<u8>])>>;
    static CORPORA: OnceLock<Corpora> = OnceLock::new();
    let corpora = CORPORA.get_or_init(Default::default);
    let mut corpora = corpora.lock().unwrap();
    if let Some((_, seeds)) = corpora.iter().find(|(name, _)| name == target) {
        return seeds;
    }
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-corpus")
        .join(target);
    let mut paths: Vec<_> = std::fs::read_dir(&folder)
        .unwrap_or_else(|error| panic!("{}: {error}", folder.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    let read: Vec<Vec<u8>> = paths
        .iter()
        .map(|path| std::fs::read(path).unwrap())
        .collect();
    assert!(!read.is_empty(), "{} has seeds", folder.display());
    let read: &'static [Vec<u8>] = Box::leak(read.into_boxed_slice());
    corpora.push((target.to_owned(), read));
    read
}

/// A seed of `target` mutated, or format tokens and bytes alone.
fn input(target: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let seeds = seeds(target);
    let piece = prop_oneof![
        3 => any::<usize>().prop_map(|token| TOKENS[token % TOKENS.len()].as_bytes().to_vec()),
        1 => any::<u8>().prop_map(|byte| vec![byte]),
    ];
    prop_oneof![
        4 => (0..seeds.len(), proptest::collection::vec(mutation(), 0..12))
            .prop_map(move |(seed, mutations)| mutate(&seeds[seed], &mutations, seeds)),
        1 => proptest::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat()),
    ]
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether `range` lies in `text` on character boundaries.
fn inside(text: &str, range: TextRange) -> bool {
    range.start <= range.end
        && range.end <= text.len()
        && text.is_char_boundary(range.start)
        && text.is_char_boundary(range.end)
}

fn leaks_thinking(shown: &str) -> bool {
    let shown = shown.to_lowercase();
    shown.contains("<thinking") || shown.contains("<think>")
}

/// Runs the framing over `bytes`: how it closed, what it passed to the
/// framework, and the error replies it made.
fn pump(bytes: &[u8]) -> (Closed, Vec<u8>, Vec<Vec<u8>>) {
    use tokio::io::AsyncReadExt;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (to_server, mut server_side) = tokio::io::duplex(1 << 16);
        let (refusals, mut refused) = tokio::sync::mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let mut passed = Vec::new();
            server_side.read_to_end(&mut passed).await.unwrap();
            passed
        });
        let (closed, to_server) = tokio::time::timeout(
            Duration::from_secs(20),
            pump_input(bytes, to_server, refusals, Shutdown::default()),
        )
        .await
        .expect("the framing reads its input to the end");
        drop(to_server);
        let passed = reader.await.unwrap();
        let mut replies = Vec::new();
        while let Ok(reply) = refused.try_recv() {
            replies.push(reply);
        }
        (closed, passed, replies)
    })
}

/// The bodies of `stream`, which must be frames as the framing writes them.
fn frames(mut stream: &[u8]) -> Vec<Vec<u8>> {
    let mut bodies = Vec::new();
    while !stream.is_empty() {
        let rest = stream
            .strip_prefix(b"Content-Length: ")
            .expect("a frame starts with its length");
        let end = rest.iter().position(|byte| *byte == b'\r').unwrap();
        let length: usize = std::str::from_utf8(&rest[..end]).unwrap().parse().unwrap();
        let rest = rest[end..].strip_prefix(b"\r\n\r\n").expect("one header");
        bodies.push(rest[..length].to_vec());
        stream = &rest[length..];
    }
    bodies
}

/// A small JSON-RPC message.
fn message() -> impl Strategy<Value = Value> {
    let text = proptest::collection::vec(any::<usize>(), 0..6).prop_map(|tokens| {
        tokens
            .iter()
            .map(|token| TOKENS[token % TOKENS.len()])
            .collect::<String>()
    });
    (any::<i32>(), 0usize..4, text).prop_map(|(id, kind, text)| match kind {
        0 => json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {"text": text}}),
        1 => json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"text": text}}),
        2 => json!({"jsonrpc": "2.0", "id": id, "result": text}),
        _ => json!({"jsonrpc": "2.0", "id": text, "method": "shutdown"}),
    })
}

/// The example's cards and outline, for the checks to read a fuzzed scene against.
fn workspace() -> &'static Workspace {
    static WORKSPACE: OnceLock<(tempfile::TempDir, Workspace)> = OnceLock::new();
    &WORKSPACE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let mut workspace = Workspace::new(dir.path());
            let paths = workspace.config().paths.clone();
            let card = "---\nname: Kael Maren\naliases: [Kael]\neyes: grey\nhair: black\nstatus: dead\ndied_in: SCN-one\nborn: 1170-02-10\n---\n";
            // Two places a day apart, for the story clock's checks.
            let fortress = "---\ntype: location\nname: The Salt Fortress\ntravel:\n  Vel Harbour: 1 day\n---\n";
            let harbour = "---\ntype: location\nname: Vel Harbour\n---\n";
            let one = "---\npov: Kael\nlocation: The Salt Fortress\ndate: 1203-04-12\ntime: dusk\n---\n\nKael fell.\n";
            let outline = "# Outline\n\n## Chapter 1\n\n- SCN-one\n- SCN-fuzz\n";
            let sheet = "# Anti-patterns\n\n## Zero tolerance\n\n- a shiver ran down\n";
            // A gold standard, so that every fuzzed scene's voice is measured.
            let gold = "---\nlocked: true\n---\n\n## Passage\n\nKael waited. The tide came in like a slow hand. He thought of the gate.\n";
            workspace.insert_files(vec![
                SourceFile::parse("Compendium/Characters/CHAR-kael.md".into(), card.into(), &paths),
                SourceFile::parse(paths.outline.as_str().into(), outline.into(), &paths),
                SourceFile::parse(paths.anti_patterns.as_str().into(), sheet.into(), &paths),
                SourceFile::parse(paths.voice_file("gold-standard.md").into(), gold.into(), &paths),
                SourceFile::parse("Compendium/Locations/LOC-fortress.md".into(), fortress.into(), &paths),
                SourceFile::parse("Compendium/Locations/LOC-harbour.md".into(), harbour.into(), &paths),
                SourceFile::parse("Story/Scenes/SCN-one.md".into(), one.into(), &paths),
            ]);
            (dir, workspace)
        })
        .1
}

/// The scene the Evidence target's lines may quote.
struct Scene;

impl Sources for Scene {
    fn text(&self, path: &str) -> Option<Arc<str>> {
        (path == "Story/Scenes/SCN-the-gate.md" || path == "Story/Scenes/SCN-a.md")
            .then(|| Arc::from("# The Gate\n\nKael’s grey eyes narrowed. Kael waited.\n"))
    }

    fn kind(&self, _path: &str) -> SourceKind {
        SourceKind::Scene
    }
}

fn findings_schema() -> (String, Value) {
    let schema = json!({
        "type": "object",
        "required": ["findings"],
        "properties": {"findings": {"type": "array", "items": {
            "type": "object",
            "required": ["message"],
            "properties": {"message": {"type": "string"}, "file": {"type": "string"}}
        }}}
    });
    ("findings.schema.json".to_owned(), schema)
}

proptest! {
    #![proptest_config(config())]

    /// Whatever the client sends, the framing ends (never hangs or panics),
    /// passes on only frames whose body is a JSON object, and answers the
    /// rest with JSON-RPC errors.
    #[test]
    fn the_lsp_framing_passes_only_messages_and_answers_the_rest(bytes in input("framing")) {
        let (closed, passed, replies) = pump(&bytes);
        if let Closed::Garbled(why) = &closed {
            prop_assert!(!why.is_empty());
        }
        for body in frames(&passed) {
            let value: Value = serde_json::from_slice(&body).expect("a passed body is JSON");
            prop_assert!(value.is_object(), "{value}");
        }
        for reply in replies {
            let reply: Value = serde_json::from_slice(&reply).unwrap();
            prop_assert_eq!(&reply["jsonrpc"], "2.0");
            let code = reply["error"]["code"].as_i64().unwrap();
            prop_assert!([-32700, -32600, -32601].contains(&code), "{}", reply);
        }
    }

    /// Frames of messages, with blank lines between them or not, reach the
    /// framework as they were sent, in order.
    #[test]
    fn well_formed_frames_pass_through_the_framing_unchanged(
        messages in proptest::collection::vec((message(), any::<bool>()), 0..8)
    ) {
        let mut stream = Vec::new();
        let mut bodies = Vec::new();
        for (message, blank_line) in messages {
            let body = serde_json::to_vec(&message).unwrap();
            stream.extend(format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes());
            stream.extend(&body);
            if blank_line {
                stream.extend(b"\r\n");
            }
            bodies.push(body);
        }
        let (closed, passed, replies) = pump(&stream);
        prop_assert_eq!(closed, Closed::Ended);
        prop_assert_eq!(frames(&passed), bodies);
        prop_assert!(replies.is_empty());
    }

    /// Front matter: every range it reports is in the text, on character
    /// boundaries, and no line costs more than one error.
    #[test]
    fn front_matter_ranges_are_in_the_text(bytes in input("front_matter")) {
        let text = text(&bytes);
        if let Some(front) = front_matter::parse(&text) {
            prop_assert!(inside(&text, front.range) && inside(&text, front.content));
            prop_assert!(front.range.contains_range(front.content) || front.content.is_empty());
            for error in &front.errors {
                prop_assert!(inside(&text, error.range), "{:?}", error);
                prop_assert!(!error.message.is_empty());
            }
            prop_assert!(front.errors.len() <= text.lines().count() + 1);
            for entry in &front.entries {
                prop_assert!(inside(&text, entry.key_range), "{:?}", entry);
                prop_assert!(inside(&text, entry.value.range), "{:?}", entry);
            }
        }
    }

    /// Markdown: prose ranges sorted, apart and in the text; blocks in the
    /// text; an edit parsed incrementally gives what a fresh parse does; the
    /// checks over the file put every diagnostic and fix in the text; its
    /// semantic tokens are in the text, not empty, in order and apart; its
    /// inlay hints stand in the text.
    #[test]
    fn markdown_and_its_checks_stay_in_the_text(
        bytes in input("markdown"),
        edit in (any::<usize>(), 0usize..24, any::<usize>()),
    ) {
        let text = text(&bytes);
        let syntax = MarkdownParser::parse_fresh(&text);
        for pair in syntax.prose.windows(2) {
            prop_assert!(pair[0].end <= pair[1].start, "{:?}", pair);
        }
        for range in &syntax.prose {
            prop_assert!(inside(&text, *range), "{:?}", range);
        }
        for block in &syntax.blocks {
            prop_assert!(inside(&text, block.range) && inside(&text, block.inline), "{:?}", block);
        }

        let mut parser = MarkdownParser::new();
        parser.parse(&text);
        let (at, len, token) = edit;
        let floor = |mut offset: usize| {
            offset = offset.min(text.len());
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            offset
        };
        let start = floor(at % (text.len() + 1));
        let end = floor(start + len);
        let edit = TextEdit {
            range: TextRange::new(start, end),
            new_text: TOKENS[token % TOKENS.len()].to_owned(),
        };
        let mut edited = text.clone();
        edited.replace_range(start..end, &edit.new_text);
        let incremental = parser.apply_edit(&text, &edit, &edited);
        prop_assert_eq!(incremental, MarkdownParser::parse_fresh(&edited));

        let mut workspace = workspace().clone();
        let path = "Story/Scenes/SCN-fuzz.md";
        let paths = workspace.config().paths.clone();
        workspace.insert_file(SourceFile::parse(path.into(), text.clone().into(), &paths));
        for diagnostic in checks::check_file(&workspace, path) {
            prop_assert!(inside(&text, diagnostic.range), "{:?}", diagnostic);
            prop_assert!(!diagnostic.message.is_empty());
            for edit in diagnostic.fixes.iter().flat_map(|fix| &fix.edits) {
                match workspace.file(&edit.path) {
                    Some(file) => prop_assert!(inside(&file.text, edit.range), "{:?}", edit),
                    // "Create card": a new file, written from its start, among the cards.
                    None => prop_assert!(
                        edit.range.is_empty()
                            && edit.range.start == 0
                            && edit.path.starts_with(&*paths.characters),
                        "{:?}",
                        edit
                    ),
                }
            }
        }
        let tokens = ide::semantic_tokens(&workspace, path);
        for token in &tokens {
            prop_assert!(inside(&text, token.range) && !token.range.is_empty(), "{:?}", token);
        }
        for pair in tokens.windows(2) {
            prop_assert!(pair[0].range.end <= pair[1].range.start, "{:?}", pair);
        }
        // The story clock's hints stand in the text.
        for hint in ide::inlay_hints(&workspace, path, TextRange::new(0, text.len())) {
            prop_assert!(hint.offset <= text.len() && text.is_char_boundary(hint.offset), "{:?}", hint);
            prop_assert!(!hint.label.is_empty());
        }
    }

    /// The voice's files as the writer may leave them: a tournament's file
    /// is read (or is not one) without panicking, its versions' lines are
    /// in it, and an answer inserted after a version's last line keeps the
    /// text around it; a gold standard's passage is in its text.
    #[test]
    fn the_voice_files_are_read_as_the_writer_left_them(bytes in input("voice")) {
        use control_room::voice::file::{TournamentFile, insert_after_line};
        let text = text(&bytes);
        let lines = text.lines().count();
        if let Some(file) = TournamentFile::read(&text) {
            for version in &file.versions {
                prop_assert!(version.line <= version.last_line && version.last_line < lines.max(1), "{:?}", version);
                let answered = insert_after_line(&text, version.last_line, "### Why does this work?\n\nBecause.");
                prop_assert!(answered.len() > text.len());
                prop_assert!(answered.contains("### Why does this work?"));
                let _ = file.version(&version.number.to_string());
            }
        }
        let paths = workspace().config().paths.clone();
        let gold = SourceFile::parse(paths.voice_file("gold-standard.md").into(), text.clone().into(), &paths);
        if let Some(gold) = gold.voice_gold() {
            if let Some(passage) = gold.passage {
                prop_assert!(inside(&text, passage), "{:?}", passage);
            }
            prop_assert!(gold.traits.sentence_mean.is_finite() && gold.traits.dialogue <= 1.0);
        }
    }

    /// Recipes: any text, and any change to a valid recipe's values, is a
    /// recipe or errors that name the file and a rule.
    #[test]
    fn a_recipe_is_read_or_refused_with_its_rules(text in recipe_input()) {
        static PROMPTS: OnceLock<Prompts> = OnceLock::new();
        let prompts = PROMPTS.get_or_init(Prompts::bundled);
        if let Err(errors) = recipe::parse("fuzz.json", &text, prompts) {
            prop_assert!(!errors.is_empty());
            let rules: Vec<&str> = recipe::RecipeRule::ALL.iter().map(|rule| rule.code()).collect();
            for error in errors {
                prop_assert_eq!(&error.file, "fuzz.json");
                prop_assert!(rules.contains(&error.rule), "{}", error);
                prop_assert!(!error.message.is_empty());
                prop_assert!(error.pointer.is_empty() || error.pointer.starts_with('/'), "{}", error);
            }
        }
    }

    /// Model replies: the protocol reader and the contract never show
    /// `<thinking>`, and a JSON reply they accept follows its schema.
    #[test]
    fn a_model_reply_never_leaks_thinking_and_passes_its_contract_only_whole(
        bytes in input("reply"),
    ) {
        let reply = text(&bytes);
        let parsed = protocol::parse(&reply);
        prop_assert!(!leaks_thinking(&parsed.prose()), "{:?}", parsed);
        prop_assert!(!leaks_thinking(&parsed.message), "{:?}", parsed);
        let _ = parsed.paths();
        prop_assert!(!leaks_thinking(&protocol::strip_reasoning(&reply)));

        let guard = PathGuard::new(["Story/Scenes/SCN-the-gate.md".to_owned()]);
        let mut checked = Vec::new();
        match contract::check_reply(&reply, Output::Prose, None, &guard, &mut checked) {
            Ok(accepted) => {
                prop_assert!(!accepted.text.trim().is_empty());
                prop_assert!(!leaks_thinking(&accepted.text), "{:?}", accepted);
            }
            Err(violation) => prop_assert!(!violation.message().is_empty()),
        }
        let schema = findings_schema();
        match contract::check_reply(&reply, Output::Json, Some(&schema), &guard, &mut checked) {
            Ok(accepted) => {
                prop_assert!(control_room::llm::protocol::schema::schema_errors(&schema.1, &accepted.value).is_empty());
                let reread: Value = serde_json::from_str(&accepted.text).expect("the text is the JSON");
                prop_assert!(reread.is_object());
            }
            Err(violation) => prop_assert!(!violation.message().is_empty()),
        }
        for check in checked {
            prop_assert!(!check.check.is_empty() && !check.detail.is_empty(), "{:?}", check);
        }
    }

    /// Evidence lines: what a line is read as, and every problem of a
    /// document, lies in the text.
    #[test]
    fn evidence_lines_and_their_problems_stay_in_the_text(bytes in input("evidence")) {
        let text = text(&bytes);
        for (offset, line) in evidence::lines_outside_fences(&text) {
            prop_assert!(text[offset..].starts_with(line));
            if let Some(read) = evidence::line::parse(line) {
                prop_assert!(read.body_start <= line.len());
                let ranges = read.quotes.iter().chain(&read.receipts).chain(read.file.iter());
                for (range, _) in ranges {
                    prop_assert!(inside(line, *range), "{:?} in {:?}", range, line);
                }
            }
        }
        let book = ReceiptBook::default();
        let validator = evidence::Validator::new(&Scene, &book);
        for problem in validator.document(&text) {
            prop_assert!(inside(&text, problem.range), "{:?}", problem);
            prop_assert!(!problem.message.is_empty());
        }
    }
}

/// A recipe: a seed's text mutated, or (more often, since most mutated
/// texts are no JSON) a seed's values changed, so the validator is reached.
fn recipe_input() -> impl Strategy<Value = String> {
    let seeds = seeds("recipe");
    let changes = proptest::collection::vec((any::<u64>(), 0usize..REPLACEMENTS), 1..5);
    prop_oneof![
        1 => input("recipe").prop_map(|bytes| text(&bytes)),
        2 => (0..seeds.len(), changes).prop_map(move |(seed, changes)| {
            let mut value: Value = serde_json::from_slice(&seeds[seed]).expect("a seed recipe is JSON");
            for (path, replacement) in changes {
                change_json(&mut value, path, replacement);
            }
            value.to_string()
        }),
    ]
}

/// How many kinds of change [`change_json`] makes.
const REPLACEMENTS: usize = 18;

/// Replaces the value that `path` picks in `value` with one of a few that
/// recipes get wrong (or a name a recipe uses elsewhere), removes a field
/// of it, or repeats an item of it.
fn change_json(value: &mut Value, mut path: u64, replacement: usize) {
    let mut node = value;
    loop {
        let children = match node {
            Value::Object(map) => map.len(),
            Value::Array(items) => items.len(),
            _ => 0,
        };
        // Stop here a third of the time, or at a leaf.
        if children == 0 || path.is_multiple_of(3) {
            break;
        }
        path /= 3;
        let index = (path % children as u64) as usize;
        path /= children as u64;
        node = match node {
            Value::Object(map) => map.values_mut().nth(index).unwrap(),
            Value::Array(items) => &mut items[index],
            _ => unreachable!(),
        };
    }
    match (replacement, &mut *node) {
        (16, Value::Object(map)) => {
            if let Some(first) = map.keys().nth(path as usize % map.len().max(1)).cloned() {
                map.remove(&first);
            }
            return;
        }
        (17, Value::Array(items)) if !items.is_empty() => {
            let copy = items[path as usize % items.len()].clone();
            items.push(copy);
            return;
        }
        _ => {}
    }
    const NAMES: &[&str] = &[
        "discovery",
        "prose_report",
        "revise_prose",
        "writer",
        "critic",
        "file_locator",
        "slot_not_null",
        "revise",
        "critique",
    ];
    *node = match replacement {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(1e300),
        4 => json!(""),
        5 => json!("x#y"),
        6 => json!({"$ref": "task.args.scene_path"}),
        7 => json!({"$ref": "no_such_slot.x"}),
        8 => json!({"$ref": 3}),
        9 => json!([]),
        10 => json!({}),
        11 => json!(["revise", "revise"]),
        12 => json!("é".repeat(300)),
        13 | 14 => json!(NAMES[path as usize % NAMES.len()]),
        15 => json!([NAMES[path as usize % NAMES.len()]]),
        _ => json!({"step_id": "x", "tool": "file_locator"}),
    };
}

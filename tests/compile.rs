//! `control-room compile` end to end, as a writer runs it: the bundled
//! example compiled to DOCX and EPUB, read back by pandoc's own readers,
//! every scene's first sentence there in outline order; Markdown without
//! front matter or notes; and the refusals (an output over a scene, in the
//! scenes folder; no pandoc; no PDF engine) with the writer's text untouched.
//!
//! From the editor, `controlRoom.compile` over LSP compiles the text as the
//! editor has it and says what to install when pandoc is missing.
//!
//! The tests that need pandoc say `skipped: …` on the terminal when it is
//! missing, and fail instead with `CONTROL_ROOM_REQUIRE_PANDOC=1`, as CI sets.

use crate::support;
use crate::support::lsp_client;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

/// The example in a temporary folder (tests may write beside it).
fn example() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("salt-road");
    support::copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road"),
        &root,
    );
    (dir, root)
}

fn control_room(args: &[&str], path_env: Option<&std::ffi::OsStr>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_control-room"));
    command.args(args);
    if let Some(path) = path_env {
        command.env("PATH", path);
    }
    command.output().expect("control-room runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// pandoc on the PATH, or `None` after saying the test is skipped (a
/// failure with `CONTROL_ROOM_REQUIRE_PANDOC=1`).
fn pandoc(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("pandoc"))
            .find(|candidate| candidate.is_file())
    });
    if found.is_none() {
        let install = "install it: `apt-get install pandoc`, or the installer from pandoc.org";
        if std::env::var("CONTROL_ROOM_REQUIRE_PANDOC").as_deref() == Ok("1") {
            panic!("pandoc not found ({install}), and CONTROL_ROOM_REQUIRE_PANDOC=1 requires it");
        }
        let _ = writeln!(
            std::io::stderr(),
            "skipped: pandoc not found ({install}); {test} did not run"
        );
    }
    found
}

/// Each scene's first sentence, in outline order: the scenes of the
/// example's outline that have a file.
fn first_sentences(root: &Path) -> Vec<String> {
    let outline = std::fs::read_to_string(root.join("Story/SCN-outline.md")).unwrap();
    outline
        .lines()
        .filter_map(|line| line.strip_prefix("- SCN-"))
        .filter_map(|rest| rest.split(':').next())
        .filter_map(|slug| {
            std::fs::read_to_string(root.join(format!("Story/Scenes/SCN-{slug}.md"))).ok()
        })
        .map(|text| {
            let body = text.splitn(3, "---\n").nth(2).expect("front matter");
            let paragraph = body
                .split("\n\n")
                .map(str::trim)
                .find(|block| !block.is_empty() && !block.starts_with('#'))
                .expect("a paragraph");
            let end = paragraph.find(". ").map_or(paragraph.len(), |at| at + 1);
            paragraph[..end].to_owned()
        })
        .collect()
}

/// Spacing collapsed and quotes made straight, as pandoc's readers and
/// writers change them.
fn normalise(text: &str) -> String {
    text.replace(['“', '”'], "\"")
        .replace(['‘', '’'], "'")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Asserts every sentence is in `text`, each after the one before.
fn assert_in_order(text: &str, sentences: &[String], what: &str) {
    let text = normalise(text);
    let mut from = 0;
    for sentence in sentences {
        let sentence = normalise(sentence);
        let at = text[from..].find(&sentence).unwrap_or_else(|| {
            panic!("{what}: “{sentence}” is missing or out of order in:\n{text}")
        });
        from += at + sentence.len();
    }
}

fn read_back(pandoc: &Path, from: &str, file: &Path) -> String {
    let output = Command::new(pandoc)
        .args(["-f", from, "-t", "plain", "--standalone", "--wrap=none"])
        .arg(file)
        .output()
        .expect("pandoc runs");
    assert!(
        output.status.success(),
        "pandoc cannot read {}: {}",
        file.display(),
        stderr(&output)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn zip_part(file: &Path, name: &str) -> String {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(file).unwrap()).unwrap();
    let mut text = String::new();
    archive
        .by_name(name)
        .unwrap_or_else(|_| panic!("{} has {name}", file.display()))
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn the_example_compiles_to_a_docx_pandoc_reads_back_in_outline_order() {
    let Some(pandoc) = pandoc("the DOCX compile test") else {
        return;
    };
    let (dir, root) = example();
    let output_file = dir.path().join("out/The Salt Road.docx");
    std::fs::create_dir_all(output_file.parent().unwrap()).unwrap();
    let output = control_room(
        &[
            "compile",
            root.to_str().unwrap(),
            "--to",
            "docx",
            "-o",
            output_file.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        output.status.success(),
        "compile failed: {}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("6 scenes"), "{}", stderr(&output));
    let sentences = first_sentences(&root);
    assert_eq!(sentences.len(), 6, "the example has six scenes written");
    let text = read_back(&pandoc, "docx", &output_file);
    assert_in_order(
        &text,
        &[
            "The Salt Road".to_owned(),
            "Chapter 1: The Gate".to_owned(),
            sentences[0].clone(),
            "Chapter 2: The Tide".to_owned(),
        ],
        "DOCX headings",
    );
    assert_in_order(&text, &sentences, "DOCX");
    for leak in [
        "pov:",
        "words: 400",
        "Tomas's notebook",
        "control-room: allow",
    ] {
        assert!(!text.contains(leak), "the DOCX has “{leak}”");
    }
    // Standard manuscript format: the styles and the page.
    let styles = zip_part(&output_file, "word/styles.xml");
    assert!(styles.contains("w:ascii=\"Times New Roman\""));
    assert!(styles.contains("w:line=\"480\""), "double-spaced");
    assert!(
        styles.contains("w:firstLine=\"720\""),
        "first lines indented"
    );
    assert!(
        styles.contains("<w:pageBreakBefore"),
        "chapters on a new page"
    );
    let document = zip_part(&output_file, "word/document.xml");
    assert!(document.contains("w:val=\"Title\""), "a title page");
    assert!(document.contains("w:left=\"1440\""), "1-inch margins");
    assert_eq!(
        document.matches("w:val=\"SceneBreak\"").count(),
        4,
        "a scene break between the scenes of a chapter"
    );
    assert!(document.matches(">#<").count() >= 4, "scene breaks read #");
    // The running header, kept by pandoc from the reference: title and
    // page at the top right, none on the title page.
    let header = zip_part(&output_file, "word/header-manuscript.xml");
    assert!(header.contains(">THE SALT ROAD / </w:t>"), "{header}");
    assert!(header.contains(" PAGE "), "{header}");
    assert!(
        document.contains("<w:headerReference"),
        "the header is used"
    );
    assert!(document.contains("<w:titlePg"), "none on the title page");
}

#[test]
fn the_example_compiles_to_an_epub_pandoc_reads_back_in_outline_order() {
    let Some(pandoc) = pandoc("the EPUB compile test") else {
        return;
    };
    let (dir, root) = example();
    let output_file = dir.path().join("book.epub");
    let output = control_room(
        &[
            "compile",
            "--dir",
            root.to_str().unwrap(),
            "--to",
            "epub",
            "-o",
            output_file.to_str().unwrap(),
        ],
        None,
    );
    assert!(
        output.status.success(),
        "compile failed: {}",
        stderr(&output)
    );
    let text = read_back(&pandoc, "epub", &output_file);
    assert_in_order(&text, &first_sentences(&root), "EPUB");
    assert!(text.contains("Chapter 2: The Tide"));
    assert!(!text.contains("Tomas's notebook"));
    // Without -o, the file is named for the book, beside its folders.
    let output = control_room(&["compile", root.to_str().unwrap(), "--to", "epub"], None);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(root.join("the-salt-road.epub").is_file());
}

#[test]
fn markdown_needs_no_pandoc_and_keeps_out_front_matter_and_notes() {
    let (dir, root) = example();
    let sentences = first_sentences(&root);
    // A scene that ends with a note inside a paragraph and a code block of notes.
    let scene = root.join("Story/Scenes/SCN-the-vigil.md");
    let text = std::fs::read_to_string(&scene).unwrap();
    let noted =
        format!("{text}\nA line with a note <!-- NOTE-INLINE --> inside.\n\n```\nNOTE-CODE\n```\n");
    std::fs::write(&scene, &noted).unwrap();
    let output_file = dir.path().join("book.md");
    // No pandoc needed: a PATH without it.
    let empty = tempfile::tempdir().unwrap();
    let output = control_room(
        &[
            "compile",
            root.to_str().unwrap(),
            "--to",
            "md",
            "-o",
            output_file.to_str().unwrap(),
        ],
        Some(empty.path().as_os_str()),
    );
    assert!(
        output.status.success(),
        "compile failed: {}",
        stderr(&output)
    );
    let markdown = std::fs::read_to_string(&output_file).unwrap();
    assert_in_order(&markdown, &sentences, "Markdown");
    assert!(markdown.starts_with("---\ntitle: \"The Salt Road\"\n---\n\n# Chapter 1: The Gate\n"));
    assert_eq!(markdown.matches("---\n").count(), 2, "only the title block");
    for leak in [
        "pov:",
        "characters:",
        "words:",
        "date:",
        "<!--",
        "NOTE-INLINE",
        "NOTE-CODE",
        "Tomas's notebook",
        "# The Arrival",
    ] {
        assert!(
            !markdown.contains(leak),
            "the Markdown has “{leak}”:\n{markdown}"
        );
    }
    assert!(markdown.contains("A line with a note inside."));
    assert!(markdown.contains("\n\\#\n"), "scene breaks");
    // `-o -` prints it.
    let printed = control_room(
        &["compile", root.to_str().unwrap(), "--to", "md", "-o", "-"],
        None,
    );
    assert_eq!(String::from_utf8_lossy(&printed.stdout), markdown);
    // The scenes are as they were.
    assert_eq!(std::fs::read_to_string(&scene).unwrap(), noted);
}

#[test]
fn an_output_over_a_scene_or_among_the_scenes_is_refused_and_the_scene_kept() {
    let (_dir, root) = example();
    let scene = root.join("Story/Scenes/SCN-the-gate.md");
    let before = std::fs::read(&scene).unwrap();
    for (output_file, says) in [
        (scene.clone(), "is a file of the manuscript"),
        (
            root.join("Story/SCN-outline.md"),
            "is a file of the manuscript",
        ),
        (
            root.join("Story/Scenes/book.md"),
            "inside the manuscript's scenes folder",
        ),
        (root.join("Compendium/book.docx"), "compendium folder"),
    ] {
        let output = control_room(
            &[
                "compile",
                root.to_str().unwrap(),
                "--to",
                "md",
                "-o",
                output_file.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(output.status.code(), Some(2), "{}", output_file.display());
        assert!(stderr(&output).contains(says), "{}", stderr(&output));
    }
    assert_eq!(std::fs::read(&scene).unwrap(), before);
    assert!(!root.join("Story/Scenes/book.md").exists());
}

#[test]
fn without_pandoc_a_docx_compile_says_how_to_install_it() {
    let (dir, root) = example();
    let empty = tempfile::tempdir().unwrap();
    let output_file = dir.path().join("book.docx");
    let output = control_room(
        &[
            "compile",
            root.to_str().unwrap(),
            "--to",
            "docx",
            "-o",
            output_file.to_str().unwrap(),
        ],
        Some(empty.path().as_os_str()),
    );
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("needs pandoc"), "{message}");
    assert!(message.contains("apt install pandoc"), "{message}");
    assert!(message.contains("pandoc.org"), "{message}");
    assert!(!output_file.exists());
}

#[test]
fn without_a_pdf_engine_a_pdf_compile_names_the_engines_to_install() {
    let Some(pandoc) = pandoc("the PDF engine test") else {
        return;
    };
    let (dir, root) = example();
    // A PATH with pandoc and nothing else.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(&pandoc, bin.join("pandoc")).unwrap();
    let output_file = dir.path().join("book.pdf");
    let output = control_room(
        &[
            "compile",
            root.to_str().unwrap(),
            "--to",
            "pdf",
            "-o",
            output_file.to_str().unwrap(),
        ],
        Some(bin.as_os_str()),
    );
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("needs a PDF engine"), "{message}");
    assert!(
        message.contains("xelatex") && message.contains("weasyprint"),
        "{message}"
    );
    assert!(!output_file.exists());
}

#[test]
fn the_editor_command_compiles_the_text_as_the_editor_has_it() {
    let (dir, root) = lsp_client::example_copy();
    let mut client = lsp_client::Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let scene = root.join("Story/Scenes/SCN-the-vigil.md");
    let on_disk = client.open(&scene, 1);
    let edited = format!("{on_disk}\nAn unsaved last line.\n");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": lsp_client::uri(&scene), "version": 2},
               "contentChanges": [{"text": edited}]}),
    );
    let output_file = dir.path().join("from-the-editor.md");
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.compile",
               "arguments": [{"format": "md", "output": output_file.to_str().unwrap()}]}),
    );
    assert_eq!(answer["scenes"], 6, "{answer}");
    assert_eq!(answer["title"], "The Salt Road", "{answer}");
    assert_eq!(answer["missing"], json!(["SCN-the-reckoning"]), "{answer}");
    let markdown = std::fs::read_to_string(&output_file).unwrap();
    assert!(markdown.contains("An unsaved last line."));
    assert_eq!(
        std::fs::read_to_string(&scene).unwrap(),
        on_disk,
        "the scene is untouched"
    );
    // A bad format and an output over a scene are errors that say why.
    let refused = client.request_raw(
        "workspace/executeCommand",
        json!({"command": "controlRoom.compile",
               "arguments": [{"format": "md", "output": "Story/Scenes/SCN-the-vigil.md"}]}),
    );
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("is a file of the manuscript"), "{refused}");
    let refused = client.request_raw(
        "workspace/executeCommand",
        json!({"command": "controlRoom.compile", "arguments": [{"format": "odt"}]}),
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("docx, epub, pdf or md"),
        "{refused}"
    );
    client.shutdown();
}

#[test]
fn the_editor_command_says_how_to_install_pandoc_when_it_is_missing() {
    let (_dir, root) = lsp_client::example_copy();
    let empty = tempfile::tempdir().unwrap();
    let mut client = lsp_client::Client::spawn(&[("PATH", empty.path().to_str().unwrap())]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let refused = client.request_raw(
        "workspace/executeCommand",
        json!({"command": "controlRoom.compile", "arguments": [{"format": "epub"}]}),
    );
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("apt install pandoc"), "{refused}");
    assert!(!root.join("the-salt-road.epub").exists());
    client.shutdown();
}

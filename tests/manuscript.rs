//! `control-room new` and `import`: a manuscript to start from, or one made
//! of a book the writer has; made whole or not at all, never over anything
//! already there.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn control_room(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the control-room binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

/// Every file and folder under `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = walk(dir)
        .into_iter()
        .map(|path| path.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    found.sort();
    found
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}

#[test]
fn new_makes_a_manuscript_whose_check_reports_only_what_the_story_bible_misses() {
    let parent = tempfile::tempdir().unwrap();
    let output = control_room(&["new", "The Lighthouse Keeper"], parent.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("Story/Scenes/SCN-the-first-scene.md"),
        "{stdout}"
    );
    let root = parent.path().join("The Lighthouse Keeper");
    let files = tree(&root);
    for expected in [
        "control-room.toml",
        "Story/SCN-outline.md",
        "Story/Scenes/SCN-the-first-scene.md",
        "Compendium/Characters/CHAR-ada-quill.md",
        "Compendium/Locations/LOC-the-lighthouse.md",
        "Story/Bible/protagonist.md",
        "Story/Bible/beat-sheet.md",
        "Story/Bible/theme.md",
        "Story/Bible/world-rules.md",
    ] {
        assert!(
            files.iter().any(|file| file == expected),
            "{expected} in {files:?}"
        );
    }
    // Nothing but the manuscript beside it: the folder it was made in is gone.
    assert_eq!(
        tree(parent.path())
            .iter()
            .filter(|path| !path.contains('/'))
            .count(),
        1
    );

    let outline = std::fs::read_to_string(root.join("Story/SCN-outline.md")).unwrap();
    assert!(
        outline.starts_with("# The Lighthouse Keeper\n"),
        "{outline}"
    );
    assert_eq!(outline.matches("\n## Chapter").count(), 2, "{outline}");
    // Every setting is there, and none is set: the file parses as the defaults.
    let settings = std::fs::read_to_string(root.join("control-room.toml")).unwrap();
    for section in [
        "[paths]",
        "[targets]",
        "[echo]",
        "[language]",
        "[voice]",
        "[health]",
        "[llm]",
    ] {
        assert!(settings.contains(section), "{section}");
    }
    assert!(
        settings
            .lines()
            .filter(|line| line.contains(" = "))
            .all(|line| line.trim_start().starts_with('#')),
        "every setting is commented out"
    );
    let workspace = control_room::index::Workspace::load(&root);
    assert!(
        workspace.config_error().is_none(),
        "{:?}",
        workspace.config_error()
    );

    let output = control_room(&["check", ".", "--format", "json"], &root);
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON report");
    let diagnostics = report["diagnostics"].as_array().expect("a list");
    let templates: std::collections::BTreeSet<&str> = diagnostics
        .iter()
        .map(|diagnostic| {
            assert_eq!(diagnostic["code"], "story-bible", "{diagnostic:#}");
            assert_eq!(diagnostic["severity"], "information", "{diagnostic:#}");
            diagnostic["path"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        templates.len(),
        4,
        "each template says what it misses: {templates:?}"
    );
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn new_refuses_a_folder_that_is_not_empty_and_leaves_it_as_it_was() {
    let parent = tempfile::tempdir().unwrap();
    let book = parent.path().join("book");
    std::fs::create_dir(&book).unwrap();
    std::fs::write(
        book.join("chapter-one.md"),
        "It was a dark and stormy night.\n",
    )
    .unwrap();
    let output = control_room(&["new", "book"], parent.path());
    assert_ne!(output.status.code(), Some(0));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("book is not empty"), "{stderr}");
    assert_eq!(tree(parent.path()), ["book", "book/chapter-one.md"]);
    assert_eq!(
        std::fs::read_to_string(book.join("chapter-one.md")).unwrap(),
        "It was a dark and stormy night.\n"
    );

    std::fs::write(parent.path().join("notes.txt"), "a file").unwrap();
    let output = control_room(&["new", "notes.txt"], parent.path());
    assert_ne!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("notes.txt is a file"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(parent.path().join("notes.txt")).unwrap(),
        "a file"
    );
}

#[test]
fn new_fills_an_empty_folder_and_the_current_one_by_default() {
    let parent = tempfile::tempdir().unwrap();
    let empty = parent.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = control_room(&["new"], &empty);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(empty.join("Story/SCN-outline.md").is_file());
    let outline = std::fs::read_to_string(empty.join("Story/SCN-outline.md")).unwrap();
    assert!(
        outline.starts_with("# empty\n"),
        "the folder's name is the working title"
    );
    // Made once, it is not empty any more: a second `new` changes nothing.
    let output = control_room(&["new"], &empty);
    assert_ne!(output.status.code(), Some(0));
    assert!(text(&output.stderr).contains("is not empty"));
}

/// A small book of our own, as a writer keeps it in one file: a title,
/// chapter headings, a scene break.
const BOOK: &str = "# The Lighthouse Keeper\n\n## Chapter 1: The Storm\n\nThe storm had followed Ada up the coast road. “Open,” she said.\n\n* * *\n\nBy morning the lamp was out.\n\n## Chapter 2: The Keeper\n\nThe keeper came down at noon. He said nothing of the night.\n";

/// The outline's lines and the scenes' titles of the manuscript at `root`.
fn imported_shape(root: &Path) -> (Vec<String>, Vec<String>) {
    let outline = std::fs::read_to_string(root.join("Story/SCN-outline.md")).unwrap();
    let mut scenes: Vec<String> = std::fs::read_dir(root.join("Story/Scenes"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    scenes.sort();
    (outline.lines().map(str::to_owned).collect(), scenes)
}

#[test]
fn import_cuts_a_markdown_book_into_chapter_scenes_with_an_outline() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("keeper.md"), BOOK).unwrap();
    let output = control_room(&["import", "keeper.md", "--into", "Keeper"], work.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let said = text(&output.stdout);
    assert!(said.contains("2 chapters, 3 scenes"), "{said}");
    let root = work.path().join("Keeper");
    let (outline, scenes) = imported_shape(&root);
    assert_eq!(
        outline,
        [
            "# The Lighthouse Keeper",
            "",
            "## Chapter 1: The Storm",
            "",
            "- SCN-chapter-1-the-storm-1: The storm had followed Ada up the coast road.",
            "- SCN-chapter-1-the-storm-2: By morning the lamp was out.",
            "",
            "## Chapter 2: The Keeper",
            "",
            "- SCN-chapter-2-the-keeper: The keeper came down at noon.",
        ]
    );
    assert_eq!(
        scenes,
        [
            "SCN-chapter-1-the-storm-1.md",
            "SCN-chapter-1-the-storm-2.md",
            "SCN-chapter-2-the-keeper.md"
        ]
    );
    let first =
        std::fs::read_to_string(root.join("Story/Scenes/SCN-chapter-1-the-storm-1.md")).unwrap();
    assert_eq!(
        first,
        "---\ntitle: \"Chapter 1: The Storm (1)\"\n---\n\nThe storm had followed Ada up the coast road. “Open,” she said.\n"
    );
    // The imported book is a manuscript: its check finds its scenes, and no error.
    let output = control_room(&["check", ".", "--format", "json"], &root);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|diagnostic| diagnostic["severity"] != "error"),
        "{report:#}"
    );
    let workspace = control_room::index::Workspace::load(&root);
    assert_eq!(workspace.catalog().scenes().count(), 3);

    // Never over anything: the folder is not empty now.
    let output = control_room(&["import", "keeper.md", "--into", "Keeper"], work.path());
    assert_ne!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("Keeper is not empty"),
        "{}",
        text(&output.stderr)
    );
}

/// A book of our own whose people and places recur: a man by title,
/// surname and full name, his sister by title, a woman by given and full
/// name, two places named with "at" and "to", and ordinary words opening
/// sentences.
const CAST_BOOK: &str = "# The Salt Road\n\n## Chapter 1\n\n\
    Iria Vell rode to Harrowgate before dawn. She did not look back. \
    Mr. Maren waited at Harrowgate with the horses. \"Late,\" said Maren. \
    When Iria answered, he only nodded.\n\n\
    * * *\n\n\
    Miss Maren kept the inn at Harrowgate. She poured the tea. \
    \"Sit,\" said Miss Maren. Iria sat down. She was tired.\n\n\
    ## Chapter 2\n\n\
    The road to Saltmere was long. Iria went on alone. She slept at Saltmere in the cold. \
    Kael Maren came after her. He brought the letter. \"Read it,\" said Mr. Maren. \
    \"Go home,\" Kael Maren said. \
    Poor Iria read it twice. \"No,\" said Miss Maren at the door. \
    When the bells rang, Maren rode to Saltmere.\n";

#[test]
fn import_proposes_cards_for_the_people_and_places_the_book_names() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("salt.md"), CAST_BOOK).unwrap();
    let output = control_room(&["import", "salt.md", "--into", "Salt"], work.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let said = text(&output.stdout);
    assert!(
        said.contains("Proposed 3 character cards in Compendium/Characters/, by how often the book names them: Kael Maren (6), Iria Vell (5), Miss Maren (3).")
            && said.contains("Proposed 2 place cards in Compendium/Locations/, by how often the book names them: Harrowgate (3), Saltmere (3)."),
        "{said}"
    );
    let root = work.path().join("Salt");
    let card = |path: &str| {
        std::fs::read_to_string(root.join(path))
            .unwrap_or_else(|error| panic!("{path}: {error}; made: {:?}", tree(&root)))
    };
    // "Kael Maren", "Mr. Maren" and a bare "Maren" are one man; his sister
    // is her own card; "When" and "Poor" open sentences and are nobody.
    assert_eq!(
        card("Compendium/Characters/CHAR-kael-maren.md"),
        "---\ntype: character\nname: \"Kael Maren\"\naliases: [\"Maren\", \"Mr. Maren\"]\ngender: male\n\
         # Proposed by `control-room import`: the book names him 6 times. Keep this card, merge it with another, or delete it.\n\
         ---\n\n# Kael Maren\n"
    );
    let iria = card("Compendium/Characters/CHAR-iria-vell.md");
    assert!(
        iria.contains("aliases: [\"Iria\"]\ngender: female\n"),
        "{iria}"
    );
    let harrowgate = card("Compendium/Locations/LOC-harrowgate.md");
    assert!(
        harrowgate.contains("type: location\nname: \"Harrowgate\""),
        "{harrowgate}"
    );
    let saltmere = card("Compendium/Locations/LOC-saltmere.md");
    assert!(saltmere.contains("names it 3 times"), "{saltmere}");
    let cards: Vec<String> = tree(&root)
        .into_iter()
        .filter(|path| path.starts_with("Compendium/") && path.ends_with(".md"))
        .collect();
    assert_eq!(
        cards,
        [
            "Compendium/Characters/CHAR-iria-vell.md",
            "Compendium/Characters/CHAR-kael-maren.md",
            "Compendium/Characters/CHAR-miss-maren.md",
            "Compendium/Locations/LOC-harrowgate.md",
            "Compendium/Locations/LOC-saltmere.md",
        ]
    );
    // The cards are the manuscript's: the book checks without an error or a
    // warning, and its speakers are known.
    let output = control_room(&["check", ".", "--format", "json"], &root);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let loud: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|diagnostic| {
            matches!(diagnostic["severity"].as_str(), Some("error" | "warning"))
                || diagnostic["code"] == "unknown-speaker"
        })
        .collect();
    assert!(loud.is_empty(), "{loud:#?}");
}

/// pandoc, or `None` with a message saying what is skipped without it (a
/// failure where CI requires it).
fn pandoc_or_skip(what: &str) -> Option<std::path::PathBuf> {
    let found = control_room::export::pandoc::on_path("pandoc");
    if found.is_none() {
        let message = format!("skipped: {what} needs pandoc on the PATH");
        assert!(
            std::env::var("CONTROL_ROOM_REQUIRE_PANDOC").as_deref() != Ok("1"),
            "{message}, and CONTROL_ROOM_REQUIRE_PANDOC=1 requires it"
        );
        let _ =
            std::io::Write::write_all(&mut std::io::stderr(), format!("{message}\n").as_bytes());
    }
    found
}

#[test]
fn import_reads_word_opendocument_epub_and_rtf_through_pandoc() {
    let Some(pandoc) = pandoc_or_skip("import of DOCX, ODT, EPUB and RTF") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // In a word processor the scene break is a paragraph of its own, "* * *".
    let typed = BOOK.replace("\n* * *\n", "\n\\* \\* \\*\n");
    assert_ne!(typed, BOOK);
    std::fs::write(work.path().join("keeper.md"), typed).unwrap();
    for format in ["docx", "odt", "epub", "rtf"] {
        let file = format!("keeper.{format}");
        let mut make = Command::new(&pandoc);
        make.args(["keeper.md", "--from", "markdown", "-o", &file])
            .current_dir(work.path());
        if format == "rtf" {
            make.arg("--standalone");
        }
        let made = make.output().unwrap();
        assert!(made.status.success(), "{}", text(&made.stderr));
        let into = format!("from-{format}");
        let output = control_room(&["import", &file, "--into", &into], work.path());
        assert_eq!(
            output.status.code(),
            Some(0),
            "{format}: {}",
            text(&output.stderr)
        );
        let (outline, scenes) = imported_shape(&work.path().join(&into));
        assert_eq!(scenes.len(), 3, "{format}: {scenes:?}");
        assert!(
            outline
                .iter()
                .any(|line| line == "## Chapter 2: The Keeper"),
            "{format}: {outline:?}"
        );
        let storm = std::fs::read_to_string(
            work.path()
                .join(&into)
                .join("Story/Scenes")
                .join(&scenes[0]),
        )
        .unwrap();
        assert!(
            storm.contains("The storm had followed Ada up the coast road."),
            "{format}: {storm}"
        );
        // pandoc 2's RTF reader drops a letter after a Unicode escape; the
        // other readers keep the book's own quotes.
        if format != "rtf" {
            assert!(
                storm.contains("“Open,” she said."),
                "{format} keeps the curly quotes: {storm}"
            );
        }
    }

    // A file pandoc cannot read: its name in the error, and nothing made.
    std::fs::write(work.path().join("broken.docx"), "not a zip file").unwrap();
    let output = control_room(&["import", "broken.docx", "--into", "broken"], work.path());
    assert_ne!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("pandoc could not read broken.docx"),
        "{}",
        text(&output.stderr)
    );
    assert!(!work.path().join("broken").exists());
}

#[test]
fn import_refuses_what_it_cannot_read_and_makes_nothing() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("book.pages"), "whatever").unwrap();
    let output = control_room(&["import", "book.pages"], work.path());
    assert_ne!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("book.pages is not a kind of file import reads"),
        "{}",
        text(&output.stderr)
    );

    std::fs::write(work.path().join("latin1.txt"), b"caf\xe9 au lait\n").unwrap();
    let output = control_room(&["import", "latin1.txt"], work.path());
    assert_ne!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("latin1.txt is not UTF-8 text"),
        "{}",
        text(&output.stderr)
    );

    std::fs::write(work.path().join("empty.md"), "\n\n* * *\n\n").unwrap();
    let output = control_room(&["import", "empty.md"], work.path());
    assert_ne!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("empty.md holds no text to import"),
        "{}",
        text(&output.stderr)
    );

    let output = control_room(&["import", "missing.md"], work.path());
    assert_ne!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("cannot read missing.md"),
        "{}",
        text(&output.stderr)
    );

    let mut left: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["book.pages", "empty.md", "latin1.txt"],
        "nothing made"
    );
}

/// A document's RTF as Scrivener 3 on macOS writes it: Cocoa's header, a
/// backslash ending each paragraph, curly quotes as `\uc0\uN ` escapes.
fn cocoa_rtf(paragraphs: &[&str]) -> String {
    let body: Vec<String> = paragraphs
        .iter()
        .map(|paragraph| {
            paragraph
                .replace('’', "\\uc0\\u8217 ")
                .replace('“', "\\uc0\\u8220 ")
                .replace('”', "\\uc0\\u8221 ")
        })
        .collect();
    format!(
        "{{\\rtf1\\ansi\\ansicpg1252\\cocoartf2709\n\\cocoatextscaling0\\cocoaplatform0{{\\fonttbl\\f0\\froman\\fcharset0 Palatino-Roman;}}\n\
         {{\\colortbl;\\red255\\green255\\blue255;}}\n{{\\*\\expandedcolortbl;;}}\n\
         \\pard\\tx360\\tx720\\pardirnatural\\partightenfactor0\n\n\\f0\\fs26 \\cf0 {}}}",
        body.join("\\\n\\\n")
    )
}

/// A Scrivener 3 project made by hand to its layout: the binder, and each
/// document's RTF and synopsis under `Files/Data/<UUID>/`. The Draft holds
/// two chapter folders: three documents (one with a scene break inside) and
/// one planned with only a synopsis; Research and Trash hold a document each.
fn scrivener_project(dir: &Path) -> std::path::PathBuf {
    let project = dir.join("Night Ferry.scriv");
    let document = |uuid: &str, rtf: Option<String>, synopsis: Option<&str>| {
        let folder = project.join("Files/Data").join(uuid);
        std::fs::create_dir_all(&folder).unwrap();
        if let Some(rtf) = rtf {
            std::fs::write(folder.join("content.rtf"), rtf).unwrap();
        }
        if let Some(synopsis) = synopsis {
            std::fs::write(folder.join("synopsis.txt"), synopsis).unwrap();
        }
    };
    let item = |uuid: &str, kind: &str, title: &str, children: &str| {
        let children = if children.is_empty() {
            String::new()
        } else {
            format!("<Children>{children}</Children>")
        };
        format!(
            "<BinderItem UUID=\"{uuid}\" Type=\"{kind}\" Created=\"2026-11-02 09:00:00 +0000\" Modified=\"2026-11-03 10:00:00 +0000\">\
             <Title>{title}</Title><MetaData><IncludeInCompile>Yes</IncludeInCompile></MetaData>{children}</BinderItem>"
        )
    };
    let one = [
        item(
            "5A0C1E2B-0001-4C4D-8E8F-000000000001",
            "Text",
            "The Crossing",
            "",
        ),
        item(
            "5A0C1E2B-0001-4C4D-8E8F-000000000002",
            "Text",
            "Below Deck",
            "",
        ),
    ]
    .concat();
    let two = [
        item(
            "5A0C1E2B-0001-4C4D-8E8F-000000000003",
            "Text",
            "Landfall",
            "",
        ),
        item(
            "5A0C1E2B-0001-4C4D-8E8F-000000000004",
            "Text",
            "The Harbour &amp; the Light",
            "",
        ),
    ]
    .concat();
    let draft = [
        item(
            "5A0C1E2B-0002-4C4D-8E8F-000000000001",
            "Folder",
            "Chapter One",
            &one,
        ),
        item(
            "5A0C1E2B-0002-4C4D-8E8F-000000000002",
            "Folder",
            "Chapter Two",
            &two,
        ),
    ]
    .concat();
    let binder = [
        item(
            "5A0C1E2B-0003-4C4D-8E8F-000000000001",
            "DraftFolder",
            "Draft",
            &draft,
        ),
        item(
            "5A0C1E2B-0003-4C4D-8E8F-000000000002",
            "ResearchFolder",
            "Research",
            &item(
                "5A0C1E2B-0004-4C4D-8E8F-000000000001",
                "Text",
                "Tide Tables",
                "",
            ),
        ),
        item(
            "5A0C1E2B-0003-4C4D-8E8F-000000000003",
            "TrashFolder",
            "Trash",
            &item(
                "5A0C1E2B-0004-4C4D-8E8F-000000000002",
                "Text",
                "Cut Scene",
                "",
            ),
        ),
    ]
    .concat();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("Night Ferry.scrivx"),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n\
             <ScrivenerProject Template=\"No\" Version=\"2.0\" Identifier=\"0B5E3C9A-7A61-4B8E-9C1D-2E3F4A5B6C7D\" Creator=\"SCRMAC-3.3.6-17040\" Device=\"Desk\" Author=\"Test\">\n\
             <Binder>{binder}</Binder>\n</ScrivenerProject>\n"
        ),
    )
    .unwrap();
    document(
        "5A0C1E2B-0001-4C4D-8E8F-000000000001",
        Some(cocoa_rtf(&[
            "The ferry left at nine. Ada didn’t look back.",
            "“Cold,” said Ada.",
        ])),
        Some("Ada leaves the island\nwithout a word."),
    );
    document(
        "5A0C1E2B-0001-4C4D-8E8F-000000000002",
        // As Scrivener for Windows writes it: `\uN?` with a fallback.
        Some(
            "{\\rtf1\\ansi\\ansicpg1252\\deff0\\uc1{\\fonttbl{\\f0 Times New Roman;}}\n\
             \\pard\\f0\\fs24 The engines\\u8217?d shaken the bunks.\\par\n\
             \\pard * * *\\par\n\\pard By midnight the sea was calm.\\par\n}"
                .to_owned(),
        ),
        None,
    );
    document(
        "5A0C1E2B-0001-4C4D-8E8F-000000000003",
        None,
        Some("They reach the mainland at dawn."),
    );
    document(
        "5A0C1E2B-0001-4C4D-8E8F-000000000004",
        Some(cocoa_rtf(&["The harbour light turned and turned."])),
        None,
    );
    document(
        "5A0C1E2B-0004-4C4D-8E8F-000000000001",
        Some(cocoa_rtf(&["RESEARCH NOTE: high tide at six."])),
        None,
    );
    document(
        "5A0C1E2B-0004-4C4D-8E8F-000000000002",
        Some(cocoa_rtf(&["TRASHED: a scene cut long ago."])),
        None,
    );
    project
}

#[test]
fn import_reads_a_scrivener_project_s_draft_in_binder_order_with_its_synopses() {
    let Some(_) = pandoc_or_skip("import of a Scrivener project") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    scrivener_project(work.path());
    let output = control_room(&["import", "Night Ferry.scriv"], work.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let said = text(&output.stdout);
    assert!(said.contains("2 chapters, 5 scenes"), "{said}");
    assert!(
        said.contains("1 planned scene with no text yet is in the outline only"),
        "{said}"
    );
    assert!(
        said.contains("Left out, as not the book: Research, Trash."),
        "{said}"
    );
    let root = work.path().join("Night Ferry");
    let (outline, scenes) = imported_shape(&root);
    assert_eq!(
        outline,
        [
            "# Night Ferry",
            "",
            "## Chapter One",
            "",
            "- SCN-the-crossing: Ada leaves the island without a word.",
            "- SCN-below-deck-1: The engines’d shaken the bunks.",
            "- SCN-below-deck-2: By midnight the sea was calm.",
            "",
            "## Chapter Two",
            "",
            "- SCN-landfall: They reach the mainland at dawn.",
            "- SCN-the-harbour-the-light: The harbour light turned and turned.",
        ]
    );
    // The planned scene is the outline's only: no file until it is written.
    assert_eq!(
        scenes,
        [
            "SCN-below-deck-1.md",
            "SCN-below-deck-2.md",
            "SCN-the-crossing.md",
            "SCN-the-harbour-the-light.md"
        ]
    );
    // Every letter after a curly quote is there, and each paragraph is one.
    assert_eq!(
        std::fs::read_to_string(root.join("Story/Scenes/SCN-the-crossing.md")).unwrap(),
        "---\ntitle: \"The Crossing\"\n---\n\nThe ferry left at nine. Ada didn’t look back.\n\n“Cold,” said Ada.\n"
    );
    let everything: String = walk(&root)
        .into_iter()
        .filter(|path| path.is_file())
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    assert!(!everything.contains("RESEARCH NOTE") && !everything.contains("TRASHED"));
    // The binder file itself names the same project.
    let output = control_room(
        &[
            "import",
            "Night Ferry.scriv/Night Ferry.scrivx",
            "--into",
            "Again",
        ],
        work.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        imported_shape(&work.path().join("Again")),
        (outline, scenes)
    );
}

#[test]
fn import_refuses_a_broken_scrivener_binder_or_document_naming_it_and_makes_nothing() {
    let Some(_) = pandoc_or_skip("import of a Scrivener project") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let project = scrivener_project(work.path());
    let binder = project.join("Night Ferry.scrivx");
    let whole = std::fs::read_to_string(&binder).unwrap();

    // A binder cut short: the file and the line are named.
    std::fs::write(&binder, &whole[..whole.len() / 2]).unwrap();
    let output = control_room(&["import", "Night Ferry.scriv"], work.path());
    assert_ne!(output.status.code(), Some(0));
    let said = text(&output.stderr);
    assert!(
        said.contains("Night Ferry.scrivx:")
            && said.contains("the Scrivener binder cannot be read"),
        "{said}"
    );

    // A binder with no Draft folder holds no book.
    std::fs::write(&binder, whole.replace("DraftFolder", "Folder")).unwrap();
    let output = control_room(&["import", "Night Ferry.scriv"], work.path());
    let said = text(&output.stderr);
    assert!(said.contains("has no Draft folder"), "{said}");

    // A document whose content.rtf is not RTF is named.
    std::fs::write(&binder, &whole).unwrap();
    let broken = project.join("Files/Data/5A0C1E2B-0001-4C4D-8E8F-000000000002/content.rtf");
    std::fs::write(&broken, "PK\u{3}\u{4} not rtf at all").unwrap();
    let output = control_room(&["import", "Night Ferry.scriv"], work.path());
    let said = text(&output.stderr);
    assert!(
        said.contains("5A0C1E2B-0001-4C4D-8E8F-000000000002/content.rtf is not an RTF file"),
        "{said}"
    );

    // A folder with no binder is not a project.
    std::fs::remove_file(&binder).unwrap();
    let output = control_room(&["import", "Night Ferry.scriv"], work.path());
    let said = text(&output.stderr);
    assert!(said.contains("holds no .scrivx file"), "{said}");

    let left: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["Night Ferry.scriv"], "nothing made");
}

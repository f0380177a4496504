//! The checks' tests across files: scenes against cards read for the catalog
//! alone, the scene typed in against any other, a changed scene against a fresh load.

use std::path::Path;
use std::sync::Arc;

use crate::index::{SourceFile, Workspace};

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != ".control-room" {
                copy(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A copy of the bundled example in a temporary folder (kept while
/// the folder is).
fn example_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("salt-road");
    copy(&crate::index::test_support::example_root(), &root);
    (dir, root)
}

/// A cold start checks the open scene before the Markdown of the cards
/// and the outline is parsed, against them read for the catalog alone:
/// every scene checks as it does against the parsed files (a summary read
/// wrong would change a character's gender, and who the pronouns mean;
/// an outline read wrong, which scenes are orphans and in what order the
/// story tells them).
#[test]
fn scenes_check_against_cards_and_the_outline_read_for_the_catalog_alone_as_against_parsed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("salt-road");
    copy(&crate::index::test_support::example_root(), &root);
    // Iria is "she" by her summary alone: "Her" is hers, and her eyes green.
    std::fs::write(
        root.join("Story/Scenes/SCN-the-look.md"),
        "---\ntitle: The Look\ncharacters: [Iria, Tomas]\n---\n\nTomas looked at Iria, and her eyes were blue.\n",
    )
    .unwrap();
    let parsed = Workspace::load(&root);
    let look = super::check_file(&parsed, "Story/Scenes/SCN-the-look.md");
    assert!(
        look.iter()
            .any(|found| found.code.as_str() == "attribute-mismatch"),
        "{look:?}"
    );
    let mut first = Workspace::new(&root);
    let paths: Vec<_> = parsed.files().map(|file| file.path.clone()).collect();
    let files = first.read_files_for_catalog(&paths, None);
    let catalogued = files.iter().filter(|file| file.catalogued).count();
    let cards = parsed.files().filter(|file| file.card().is_some()).count();
    assert!(cards >= 6, "{cards} cards");
    assert_eq!(
        catalogued,
        cards + 1,
        "the example's cards and its outline are of the plain shape"
    );
    first.insert_files(files);
    let scenes: Vec<_> = parsed
        .files()
        .filter(|file| file.scene().is_some())
        .collect();
    assert!(!scenes.is_empty());
    for scene in scenes {
        assert_eq!(
            super::check_file(&first, &scene.path),
            super::check_file(&parsed, &scene.path),
            "{}",
            scene.path
        );
    }
}

/// The scene being typed in is spelled and its words read for echoes
/// line by line, each line's reading kept: it checks as another scene
/// checks, fixes included, when first read, and again from the memos
/// after typing moved every line below the edit.
#[test]
fn a_scene_typed_in_read_line_by_line_from_the_memos_checks_as_any_other() {
    let (_dir, root) = example_copy();
    let path = "Story/Scenes/SCN-the-gate.md";
    let text = std::fs::read_to_string(root.join(path)).unwrap()
        + "\nThe stoen was heavy. “Comin’ down ’ere,” she said, by a blue-grye wall at conf_3a.\n\nAnother lantrn, and the stoen again.\n";
    std::fs::write(root.join(path), &text).unwrap();
    let mut closed = Workspace::load(&root);
    let mut open = closed.clone();
    open.set_typing(Some(path.into()));
    assert!(open.is_typed_in(path) && !closed.is_typed_in(path));
    let of = |code, workspace: &Workspace| {
        super::check_file(workspace, path)
            .into_iter()
            .filter(|diagnostic| diagnostic.code == code)
            .collect::<Vec<_>>()
    };
    let spelling = |workspace: &Workspace| of(super::Code::Spelling, workspace);
    assert!(!of(super::Code::Echo, &closed).is_empty());
    let found = spelling(&closed);
    let words: Vec<&str> = found
        .iter()
        .map(|diagnostic| diagnostic.range.slice(&text))
        .collect();
    assert_eq!(words, ["stoen", "grye", "lantrn", "stoen"]);
    assert!(found.iter().all(|diagnostic| !diagnostic.fixes.is_empty()));
    assert_eq!(spelling(&open), found);
    assert_eq!(spelling(&open), found, "from the memo");
    assert_eq!(
        super::check_file(&open, path),
        super::check_file(&closed, path)
    );

    let paths = closed.config().paths.clone();
    let typed = text.replacen(
        "It gave with a groan",
        "The gaet gave. It gave with a groan",
        1,
    );
    assert_ne!(typed, text);
    for workspace in [&mut closed, &mut open] {
        workspace.insert_file(SourceFile::parse(path.into(), typed.clone().into(), &paths));
    }
    let found = spelling(&closed);
    assert_eq!(found.len(), 5);
    assert_eq!(spelling(&open), found);
    assert_eq!(
        super::check_file(&open, path),
        super::check_file(&closed, path)
    );
}

/// Typing in a scene's prose keeps the catalog (its `Arc`s of the scene
/// swapped, in the story clock and the scenes met at one moment too),
/// and every file checks as a fresh load of the same text checks it.
#[test]
fn a_scene_whose_prose_changed_checks_as_a_fresh_load_of_it() {
    let (_dir, root) = example_copy();
    let path = "Story/Scenes/SCN-the-gate.md";
    let text = std::fs::read_to_string(root.join(path)).unwrap();
    // A time of day puts the scene among the scenes met at one moment.
    let timed = text.replacen("date: 1203-04-12\n", "date: 1203-04-12\ntime: dusk\n", 1);
    std::fs::write(root.join(path), &timed).unwrap();
    let mut workspace = Workspace::load(&root);
    let old = workspace.file(path).unwrap().clone();
    let (catalog, paths) = (
        workspace.catalog().clone(),
        workspace.config().paths.clone(),
    );
    assert!(catalog.clock().holds(&old) && catalog.tracking().holds(&old));

    let typed = timed.replacen(
        "It gave with a groan",
        "Kael said nothing. Ysolde waited. It gave with a groan",
        1,
    );
    assert_ne!(typed, timed);
    workspace.insert_file(SourceFile::parse(path.into(), typed.clone().into(), &paths));
    let new = workspace.file(path).unwrap().clone();
    let catalog = workspace.catalog();
    assert!(Arc::ptr_eq(catalog.scene("SCN-the-gate").unwrap(), &new));
    assert!(catalog.clock().holds(&new) && !catalog.clock().holds(&old));
    assert!(catalog.tracking().holds(&new) && !catalog.tracking().holds(&old));
    assert_eq!(
        new.scene().unwrap().word_count,
        old.scene().unwrap().word_count + 5
    );

    std::fs::write(root.join(path), &typed).unwrap();
    let fresh = Workspace::load(&root);
    assert_eq!(workspace.mentions(path), fresh.mentions(path));
    for file in fresh.files() {
        assert_eq!(
            super::check_file(&workspace, &file.path),
            super::check_file(&fresh, &file.path),
            "{}",
            file.path
        );
    }
}

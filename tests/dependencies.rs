//! Dependency keys: a file whose key did not change has the same
//! diagnostics, and a change re-checks only the files that read it.
//!
//! Each case applies one edit to a copy of the example manuscript and
//! compares, for every file, the keys and the diagnostics before and after.

use std::collections::BTreeSet;
use std::path::Path;

use control_room::checks::{check_file, dependency_key};
use control_room::index::{SourceFile, Workspace};

fn example() -> Workspace {
    Workspace::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road"))
}

/// Applies `edit` to the text of `path` and returns the paths whose key changed,
/// asserting that every other file kept its diagnostics.
fn changed_keys(path: &str, edit: impl Fn(&str) -> String) -> BTreeSet<String> {
    let before = example();
    let mut after = before.clone();
    let file = before.file(path).expect("the file exists");
    let text = edit(&file.text);
    assert_ne!(&*text, &*file.text, "the edit changes {path}");
    after.insert_file(SourceFile::parse(
        path.into(),
        text.into(),
        &after.config().paths,
    ));
    let mut changed = BTreeSet::new();
    for file in before.files() {
        let new = after.file(&file.path).expect("no file was removed");
        let same_key = dependency_key(&before, file) == dependency_key(&after, new);
        if !same_key || file.path.as_ref() == path {
            changed.insert(file.path.to_string());
            continue;
        }
        assert_eq!(
            check_file(&before, &file.path),
            check_file(&after, &file.path),
            "{} kept its key but its diagnostics changed",
            file.path
        );
    }
    changed
}

fn scenes_mentioning(workspace: &Workspace, card: &str) -> BTreeSet<String> {
    workspace
        .mentions_of(card)
        .filter(|(path, _)| {
            workspace
                .file(path)
                .is_some_and(|file| file.scene().is_some())
        })
        .map(|(path, _)| path.to_string())
        .collect()
}

#[test]
fn a_card_attribute_rechecks_only_scenes_that_mention_the_character() {
    let card = "Compendium/Characters/CHAR-iria-vell.md";
    let changed = changed_keys(card, |text| text.replacen("eyes: green", "eyes: blue", 1));
    let mut expected = scenes_mentioning(&example(), card);
    expected.insert(card.to_owned());
    assert_eq!(changed, expected);
    assert!(
        changed.len() < example().files().len(),
        "not everything is re-checked: {changed:?}"
    );
}

#[test]
fn a_death_rechecks_scenes_but_not_cards_or_the_outline() {
    let card = "Compendium/Characters/CHAR-iria-vell.md";
    let changed = changed_keys(card, |text| {
        text.replacen("status: alive", "status: dead\ndied_in: SCN-the-gate", 1)
    });
    assert!(changed.contains("Story/Scenes/SCN-the-high-tide.md"));
    assert!(!changed.contains("Story/SCN-outline.md"));
    assert!(!changed.contains("Compendium/Characters/CHAR-kael-maren.md"));
}

#[test]
fn an_anti_pattern_sheet_edit_rechecks_scenes_only() {
    let sheet = "Compendium/Voice/anti-patterns.md";
    let changed = changed_keys(sheet, |text| format!("{text}- the wind howled\n"));
    assert!(
        changed
            .iter()
            .all(|path| path == sheet || path.starts_with("Story/Scenes/"))
    );
    assert!(changed.contains("Story/Scenes/SCN-the-gate.md"));
}

#[test]
fn prose_edits_in_a_scene_recheck_that_scene_alone() {
    let scene = "Story/Scenes/SCN-the-gate.md";
    let changed = changed_keys(scene, |text| {
        text.replacen("The Warden", "The Warden slowly", 1)
    });
    assert_eq!(changed, BTreeSet::from([scene.to_owned()]));
}

#[test]
fn renaming_a_character_rechecks_everything() {
    let card = "Compendium/Characters/CHAR-iria-vell.md";
    let changed = changed_keys(card, |text| {
        text.replacen("name: Iria Vell", "name: Iria Vale", 1)
    });
    assert_eq!(changed.len(), example().files().len());
}

//! `two-places`: a character is in two places at once: present (in
//! `characters` or as `pov`) in two scenes dated the same day and time
//! (`date` and `time`, as written, compared without case or spaces) at
//! different locations. Flashbacks are exempt. Reported on each scene, at
//! the character's entry, with the other scene as related information.

use std::hash::{Hash, Hasher};

use super::{Code, Diagnostic, Severity};
use crate::index::model::Spanned;
use crate::index::{CardKind, FilePath, Scene, SourceFile, Workspace};

/// The day, time and place a scene happens at, when it says all three.
fn when_and_where(workspace: &Workspace, scene: &Scene) -> Option<(String, String, String)> {
    if scene.flashback {
        return None;
    }
    let date = scene.story_date?.to_string();
    let time: String = scene
        .time
        .as_ref()?
        .text
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    let location = &scene.location.as_ref()?.text;
    let place = workspace
        .catalog()
        .resolve_card(location, &[CardKind::Location])
        .map_or_else(|| location.to_lowercase(), |card| card.path.to_string());
    Some((date, time, place))
}

/// Everyone present in a scene: the point of view and the listed characters.
fn present<'a>(workspace: &Workspace, scene: &'a Scene) -> Vec<(FilePath, &'a Spanned)> {
    let catalog = workspace.catalog();
    let mut found: Vec<(FilePath, &Spanned)> = Vec::new();
    for entry in scene.pov.iter().chain(&scene.characters) {
        if let Some(card) = catalog.resolve_card(&entry.text, &[CardKind::Character])
            && !found.iter().any(|(path, _)| *path == card.path)
        {
            found.push((card.path.clone(), entry));
        }
    }
    found
}

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(scene) = file.scene() else { return };
    let Some((date, time, place)) = when_and_where(workspace, scene) else {
        return;
    };
    let here = present(workspace, scene);
    if here.is_empty() {
        return;
    }
    for (other_file, other) in workspace.catalog().scenes() {
        if other_file.path == file.path {
            continue;
        }
        let Some((other_date, other_time, other_place)) = when_and_where(workspace, other) else {
            continue;
        };
        if other_date != date || other_time != time || other_place == place {
            continue;
        }
        let there = present(workspace, other);
        for (card, entry) in &here {
            let Some((_, other_entry)) = there.iter().find(|(path, _)| path == card) else {
                continue;
            };
            let label = other.title.as_deref().unwrap_or(&other.id);
            let other_location = other
                .location
                .as_ref()
                .map_or("", |place| place.text.as_str());
            let location = scene
                .location
                .as_ref()
                .map_or("", |place| place.text.as_str());
            let when = scene.time.as_ref().map_or("", |time| time.text.as_str());
            diagnostics.push(
                Diagnostic::new(
                    file,
                    entry.range,
                    Severity::Warning,
                    Code::TwoPlaces,
                    format!(
                        "{} is at {location} here and at {other_location} in “{label}” ({}), both on {date} at {when}",
                        entry.text, other.id
                    ),
                )
                .with_related(
                    &other_file.path,
                    other_entry.range,
                    format!("{} at {other_location}", other_entry.text),
                ),
            );
        }
    }
}

/// Every other scene at the same day and time: where it is and who is there.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    let Some(scene) = file.scene() else { return };
    let Some(when) = when_and_where(workspace, scene) else {
        return;
    };
    for (other_file, other) in workspace.catalog().scenes() {
        if other_file.path == file.path {
            continue;
        }
        let Some(other_when) = when_and_where(workspace, other) else {
            continue;
        };
        if (&other_when.0, &other_when.1) == (&when.0, &when.1) {
            (&other_file.path, &other_when.2, &other.id, &other.title).hash(hasher);
            (&other.pov, &other.characters, &other.location).hash(hasher);
            for (card, _) in present(workspace, other) {
                card.hash(hasher);
            }
        }
    }
}

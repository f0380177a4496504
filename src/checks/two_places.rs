//! `two-places`: a character is in two places at once: present (in
//! `characters` or as `pov`) in two scenes dated the same day and time
//! (`date` and `time`, as written, compared without case or spaces) at
//! different locations. Flashbacks are exempt. Reported on each scene, at
//! the character's entry, with the other scene as related information.

use std::hash::{Hash, Hasher};

use super::{Code, Diagnostic, Severity};
use crate::index::model::Spanned;
use crate::index::tracking::moment;
use crate::index::{CardKind, FilePath, Scene, SourceFile, Workspace};

/// Where a scene happens: its location's card, or the name as written.
fn place(workspace: &Workspace, scene: &Scene) -> Option<String> {
    let location = &scene.location.as_ref()?.text;
    Some(
        workspace
            .catalog()
            .resolve_card(location, &[CardKind::Location])
            .map_or_else(|| location.to_lowercase(), |card| card.path.to_string()),
    )
}

/// The other scenes at the same day and time as `scene`.
fn same_moment<'a>(
    workspace: &'a Workspace,
    file: &'a SourceFile,
    scene: &Scene,
) -> impl Iterator<Item = (&'a SourceFile, &'a Scene)> + 'a {
    let group = moment(scene).and_then(|at| workspace.catalog().tracking().by_moment.get(&at));
    group
        .into_iter()
        .flatten()
        .filter(move |other| other.path != file.path)
        .filter_map(|other| Some((&**other, other.scene()?)))
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
    let Some(here_place) = place(workspace, scene) else {
        return;
    };
    let here = present(workspace, scene);
    if here.is_empty() {
        return;
    }
    let date = scene
        .story_date
        .map(|date| date.to_string())
        .unwrap_or_default();
    for (other_file, other) in same_moment(workspace, file, scene) {
        if place(workspace, other).is_none_or(|other_place| other_place == here_place) {
            continue;
        }
        let there = present(workspace, other);
        for (card, entry) in &here {
            let Some((_, other_entry)) = there.iter().find(|(path, _)| path == card) else {
                continue;
            };
            let label = super::scene_label(other);
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
                        "{} is at {location} here and at {other_location} in {label}, both on {date} at {when}",
                        entry.text
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
    for (other_file, other) in same_moment(workspace, file, scene) {
        (
            &other_file.path,
            place(workspace, other),
            &other.id,
            &other.title,
        )
            .hash(hasher);
        (&other.pov, &other.characters, &other.location).hash(hasher);
        for (card, _) in present(workspace, other) {
            card.hash(hasher);
        }
    }
}

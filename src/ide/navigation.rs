//! Go to definition and find references.

use super::Location;
use super::{Target, card_name_range, target_at};
use crate::index::{CardKind, FileContent, FilePath, Workspace};

/// A name goes to its card's `name:` (or alias); a scene id to the scene
/// file; a world rule's name to the rule.
pub fn definition(workspace: &Workspace, path: &str, offset: usize) -> Option<Location> {
    match target_at(workspace, path, offset)? {
        Target::Card {
            card, name_index, ..
        } => {
            let card_file = workspace.catalog().card(&card)?;
            Some(Location {
                path: card.clone(),
                range: card_name_range(card_file, name_index),
            })
        }
        Target::Scene { id, .. } => {
            let scene_file = workspace.catalog().scene(&id)?;
            let range = scene_file
                .scene()
                .and_then(|scene| scene.id_range)
                .unwrap_or_else(|| scene_file.head_range());
            Some(Location {
                path: scene_file.path.clone(),
                range,
            })
        }
        Target::Rule { name, .. } => super::bible::rule_definition(workspace, &name),
    }
}

/// Every place the thing under the cursor is named: prose mentions of any of
/// a card's names, front matter references, and (with `include_declaration`)
/// the card's own names; for a scene, its outline entries and `died_in`s.
pub fn references(
    workspace: &Workspace,
    path: &str,
    offset: usize,
    include_declaration: bool,
) -> Vec<Location> {
    let Some(target) = target_at(workspace, path, offset) else {
        return Vec::new();
    };
    let mut locations = match target {
        Target::Card { card, .. } => card_references(workspace, &card, include_declaration),
        Target::Scene { id, .. } => {
            let mut found = scene_references(workspace, &id, include_declaration);
            found.extend(super::bible::beat_sheet_references(workspace, &id));
            found
        }
        Target::Rule { name, .. } => super::bible::rule_references(workspace, &name),
    };
    locations.sort();
    locations.dedup();
    locations
}

pub(super) fn card_references(
    workspace: &Workspace,
    card: &FilePath,
    include_declaration: bool,
) -> Vec<Location> {
    let mut locations: Vec<Location> = workspace
        .mentions_of(card)
        .map(|(path, mention)| Location {
            path: path.clone(),
            range: mention.range,
        })
        .collect();
    locations.extend(
        front_matter_references(workspace, card)
            .into_iter()
            .map(|(location, _)| location),
    );
    if include_declaration
        && let Some(card_data) = workspace.catalog().card(card).and_then(|file| file.card())
    {
        locations.extend(card_data.names().map(|name| Location {
            path: card.clone(),
            range: name.range,
        }));
    }
    locations
}

/// Scene front matter values (`pov`, `location`, `characters`) that resolve to
/// `card`, with the name they use.
pub(super) fn front_matter_references(
    workspace: &Workspace,
    card: &FilePath,
) -> Vec<(Location, String)> {
    let catalog = workspace.catalog();
    let Some(data) = catalog.card(card).and_then(|file| file.card()) else {
        return Vec::new();
    };
    let kind = data.kind;
    // A reference resolves only by a card's names or its id: any other
    // reference cannot be to this card, and is not resolved.
    let keys: Vec<&str> = data
        .names()
        .map(|name| name.text.as_str())
        .chain([data.id.as_str()])
        .collect();
    let mut found = Vec::new();
    for (file, scene) in catalog.scenes() {
        let references = scene
            .pov
            .iter()
            .chain(&scene.characters)
            .chain(&scene.location)
            .filter(|reference| keys.contains(&reference.text.as_str()));
        for reference in references {
            let resolved = catalog.resolve_card(&reference.text, &[kind]).or_else(|| {
                (kind == CardKind::Other)
                    .then(|| catalog.resolve_card(&reference.text, &[CardKind::Other]))
                    .flatten()
            });
            if resolved.is_some_and(|resolved| &resolved.path == card) {
                found.push((
                    Location {
                        path: file.path.clone(),
                        range: reference.range,
                    },
                    reference.text.clone(),
                ));
            }
        }
    }
    found
}

fn scene_references(workspace: &Workspace, id: &str, include_declaration: bool) -> Vec<Location> {
    let mut locations = Vec::new();
    for file in workspace.files() {
        match &file.content {
            FileContent::Outline(outline) => locations.extend(
                outline
                    .entries
                    .iter()
                    .filter(|entry| entry.scene_id == id)
                    .map(|entry| Location {
                        path: file.path.clone(),
                        range: entry.id_range,
                    }),
            ),
            FileContent::Card(card) => locations.extend(
                card.died_in
                    .iter()
                    .filter(|died_in| died_in.text == id)
                    .map(|died_in| Location {
                        path: file.path.clone(),
                        range: died_in.range,
                    }),
            ),
            FileContent::Scene(scene) if include_declaration && scene.id == id => {
                locations.push(Location {
                    path: file.path.clone(),
                    range: scene.id_range.unwrap_or_else(|| file.head_range()),
                });
            }
            _ => {}
        }
    }
    locations
}

//! `generate_scaffold`: a scene's scaffold (§6.4 and §12.4 of the
//! agent-instruction spec), built from what the manuscript already says,
//! as a file beside the scene (`SCN-x.scaffold.md`) that the writer edits
//! and drafting reads: the beat (the outline's, and the beat sheet's), the
//! goal and the conflict (the Foreman's, or questions for the writer), the
//! cast and where each stands, the place and the time, the callbacks (each
//! character's last scene before this one) and the foreshadowing (what the
//! outline says comes next), and the length. An existing scaffold is the
//! writer's: it is never replaced.

use std::fmt::Write as _;

use super::ValidAction;
use super::effect::{ActionError, Change, Effect};
use crate::index::{CardKind, FilePath, LifeStatus, Workspace};

pub use crate::index::file::SCAFFOLD_SUFFIX;

/// Where the scaffold of scene `id` goes: beside its file, or in the scenes folder.
pub fn scaffold_path(workspace: &Workspace, id: &str) -> FilePath {
    workspace.scaffold_path(id)
}

/// The scaffold of scene `id` as the writer asks for it directly (the
/// command line's `scaffold`, the editor's "Scaffold scene"): the same as
/// the Foreman's `generate_scaffold`, with the goal and the conflict if
/// given.
pub fn scaffold_scene(
    workspace: &Workspace,
    id: &str,
    goal: Option<&str>,
    conflict: Option<&str>,
) -> Result<(String, Change), ActionError> {
    let mut params = vec![("scene_id".to_owned(), id.to_owned())];
    params.extend(goal.map(|goal| ("goal".to_owned(), goal.to_owned())));
    params.extend(conflict.map(|conflict| ("conflict".to_owned(), conflict.to_owned())));
    let action = crate::llm::protocol::Action {
        kind: "generate_scaffold".to_owned(),
        params,
        raw: String::new(),
    };
    let valid =
        super::validate(&action, crate::kb::mode::Mode::Director).map_err(ActionError::Invalid)?;
    let (said, effect) = generate(&valid, workspace)?;
    match effect {
        Effect::Changes(changes) => changes
            .into_iter()
            .next()
            .map(|change| (said, change))
            .ok_or_else(|| ActionError::NoScaffold(id.to_owned())),
        _ => Err(ActionError::NoScaffold(id.to_owned())),
    }
}

pub(super) fn generate(
    action: &ValidAction,
    workspace: &Workspace,
) -> Result<(String, Effect), ActionError> {
    let id = action.text("scene_id").unwrap_or_default();
    let catalog = workspace.catalog();
    let outline = catalog.outline().and_then(|file| file.outline());
    let Some((position, entry)) = outline.and_then(|outline| {
        outline
            .entries
            .iter()
            .enumerate()
            .find(|(_, entry)| entry.scene_id == id)
    }) else {
        return Err(ActionError::NotInOutline {
            action: "generate_scaffold",
            id: id.to_owned(),
            what: "scaffold",
        });
    };
    let path = scaffold_path(workspace, id);
    if workspace.file(&path).is_some() || workspace.root().join(&*path).exists() {
        return Err(ActionError::ScaffoldExists(path.to_string()));
    }
    let scene = catalog.scene(id).and_then(|file| file.scene());
    let title = action
        .text("title")
        .map(str::to_owned)
        .or_else(|| scene.and_then(|scene| scene.title.clone()))
        .unwrap_or_else(|| id.to_owned());
    let mut out =
        format!("---\ntype: scaffold\nscene: {id}\n---\n\n# Scaffold: {title}\n\n## Beat\n\n");
    out.push_str(if entry.beat.is_empty() {
        "(the outline gives no beat)"
    } else {
        &entry.beat
    });
    out.push('\n');
    let beats = beat_sheet_beats(workspace, id);
    if !beats.is_empty() {
        let _ = writeln!(out, "\nBeat sheet: {}", beats.join(", "));
    }
    let pov = scene
        .and_then(|scene| scene.pov.as_ref())
        .map(|pov| pov.text.clone());
    let who = pov
        .clone()
        .unwrap_or_else(|| "the point of view".to_owned());
    let goal = action.text("goal").map_or_else(
        || format!("What does {who} want here, and what do they do to get it?"),
        str::to_owned,
    );
    let conflict = action.text("conflict").map_or_else(
        || "What stands in the way, and what does it cost?".to_owned(),
        str::to_owned,
    );
    let _ = write!(
        out,
        "\n## Goal\n\n{goal}\n\n## Conflict\n\n{conflict}\n\n## Cast\n\n"
    );
    let people = cast(&mut out, workspace, scene);
    let mut place = Vec::new();
    if let Some(scene) = scene {
        place.extend(
            scene
                .location
                .as_ref()
                .map(|location| location.text.clone()),
        );
        place.extend(scene.date.as_ref().map(|date| date.text.clone()));
        place.extend(scene.time.as_ref().map(|time| time.text.clone()));
    }
    let _ = write!(
        out,
        "\n## Place and time\n\n{}\n\n## Callbacks\n\n",
        if place.is_empty() {
            "(not set)".to_owned()
        } else {
            place.join(" · ")
        }
    );
    callbacks_and_foreshadowing(&mut out, workspace, &people, position);
    let target = scene
        .and_then(|scene| scene.words_target)
        .or(workspace.config().targets.scene);
    let _ = write!(
        out,
        "\n## Length\n\n{}\n",
        target.map_or("(no target)".to_owned(), |words| format!("{words} words"))
    );
    Ok((
        format!("scaffolded {id} ({path})"),
        Effect::Changes(vec![Change {
            path,
            before: None,
            after: out,
        }]),
    ))
}

/// Writes the cast, each once with where they stand, to `out`; returns
/// their names (the cards', where they have one).
fn cast(
    out: &mut String,
    workspace: &Workspace,
    scene: Option<&crate::index::Scene>,
) -> Vec<String> {
    let catalog = workspace.catalog();
    let pov = scene
        .and_then(|scene| scene.pov.as_ref())
        .map(|pov| pov.text.clone());
    let cast: Vec<String> = scene
        .map(|scene| {
            scene
                .pov
                .iter()
                .chain(&scene.characters)
                .map(|name| name.text.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut seen = Vec::new();
    // The cast once each, by their cards' names.
    let mut people: Vec<String> = Vec::new();
    for name in &cast {
        let Some(card_file) = catalog.resolve_card(name, &[CardKind::Character]) else {
            let _ = writeln!(out, "- {name} (no card)");
            people.push(name.clone());
            continue;
        };
        if seen.contains(&card_file.path) {
            continue;
        }
        seen.push(card_file.path.clone());
        let Some(card) = card_file.card() else {
            continue;
        };
        people.push(card.display_name().to_owned());
        let mut line = format!("- {}", card.display_name());
        if pov.as_deref().is_some_and(|pov| {
            catalog
                .resolve_card(pov, &[CardKind::Character])
                .is_some_and(|p| p.path == card_file.path)
        }) {
            line.push_str(" (point of view)");
        }
        let dead = scene.is_some_and(|scene| catalog.dead_by_outline(card, scene));
        let state = if dead {
            "dead by this scene"
        } else if card.status == LifeStatus::Alive {
            "alive"
        } else {
            card.status.as_str()
        };
        let _ = write!(line, ": {state}");
        if let Some(summary) = &card.summary {
            let first = summary
                .split_inclusive(". ")
                .next()
                .unwrap_or(summary)
                .trim();
            let _ = write!(line, ". {}", crate::text::clip(first, 240));
        }
        out.push_str(&line);
        out.push('\n');
    }
    if cast.is_empty() {
        out.push_str("(the scene lists nobody yet: who is in it?)\n");
    }
    people
}

/// Writes the callbacks (each earlier scene that last had someone of the
/// cast) and the foreshadowing (the entry's sub-beats, the next entry).
fn callbacks_and_foreshadowing(
    out: &mut String,
    workspace: &Workspace,
    people: &[String],
    position: usize,
) {
    let catalog = workspace.catalog();
    let Some(outline) = catalog.outline().and_then(|file| file.outline()) else {
        return;
    };
    let entries = &outline.entries;
    let entry = &entries[position];
    // Each earlier scene that last had someone of the cast, with who.
    let mut callbacks: Vec<(usize, Vec<String>)> = Vec::new();
    for name in people {
        let earlier = entries[..position].iter().rposition(|earlier| {
            catalog
                .scene(&earlier.scene_id)
                .and_then(|file| file.scene())
                .is_some_and(|other| {
                    other
                        .pov
                        .iter()
                        .chain(&other.characters)
                        .any(|n| same_character(workspace, &n.text, name))
                })
        });
        if let Some(at) = earlier {
            match callbacks.iter_mut().find(|(found, _)| *found == at) {
                Some((_, names)) => names.push(name.clone()),
                None => callbacks.push((at, vec![name.clone()])),
            }
        }
    }
    callbacks.sort();
    let callbacks: Vec<String> = callbacks
        .into_iter()
        .map(|(at, names)| {
            format!(
                "- {} ({}): {}",
                entries[at].scene_id,
                names.join(", "),
                entries[at].beat
            )
        })
        .collect();
    out.push_str(&if callbacks.is_empty() {
        "(none: nobody here was in an earlier scene)\n".to_owned()
    } else {
        callbacks.join("\n") + "\n"
    });
    out.push_str("\n## Foreshadowing\n\n");
    let mut ahead: Vec<String> = entry
        .sub_beats
        .iter()
        .map(|beat| format!("- {beat}"))
        .collect();
    if let Some(next) = entries.get(position + 1) {
        ahead.push(format!("- Next, {}: {}", next.scene_id, next.beat));
    }
    out.push_str(&if ahead.is_empty() {
        "(the last scene of the outline)\n".to_owned()
    } else {
        ahead.join("\n") + "\n"
    });
}

/// Whether two names are the same character.
fn same_character(workspace: &Workspace, a: &str, b: &str) -> bool {
    let catalog = workspace.catalog();
    match (
        catalog.resolve_card(a, &[CardKind::Character]),
        catalog.resolve_card(b, &[CardKind::Character]),
    ) {
        (Some(a), Some(b)) => a.path == b.path,
        _ => a == b,
    }
}

/// The beat sheet's beats that name scene `id`.
pub(super) fn beat_sheet_beats(workspace: &Workspace, id: &str) -> Vec<String> {
    let Some(bible) = workspace
        .catalog()
        .bible(crate::index::BibleKind::BeatSheet)
        .and_then(|file| file.bible())
    else {
        return Vec::new();
    };
    bible
        .beats_naming(id)
        .map(|(_, spec)| spec.title.to_owned())
        .collect()
}

//! `generate_scaffold`: a scene's scaffold (§6.4 and §12.4 of the
//! agent-instruction spec), built from what the manuscript already says,
//! as a file beside the scene (`SCN-x.scaffold.md`) that the writer edits
//! and drafting reads: the beat (the outline's, and the beat sheet's), the
//! goal and the conflict (the Foreman's, or questions for the writer), the
//! cast and where each stands, the place and the time, the callbacks (each
//! character's last scene before this one, and the threads still open: the
//! tracked objects and who holds them, the wounds not yet healed, the
//! secrets and who knows them) and the foreshadowing (the outline's next
//! scene and the beat sheet's next beats), and the length.
//!
//! A scene not written yet lists nobody and sets no place: its cast is then
//! who its outline line and the beat sheet's beats name (matched to cards),
//! its place and time what the scenes around it say. A part with nothing to
//! say says what the writer can add. An existing scaffold is the writer's:
//! it is never replaced.

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
    let planned = named_in_plan(workspace, entry, id);
    let people = cast(&mut out, workspace, scene, &planned);
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
    let place = if place.is_empty() {
        around(workspace, position, &planned)
    } else {
        place.join(" · ")
    };
    let _ = write!(out, "\n## Place and time\n\n{place}\n\n## Callbacks\n\n");
    callbacks_and_foreshadowing(&mut out, workspace, &people, position, id);
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

/// The cards the scene's plan names: its outline line and sub-beats, and
/// the text of the beat sheet's beats that name it, first named first.
struct Planned {
    characters: Vec<String>,
    places: Vec<String>,
}

fn named_in_plan(workspace: &Workspace, entry: &crate::index::OutlineEntry, id: &str) -> Planned {
    let catalog = workspace.catalog();
    let mut text = entry.beat.clone();
    for beat in &entry.sub_beats {
        text.push('\n');
        text.push_str(beat);
    }
    if let Some(bible) = beat_sheet(workspace) {
        for (number, _) in bible.beats_naming(id) {
            if let Some(section) = bible.parts[number - 1].section {
                text.push('\n');
                text.push_str(&bible.sections[section].text);
            }
        }
    }
    let mut planned = Planned {
        characters: Vec::new(),
        places: Vec::new(),
    };
    for path in catalog.matcher().find_in(&text) {
        let Some(card) = workspace.file(&path).and_then(|file| file.card()) else {
            continue;
        };
        let name = card.display_name().to_owned();
        match card.kind {
            CardKind::Character => planned.characters.push(name),
            CardKind::Location => planned.places.push(name),
            _ => {}
        }
    }
    planned
}

/// Where and when the scenes around position `at` of the outline are, for a
/// scene that does not say; and the places its plan names.
fn around(workspace: &Workspace, at: usize, planned: &Planned) -> String {
    let catalog = workspace.catalog();
    let Some(outline) = catalog.outline().and_then(|file| file.outline()) else {
        return "(not set: give the scene a `location:` and a `date:`)".to_owned();
    };
    let entries = &outline.entries;
    let placed = |entry: &crate::index::OutlineEntry| {
        let scene = catalog.scene(&entry.scene_id)?.scene()?;
        let parts: Vec<String> = scene
            .location
            .iter()
            .chain(&scene.date)
            .chain(&scene.time)
            .map(|part| part.text.clone())
            .collect();
        (!parts.is_empty()).then(|| format!("{}: {}", entry.scene_id, parts.join(" · ")))
    };
    let mut lines = Vec::new();
    if !planned.places.is_empty() {
        lines.push(format!("- The plan names {}.", planned.places.join(", ")));
    }
    if let Some(before) = entries[..at].iter().rev().find_map(placed) {
        lines.push(format!("- The scene before, {before}."));
    }
    if let Some(after) = entries[at + 1..].iter().find_map(placed) {
        lines.push(format!("- The scene after, {after}."));
    }
    lines.push("(not set: give the scene a `location:`, a `date:` and a `time:`)".to_owned());
    lines.join("\n")
}

/// Writes the cast, each once with where they stand, to `out`; returns
/// their names (the cards', where they have one). A scene that lists
/// nobody gets those its plan names.
fn cast(
    out: &mut String,
    workspace: &Workspace,
    scene: Option<&crate::index::Scene>,
    planned: &Planned,
) -> Vec<String> {
    let catalog = workspace.catalog();
    let pov = scene
        .and_then(|scene| scene.pov.as_ref())
        .map(|pov| pov.text.clone());
    let listed: Vec<String> = scene
        .map(|scene| {
            scene
                .pov
                .iter()
                .chain(&scene.characters)
                .map(|name| name.text.clone())
                .collect()
        })
        .unwrap_or_default();
    let from_plan = listed.is_empty() && !planned.characters.is_empty();
    let cast = if from_plan {
        planned.characters.clone()
    } else {
        listed
    };
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
    if from_plan {
        out.push_str(
            "(named by the outline and the beat sheet: list who is in the scene in its `characters:`, and its point of view in `pov:`)\n",
        );
    } else if cast.is_empty() {
        out.push_str(
            "(the scene lists nobody yet, and its outline line names no card: who is in it, and through whose eyes?)\n",
        );
    }
    people
}

/// Writes the callbacks (each earlier scene that last had someone of the
/// cast, and the threads still open) and the foreshadowing (the entry's
/// sub-beats, the next entry, the beat sheet's next beats).
fn callbacks_and_foreshadowing(
    out: &mut String,
    workspace: &Workspace,
    people: &[String],
    position: usize,
    id: &str,
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
        "(none: nobody here was in an earlier scene; what from earlier could this scene pick up?)\n"
            .to_owned()
    } else {
        callbacks.join("\n") + "\n"
    });
    let threads = open_threads(workspace, &entries[..position], people);
    if !threads.is_empty() {
        out.push_str("\nOpen threads:\n");
        for thread in threads {
            let _ = writeln!(out, "- {thread}");
        }
    }
    out.push_str("\n## Foreshadowing\n\n");
    let mut ahead: Vec<String> = entry
        .sub_beats
        .iter()
        .map(|beat| format!("- {beat}"))
        .collect();
    if let Some(next) = entries.get(position + 1) {
        ahead.push(format!("- Next, {}: {}", next.scene_id, next.beat));
    }
    ahead.extend(next_beats(workspace, entries, position, id));
    out.push_str(&if ahead.is_empty() {
        "(the last scene of the outline, and no beat of the beat sheet comes after it: what should the ending leave the reader with?)\n".to_owned()
    } else {
        ahead.join("\n") + "\n"
    });
}

/// The most threads a scaffold lists.
const THREADS: usize = 8;

/// The threads still open after `before` (the outline's scenes before this
/// one, in order): each tracked object and who holds it, each wound not yet
/// healed, each secret and who knows it; those of `people` where there are
/// any (a secret, whoever knows it).
fn open_threads(
    workspace: &Workspace,
    before: &[crate::index::OutlineEntry],
    people: &[String],
) -> Vec<String> {
    use crate::index::tracks::{Gone, Tracked};
    let catalog = workspace.catalog();
    let mut objects: Vec<(String, String, String)> = Vec::new();
    let mut wounds: Vec<(String, String, String, Option<usize>)> = Vec::new();
    let mut secrets: Vec<(String, Vec<String>, String)> = Vec::new();
    for (at, entry) in before.iter().enumerate() {
        let Some(scene) = catalog.scene(&entry.scene_id).and_then(|file| file.scene()) else {
            continue;
        };
        for track in &scene.tracks {
            match &track.tracked {
                Tracked::Object { name, holder, gone } => {
                    let state = match (holder, gone) {
                        (_, Some(Gone::Lost)) => "lost".to_owned(),
                        (_, Some(Gone::Destroyed)) => "destroyed".to_owned(),
                        (_, Some(Gone::LeftAt(place))) => format!("left at {place}"),
                        (Some(holder), None) => format!("held by {}", holder.text),
                        (None, None) => "in play".to_owned(),
                    };
                    objects.retain(|(object, _, _)| *object != name.text);
                    objects.push((name.text.clone(), state, entry.scene_id.clone()));
                }
                Tracked::Wound {
                    part,
                    character,
                    heals,
                    healed,
                } => {
                    wounds.retain(|(who, what, _, _)| {
                        !(same_character(workspace, who, &character.text) && *what == part.text)
                    });
                    if !healed {
                        let until = heals.map(|heals| at + heals as usize);
                        wounds.push((
                            character.text.clone(),
                            part.text.clone(),
                            entry.scene_id.clone(),
                            until,
                        ));
                    }
                }
                Tracked::Secret { name, known_by, .. } => {
                    let known: Vec<String> = known_by.iter().map(|who| who.text.clone()).collect();
                    match secrets
                        .iter_mut()
                        .find(|(secret, _, _)| *secret == name.text)
                    {
                        Some((_, knowers, _)) => {
                            for who in known {
                                if !knowers.contains(&who) {
                                    knowers.push(who);
                                }
                            }
                        }
                        None => secrets.push((name.text.clone(), known, entry.scene_id.clone())),
                    }
                }
            }
        }
    }
    let here = before.len();
    let ours = |name: &str| {
        people.is_empty()
            || people
                .iter()
                .any(|person| same_character(workspace, person, name))
    };
    let mut threads: Vec<String> = Vec::new();
    for (object, state, since) in &objects {
        let holder = state.strip_prefix("held by ");
        if holder.is_none_or(ours) {
            threads.push(format!("{object}: {state} (since {since})"));
        }
    }
    for (who, part, since, until) in &wounds {
        if until.is_none_or(|until| until >= here) && ours(who) {
            threads.push(format!(
                "{who}'s wound, {part} (since {since}): not healed yet"
            ));
        }
    }
    for (secret, knowers, since) in &secrets {
        let unaware: Vec<&String> = people
            .iter()
            .filter(|person| {
                !knowers
                    .iter()
                    .any(|who| same_character(workspace, who, person))
            })
            .collect();
        let mut line = format!(
            "the secret “{secret}” (since {since}): known by {}",
            if knowers.is_empty() {
                "nobody yet".to_owned()
            } else {
                knowers.join(", ")
            }
        );
        if !unaware.is_empty() && !people.is_empty() {
            let names: Vec<&str> = unaware.iter().map(|name| name.as_str()).collect();
            let _ = write!(line, "; not by {}", names.join(", "));
        }
        threads.push(line);
    }
    threads.truncate(THREADS);
    threads
}

/// The beat sheet's next two beats after this scene's: after the last beat
/// that names it, or else the first beats whose scenes come later.
fn next_beats(
    workspace: &Workspace,
    entries: &[crate::index::OutlineEntry],
    position: usize,
    id: &str,
) -> Vec<String> {
    let Some(bible) = beat_sheet(workspace) else {
        return Vec::new();
    };
    let place_of = |scene: &str| entries.iter().position(|entry| entry.scene_id == scene);
    let own = bible.beats_naming(id).map(|(number, _)| number).max();
    let mut ahead = Vec::new();
    for (at, part) in bible.parts.iter().enumerate() {
        let number = at + 1;
        let Some(section) = part.section.map(|section| &bible.sections[section]) else {
            continue;
        };
        let later = match own {
            Some(own) => number > own,
            None => section
                .scene_ids
                .iter()
                .filter_map(|scene| place_of(&scene.text))
                .min()
                .is_some_and(|at| at > position),
        };
        if later && !section.text.trim().is_empty() {
            ahead.push(format!(
                "- Beat sheet, {}: {}",
                part.spec.title,
                crate::text::clip(section.text.trim(), 200)
            ));
        }
        if ahead.len() == 2 {
            break;
        }
    }
    ahead
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

/// The beat sheet, read, if the manuscript has one.
fn beat_sheet(workspace: &Workspace) -> Option<&crate::index::bible::Bible> {
    workspace
        .catalog()
        .bible(crate::index::BibleKind::BeatSheet)
        .and_then(|file| file.bible())
}

/// The beat sheet's beats that name scene `id`.
pub(super) fn beat_sheet_beats(workspace: &Workspace, id: &str) -> Vec<String> {
    let Some(bible) = beat_sheet(workspace) else {
        return Vec::new();
    };
    bible
        .beats_naming(id)
        .map(|(_, spec)| spec.title.to_owned())
        .collect()
}

//! Inlay hints from the story clock: at a scene's heading, the day it
//! happens as the manuscript's calendar names it, its time of day, and its
//! point of view's age (from the card's `born:`); in the outline, each
//! entry's day after its scene id. And after each paragraph of dialogue,
//! who speaks it as the checks read it ("— Elizabeth", "— Darcy (by
//! turn)"), so that a writer sees what the checks believe.

use std::hash::{DefaultHasher, Hash, Hasher};

use crate::checks::speakers::{How, Speaker};
use crate::index::model::StoryDate;
use crate::index::{CardKind, FileContent, Scene, SourceFile, Workspace};
use crate::syntax::BlockKind;
use crate::text::TextRange;

/// A hint to show at `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlayHint {
    pub offset: usize,
    pub label: String,
    /// The hint's longer form, for its hover.
    pub tooltip: String,
    /// Whether the hint stands before text (and wants a space after it)
    /// rather than after it.
    pub before_text: bool,
}

/// The hints of `path` whose offset lies within `within`.
pub fn inlay_hints(workspace: &Workspace, path: &str, within: TextRange) -> Vec<InlayHint> {
    let Some(file) = workspace.file(path) else {
        return Vec::new();
    };
    let mut hints = match &file.content {
        FileContent::Scene(scene) => scene_hint(workspace, file, scene)
            .into_iter()
            .chain(speaker_hints(workspace, file))
            .collect(),
        FileContent::Outline(outline) => outline
            .entries
            .iter()
            .filter_map(|entry| {
                let scene = workspace.catalog().scene(&entry.scene_id)?.scene()?;
                let (label, tooltip) = describe(workspace, scene)?;
                Some(InlayHint {
                    offset: entry.id_range.end,
                    label,
                    tooltip,
                    before_text: false,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    hints.retain(|hint| within.start <= hint.offset && hint.offset <= within.end);
    hints
}

/// The hint at a scene's first heading, or before its first prose when it
/// has no heading.
fn scene_hint(workspace: &Workspace, file: &SourceFile, scene: &Scene) -> Option<InlayHint> {
    let (label, tooltip) = describe(workspace, scene)?;
    let heading = file
        .syntax
        .blocks
        .iter()
        .find(|block| matches!(block.kind, BlockKind::Heading { .. }));
    let (offset, before_text) = match heading {
        Some(heading) => {
            let line = heading.range.slice(&file.text);
            let end =
                heading.range.start + line.lines().next().unwrap_or_default().trim_end().len();
            (end, false)
        }
        None => (file.syntax.prose.first()?.start, true),
    };
    Some(InlayHint {
        offset,
        label,
        tooltip,
        before_text,
    })
}

/// After each paragraph of dialogue, its speaker and how it was found.
fn speaker_hints(workspace: &Workspace, file: &SourceFile) -> Vec<InlayHint> {
    let catalog = workspace.catalog();
    crate::checks::speaker_lines(workspace, &file.path)
        .into_iter()
        .filter_map(|line| {
            let name = match &line.speaker {
                Speaker::Card(card) => catalog.card_name(card),
                Speaker::Unknown(word) => format!("{} (no card)", word.slice(&file.text)),
                Speaker::Nobody => return None,
            };
            let label = match line.how.hint() {
                Some(how) => format!("— {name} ({how})"),
                None => format!("— {name}"),
            };
            let tooltip = format!(
                "The checks read this line as spoken by {name}: {}.",
                explain(line.how)
            );
            let end = line.paragraph.start + line.paragraph.slice(&file.text).trim_end().len();
            Some(InlayHint {
                offset: end,
                label,
                tooltip,
                before_text: false,
            })
        })
        .collect()
}

/// How a speaker was found, in the hint's tooltip.
fn explain(how: How) -> &'static str {
    match how {
        How::Attributed => "a verb of speech names them",
        How::Beat => "they act in the narration before it",
        How::TurnTaking => "the conversation's turns give it to them",
        How::Pronoun => "the pronoun beside the verb of speech can only mean them",
        How::Narrator => "\"I\" is the scene's point of view",
        How::Addressed => "the line before called them by name",
        How::Continued => {
            "their speech goes on from the paragraph before, whose quotation is not closed"
        }
        How::Unfound => "nobody",
    }
}

/// "12 Thaw 1203 · dusk · Kael Maren, 33", and its longer form.
fn describe(workspace: &Workspace, scene: &Scene) -> Option<(String, String)> {
    let date = scene.story_date?;
    let clock = workspace.clock();
    let mut label = vec![clock.format(&date)];
    let mut tooltip = format!("Story date: {}", clock.format(&date));
    if let Some(time) = &scene.time {
        label.push(time.text.clone());
        tooltip.push_str(&format!(", {}", time.text));
    }
    if scene.flashback {
        label.push("flashback".to_owned());
        tooltip.push_str(" (a flashback)");
    }
    tooltip.push('.');
    if let Some((name, age, born)) = pov_age(workspace, scene, &date) {
        label.push(format!("{name}, {age}"));
        tooltip.push_str(&format!(" {name}, born {}, is {age}.", clock.format(&born)));
    }
    Some((label.join(" · "), tooltip))
}

/// The point of view's name, age on `date` ("33", or "32–33" where a date
/// leaves out the day), and birth date.
fn pov_age(
    workspace: &Workspace,
    scene: &Scene,
    date: &StoryDate,
) -> Option<(String, String, StoryDate)> {
    let pov = scene.pov.as_ref()?;
    let card = workspace
        .catalog()
        .resolve_card(&pov.text, &[CardKind::Character])?
        .card()?;
    let born = card.born.as_ref()?.date;
    let (least, most) = workspace.clock().calendar().age(&born, date)?;
    let age = if least == most {
        least.to_string()
    } else {
        format!("{least}–{most}")
    };
    Some((card.display_name().to_owned(), age, born))
}

/// A key over everything the hints read: the calendar, every scene's date,
/// time, flashback and point of view, and every card's names, birth date
/// and facts (its gender among them). When it changes, the editor is asked for its hints again (it asks
/// once when a file opens, perhaps before the cards are read).
pub fn inlay_hints_key(workspace: &Workspace) -> u64 {
    let mut hasher = DefaultHasher::new();
    workspace.clock().calendar().hash(&mut hasher);
    let catalog = workspace.catalog();
    catalog.names_fingerprint().hash(&mut hasher);
    for (file, scene) in catalog.scenes() {
        (
            &file.path,
            &scene.date,
            &scene.time,
            scene.flashback,
            &scene.pov,
        )
            .hash(&mut hasher);
    }
    for (path, card) in catalog.cards() {
        // The genders (in the card's facts) decide whom a speaker's pronoun means.
        (path, &card.born, workspace.card_facts(path)).hash(&mut hasher);
    }
    hasher.finish()
}

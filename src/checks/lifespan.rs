//! `lifespan`: a character is in a scene dated before they were born or
//! after they died, by the story's dates: a character card's `born:`, and
//! its `died:` or the date of its `died_in` scene. Present means as the
//! scene's `pov`, in its `characters`, or speaking or acting in the
//! narration, read as `dead-character` reads it (memories, dreams, graves and
//! hypotheses are not appearances). Dates compare by the fields both give,
//! so only a scene certainly before the birth or after the death counts;
//! flashbacks are not exempt (a date is a date). A death that
//! `dead-character` already reports by outline order is left to it.

use std::hash::{Hash, Hasher};

use super::appearance::{Appearance, appearance};
use super::{Code, Diagnostic, LazyProse, Severity};
use crate::index::model::{Card, StoryDate};
use crate::index::{CardKind, FilePath, SourceFile, Workspace};
use crate::text::TextRange;

/// A character's life by the calendar, as far as the cards tell it.
struct Life<'a> {
    card: &'a Card,
    path: &'a FilePath,
    born: Option<StoryDate>,
    /// The date of death and where it is written (the card's `died`, or the
    /// `died_in` scene's `date`).
    died: Option<(StoryDate, &'a FilePath, TextRange)>,
    /// Whether `dead-character` speaks for this scene (its death scene comes
    /// earlier in the outline and this is no flashback).
    death_by_outline: bool,
}

fn life<'a>(workspace: &'a Workspace, file: &SourceFile, path: &'a FilePath) -> Option<Life<'a>> {
    let catalog = workspace.catalog();
    let scene = file.scene()?;
    let card_file = catalog.card(path)?;
    let card = card_file.card()?;
    let died = catalog.death_date(&card_file.path, card);
    let death_by_outline = catalog.dead_by_outline(card, scene);
    Some(Life {
        card,
        path: &card_file.path,
        born: card.born.as_ref().map(|born| born.date),
        died,
        death_by_outline,
    })
}

/// What is wrong with the character being here on `date`, with the place
/// that says so: before the birth, or after the death.
fn out_of_life(workspace: &Workspace, life: &Life, date: &StoryDate) -> Option<(String, Related)> {
    let clock = workspace.clock();
    if let Some(born) = life.born
        && date.is_before(&born)
    {
        let range = life.card.born.as_ref().map(|born| born.written.range)?;
        return Some((
            format!("but is born only on {}", clock.format(&born)),
            (
                life.path.clone(),
                range,
                format!(
                    "{}'s card: born {}",
                    life.card.display_name(),
                    clock.format(&born)
                ),
            ),
        ));
    }
    let (died, where_, range) = life.died?;
    if life.death_by_outline || !died.is_before(date) {
        return None;
    }
    Some((
        format!("but died on {}", clock.format(&died)),
        (
            where_.clone(),
            range,
            format!(
                "{} dies on {}",
                life.card.display_name(),
                clock.format(&died)
            ),
        ),
    ))
}

type Related = (FilePath, TextRange, String);

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    lazy: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(scene) = file.scene() else { return };
    let Some(date) = scene.story_date else { return };
    let catalog = workspace.catalog();
    let on = workspace.clock().format(&date);
    let mut report = |range: TextRange, life: &Life, what: &str| {
        if let Some((when, (path, related, note))) = out_of_life(workspace, life, &date) {
            diagnostics.push(
                Diagnostic::new(
                    file,
                    range,
                    Severity::Warning,
                    Code::Lifespan,
                    format!("{} {what}, dated {on}, {when}", life.card.display_name()),
                )
                .with_related(&path, related, note),
            );
        }
    };
    let mut listed: Vec<&FilePath> = Vec::new();
    for (entry, what) in scene
        .pov
        .iter()
        .map(|pov| (pov, "is the point of view of this scene"))
        .chain(
            scene
                .characters
                .iter()
                .map(|entry| (entry, "is listed in this scene")),
        )
    {
        let Some(card) = catalog.resolve_card(&entry.text, &[CardKind::Character]) else {
            continue;
        };
        if listed.contains(&&card.path) {
            continue;
        }
        listed.push(&card.path);
        if let Some(life) = life(workspace, file, &card.path) {
            report(entry.range, &life, what);
        }
    }
    let mentions = workspace.mentions(&file.path);
    if mentions.is_empty() {
        return;
    }
    let text = &*file.text;
    let mut said: Vec<&FilePath> = Vec::new();
    for mention in mentions {
        if said.contains(&&mention.card) || listed.contains(&&mention.card) {
            continue;
        }
        let Some(life) = life(workspace, file, &mention.card) else {
            continue;
        };
        if life.born.is_none() && life.died.is_none() {
            continue;
        }
        let prose = lazy.get();
        let what = match appearance(text, prose, mention.range, mention.possessive) {
            Some(Appearance::Speaks) => "speaks in this scene".to_owned(),
            Some(Appearance::Acts(verb)) => {
                let action = TextRange::new(mention.range.start, prose.tokens[verb].range.end);
                format!("acts in this scene (“{}”)", action.slice(text))
            }
            None => continue,
        };
        said.push(&mention.card);
        report(mention.range, &life, &what);
    }
}

/// The birth and death dates of every character the scene lists or names
/// (each card's life, combined in no order), and where the scene stands.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    let Some(scene) = file.scene() else { return };
    if scene.story_date.is_none() {
        return;
    }
    let catalog = workspace.catalog();
    let listed = scene
        .pov
        .iter()
        .chain(&scene.characters)
        .filter_map(|entry| catalog.resolve_card(&entry.text, &[CardKind::Character]))
        .filter_map(|card| catalog.life_facts(&card.path));
    let named = workspace
        .mentions(&file.path)
        .iter()
        .filter_map(|mention| catalog.life_facts(&mention.card));
    let lives = listed.chain(named).fold(0u64, u64::wrapping_add);
    (lives, catalog.outline_position(&scene.id), scene.flashback).hash(hasher);
}

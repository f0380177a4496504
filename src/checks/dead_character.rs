//! `dead-character`: a character whose card says `status: dead` with
//! `died_in: SCN-x` appears alive in a scene that comes after SCN-x in
//! outline order and is not a flashback.
//!
//! - As the scene's `pov` or in its `characters`: an error on that line.
//! - In prose: a warning when the character speaks (a dialogue attribution
//!   in either order) or acts in the narration (the name as the subject of
//!   a verb in the simple past).
//!
//! Not appearances: mentions inside dialogue (talk about the dead),
//! possessives ("Tomas's sword"), "the late Tomas", past perfect ("Tomas had
//! once stood"), and any mention after a word of memory or mourning earlier
//! in the sentence ("Kael remembered Tomas on the wall", "the grave where
//! Tomas sang"). Related information points at the card and at the death
//! scene. A `died_in` scene that the outline does not list is reported on
//! the card as a warning, since no scene can be said to come after it.

use std::hash::{Hash, Hasher};

use super::appearance::{Appearance, appearance};
use super::speakers::{How, Speaker};
use super::{Code, Diagnostic, LazyProse, Related, Severity};
use crate::index::{CardKind, FileContent, FilePath, LifeStatus, SourceFile, Workspace};
use crate::text::TextRange;

/// Words that make a dead character's "act" the body's: "Crane slid across
/// the deck, his body already cold".
const BODY_WORDS: &[&str] = &[
    "body", "corpse", "remains", "coffin", "shroud", "bier", "carcass", "cadaver",
];

/// Whether the sentence of the verb at `verb` speaks of a body: what moves
/// is the dead, not the living.
fn tells_of_the_body(text: &str, prose: &crate::prose::Prose, verb: usize) -> bool {
    prose.sentence_of(verb).is_some_and(|sentence| {
        prose.sentence_tokens(sentence).iter().any(|token| {
            token.is_word() && BODY_WORDS.contains(&token.text(text).to_lowercase().as_str())
        })
    })
}

/// Verbs that tell of the death itself, not of a living act.
const DEATH_VERBS: &[&str] = &["died", "perished", "drowned", "passed", "fell"];

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    prose: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    match &file.content {
        FileContent::Scene(_) => check_scene(workspace, file, prose, diagnostics),
        FileContent::Card(_) => check_death_scene_is_in_outline(workspace, file, diagnostics),
        _ => {}
    }
}

/// A dead character whose death scene comes before the scene being checked.
struct Death<'a> {
    card_file: &'a SourceFile,
    name: &'a str,
    died_in: &'a crate::index::model::Spanned,
    scene_label: String,
}

fn check_scene(
    workspace: &Workspace,
    file: &SourceFile,
    prose: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(scene) = file.scene() else { return };
    let catalog = workspace.catalog();
    if scene.flashback || file.load_error.is_some() {
        return;
    }
    let deaths: Vec<Death> = catalog
        .cards()
        .filter_map(|(path, card)| {
            if !catalog.dead_by_outline(card, scene) {
                return None;
            }
            let died_in = card.died_in.as_ref()?;
            Some(Death {
                card_file: catalog.card(path)?,
                name: card.display_name(),
                died_in,
                scene_label: scene_label(workspace, &died_in.text),
            })
        })
        .collect();
    if deaths.is_empty() {
        return;
    }
    let diagnostic = |death: &Death, range: TextRange, severity, what: &str| {
        death_diagnostic(workspace, file, death, range, severity, what)
    };
    let is_dead = |reference: &str, death: &Death| {
        catalog
            .resolve_card(reference, &[CardKind::Character])
            .is_some_and(|card| card.path == death.card_file.path)
    };
    for death in &deaths {
        if let Some(pov) = &scene.pov
            && is_dead(&pov.text, death)
        {
            diagnostics.push(diagnostic(
                death,
                pov.range,
                Severity::Error,
                "is the point of view of this later scene",
            ));
        }
        for present in &scene.characters {
            if is_dead(&present.text, death) {
                diagnostics.push(diagnostic(
                    death,
                    present.range,
                    Severity::Error,
                    "is listed as present in this later scene",
                ));
            }
        }
    }
    let text = &*file.text;
    let prose_of = prose;
    let prose = prose_of.get();
    // The diagnostics of this scene's appearances, by the dead character's card.
    let mut reported: Vec<(FilePath, usize)> = Vec::new();
    for mention in workspace.mentions(&file.path) {
        let Some(death) = deaths
            .iter()
            .find(|death| death.card_file.path == mention.card)
        else {
            continue;
        };
        let what = match appearance(text, prose, mention.range, mention.possessive) {
            Some(Appearance::Speaks) => "speaks here".to_owned(),
            Some(Appearance::Acts(verb))
                if !DEATH_VERBS.contains(&prose.tokens[verb].text(text))
                    && !tells_of_the_body(text, prose, verb) =>
            {
                let action = TextRange::new(mention.range.start, prose.tokens[verb].range.end);
                format!("acts here (“{}”)", action.slice(text))
            }
            _ => continue,
        };
        diagnostics.push(diagnostic(death, mention.range, Severity::Warning, &what));
        reported.push((death.card_file.path.clone(), diagnostics.len() - 1));
    }
    // A line that falls to a dead character by turn-taking: one slip per
    // conversation. The first line of theirs in it (attributed, or the
    // first by turn) is the diagnostic; the turns after it are its related
    // places, not diagnostics of their own.
    let lines = prose_of.speakers(workspace);
    let conversation_at = |offset: usize| {
        lines
            .iter()
            .find(|line| line.paragraph.start <= offset && offset < line.paragraph.end)
            .map(|line| line.conversation)
    };
    for line in lines {
        let (Speaker::Card(card), How::TurnTaking) = (&line.speaker, line.how) else {
            continue;
        };
        let Some(death) = deaths.iter().find(|death| death.card_file.path == *card) else {
            continue;
        };
        let earlier = reported.iter().find(|(reported_card, at)| {
            reported_card == card
                && conversation_at(diagnostics[*at].range.start) == Some(line.conversation)
        });
        match earlier {
            Some(&(_, at)) => diagnostics[at].related.push(Related {
                path: file.path.clone(),
                range: line.quote,
                message: "this line falls to them too, by turn-taking".to_owned(),
            }),
            None => {
                diagnostics.push(diagnostic(
                    death,
                    line.quote,
                    Severity::Warning,
                    "this line falls to them by turn-taking",
                ));
                reported.push((card.clone(), diagnostics.len() - 1));
            }
        }
    }
}

/// The diagnostic of a dead character's appearance at `range`.
fn death_diagnostic(
    workspace: &Workspace,
    file: &SourceFile,
    death: &Death,
    range: TextRange,
    severity: Severity,
    what: &str,
) -> Diagnostic {
    let catalog = workspace.catalog();
    let mut diagnostic = Diagnostic::new(
        file,
        range,
        severity,
        Code::DeadCharacter,
        format!("{} died in {}, but {what}", death.name, death.scene_label),
    )
    .with_related(
        &death.card_file.path,
        death.died_in.range,
        format!(
            "{}'s card: dead, died in {}",
            death.name, death.died_in.text
        ),
    );
    if let Some(death_scene) = catalog.scene(&death.died_in.text) {
        let range = death_scene
            .scene()
            .and_then(|scene| scene.id_range)
            .unwrap_or_else(|| death_scene.head_range());
        diagnostic = diagnostic.with_related(
            &death_scene.path,
            range,
            format!("the scene where {} dies", death.name),
        );
    }
    diagnostic
}

/// “The Fall” (SCN-the-fall), or the bare id when the scene has no title.
fn scene_label(workspace: &Workspace, id: &str) -> String {
    match workspace.catalog().scene(id).and_then(|file| file.scene()) {
        Some(scene) => super::scene_label(scene),
        None => id.to_owned(),
    }
}

fn check_death_scene_is_in_outline(
    workspace: &Workspace,
    file: &SourceFile,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(card) = file.card() else { return };
    let catalog = workspace.catalog();
    let Some(died_in) = &card.died_in else { return };
    if card.status != LifeStatus::Dead
        || catalog.outline().is_none()
        || catalog.scene_files(&died_in.text).is_empty()
        || catalog.outline_position(&died_in.text).is_some()
    {
        return;
    }
    diagnostics.push(Diagnostic::new(
        file,
        died_in.range,
        Severity::Warning,
        Code::DeadCharacter,
        format!(
            "{} is not in the outline, so no scene can be said to come after {}'s death: add it to the outline",
            died_in.text,
            card.display_name()
        ),
    ));
}

/// For a scene: every dead character, whether their death comes before this
/// scene, and what the messages quote. For a card: whether its death scene
/// is in the outline.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    let catalog = workspace.catalog();
    match &file.content {
        FileContent::Scene(scene) => {
            let position = catalog.outline_position(&scene.id);
            for (path, card) in catalog.cards() {
                if card.status != LifeStatus::Dead {
                    continue;
                }
                let Some(died_in) = &card.died_in else {
                    continue;
                };
                let before = match (catalog.outline_position(&died_in.text), position) {
                    (Some(death), Some(here)) => death < here,
                    _ => false,
                };
                (path, card.kind, died_in, before).hash(hasher);
                if before {
                    scene_label(workspace, &died_in.text).hash(hasher);
                    catalog
                        .scene(&died_in.text)
                        .map(|death| {
                            death
                                .scene()
                                .and_then(|scene| scene.id_range)
                                .unwrap_or_else(|| death.head_range())
                        })
                        .hash(hasher);
                }
            }
        }
        FileContent::Card(card) => {
            catalog.outline().is_some().hash(hasher);
            if let Some(died_in) = &card.died_in {
                catalog
                    .outline_position(&died_in.text)
                    .is_some()
                    .hash(hasher);
            }
        }
        _ => {}
    }
}

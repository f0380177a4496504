//! `presence`: who is in a scene, held to its `characters:` list.
//!
//! - A character who speaks or acts in the narration (as `appearance` reads
//!   it: not in dialogue, memory, a dream, a letter or a hypothesis) but is
//!   neither listed nor the point of view, and has not arrived in the scene
//!   (an entrance before or at that moment: "Tomas came in", "Tomas
//!   arrived"): a warning at the first such sentence, with a quick fix that
//!   adds them to the list.
//! - A listed character a scene of 300 words or more never names (the point
//!   of view aside, who may be "she" throughout): information on the list's
//!   entry.
//!
//! A character dead before the scene is left to `dead-character`.
//!
//! A scene without a `characters:` list says nothing about who is there, so
//! it is not checked.

use std::collections::HashMap;

use super::appearance::{Appearance, appearance};
use super::speakers::{How, Speaker};
use super::{Code, Diagnostic, FileEdit, Fix, FixKind, LazyProse, Severity};
use crate::index::{CardKind, FilePath, SourceFile, Workspace};
use crate::text::TextRange;

/// Scenes shorter than this may leave a listed character unnamed: a
/// fragment, a vignette.
const NAMED_FROM_WORDS: usize = 300;

/// Verbs that bring their subject into the scene.
const ENTRANCES: &[&str] = &[
    "arrived",
    "entered",
    "came",
    "appeared",
    "returned",
    "joined",
    "emerged",
    "reappeared",
];

/// Acts that need no presence: a letter, a message.
const AT_A_DISTANCE: &[&str] = &["wrote", "sent", "signed", "posted", "telephoned", "sealed"];

/// Verbs of motion that are entrances when followed by one of [`INTO`].
const MOTIONS: &[&str] = &[
    "walked", "stepped", "rode", "strode", "ran", "slipped", "burst", "hurried", "limped",
    "stumbled", "climbed", "swept", "marched", "crept", "wandered", "pushed", "ducked",
];
const INTO: &[&str] = &[
    "in", "into", "up", "through", "back", "over", "out", "across",
];

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    lazy: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(scene) = file.scene() else {
        return;
    };
    let Some(last_listed) = scene.characters.last() else {
        return;
    };
    let catalog = workspace.catalog();
    let character = |name: &str| {
        catalog
            .resolve_card(name, &[CardKind::Character])
            .map(|card| card.path.clone())
    };
    let listed: Vec<(FilePath, &crate::index::model::Spanned)> = scene
        .characters
        .iter()
        .filter_map(|entry| Some((character(&entry.text)?, entry)))
        .collect();
    let pov = scene.pov.as_ref().and_then(|pov| character(&pov.text));
    let text = &*file.text;
    let prose = lazy.get();
    let mentions = workspace.mentions(&file.path);
    let mut arrived: HashMap<&FilePath, usize> = HashMap::new();
    // Who has been flagged, and the index of their diagnostic.
    let mut flagged: HashMap<&FilePath, usize> = HashMap::new();
    for mention in mentions {
        if Some(&mention.card) == pov.as_ref()
            || listed.iter().any(|(card, _)| *card == mention.card)
            || flagged.contains_key(&mention.card)
        {
            continue;
        }
        let Some(found) = appearance(text, prose, mention.range, mention.possessive) else {
            continue;
        };
        if let Appearance::Acts(verb) = found
            && is_entrance(text, prose, verb)
        {
            arrived.entry(&mention.card).or_insert(mention.range.start);
            continue;
        }
        if arrived.contains_key(&mention.card) {
            continue;
        }
        if let Appearance::Acts(verb) = found
            && AT_A_DISTANCE.contains(&prose.tokens[verb].text(text))
        {
            continue;
        }
        let Some(card) = catalog.card(&mention.card).and_then(|card| card.card()) else {
            continue;
        };
        if card.kind != CardKind::Character || died_before(workspace, card, scene) {
            continue;
        }
        flagged.insert(&mention.card, diagnostics.len());
        let written = mention.range.slice(text);
        let what = match found {
            Appearance::Speaks => "speaks here".to_owned(),
            Appearance::Acts(verb) => format!(
                "acts here (“{}”)",
                TextRange::new(mention.range.start, prose.tokens[verb].range.end).slice(text)
            ),
        };
        diagnostics.push(
            Diagnostic::new(
                file,
                mention.range,
                Severity::Warning,
                Code::Presence,
                format!(
                    "{} {what} but is not in the scene's `characters` and has not arrived",
                    card.display_name()
                ),
            )
            .with_related(&file.path, last_listed.range, "the scene's `characters`")
            .with_fix(Fix {
                title: format!("Add {written} to the scene's characters"),
                edits: vec![add_to_list(text, last_listed.range, written, &file.path)],
                kind: FixKind::Correction,
            }),
        );
    }
    // A line that falls to an absent character by turn-taking: one slip,
    // however many lines fall to them after it (those are its related
    // places).
    for line in lazy.speakers(workspace) {
        let (Speaker::Card(card), How::TurnTaking) = (&line.speaker, line.how) else {
            continue;
        };
        if Some(card) == pov.as_ref()
            || listed.iter().any(|(listed, _)| listed == card)
            || arrived.get(card).is_some_and(|&at| at < line.quote.start)
        {
            continue;
        }
        if let Some(&at) = flagged.get(card) {
            diagnostics[at].related.push(super::Related {
                path: file.path.clone(),
                range: line.quote,
                message: "this line falls to them too, by turn-taking".to_owned(),
            });
            continue;
        }
        let Some(found) = catalog.card(card).and_then(|file| file.card()) else {
            continue;
        };
        if died_before(workspace, found, scene) {
            continue;
        }
        flagged.insert(card, diagnostics.len());
        diagnostics.push(
            Diagnostic::new(
                file,
                line.quote,
                Severity::Warning,
                Code::Presence,
                format!(
                    "This line falls to {} by turn-taking, but they are not in the scene's `characters` and have not arrived",
                    found.display_name()
                ),
            )
            .with_related(&file.path, last_listed.range, "the scene's `characters`"),
        );
    }
    listed_never_named(file, scene, &listed, pov.as_ref(), mentions, diagnostics);
}

/// A listed character a full scene never names.
fn listed_never_named(
    file: &SourceFile,
    scene: &crate::index::Scene,
    listed: &[(FilePath, &crate::index::model::Spanned)],
    pov: Option<&FilePath>,
    mentions: &[crate::index::Mention],
    diagnostics: &mut Vec<Diagnostic>,
) {
    if scene.word_count < NAMED_FROM_WORDS {
        return;
    }
    for (card, entry) in listed {
        if Some(card) == pov || mentions.iter().any(|mention| &mention.card == card) {
            continue;
        }
        diagnostics.push(Diagnostic::new(
            file,
            entry.range,
            Severity::Information,
            Code::Presence,
            format!(
                "{} is listed in the scene's `characters` but never named in it",
                entry.text
            ),
        ));
    }
}

/// Whether the character died in a scene before this one: then
/// `dead-character` says what is wrong with their appearing.
fn died_before(
    workspace: &Workspace,
    card: &crate::index::Card,
    scene: &crate::index::Scene,
) -> bool {
    let catalog = workspace.catalog();
    card.status == crate::index::LifeStatus::Dead
        && card
            .died_in
            .as_ref()
            .and_then(|died_in| catalog.outline_position(&died_in.text))
            .zip(catalog.outline_position(&scene.id))
            .is_some_and(|(death, here)| death < here)
}

/// Whether the verb at `verb` brings its subject in: "came", "arrived",
/// "walked in", "rode up".
fn is_entrance(text: &str, prose: &crate::prose::Prose, verb: usize) -> bool {
    let word = prose.tokens[verb].text(text);
    if ENTRANCES.contains(&word) {
        return true;
    }
    MOTIONS.contains(&word)
        && prose
            .tokens
            .get(verb + 1)
            .is_some_and(|next| next.is_word() && INTO.contains(&next.text(text)))
}

/// An edit that adds `name` after the list's last entry, in its style:
/// `[Kael, Iria]` becomes `[Kael, Iria, Tomas]`; a block list gets a line.
fn add_to_list(text: &str, last: TextRange, name: &str, path: &FilePath) -> FileEdit {
    let flow = text[last.end..]
        .trim_start_matches(['"', '\''])
        .trim_start()
        .starts_with(']');
    let new_text = if flow {
        format!(", {name}")
    } else {
        let line_start = text[..last.start].rfind('\n').map_or(0, |at| at + 1);
        format!("\n{}{name}", &text[line_start..last.start])
    };
    let at = if flow {
        // After a closing quote of a quoted entry.
        last.end + text[last.end..].len() - text[last.end..].trim_start_matches(['"', '\'']).len()
    } else {
        text[last.end..]
            .find('\n')
            .map_or(text.len(), |at| last.end + at)
    };
    FileEdit {
        path: path.clone(),
        range: TextRange::new(at, at),
        new_text,
    }
}

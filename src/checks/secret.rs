//! `secret`: who may know what. A scene's `tracks:` introduces a secret with
//! the words that give it away and who knows it (`secret: Tomas is the
//! heir`, `words: [heir]`, `known_by: [Iria]`); a later scene's entry for
//! the same secret with `known_by: [Kael]` is where Kael learns it. A
//! character who speaks those words before learning the secret (in a line
//! of dialogue `speakers` gives them: attributed, by an action beat or by
//! turn-taking; every quotation of its paragraph, both halves of a split
//! speech) knows too much, too soon. A scene's `learns: [Kael: Tomas
//! is the heir]` (or `learns: [Tomas is the heir]` for its point of view)
//! says the same as that `known_by`. "Before" is story time when both
//! scenes have whole dates (the story clock), else outline order. Said at the word, once per
//! character and secret in a scene, as information: a character may guess.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use super::possession::object_key;
use super::speakers::Speaker;
use super::{Code, Diagnostic, LazyProse, Severity};
use crate::index::tracks::Tracked;
use crate::index::{CardKind, FilePath, SourceFile, Workspace};
use crate::prose::TokenKind;
use crate::text::TextRange;

/// A secret as it stands where the scene begins (or within it).
struct Secret {
    key: String,
    name: String,
    words: Vec<String>,
    /// Who knows it by this scene, this scene's learners included.
    knowers: HashSet<FilePath>,
    /// Where each character still to learn it does, for the message.
    learned_later: Vec<(FilePath, String)>,
}

fn secrets(workspace: &Workspace, file: &SourceFile) -> Vec<Secret> {
    let Some(scene) = file.scene() else {
        return Vec::new();
    };
    let catalog = workspace.catalog();
    let character = |name: &str| {
        catalog
            .resolve_card(name, &[CardKind::Character])
            .map(|card| card.path.clone())
    };
    let here = catalog.outline_position(&scene.id);
    let clock = workspace.clock();
    let here_when = clock.when(scene);
    let mut found: Vec<Secret> = Vec::new();
    let tracked = catalog.tracking().tracked.iter();
    for (at, tracked_file) in tracked {
        let Some(tracked_scene) = tracked_file.scene() else {
            continue;
        };
        // By story time when both scenes have whole dates (a flashback may
        // come later in the outline and still be before the learning),
        // else by the outline.
        let now_or_before = match (here_when, clock.when(tracked_scene)) {
            (Some(here), Some(then)) => then.earliest <= here.latest,
            _ => here.is_some_and(|here| *at <= here),
        };
        for track in &tracked_scene.tracks {
            let Tracked::Secret {
                name,
                words,
                known_by,
            } = &track.tracked
            else {
                continue;
            };
            let key = object_key(&name.text);
            let index = match found.iter().position(|secret| secret.key == key) {
                Some(index) => {
                    found[index].words.extend(words.iter().cloned());
                    index
                }
                None if now_or_before => {
                    found.push(Secret {
                        key,
                        name: name.text.clone(),
                        words: words.clone(),
                        knowers: HashSet::new(),
                        learned_later: Vec::new(),
                    });
                    found.len() - 1
                }
                None => continue,
            };
            let label = super::scene_label(tracked_scene);
            for who in known_by.iter().filter_map(|who| character(&who.text)) {
                if now_or_before {
                    found[index].knowers.insert(who);
                } else {
                    found[index].learned_later.push((who, label.clone()));
                }
            }
        }
    }
    found
}

/// A `learns:` entry of this scene that names a secret no scene's
/// `tracks:` introduces: its words are unknown, so nothing can be checked.
fn unknown_learned(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(scene) = file.scene() else { return };
    let introduced = |key: &str| {
        workspace.catalog().tracking().tracked.iter().any(|(_, tracked)| {
            tracked.scene().is_some_and(|tracked| {
                tracked.tracks.iter().any(|track| {
                    !track.learns
                        && matches!(&track.tracked, Tracked::Secret { name, .. } if object_key(&name.text) == key)
                })
            })
        })
    };
    for track in scene.tracks.iter().filter(|track| track.learns) {
        let Tracked::Secret { name, .. } = &track.tracked else {
            continue;
        };
        if !introduced(&object_key(&name.text)) {
            diagnostics.push(Diagnostic::new(
                file,
                name.range,
                Severity::Information,
                Code::Secret,
                format!(
                    "no scene's `tracks:` names the secret “{}”, so the words that give it away are unknown: add `- secret: {}` with its `words:` where it begins",
                    name.text, name.text
                ),
            ));
        }
    }
}

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    lazy: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    unknown_learned(workspace, file, diagnostics);
    let secrets = secrets(workspace, file);
    if secrets.is_empty() {
        return;
    }
    let text = &*file.text;
    let prose = lazy.get();
    let catalog = workspace.catalog();
    let mut said: HashSet<(&FilePath, &str)> = HashSet::new();
    for line in lazy.speakers(workspace) {
        let Speaker::Card(speaker) = &line.speaker else {
            continue;
        };
        // The words of the line: every quotation of its paragraph, the
        // second half of a split one too (`"…," said Brannoc, "…"`, `"…!"
        // roared Brannoc. "…"`).
        let first = prose.token_at(line.quote.start);
        let quoted = prose.tokens[first..]
            .iter()
            .take_while(|token| token.range.start < line.paragraph.end)
            .filter(|token| token.quoted && token.kind != TokenKind::CloseQuote);
        for token in quoted.filter(|token| token.is_word()) {
            let word = token.text(text).to_lowercase();
            for secret in &secrets {
                if secret.knowers.contains(speaker)
                    || !secret.words.contains(&word)
                    || !said.insert((speaker, secret.key.as_str()))
                {
                    continue;
                }
                let who = catalog
                    .card(speaker)
                    .and_then(|card| card.card())
                    .map_or_else(
                        || speaker.to_string(),
                        |card| card.display_name().to_owned(),
                    );
                let when = secret
                    .learned_later
                    .iter()
                    .find(|(learner, _)| learner == speaker)
                    .map_or_else(
                        || "never learns it".to_owned(),
                        |(_, label)| format!("learns it only in {label}"),
                    );
                diagnostics.push(Diagnostic::new(
                    file,
                    TextRange::new(token.range.start, token.range.end),
                    Severity::Information,
                    Code::Secret,
                    format!("{who} speaks of “{}” here, but {when}", secret.name),
                ));
            }
        }
    }
}

/// The tracked scenes (their fingerprint covers every secret).
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    if let Some(scene) = file.scene() {
        workspace.catalog().tracking().fingerprint.hash(hasher);
        // Which tracked scenes are before this one in story time.
        let clock = workspace.clock();
        clock.tracked_times().hash(hasher);
        clock.when(scene).hash(hasher);
    }
}

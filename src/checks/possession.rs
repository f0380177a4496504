//! `possession`: who holds an object, as the scenes' `tracks:` and the
//! cards' `carries:` say, held to the prose.
//!
//! An object's state at the start of a scene comes from every scene before
//! it in outline order: held by someone, or lost, destroyed, left somewhere.
//! In the scene, an object is had by someone when it is theirs ("Tomas's
//! brass key", "his brass key" through `referents`), when they take, hold or
//! use it ("Tomas drew the brass key", "Tomas unlocked the door with the
//! brass key"). Dialogue, memories and hypotheses are not having. Flagged:
//! an object had after it was lost, destroyed or left, and an object had by
//! someone other than its holder, unless the scene itself tracks the
//! object (it changes hands here). Quick fix, when the scene has no
//! `tracks:` yet: record that the holder gave it over here.

use std::hash::{Hash, Hasher};

use aho_corasick::{AhoCorasickBuilder, MatchKind};

use super::appearance::in_memory_clause;
use super::referents::Referents;
use super::{Code, Diagnostic, FileEdit, Fix, FixKind, LazyProse, Severity};
use crate::index::tracks::{Gone, Tracked};
use crate::index::{CardKind, FilePath, Mention, Scene, SourceFile, Workspace};
use crate::prose::verbs::Verbs;
use crate::prose::{self, Prose};
use crate::syntax::YamlKind;
use crate::text::TextRange;

/// Verbs by which a subject has the object that follows them, by lemma
/// (any form: "held", "buttoning", "dragged").
const HOLD_VERBS: &[&str] = &[
    "hold", "draw", "raise", "use", "grip", "carry", "pocket", "lift", "swing", "wear", "clutch",
    "brandish", "take", "grab", "turn", "finger", "wield", "produce", "unwrap", "polish", "button",
    "unbutton", "fasten", "drag", "haul", "hoist", "shoulder", "don",
];

fn is_hold_verb(word: &str) -> bool {
    static HOLD: std::sync::LazyLock<Verbs> = std::sync::LazyLock::new(|| Verbs::of(HOLD_VERBS));
    HOLD.contains(word)
}

/// An object's state where the scene begins.
#[derive(Clone, Debug)]
enum State {
    Held {
        by: FilePath,
        since: String,
    },
    Gone {
        how: Gone,
        since: String,
        entry: (FilePath, TextRange),
    },
}

/// The normal form of an object's name: "The Brass Key" → "brass key".
pub(super) fn object_key(name: &str) -> String {
    let lower = name.trim().to_lowercase();
    for article in ["the ", "a ", "an "] {
        if let Some(rest) = lower.strip_prefix(article) {
            return rest.trim().to_owned();
        }
    }
    lower
}

/// The scenes with `tracks:` before `scene` in outline order, earliest first.
pub(super) fn tracked_before<'a>(
    workspace: &'a Workspace,
    scene: &Scene,
) -> impl Iterator<Item = (usize, &'a SourceFile, &'a Scene)> + 'a {
    let catalog = workspace.catalog();
    let here = catalog.outline_position(&scene.id);
    catalog
        .tracking()
        .tracked
        .iter()
        .take_while(move |(at, _)| here.is_some_and(|here| *at < here))
        .filter_map(|(at, file)| Some((*at, &**file, file.scene()?)))
}

/// Every tracked object's state where `scene` begins.
fn states(workspace: &Workspace, scene: &Scene) -> Vec<(String, String, State)> {
    let catalog = workspace.catalog();
    let character = |name: &str| {
        catalog
            .resolve_card(name, &[CardKind::Character])
            .map(|card| card.path.clone())
    };
    let mut states: Vec<(String, String, State)> = Vec::new();
    let mut set = |name: &str, state: State| {
        let key = object_key(name);
        match states.iter_mut().find(|(known, _, _)| *known == key) {
            Some(slot) => slot.2 = state,
            None => states.push((key, name.trim().to_owned(), state)),
        }
    };
    for (path, card) in catalog.cards() {
        let Some(file) = catalog.card(path) else {
            continue;
        };
        let carried = file
            .front_matter
            .as_ref()
            .and_then(|front| front.get("carries"))
            .map(|entry| &entry.value.kind);
        if card.kind != CardKind::Character {
            continue;
        }
        let Some(YamlKind::Sequence(items)) = carried else {
            continue;
        };
        for item in items {
            if let Some(name) = item.as_scalar_text(&file.text) {
                let since = format!("{}'s card", card.display_name());
                set(
                    name,
                    State::Held {
                        by: path.clone(),
                        since,
                    },
                );
            }
        }
    }
    for (_, file, earlier) in tracked_before(workspace, scene) {
        for track in &earlier.tracks {
            let Tracked::Object { name, holder, gone } = &track.tracked else {
                continue;
            };
            let since = super::scene_label(earlier);
            if let Some(how) = gone {
                let entry = (file.path.clone(), track.range);
                set(
                    &name.text,
                    State::Gone {
                        how: how.clone(),
                        since,
                        entry,
                    },
                );
            } else if let Some(by) = holder.as_ref().and_then(|holder| character(&holder.text)) {
                set(&name.text, State::Held { by, since });
            }
        }
    }
    states
}

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    lazy: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(scene) = file.scene() else { return };
    let states = states(workspace, scene);
    if states.is_empty() {
        return;
    }
    let changes_here: Vec<String> = scene
        .tracks
        .iter()
        .filter_map(|track| match &track.tracked {
            Tracked::Object { name, .. } => Some(object_key(&name.text)),
            Tracked::Wound { .. } | Tracked::Secret { .. } => None,
        })
        .collect();
    let patterns: Vec<&str> = states.iter().map(|(key, _, _)| key.as_str()).collect();
    let Ok(automaton) = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostLongest)
        .build(&patterns)
    else {
        return;
    };
    let text = &*file.text;
    let prose = lazy.get();
    let referents = lazy.referents(workspace);
    let mentions = workspace.mentions(&file.path);
    let catalog = workspace.catalog();
    for found in automaton.find_iter(text) {
        let range = TextRange::new(found.start(), found.end());
        let (key, name, state) = &states[found.pattern().as_usize()];
        if changes_here.contains(key) || !is_prose_word(file, range) {
            continue;
        }
        let Some(by) = possessor(text, prose, referents, mentions, range) else {
            continue;
        };
        let who = catalog.card_name(&by);
        let diagnostic = match state {
            State::Held { by: holder, .. } if *holder == by => continue,
            State::Held { by: holder, since } => {
                let holder_name = catalog.card_name(holder);
                let mut diagnostic = Diagnostic::new(
                    file,
                    range,
                    Severity::Warning,
                    Code::Possession,
                    format!("{holder_name} holds {name} (since {since}), but {who} has it here"),
                );
                if let Some(fix) = record_handover(file, name, &who) {
                    diagnostic = diagnostic.with_fix(fix);
                }
                diagnostic
            }
            State::Gone { how, since, entry } => {
                let what = match how {
                    Gone::Lost => "was lost".to_owned(),
                    Gone::Destroyed => "was destroyed".to_owned(),
                    Gone::LeftAt(place) => format!("was left at {place}"),
                };
                Diagnostic::new(
                    file,
                    range,
                    Severity::Warning,
                    Code::Possession,
                    format!(
                        "{} {what} in {since}, but {who} has it here",
                        capitalised(name)
                    ),
                )
                .with_related(&entry.0, entry.1, format!("{name} {what} here"))
            }
        };
        diagnostics.push(diagnostic);
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Whether `range` lies in the file's prose on word boundaries.
fn is_prose_word(file: &SourceFile, range: TextRange) -> bool {
    let text = &*file.text;
    let before = text[..range.start].chars().next_back();
    let after = text[range.end..].chars().next();
    let bounded =
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric);
    bounded
        && file
            .syntax
            .prose
            .iter()
            .any(|prose| prose.contains_range(range))
}

/// Who has the thing named at `range`: whose it is ("Tomas's", "his"), or
/// who takes, holds or uses it; `None` in dialogue, memory or doubt.
pub(super) fn possessor(
    text: &str,
    prose: &Prose,
    referents: &Referents,
    mentions: &[Mention],
    range: TextRange,
) -> Option<FilePath> {
    let first = prose.token_at(range.start);
    if prose.tokens.get(first)?.quoted || in_memory_clause(text, prose, first, first) {
        return None;
    }
    let word = |index: usize| {
        let token = prose.tokens.get(index)?;
        token.is_word().then(|| token.text(text).to_lowercase())
    };
    let mut before = first.checked_sub(1)?;
    // "Tomas's brass key", "his brass key".
    if let Some(owner) = person_at(text, prose, referents, mentions, before, true) {
        return Some(owner);
    }
    if matches!(word(before).as_deref(), Some("the" | "a" | "an")) {
        before = before.checked_sub(1)?;
    }
    // "drew out the brass key".
    if matches!(word(before).as_deref(), Some("out" | "up" | "off")) {
        before = before.checked_sub(1)?;
    }
    let verb = word(before)?;
    if is_hold_verb(&verb) {
        return person_at(
            text,
            prose,
            referents,
            mentions,
            before.checked_sub(1)?,
            false,
        );
    }
    if verb == "with" {
        let sentence = prose.sentence_index_of(first)?;
        return referents.subject(sentence).cloned();
    }
    None
}

/// The character a name or pronoun at token `index` means: a possessive
/// ("Kael's", "his") when `possessive`, else a subject ("Kael", "he").
pub(super) fn person_at(
    text: &str,
    prose: &Prose,
    referents: &Referents,
    mentions: &[Mention],
    index: usize,
    possessive: bool,
) -> Option<FilePath> {
    let token = prose.tokens.get(index)?;
    // The first person is the narrator: the point of view's character.
    let pronouns: [&str; 3] = if possessive {
        ["his", "her", "my"]
    } else {
        ["he", "she", "i"]
    };
    if pronouns.contains(&token.text(text).to_lowercase().as_str()) {
        return referents.of_pronoun(index).cloned();
    }
    let end = prose::without_possessive(text, token.range).end;
    mentions
        .iter()
        .find(|mention| mention.possessive == possessive && mention.range.end == end)
        .map(|mention| mention.card.clone())
}

/// "Record in tracks that … gave it over here", when the scene has no `tracks:`.
fn record_handover(file: &SourceFile, name: &str, to: &str) -> Option<Fix> {
    let front = file.front_matter.as_ref()?;
    if front.get("tracks").is_some() {
        return None;
    }
    let at = front.content.end;
    Some(Fix {
        title: format!("Record in tracks that {name} goes to {to} here"),
        edits: vec![FileEdit {
            path: file.path.clone(),
            range: TextRange::new(at, at),
            new_text: format!("tracks:\n  - object: {name}\n    given_to: {to}\n"),
        }],
        kind: FixKind::Correction,
    })
}

/// Every scene that tracks something, and every card that carries.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    if file.scene().is_some() {
        workspace.catalog().tracking().fingerprint.hash(hasher);
    }
}

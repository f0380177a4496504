//! `wound`: a wound forgotten before it heals. A scene's `tracks:` gives a
//! character a wound (`wound: left arm`, `character: Kael`, `heals: 3`:
//! healed three scenes later in outline order, or at a `healed: true`
//! entry). In the scenes between, the prose must not use the wounded part
//! as if it were whole: "Kael swung the axe with his left arm", "Kael's left
//! arm hauled the rope", with no sign of the wound in the sentence (pain,
//! a wince, a sling, "despite"). The part is the character's by a
//! possessive ("his", "Kael's", and in the first person "my", the point of
//! view's) that `referents` resolves; the verbs of strain are read in any
//! form ("swung", "swinging").

use std::hash::{Hash, Hasher};

use aho_corasick::AhoCorasickBuilder;

use super::possession::{person_at, tracked_before};
use super::{Code, Diagnostic, LazyProse, Severity};
use crate::index::tracks::Tracked;
use crate::index::{CardKind, FilePath, SourceFile, Workspace};
use crate::prose::verbs::Verbs;
use crate::text::TextRange;

/// Verbs that put a part of the body to hard use, by lemma (any form:
/// "swung", "swinging", "hauls").
const STRAIN: &[&str] = &[
    "swing", "lift", "haul", "heave", "grip", "punch", "climb", "throw", "carry", "pull", "catch",
    "heft", "wrench", "hoist", "strike", "shove", "push", "run", "sprint", "leap", "jump", "kick",
    "raise", "clench", "vault", "grab", "drag", "row", "chop", "hammer",
];

fn is_strain(word: &str) -> bool {
    static VERBS: std::sync::LazyLock<Verbs> = std::sync::LazyLock::new(|| Verbs::of(STRAIN));
    VERBS.contains(word)
}

/// Words that show the wound is remembered.
const PAIN: &[&str] = &[
    "pain",
    "painful",
    "wince",
    "winced",
    "wincing",
    "ached",
    "aching",
    "hurt",
    "hurting",
    "stiff",
    "bandage",
    "bandaged",
    "sling",
    "despite",
    "stitches",
    "throbbed",
    "throbbing",
    "wound",
    "wounded",
    "injured",
    "bad",
    "good",
    "favoured",
    "favored",
    "tender",
    "sore",
];

/// A wound not yet healed where the scene begins.
struct Open {
    character: FilePath,
    name: String,
    part: String,
    since: String,
    entry: (FilePath, TextRange),
    heals: u32,
}

fn open_wounds(workspace: &Workspace, file: &SourceFile) -> Vec<Open> {
    let Some(scene) = file.scene() else {
        return Vec::new();
    };
    let catalog = workspace.catalog();
    let Some(here) = catalog.outline_position(&scene.id) else {
        return Vec::new();
    };
    let character = |name: &str| {
        catalog
            .resolve_card(name, &[CardKind::Character])
            .map(|card| card.path.clone())
    };
    let mut open: Vec<Open> = Vec::new();
    let mut visit = |at: usize, scene_file: &SourceFile, tracked_scene: &crate::index::Scene| {
        for track in &tracked_scene.tracks {
            let Tracked::Wound {
                part,
                character: whose,
                heals,
                healed,
            } = &track.tracked
            else {
                continue;
            };
            let Some(card) = character(&whose.text) else {
                continue;
            };
            let part = part.text.to_lowercase();
            if *healed {
                open.retain(|wound| !(wound.character == card && wound.part == part));
                continue;
            }
            let Some(heals) = heals else { continue };
            if at + (*heals as usize) > here && at < here {
                open.push(Open {
                    character: card,
                    name: whose.text.clone(),
                    part,
                    since: super::scene_label(tracked_scene),
                    entry: (scene_file.path.clone(), track.range),
                    heals: *heals,
                });
            }
        }
    };
    for (at, earlier_file, earlier) in tracked_before(workspace, scene) {
        visit(at, earlier_file, earlier);
    }
    // A wound healed in this very scene is healed for it.
    for track in &scene.tracks {
        if let Tracked::Wound {
            part,
            character: whose,
            healed: true,
            ..
        } = &track.tracked
            && let Some(card) = character(&whose.text)
        {
            let part = part.text.to_lowercase();
            open.retain(|wound| !(wound.character == card && wound.part == part));
        }
    }
    open
}

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    lazy: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let open = open_wounds(workspace, file);
    if open.is_empty() {
        return;
    }
    let parts: Vec<&str> = open.iter().map(|wound| wound.part.as_str()).collect();
    let Ok(automaton) = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .build(&parts)
    else {
        return;
    };
    let text = &*file.text;
    let prose = lazy.get();
    let referents = lazy.referents(workspace);
    let mentions = workspace.mentions(&file.path);
    for found in automaton.find_iter(text) {
        let wound = &open[found.pattern().as_usize()];
        let range = TextRange::new(found.start(), found.end());
        let first = prose.token_at(range.start);
        let Some(token) = prose.tokens.get(first) else {
            continue;
        };
        if token.range.start != range.start || token.quoted {
            continue;
        }
        // The part is theirs: "his left arm", "Kael's left arm".
        let owner = first
            .checked_sub(1)
            .and_then(|before| person_at(text, prose, referents, mentions, before, true));
        if owner.as_ref() != Some(&wound.character) {
            continue;
        }
        let Some(sentence) = prose.sentence_of(first) else {
            continue;
        };
        let words: Vec<String> = prose
            .sentence_tokens(sentence)
            .iter()
            .filter(|token| token.is_word())
            .map(|token| token.text(text).to_lowercase())
            .collect();
        let Some(strain) = words.iter().find(|word| is_strain(word)) else {
            continue;
        };
        if words.iter().any(|word| PAIN.contains(&word.as_str())) {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                file,
                range,
                Severity::Warning,
                Code::Wound,
                format!(
                    "{}'s {} was wounded in {} and heals {} scenes later, but here it is used as if whole (“{strain}”)",
                    wound.name, wound.part, wound.since, wound.heals
                ),
            )
            .with_related(&wound.entry.0, wound.entry.1, format!("the wound to {}'s {}", wound.name, wound.part)),
        );
    }
}

/// Every wound tracked before this scene (the tracked scenes' fingerprint,
/// which `possession` hashes too, covers them).
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    if file.scene().is_some() {
        workspace.catalog().tracking().fingerprint.hash(hasher);
    }
}

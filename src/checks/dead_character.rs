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

use super::{Code, Diagnostic, LazyProse, Severity, speech};
use crate::index::{CardKind, FileContent, LifeStatus, SourceFile, Workspace};
use crate::prose::Prose;
use crate::text::TextRange;

/// Words that turn what follows in the sentence into memory, mourning or report.
const MEMORY_CUES: &[&str] = &[
    "remembered",
    "remember",
    "remembers",
    "remembering",
    "recalled",
    "recall",
    "recalls",
    "memory",
    "memories",
    "thought",
    "thinking",
    "dreamed",
    "dreamt",
    "dream",
    "imagined",
    "pictured",
    "missed",
    "mourned",
    "mourning",
    "grieved",
    "grieving",
    "grave",
    "tomb",
    "buried",
    "ghost",
    "late",
    "once",
    "used",
    "years",
    "ago",
];

/// Words after the name that put its clause in the past of the story.
const DATING_CUES: &[&str] = &["ago", "once", "formerly"];

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
    let Some(position) = catalog.outline_position(&scene.id) else {
        return;
    };
    let deaths: Vec<Death> = catalog
        .cards()
        .filter_map(|(path, card)| {
            if card.kind != CardKind::Character || card.status != LifeStatus::Dead {
                return None;
            }
            let died_in = card.died_in.as_ref()?;
            let death_position = catalog.outline_position(&died_in.text)?;
            if death_position >= position {
                return None;
            }
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
    let prose = prose.get();
    for mention in workspace.mentions(&file.path) {
        let Some(death) = deaths
            .iter()
            .find(|death| death.card_file.path == mention.card)
        else {
            continue;
        };
        if mention.possessive {
            continue;
        }
        let Some((first, last)) = mention_tokens(prose, mention.range) else {
            continue;
        };
        if prose.tokens[first].quoted || in_memory_clause(text, prose, first, last) {
            continue;
        }
        let what = if speech::is_speaker(text, prose, first, last) {
            "speaks here".to_owned()
        } else if let Some(verb) = speech::action_verb(text, prose, last)
            && !DEATH_VERBS.contains(&prose.tokens[verb].text(text))
        {
            let action = TextRange::new(mention.range.start, prose.tokens[verb].range.end);
            format!("acts here (“{}”)", action.slice(text))
        } else {
            continue;
        };
        diagnostics.push(diagnostic(death, mention.range, Severity::Warning, &what));
    }
}

/// The first and last token of a mention, when it lines up with whole words.
fn mention_tokens(prose: &Prose, range: TextRange) -> Option<(usize, usize)> {
    let first = prose.token_at(range.start);
    let last = prose.token_at(range.end).checked_sub(1)?;
    let aligned = prose.tokens.get(first)?.range.start == range.start
        && prose.tokens.get(last)?.range.end == range.end;
    (aligned && first <= last).then_some((first, last))
}

/// Whether the mention at tokens `first..=last` sits in a clause of memory:
/// a word of memory earlier in its clause ("Kael remembered Tomas on the
/// wall"), or a word that dates it later in the clause ("Tomas laid these
/// stones forty years ago").
fn in_memory_clause(text: &str, prose: &Prose, first: usize, last: usize) -> bool {
    let Some(sentence) = prose.sentence_of(first) else {
        return false;
    };
    let lower = |index: usize| prose.tokens[index].text(text).to_lowercase();
    let mut index = first;
    while index > sentence.tokens.start {
        index -= 1;
        if is_clause_break(text, prose, index) {
            break;
        }
        if prose.tokens[index].is_word() && MEMORY_CUES.contains(&lower(index).as_str()) {
            return true;
        }
    }
    for index in last + 1..sentence.tokens.end {
        if is_clause_break(text, prose, index) {
            break;
        }
        if prose.tokens[index].is_word() && DATING_CUES.contains(&lower(index).as_str()) {
            return true;
        }
    }
    false
}

/// Where one clause ends and the next begins: `;`, `:`, a dash, or a
/// conjunction after a comma ("…, and then Tomas walked").
fn is_clause_break(text: &str, prose: &Prose, index: usize) -> bool {
    let token = &prose.tokens[index];
    if [';', ':', '—', '–']
        .iter()
        .any(|&c| token.is_punct(text, c))
    {
        return true;
    }
    token.is_word()
        && matches!(
            token.text(text),
            "and" | "but" | "then" | "so" | "yet" | "while"
        )
        && index
            .checked_sub(1)
            .is_some_and(|before| prose.tokens[before].is_punct(text, ','))
}

/// “The Fall” (SCN-the-fall), or the bare id when the scene has no title.
fn scene_label(workspace: &Workspace, id: &str) -> String {
    let title = workspace
        .catalog()
        .scene(id)
        .and_then(|file| file.scene())
        .and_then(|scene| scene.title.clone());
    match title {
        Some(title) => format!("“{title}” ({id})"),
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

//! B2, cast function (`cast-function`), on the character cards, each
//! information:
//! - a card no scene mentions, lists or tells from;
//! - a character who carries the book (in a fifth of its scenes, three at
//!   least) and then goes unseen, unheard and unspoken of for more than
//!   `[health] cast_gap` (40%) of its words and three scenes at least,
//!   between two appearances or after the last. A character whose card
//!   says they died is missed only before their death scene (`died_in`), or
//!   not at all when it does not say where (`status: dead`, `died`).
//!
//! A character is in a scene when it is told from them, lists them, or
//! names them, speaking or spoken of: what they do there is not weighed
//! (a listed character the scene never names is `presence`'s).

use std::collections::HashMap;

use super::{CheckResult, Finding, Placed, Shape};
use crate::checks::{Code, Severity};
use crate::index::config::HealthConfig;
use crate::index::{CardKind, LifeStatus, Workspace};

/// Scenes a character must be in to carry the book, at least.
const CARRIES: usize = 3;
/// Scenes a stretch without a character must hold, at least.
const MISSED_SCENES: usize = 3;

pub(super) fn check(workspace: &Workspace, shape: &Shape, settings: &HealthConfig) -> CheckResult {
    let mut result = CheckResult::new("B2", "Cast function", Code::CastFunction);
    let catalog = workspace.catalog();
    let characters: Vec<_> = catalog
        .cards()
        .filter(|(_, card)| card.kind == CardKind::Character)
        .collect();
    if shape.scenes.is_empty() || characters.is_empty() {
        result.summary = "not judged: no scenes or no character cards".into();
        return result;
    }
    let carries = (shape.scenes.len() / 5).max(CARRIES);
    // Each card's scenes, in the book's order, from one pass over the scenes.
    let mut scenes_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (at, scene) in shape.scenes.iter().enumerate() {
        let cast = &scene.measures.cast;
        let cards = cast
            .pov
            .iter()
            .chain(&cast.speaks)
            .chain(&cast.present)
            .chain(cast.mentioned.keys());
        for card in cards {
            let list = scenes_of.entry(&**card).or_default();
            if list.last() != Some(&at) {
                list.push(at);
            }
        }
    }
    let mut good = 0;
    for (path, card) in &characters {
        let Some(file) = catalog.card(path) else {
            continue;
        };
        let name = card
            .name
            .as_ref()
            .map_or_else(|| card.id.clone(), |name| name.text.clone());
        let at = Some((file.path.clone(), file.head_range()));
        let key: &str = path;
        // The character's scenes, as indices in the book's order.
        let scenes = scenes_of.get(key).map_or(&[][..], Vec::as_slice);
        let finding = if scenes.is_empty() {
            Some(Finding {
                message: format!("no scene mentions {name}, lists them or is told from them"),
                recommendation: format!("Give {name} a part in a scene, or retire the card."),
                severity: Severity::Information,
                at,
                related: Vec::new(),
            })
        } else if scenes.len() >= carries
            && let Some(alive) = alive_until(card, shape)
        {
            gone(&name, shape, scenes, settings.cast_gap, alive)
                .map(|finding| Finding { at, ..finding })
        } else {
            None
        };
        match finding {
            Some(finding) => result.findings.push(finding),
            None => good += 1,
        }
    }
    result.score = CheckResult::score_of(good, characters.len());
    result.summary = format!(
        "{good} of {} characters have a part: in the scenes, and not gone for long{}",
        characters.len(),
        shape.written_so_far()
    );
    result
}

/// Up to which scene (an index in the book's order, excluded) the
/// character may be missed: the whole book while they live, their death
/// scene (`died_in`) when the card names it; `None` when the card says they
/// died but not where (`status: dead`, `died`): nobody misses them then.
fn alive_until(card: &crate::index::Card, shape: &Shape) -> Option<usize> {
    if let Some(scene) = &card.died_in {
        return shape
            .scenes
            .iter()
            .position(|placed| placed.id == scene.text)
            .map(|at| at + 1);
    }
    let died = card.status == LifeStatus::Dead || card.died.is_some();
    (!died).then_some(shape.scenes.len())
}

/// The longest stretch of the book after a character's first scene
/// without them (`scenes`, indices in the book's order), when it is longer
/// than `gap` percent and three scenes.
fn gone(name: &str, shape: &Shape, scenes: &[usize], gap: f64, alive: usize) -> Option<Finding> {
    let book = &shape.scenes;
    let end = book.len();
    let died = alive < end;
    let mut longest: Option<(f64, &Placed, Option<&Placed>)> = None;
    // After the last scene of a character who died, nobody misses them.
    let bounds = scenes
        .windows(2)
        .map(|pair| (pair[0], Some(pair[1])))
        .chain(scenes.last().filter(|_| !died).map(|&last| (last, None)));
    // After their death scene, nobody misses them either.
    for (before, after) in bounds.filter(|(_, after)| after.is_none_or(|after| after < alive)) {
        let missed = after.unwrap_or(end) - before - 1;
        let until = after.map_or(book[end - 1].to, |after| book[after].from);
        let stretch = until - book[before].to;
        if missed >= MISSED_SCENES && longest.is_none_or(|(known, ..)| stretch > known) {
            longest = Some((stretch, &book[before], after.map(|after| &book[after])));
        }
    }
    let (stretch, before, after) = longest?;
    if stretch <= gap {
        return None;
    }
    let mut related = vec![before.related(format!("{name} is last here"))];
    let message = match after {
        Some(after) => {
            related.push(after.related(format!("{name} is back here")));
            format!(
                "{name} is not seen, heard or spoken of from {} to {}: {stretch:.0}% of the book",
                before.label(),
                after.label()
            )
        }
        None => format!(
            "{name} is not seen, heard or spoken of after {}: the last {stretch:.0}% of the book",
            before.label()
        ),
    };
    Some(Finding {
        message,
        recommendation: format!(
            "Keep {name} in the reader's mind: a mention, a letter, someone who asks after them."
        ),
        severity: Severity::Information,
        at: None,
        related,
    })
}

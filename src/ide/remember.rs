//! "Remember this": a passage the writer selects becomes a decision of the
//! knowledge base. Its category and key come from what the passage is
//! about: the one character it names (a `character` decision keyed by the
//! card's name), else the one place (`world`), else a `constraint` of the
//! scene keyed by the passage's first words.

use std::collections::BTreeSet;

use crate::index::{CardKind, SourceFile, Workspace};
use crate::kb::Decision;
use crate::text::TextRange;

/// How many words of the passage name a `constraint` decision.
const KEY_WORDS: usize = 6;

/// The decision `range` of `file` would make, or `None` for an empty one.
pub fn decision(
    workspace: &Workspace,
    file: &SourceFile,
    range: TextRange,
    at: &str,
) -> Option<Decision> {
    let value = file
        .text
        .get(range.start..range.end)?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if value.is_empty() {
        return None;
    }
    let catalog = workspace.catalog();
    let mut characters = BTreeSet::new();
    let mut places = BTreeSet::new();
    for mention in workspace.mentions(&file.path) {
        if mention.range.start < range.start || mention.range.end > range.end {
            continue;
        }
        let Some(card) = catalog.card(&mention.card).and_then(|card| card.card()) else {
            continue;
        };
        let Some(name) = card.name.as_ref().map(|name| name.text.clone()) else {
            continue;
        };
        match card.kind {
            CardKind::Character => characters.insert(name),
            CardKind::Location => places.insert(name),
            CardKind::Other => false,
        };
    }
    let scene = file.scene().map(|scene| scene.id.clone());
    let (category, key) = if characters.len() == 1 {
        ("character", characters.pop_first()?)
    } else if characters.is_empty() && places.len() == 1 {
        ("world", places.pop_first()?)
    } else {
        let words: Vec<&str> = value.split_whitespace().take(KEY_WORDS).collect();
        let about = words.join(" ");
        let key = match &scene {
            Some(scene) => format!("{scene}: {about}"),
            None => about,
        };
        ("constraint", key)
    };
    Some(Decision {
        category: category.to_owned(),
        key,
        value,
        source: Some(format!("the writer, from {}", file.path)),
        scene,
        created_at: Some(at.to_owned()),
        updated_at: Some(at.to_owned()),
        promoted: false,
    })
}

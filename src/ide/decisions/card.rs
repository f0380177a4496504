//! A decision against its character's card: other eyes or hair, a death
//! (or a life) the card does not have, another age, another value of any
//! other field of its front matter ("his rank is sergeant" against `rank:
//! captain`). "Promote to card"
//! writes the decision's value into the card's front matter (a death adds
//! `died_in:` the decision's scene where the card has none).

use super::claims::{self, Claim, Subject, Value, card_name};
use super::{CONTRADICTS_CARD, Contradiction, Other, Side, claim_said};
use crate::checks::{FileEdit, Fix, FixKind};
use crate::index::SourceFile;

/// Every contradiction between the decision of `side`, which `said`, and
/// its card.
pub(super) fn against_card(side: &Side, said: &[Claim]) -> Vec<Contradiction> {
    let workspace = side.workspace;
    let mut found = Vec::new();
    for claim in said {
        let card = match &claim.subject {
            Subject::Colour(card, _)
            | Subject::Life(card)
            | Subject::Age(card)
            | Subject::Field(card, _) => card,
            _ => continue,
        };
        let Some(card_file) = workspace.catalog().card(card) else {
            continue;
        };
        for fact in claims::of_card(card_file) {
            if fact.subject != claim.subject || fact.value.agrees(&claim.value) {
                continue;
            }
            let message = format!(
                "{}, but the card says {}",
                claim_said(workspace, claim),
                fact.value.said(workspace)
            );
            let mut edits = match &claim.value {
                Value::Dead(dead) => set_status(
                    card_file,
                    *dead,
                    side.decision().scene.as_deref().filter(|_| *dead),
                ),
                value => vec![FileEdit {
                    path: card_file.path.clone(),
                    range: fact.range,
                    new_text: value.said(workspace),
                }],
            };
            edits.push(side.promote());
            let promotion = Fix {
                title: format!("Promote to card: {}", card_name(workspace, card)),
                edits,
                kind: FixKind::Correction,
            };
            found.push(side.contradiction(
                CONTRADICTS_CARD,
                message,
                Other {
                    path: &card_file.path,
                    range: fact.range,
                    label: "what the card says",
                },
                promotion,
                "Keep the card",
            ));
        }
    }
    found
}

/// The card's `status:` set (written where it is missing), and for a death
/// `died_in:` the scene where the card names none.
fn set_status(card_file: &SourceFile, dead: bool, died_in: Option<&str>) -> Vec<FileEdit> {
    let status = if dead { "dead" } else { "alive" };
    let front = card_file.front_matter.as_ref();
    let mut edits = Vec::new();
    match front.and_then(|front| front.get("status")) {
        Some(entry) => edits.push(FileEdit {
            path: card_file.path.clone(),
            range: entry.value.range,
            new_text: status.to_owned(),
        }),
        None => edits.push(insert_field(card_file, &format!("status: {status}"))),
    }
    if let Some(scene) = died_in
        && front.and_then(|front| front.get("died_in")).is_none()
    {
        edits.push(insert_field(card_file, &format!("died_in: {scene}")));
    }
    // Two insertions at one place keep their order when merged.
    if edits.len() == 2 && edits[0].range == edits[1].range {
        let second = edits.pop().expect("two edits");
        edits[0].new_text.push_str(&second.new_text);
    }
    edits
}

/// A new `key: value` line at the end of the card's front matter.
fn insert_field(card_file: &SourceFile, line: &str) -> FileEdit {
    let at = card_file
        .front_matter
        .as_ref()
        .map_or(0, |front| front.content.end);
    let text = &card_file.text;
    let needs_newline = at > 0 && !text[..at].ends_with('\n');
    FileEdit {
        path: card_file.path.clone(),
        range: crate::text::TextRange::empty(at),
        new_text: format!("{}{line}\n", if needs_newline { "\n" } else { "" }),
    }
}

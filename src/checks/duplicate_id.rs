//! `duplicate-id`: two files claim the same scene id or card id, or two cards
//! the same name or alias (a name must point at one card, or mentions and
//! references become guesses). Reported on every file involved, each pointing
//! at the others. Also: one card that lists the same name twice (an alias
//! equal to its name), and an outline that lists a scene twice (story order
//! then uses the first place; the later ones are reported).

use super::{Code, Diagnostic, Severity};
use crate::index::{FileContent, FilePath, SourceFile, Workspace};
use crate::text::TextRange;

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let catalog = workspace.catalog();
    match &file.content {
        FileContent::Scene(scene) => {
            let range = scene.id_range.unwrap_or_else(|| file.head_range());
            let message = format!("scene id `{}` is also claimed by", scene.id);
            let scene_id = |other: &SourceFile| {
                other
                    .scene()
                    .and_then(|scene| scene.id_range)
                    .unwrap_or_else(|| other.head_range())
            };
            report(
                workspace,
                file,
                catalog.scene_files(&scene.id),
                range,
                &message,
                scene_id,
                diagnostics,
            );
        }
        FileContent::Card(card) => {
            let range = card
                .name
                .as_ref()
                .map_or_else(|| file.head_range(), |name| name.range);
            let message = format!("card id `{}` is also used by", card.id);
            let card_name = |other: &SourceFile| {
                other
                    .card()
                    .and_then(|card| card.name.as_ref())
                    .map_or_else(|| other.head_range(), |name| name.range)
            };
            report(
                workspace,
                file,
                catalog.cards_with_id(&card.id),
                range,
                &message,
                card_name,
                diagnostics,
            );
            for (index, name) in card.names().enumerate() {
                if let Some(first) = card
                    .names()
                    .take(index)
                    .find(|earlier| earlier.text == name.text)
                {
                    diagnostics.push(
                        Diagnostic::new(
                            file,
                            name.range,
                            Severity::Error,
                            Code::DuplicateId,
                            format!("“{}” is already a name of this card", name.text),
                        )
                        .with_related(
                            &file.path,
                            first.range,
                            "first given here",
                        ),
                    );
                    continue;
                }
                let message = format!("the name “{}” also belongs to", name.text);
                let same_name = |other: &SourceFile| {
                    other
                        .card()
                        .and_then(|card| {
                            card.names().find(|other_name| other_name.text == name.text)
                        })
                        .map_or_else(|| other.head_range(), |other_name| other_name.range)
                };
                report(
                    workspace,
                    file,
                    catalog.cards_named(&name.text),
                    name.range,
                    &message,
                    same_name,
                    diagnostics,
                );
            }
        }
        FileContent::Outline(outline) => {
            let mut first_place = std::collections::HashMap::new();
            for entry in &outline.entries {
                match first_place.get(entry.scene_id.as_str()) {
                    None => {
                        first_place.insert(entry.scene_id.as_str(), entry.id_range);
                    }
                    Some(first) => {
                        let line = file.line_index.line_of(first.start) + 1;
                        diagnostics.push(
                            Diagnostic::new(
                                file,
                                entry.id_range,
                                Severity::Error,
                                Code::DuplicateId,
                                format!(
                                    "`{}` is already in the outline (line {line}); story order uses that first place",
                                    entry.scene_id
                                ),
                            )
                            .with_related(&file.path, *first, "first listed here"),
                        );
                    }
                }
            }
        }
        _ => {}
    }
}

fn report(
    workspace: &Workspace,
    file: &SourceFile,
    claimants: &[FilePath],
    range: TextRange,
    message: &str,
    claim_in: impl Fn(&SourceFile) -> TextRange,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let others: Vec<&FilePath> = claimants
        .iter()
        .filter(|path| **path != file.path)
        .collect();
    if others.is_empty() {
        return;
    }
    let listed: Vec<&str> = others.iter().map(|path| &***path).collect();
    let mut diagnostic = Diagnostic::new(
        file,
        range,
        Severity::Error,
        Code::DuplicateId,
        format!("{message} {}", listed.join(", ")),
    );
    for other in others {
        let other_range = workspace
            .file(other)
            .map_or(TextRange::empty(0), |other| claim_in(other));
        diagnostic = diagnostic.with_related(other, other_range, "also claimed here");
    }
    diagnostics.push(diagnostic);
}

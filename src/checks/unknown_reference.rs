//! `unknown-reference`: a scene's `pov`, `location` or `characters`, or a
//! card's `died_in`, names no known character, location or scene. A
//! character reference matches a character card's name, alias or id; a
//! location matches a location card's name, alias or `LOC-` id.

use super::{Code, Diagnostic, Severity};
use crate::index::model::Spanned;
use crate::index::{CardKind, FileContent, SourceFile, Workspace};

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let catalog = workspace.catalog();
    let mut unknown = |reference: &Spanned, kinds: &[CardKind], what: &str, folder: &str| {
        if catalog.resolve_card(&reference.text, kinds).is_none() {
            let message = format!(
                "“{}” is not a known {what}: add a card under {folder}/ or use a name or alias from one",
                reference.text
            );
            diagnostics.push(Diagnostic::new(
                file,
                reference.range,
                Severity::Error,
                Code::UnknownReference,
                message,
            ));
        }
    };
    let paths = &workspace.config().paths;
    match &file.content {
        FileContent::Scene(scene) => {
            if let Some(pov) = &scene.pov {
                unknown(pov, &[CardKind::Character], "character", &paths.characters);
            }
            if let Some(location) = &scene.location {
                unknown(
                    location,
                    &[CardKind::Location],
                    "location",
                    &paths.locations,
                );
            }
            for character in &scene.characters {
                unknown(
                    character,
                    &[CardKind::Character],
                    "character",
                    &paths.characters,
                );
            }
        }
        FileContent::Card(card) => {
            if let Some(died_in) = &card.died_in
                && catalog.scene_files(&died_in.text).is_empty()
            {
                let message = format!(
                    "`died_in: {}` names no scene: use the id of a scene file",
                    died_in.text
                );
                diagnostics.push(Diagnostic::new(
                    file,
                    died_in.range,
                    Severity::Error,
                    Code::UnknownReference,
                    message,
                ));
            }
        }
        _ => {}
    }
}

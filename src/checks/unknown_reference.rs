//! `unknown-reference`: a scene's `pov`, `location`, `characters` or who
//! `learns:` a secret, a card's `died_in`, or a place's `travel:`, names no
//! known character, location or scene. A
//! character reference matches a character card's name, alias or id; a
//! location matches a location card's name, alias or `LOC-` id.

use super::{Code, Diagnostic, Severity};
use crate::index::tracks::Tracked;
use crate::index::{CardKind, FileContent, SourceFile, Workspace};

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let catalog = workspace.catalog();
    let paths = &workspace.config().paths;
    let mut report = |range, message: String| {
        diagnostics.push(Diagnostic::new(
            file,
            range,
            Severity::Error,
            Code::UnknownReference,
            message,
        ));
    };
    match &file.content {
        FileContent::Scene(scene) => {
            let characters = scene.pov.iter().chain(&scene.characters).map(|reference| {
                (
                    reference,
                    CardKind::Character,
                    "character",
                    &paths.characters,
                )
            });
            let location = scene
                .location
                .iter()
                .map(|reference| (reference, CardKind::Location, "location", &paths.locations));
            // Who learns a secret here (`learns: [Kael: …]`).
            let learners = scene
                .tracks
                .iter()
                .filter(|track| track.learns)
                .filter_map(|track| match &track.tracked {
                    Tracked::Secret { known_by, .. } => Some(known_by),
                    _ => None,
                })
                .flatten()
                .map(|reference| {
                    (
                        reference,
                        CardKind::Character,
                        "character",
                        &paths.characters,
                    )
                });
            for (reference, kind, what, folder) in characters.chain(location).chain(learners) {
                if catalog.resolve_card(&reference.text, &[kind]).is_none() {
                    report(
                        reference.range,
                        format!(
                            "“{}” is not a known {what}: add a card under {folder}/ or use a name or alias from one",
                            reference.text
                        ),
                    );
                }
            }
        }
        FileContent::Card(card) => {
            if let Some(died_in) = &card.died_in
                && catalog.scene_files(&died_in.text).is_empty()
            {
                report(
                    died_in.range,
                    format!(
                        "`died_in: {}` names no scene: use the id of a scene file",
                        died_in.text
                    ),
                );
            }
            for road in &card.travel {
                if catalog
                    .resolve_card(&road.to.text, &[CardKind::Location])
                    .is_none()
                {
                    report(
                        road.to.range,
                        format!(
                            "`travel:` names “{}”, which is not a known location: add a card under {}/ or use a name or alias from one",
                            road.to.text, paths.locations
                        ),
                    );
                }
            }
        }
        _ => {}
    }
}

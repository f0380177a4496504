//! `travel-time`: a character is somewhere too soon. A character present in
//! a dated scene (as `pov` or in `characters`) was last, in story time, at
//! another place whose fastest known way here (location cards' `travel:`,
//! through the places between) takes longer than the time between the two
//! scenes can be: from the earliest the first can begin to the latest the
//! second can end, by their dates and times of day. Places with no known
//! way between them, and scenes without a whole date, say nothing; two
//! scenes at the same written moment are `two-places`. Reported at the
//! character's entry, with the earlier scene as related information.

use std::hash::{Hash, Hasher};

use super::{Code, Diagnostic, Severity};
use crate::index::calendar::format_duration;
use crate::index::clock::Stop;
use crate::index::tracking::moment;
use crate::index::{CardKind, FilePath, SourceFile, Workspace};

/// Each character present in `file`'s scene, where this scene puts them, and
/// the stop before it with a known place, when this scene has a place too.
fn journeys<'a>(
    workspace: &'a Workspace,
    file: &'a SourceFile,
) -> Vec<(FilePath, &'a Stop, &'a Stop)> {
    let Some(scene) = file.scene() else {
        return Vec::new();
    };
    let catalog = workspace.catalog();
    let clock = workspace.clock();
    let mut found: Vec<(FilePath, &Stop, &Stop)> = Vec::new();
    for entry in scene.pov.iter().chain(&scene.characters) {
        let Some(card) = catalog.resolve_card(&entry.text, &[CardKind::Character]) else {
            continue;
        };
        if found.iter().any(|(who, _, _)| *who == card.path) {
            continue;
        }
        let itinerary = clock.itinerary(&card.path);
        let Some(here) = itinerary
            .iter()
            .find(|stop| stop.scene.path == file.path && stop.place.is_some())
        else {
            continue;
        };
        if let Some(before) = clock.previous_stop(&card.path, file) {
            found.push((card.path.clone(), before, here));
        }
    }
    found
}

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(scene) = file.scene() else { return };
    let clock = workspace.clock();
    let catalog = workspace.catalog();
    let place_name = |path: &FilePath| catalog.card_name(path);
    for (who, before, here) in journeys(workspace, file) {
        let (Some(from), Some(to)) = (&before.place, &here.place) else {
            continue;
        };
        let Some(earlier) = before.scene.scene() else {
            continue;
        };
        if from == to || (moment(earlier).is_some() && moment(earlier) == moment(scene)) {
            continue;
        }
        let Some(route) = clock.route(from, to) else {
            continue;
        };
        let at_most = here.span.latest - before.span.earliest;
        if route.minutes <= at_most {
            continue;
        }
        let name = catalog.card_name(&who);
        let when = |scene: &crate::index::Scene| {
            let date = scene
                .story_date
                .map(|date| clock.format(&date))
                .unwrap_or_default();
            match &scene.time {
                Some(time) => format!("{date} ({})", time.text),
                None => date,
            }
        };
        let via = if route.via.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = route.via.iter().map(place_name).collect();
            format!(" by way of {}", names.join(", "))
        };
        let gap = if at_most <= 0 {
            "no time at all".to_owned()
        } else {
            format!("at most {}", format_duration(at_most))
        };
        diagnostics.push(
            Diagnostic::new(
                file,
                here.entry,
                Severity::Warning,
                Code::TravelTime,
                format!(
                    "{name} is at {} on {}, but was at {} in {} on {}: {gap} between, and the way takes {}{via}",
                    place_name(to),
                    when(scene),
                    place_name(from),
                    super::scene_label(earlier),
                    when(earlier),
                    format_duration(route.minutes),
                ),
            )
            .with_related(
                &before.scene.path,
                before.entry,
                format!("{name} at {}", place_name(from)),
            ),
        );
    }
}

/// Each present character's previous stop (its scene, place and moment, and
/// the scene's title) and the roads.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    if file.scene().is_none() {
        return;
    }
    workspace.clock().roads_fingerprint().hash(hasher);
    for (who, before, here) in journeys(workspace, file) {
        (
            &who,
            &before.scene.path,
            &before.place,
            before.span,
            before.entry,
        )
            .hash(hasher);
        (&here.place, here.span).hash(hasher);
        if let Some(earlier) = before.scene.scene() {
            (&earlier.title, &earlier.id, &earlier.date, &earlier.time).hash(hasher);
        }
    }
}

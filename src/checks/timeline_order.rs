//! `timeline-order`: a scene's `date` is earlier than the date of a scene
//! before it in outline order. Flashbacks (`flashback: true`) are exempt on
//! both sides: they may go back in time, and they do not move the story's
//! present. Dates compare by the fields both give ("1203-04" is not before
//! "1203-04-13"). Reported at the `date` line, with the later-dated scene as
//! related information.

use std::hash::{Hash, Hasher};

use super::{Code, Diagnostic, Severity};
use crate::index::{SourceFile, Workspace};

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(scene) = file.scene() else { return };
    let (Some(date), Some(written)) = (scene.story_date, &scene.date) else {
        return;
    };
    if scene.flashback {
        return;
    }
    let catalog = workspace.catalog();
    let Some(position) = catalog.outline_position(&scene.id) else {
        return;
    };
    let Some((latest, earlier_id)) = catalog.latest_date_before(position) else {
        return;
    };
    if !date.is_before(latest) {
        return;
    }
    let earlier = catalog.scene(earlier_id);
    let label = match earlier.and_then(|file| file.scene()?.title.clone()) {
        Some(title) => format!("“{title}” ({earlier_id})"),
        None => earlier_id.clone(),
    };
    let mut diagnostic = Diagnostic::new(
        file,
        written.range,
        Severity::Warning,
        Code::TimelineOrder,
        format!(
            "This scene is dated {date}, earlier than {label} on {latest}, which comes before it in the outline; if it is a flashback, add `flashback: true`"
        ),
    );
    if let Some(earlier) = earlier
        && let Some(range) = earlier
            .scene()
            .and_then(|scene| scene.date.as_ref())
            .map(|date| date.range)
    {
        diagnostic = diagnostic.with_related(
            &earlier.path,
            range,
            format!("{earlier_id} is dated {latest}"),
        );
    }
    diagnostics.push(diagnostic);
}

/// The latest date before the scene in story order, and that scene's title
/// and date line.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    let Some(scene) = file.scene() else { return };
    let catalog = workspace.catalog();
    let Some(position) = catalog.outline_position(&scene.id) else {
        return;
    };
    if let Some((date, earlier_id)) = catalog.latest_date_before(position) {
        (date, earlier_id).hash(hasher);
        if let Some(earlier) = catalog.scene(earlier_id).and_then(|file| file.scene()) {
            (&earlier.title, &earlier.date).hash(hasher);
        }
    }
}

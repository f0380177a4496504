//! `timeline-order`: a scene's `date` is earlier than the date of a scene
//! before it in outline order. Flashbacks (`flashback: true`) are exempt on
//! both sides: they may go back in time, and they do not move the story's
//! present. Dates compare by the fields both give ("1203-04" is not before
//! "1203-04-13"). On one day, the times of day compare (`time: dawn` after a
//! scene at dusk), by the windows the story clock gives them: only a time
//! wholly before the other's counts. Reported at the `date` line (or the
//! `time` line), with the later scene as related information.

use std::hash::{Hash, Hasher};

use std::sync::Arc;

use super::{Code, Diagnostic, Severity};
use crate::index::calendar::TimeWindow;
use crate::index::model::StoryDate;
use crate::index::{Scene, SourceFile, Workspace};

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
    let earlier = catalog.scene(earlier_id);
    let label = match earlier.and_then(|file| file.scene()?.title.clone()) {
        Some(title) => format!("“{title}” ({earlier_id})"),
        None => earlier_id.clone(),
    };
    let mut diagnostic = if date.is_before(latest) {
        Diagnostic::new(
            file,
            written.range,
            Severity::Warning,
            Code::TimelineOrder,
            format!(
                "This scene is dated {date}, earlier than {label} on {latest}, which comes before it in the outline; if it is a flashback, add `flashback: true`"
            ),
        )
    } else if let Some((time, earlier_time)) =
        earlier_on_the_same_day(&date, latest, scene, earlier)
    {
        let on = workspace.clock().format(&date);
        Diagnostic::new(
            file,
            scene.time.as_ref().map_or(written.range, |time| time.range),
            Severity::Warning,
            Code::TimelineOrder,
            format!(
                "This scene happens on {on} at {time}, before {label} at {earlier_time} that day, which comes before it in the outline; if it is a flashback, add `flashback: true`"
            ),
        )
    } else {
        return;
    };
    let earlier_scene = earlier.and_then(|file| Some((file, file.scene()?)));
    if let Some((earlier, earlier_scene)) = earlier_scene
        && let Some(written) = &earlier_scene.date
    {
        // The time of day, when that is what this scene is before.
        let (range, note) = match &earlier_scene.time {
            Some(time) if diagnostic.range != written.range => (
                time.range,
                format!("{earlier_id} is at {} on {latest}", time.text),
            ),
            _ => (written.range, format!("{earlier_id} is dated {latest}")),
        };
        diagnostic = diagnostic.with_related(&earlier.path, range, note);
    }
    diagnostics.push(diagnostic);
}

/// When both scenes fall on the same whole date and this one's time of day
/// is wholly before the other's: the two times as written.
fn earlier_on_the_same_day<'a>(
    date: &StoryDate,
    latest: &StoryDate,
    scene: &'a Scene,
    earlier: Option<&'a Arc<SourceFile>>,
) -> Option<(&'a str, &'a str)> {
    if date != latest || date.day.is_none() {
        return None;
    }
    let time = scene.time.as_ref()?;
    let earlier_time = earlier?.scene()?.time.as_ref()?;
    let (window, earlier_window) = (
        TimeWindow::parse(&time.text)?,
        TimeWindow::parse(&earlier_time.text)?,
    );
    window
        .is_before(&earlier_window)
        .then_some((time.text.as_str(), earlier_time.text.as_str()))
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
            (&earlier.title, &earlier.date, &earlier.time).hash(hasher);
        }
    }
}

//! A2, beat progress (`beat-progress`): each beat of the beat sheet that
//! names its scenes lands within its expected share of the book
//! (`stats::beats`), give or take `[health] beat_tolerance` (5) points. A
//! beat outside is information at its heading in the beat sheet (a warning
//! once the sheet says `status: complete`), with its first scene beside it.
//! While outline scenes are unwritten the shares would still move, so
//! nothing is judged.

use super::{CheckResult, Finding, Shape};
use crate::checks::{Code, Related, Severity};
use crate::index::Workspace;
use crate::index::bible::{BibleKind, BibleStatus};
use crate::index::config::HealthConfig;

pub(super) fn check(workspace: &Workspace, shape: &Shape, settings: &HealthConfig) -> CheckResult {
    let mut result = CheckResult::new("A2", "Beat progress", Code::BeatProgress);
    let catalog = workspace.catalog();
    let (Some(file), Some(beats)) = (
        catalog.bible(BibleKind::BeatSheet),
        crate::stats::beats::beat_places(workspace),
    ) else {
        result.summary = "not judged: no beat sheet (Story/Bible/beat-sheet.md)".into();
        return result;
    };
    let Some(bible) = file.bible() else {
        result.summary = "not judged: the beat sheet could not be read".into();
        return result;
    };
    if shape.unwritten > 0 {
        result.summary = format!(
            "not judged: {} outline scene{} not written yet, so the beats' shares would move",
            shape.unwritten,
            if shape.unwritten == 1 { " is" } else { "s are" }
        );
        return result;
    }
    // As `story-bible`: a warning once the writer says the sheet is complete.
    let severity = if bible.status() == BibleStatus::Complete {
        Severity::Warning
    } else {
        Severity::Information
    };
    let placed: Vec<_> = beats.iter().filter(|beat| beat.actual.is_some()).collect();
    let mut good = 0;
    for beat in &placed {
        let (Some((start, end)), Some(off)) = (beat.actual, beat.off_by()) else {
            continue;
        };
        if off <= settings.beat_tolerance {
            good += 1;
            continue;
        }
        let (from, to) = beat.expected;
        let late = start > f64::from(to);
        let heading = bible
            .parts
            .get(beat.number - 1)
            .and_then(|part| part.section)
            .map_or_else(|| file.head_range(), |at| bible.sections[at].heading);
        let related = beat
            .scenes
            .iter()
            .find_map(|id| catalog.scene(id))
            .map(|scene| Related {
                path: scene.path.clone(),
                range: scene.head_range(),
                message: format!("{} starts here", beat.title),
            });
        result.findings.push(Finding {
            message: format!(
                "{} lands at {start:.0}–{end:.0}% of the book; the beat sheet expects it at {from}–{to}% ({off:.1} points {})",
                beat.title,
                if late { "late" } else { "early" },
            ),
            recommendation: if late {
                format!(
                    "Bring {} forward: tighten what comes before it, or move its scene earlier.",
                    beat.title
                )
            } else {
                format!(
                    "Let the book build to {}: more before it, or its scene later.",
                    beat.title
                )
            },
            severity,
            at: Some((file.path.clone(), heading)),
            related: related.into_iter().collect(),
        });
    }
    result.score = CheckResult::score_of(good, placed.len());
    result.summary = if placed.is_empty() {
        "not judged: no beat names a scene of the outline yet".into()
    } else {
        format!(
            "{good} of {} placed beats land within their share (±{} points)",
            placed.len(),
            settings.beat_tolerance
        )
    };
    result
}

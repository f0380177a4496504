//! A2, beat progress (`beat-progress`): each beat of the beat sheet that
//! names its scenes lands within its expected share of the book
//! (`stats::beats`), give or take `[health] beat_tolerance` (5) points. A
//! beat outside is information at its heading in the beat sheet (a warning
//! once the sheet says `status: complete`), with its first scene beside it.
//! While outline scenes are unwritten, a partial draft is judged against
//! an estimate of the whole book: the scenes not written yet counted at the
//! written ones' mean length, and only the beats whose scenes all stand
//! before the first unwritten scene (where the words before them are known).
//! The summary says how many scenes the estimate rests on.

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
    let partial = shape.unwritten > 0;
    let beats = if partial {
        estimated(shape, beats)
    } else {
        beats
    };
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
        if !beat.is_off(settings.beat_tolerance) {
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
    let written = shape.scenes.len();
    let of = written + shape.unwritten;
    result.summary = match (placed.is_empty(), partial) {
        (true, false) => "not judged: no beat names a scene of the outline yet".into(),
        (true, true) => format!(
            "not judged yet: {written} of {of} outline scenes are written, and no beat names a scene before the first unwritten one"
        ),
        (false, false) => format!(
            "{good} of {} placed beats land within their share (±{} points)",
            placed.len(),
            settings.beat_tolerance
        ),
        (false, true) => format!(
            "{good} of {} beats so far land within their share (±{} points), against an estimate of the whole book: {written} of {of} outline scenes written, the rest counted at their mean length",
            placed.len(),
            settings.beat_tolerance
        ),
    };
    result
}

/// The beats' places as A2 judges them, for the beat chart: over the
/// whole book, or, while outline scenes are unwritten, over the estimate of
/// [`estimated`]; and whether it is that estimate. `None` without a beat
/// sheet.
pub fn places(workspace: &Workspace) -> Option<(Vec<crate::stats::beats::BeatPlace>, bool)> {
    let beats = crate::stats::beats::beat_places(workspace)?;
    let shape = Shape::read(workspace, &mut super::Measures::default(), &|file| {
        crate::checks::dependency_key(workspace, file)
    });
    Some(if shape.unwritten > 0 {
        (estimated(&shape, beats), true)
    } else {
        (beats, false)
    })
}

/// The beats' places in a partial draft, as shares of an estimate of the
/// whole book (the unwritten scenes at the written ones' mean length); a
/// beat with a scene at or after the first unwritten one has no place yet.
fn estimated(
    shape: &Shape,
    beats: Vec<crate::stats::beats::BeatPlace>,
) -> Vec<crate::stats::beats::BeatPlace> {
    let words: Vec<usize> = shape
        .scenes
        .iter()
        .map(|scene| scene.measures.words)
        .collect();
    let written: usize = words.iter().sum();
    let mean = written as f64 / words.len().max(1) as f64;
    let total = written as f64 + mean * shape.unwritten as f64;
    // The written scenes before the first gap, with the words before each.
    let known = shape
        .scenes
        .iter()
        .position(|scene| scene.after_gap)
        .unwrap_or(shape.scenes.len());
    let mut before = 0;
    let places: Vec<(&str, usize, usize)> = shape.scenes[..known]
        .iter()
        .map(|scene| {
            let start = before;
            before += scene.measures.words;
            (scene.id.as_str(), start, before)
        })
        .collect();
    let share = |words: usize| 100.0 * words as f64 / total;
    beats
        .into_iter()
        .map(|mut beat| {
            let named: Vec<&(&str, usize, usize)> = places
                .iter()
                .filter(|(id, ..)| beat.scenes.iter().any(|scene| scene == id))
                .collect();
            let all_known = !named.is_empty() && named.len() == beat.scenes.len();
            beat.actual = (all_known && total > 0.0).then(|| {
                let start = named.iter().map(|(_, start, _)| *start).min().unwrap_or(0);
                let end = named.iter().map(|(.., end)| *end).max().unwrap_or(0);
                (share(start), share(end))
            });
            beat
        })
        .collect()
}

//! A1, pacing plateaus (`pacing-plateau`): `[health] plateau_scenes` (4)
//! scenes or more in a row whose measured pace and tension do not change.
//! Pace is words per sentence of narration and the share of dialogue;
//! tension, questions and exclamations per 1,000 words. Scenes are level
//! with each other while the greatest narration mean is within a fifth of
//! the least, dialogue within 10 points and tension within 4 a thousand
//! words. A scene under 150 words is a change of pace in itself and breaks
//! a run, and so does an outline scene not written yet.

use super::{CheckResult, Finding, Placed, Shape};
use crate::checks::{Code, Severity};
use crate::index::config::HealthConfig;

/// Scenes shorter than this are not measured for pace.
const MIN_WORDS: usize = 150;
/// How far level scenes' figures may spread.
const NARRATION_RATIO: f64 = 1.2;
const DIALOGUE_SPREAD: f64 = 0.10;
const TENSION_SPREAD: f64 = 4.0;

pub(super) fn check(shape: &Shape, settings: &HealthConfig) -> CheckResult {
    let mut result = CheckResult::new("A1", "Pacing plateaus", Code::PacingPlateau);
    let least = settings.plateau_scenes.max(2) as usize;
    let measured = shape
        .scenes
        .iter()
        .filter(|scene| scene.measures.words >= MIN_WORDS)
        .count();
    if measured < least {
        result.summary = format!(
            "not judged: {measured} scenes of {MIN_WORDS} words or more, fewer than the {least} a plateau takes"
        );
        return result;
    }
    let runs = plateaus(&shape.scenes, least);
    let flat: usize = runs.iter().map(|run| run.len()).sum();
    for run in &runs {
        result.findings.push(finding(&shape.scenes[run.clone()]));
    }
    result.score = CheckResult::score_of(measured - flat, measured);
    result.summary = match runs.len() {
        0 => format!("the pace and tension move across all {measured} measured scenes"),
        n => format!(
            "{n} plateau{} covering {flat} of {measured} measured scenes",
            if n == 1 { "" } else { "s" }
        ),
    };
    result
}

/// The runs of at least `least` level scenes, longest first from each start.
fn plateaus(scenes: &[Placed], least: usize) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    while start < scenes.len() {
        let mut end = start;
        while end < scenes.len()
            && scenes[end].measures.words >= MIN_WORDS
            && (end == start || !scenes[end].after_gap)
            && level(&scenes[start..=end])
        {
            end += 1;
        }
        if end - start >= least {
            runs.push(start..end);
            start = end;
        } else {
            start += 1;
        }
    }
    runs
}

/// Whether the scenes' pace and tension stay within the bands.
fn level(scenes: &[Placed]) -> bool {
    let (narration, dialogue, tension) = spans(scenes);
    narration.0 > 0.0
        && narration.1 / narration.0 <= NARRATION_RATIO
        && dialogue.1 - dialogue.0 <= DIALOGUE_SPREAD
        && tension.1 - tension.0 <= TENSION_SPREAD
}

/// The least and greatest of each figure.
fn spans(scenes: &[Placed]) -> ((f64, f64), (f64, f64), (f64, f64)) {
    let span = |figure: fn(&Placed) -> f64| {
        scenes
            .iter()
            .map(figure)
            .fold((f64::MAX, f64::MIN), |(low, high), value| {
                (low.min(value), high.max(value))
            })
    };
    (
        span(|scene| scene.measures.narration),
        span(|scene| scene.measures.dialogue),
        span(|scene| scene.measures.tension),
    )
}

fn finding(run: &[Placed]) -> Finding {
    let (narration, dialogue, tension) = spans(run);
    let (first, last) = (&run[0], &run[run.len() - 1]);
    let percent = |(low, high): (f64, f64)| format!("{:.0}–{:.0}%", low * 100.0, high * 100.0);
    let per_thousand = |(low, high): (f64, f64)| format!("{low:.1}–{high:.1}");
    Finding {
        message: format!(
            "{} scenes in a row at one pace and tension, {} to {}: {:.1}–{:.1} words a sentence of narration, {} dialogue, {} questions and exclamations a thousand words",
            run.len(),
            first.label(),
            last.label(),
            narration.0,
            narration.1,
            percent(dialogue),
            per_thousand(tension),
        ),
        recommendation: "Break the level: a scene of quick exchanges, a long still one, or a turn that raises the stakes.".into(),
        severity: Severity::Information,
        at: Some((first.file.path.clone(), first.file.head_range())),
        related: run[1..]
            .iter()
            .map(|scene| scene.related("in the same plateau"))
            .collect(),
    }
}

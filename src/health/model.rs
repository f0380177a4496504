//! The three checks a model reads (A3 timeline semantics, B1 fatal-flaw
//! challenges, C2 theme resonance), scored from what the runs of "Read a
//! scene's story health" found in each scene (the engine reads them from
//! the runs' folders) and from the writer's overrides, which a run never
//! replaces.
//!
//! A model's verdict on a scene counts only as the run gave it; its claims
//! count only where their quotes are in the scene (the others were dropped
//! when the run ended, and the summary says how many).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{CheckResult, Finding, Method, Shape};
use crate::checks::Severity;
use crate::index::FilePath;
use crate::text::TextRange;

/// A check a model reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ModelCheck {
    #[serde(rename = "A3")]
    Timeline,
    #[serde(rename = "B1")]
    Flaw,
    #[serde(rename = "C2")]
    Theme,
}

impl ModelCheck {
    pub const ALL: [ModelCheck; 3] = [ModelCheck::Timeline, ModelCheck::Flaw, ModelCheck::Theme];

    /// The spec's id: `A3`, `B1`, `C2`.
    pub fn id(self) -> &'static str {
        match self {
            ModelCheck::Timeline => "A3",
            ModelCheck::Flaw => "B1",
            ModelCheck::Theme => "C2",
        }
    }

    pub fn parse(id: &str) -> Option<ModelCheck> {
        ModelCheck::ALL
            .into_iter()
            .find(|check| check.id().eq_ignore_ascii_case(id))
    }

    pub fn name(self) -> &'static str {
        match self {
            ModelCheck::Timeline => "Timeline semantics",
            ModelCheck::Flaw => "Fatal-flaw challenges",
            ModelCheck::Theme => "Theme resonance",
        }
    }

    /// The verdicts a reading of one scene may give, the best first.
    pub fn verdicts(self) -> &'static [&'static str] {
        match self {
            ModelCheck::Timeline => &["agrees", "disagrees", "cannot judge"],
            ModelCheck::Flaw => &["challenged", "not challenged", "cannot judge"],
            ModelCheck::Theme => &["strong", "weak", "none", "cannot judge"],
        }
    }

    /// The recipe step that reads it, and the slot of its reply.
    pub fn step(self) -> (&'static str, &'static str) {
        match self {
            ModelCheck::Timeline => ("timeline", "timeline_report"),
            ModelCheck::Flaw => ("flaw", "flaw_report"),
            ModelCheck::Theme => ("theme", "theme_report"),
        }
    }

    fn what(self) -> &'static str {
        match self {
            ModelCheck::Timeline => "whether what happens agrees with when it happens",
            ModelCheck::Flaw => "which scenes challenge the protagonist's flaw",
            ModelCheck::Theme => "how the scenes answer the theme statement",
        }
    }
}

/// One claim of a reading, where its quote is now.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub message: String,
    /// The quote's file and range; `None` when the text has moved on.
    pub at: Option<(FilePath, TextRange)>,
}

/// What a check says of one scene: a model's run, or the writer.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub check: ModelCheck,
    /// The scene's id.
    pub scene: String,
    pub verdict: String,
    pub claims: Vec<Claim>,
    /// Claims the run dropped: their quotes were not in the scene.
    pub dropped: usize,
    /// The run that read it, or `None` for the writer's.
    pub run_id: Option<String>,
    /// The writer's reason, when the writer overrode the model.
    pub why: Option<String>,
}

/// The three checks' results from `readings` (the latest of each check and
/// scene, the writer's overrides applied) over the book's scenes.
pub(super) fn results(
    shape: &Shape,
    readings: &[Reading],
    settings: &crate::index::config::HealthConfig,
) -> [CheckResult; 3] {
    let gap = settings.model_gap as usize;
    let needed = match settings.model_scenes {
        0 => scenes_to_judge(shape.scenes.len()),
        given => given as usize,
    };
    // A run is two scenes at least, whatever a broken setting says.
    let gap = gap.max(2);
    ModelCheck::ALL.map(|check| result(shape, readings, check, gap, needed))
}

fn result(
    shape: &Shape,
    readings: &[Reading],
    check: ModelCheck,
    gap: usize,
    needed: usize,
) -> CheckResult {
    let mut result = CheckResult {
        id: check.id(),
        name: check.name(),
        code: None,
        method: Method::Model,
        score: None,
        summary: String::new(),
        findings: Vec::new(),
    };
    let by_scene: HashMap<&str, &Reading> = readings
        .iter()
        .filter(|reading| reading.check == check)
        .map(|reading| (reading.scene.as_str(), reading))
        .collect();
    // The book's scenes in order, with what was read of each.
    let read: Vec<(&super::Placed, &Reading)> = shape
        .scenes
        .iter()
        .filter_map(|scene| Some((scene, *by_scene.get(scene.id.as_str())?)))
        .collect();
    let judged: Vec<&(&super::Placed, &Reading)> = read
        .iter()
        .filter(|(_, reading)| reading.verdict != "cannot judge")
        .collect();
    if read.is_empty() {
        result.summary = format!(
            "needs a model to read {}; no scene read yet: run \"Read a scene's story health\" on a scene, or `control-room health read` on them all",
            check.what()
        );
        return result;
    }
    let by_writer = read.iter().filter(|(_, r)| r.run_id.is_none()).count();
    let kept: usize = read.iter().map(|(_, r)| r.claims.len()).sum();
    let dropped: usize = read.iter().map(|(_, r)| r.dropped).sum();
    let mut summary = format!(
        "{} of {} scenes read, {} judged",
        read.len(),
        shape.scenes.len(),
        judged.len()
    );
    if by_writer > 0 {
        summary.push_str(&format!(" ({by_writer} by the writer)"));
    }
    summary.push_str(&format!("; {kept} claims quoting the text"));
    if dropped > 0 {
        summary.push_str(&format!(
            ", {dropped} dropped (their quotes are not in the scene)"
        ));
    }
    match check {
        ModelCheck::Timeline => timeline(&mut result, &judged),
        ModelCheck::Flaw => flaw(&mut result, &judged, gap),
        ModelCheck::Theme => theme(&mut result, &judged, gap),
    }
    // A score from a scene or two would speak for the whole book: the check
    // scores once enough of it is judged, and says how many more it needs.
    if judged.len() < needed {
        result.score = None;
        summary.push_str(&format!(
            "; not scored until {needed} scenes are judged ({} more)",
            needed - judged.len()
        ));
    }
    // The writer's readings, each at its scene's heading with the reason.
    for (scene, reading) in &read {
        if let Some(why) = &reading.why {
            result.findings.push(Finding {
                message: format!(
                    "{}: {} (the writer's reading: {why})",
                    scene.label(),
                    reading.verdict
                ),
                recommendation: format!(
                    "`control-room health override {} {} --clear` lets the model's reading count again",
                    check.id(),
                    scene.id
                ),
                severity: Severity::Information,
                at: Some((scene.file.path.clone(), scene.file.head_range())),
                related: Vec::new(),
            });
        }
    }
    result.summary = summary;
    result
}

/// How many judged scenes a model-read check needs before it scores a book
/// of `scenes`: a quarter of them, at least three (all of a shorter book).
pub(super) fn scenes_to_judge(scenes: usize) -> usize {
    scenes.div_ceil(4).max(3).min(scenes)
}

type Judged<'a> = [&'a (&'a super::Placed, &'a Reading)];

/// A3: the share of judged scenes that agree; a finding for each claim of
/// a scene that does not.
fn timeline(result: &mut CheckResult, judged: &Judged) {
    let agrees = judged.iter().filter(|(_, r)| r.verdict == "agrees").count();
    result.score = CheckResult::score_of(agrees, judged.len());
    for (scene, reading) in judged {
        if reading.verdict == "disagrees" {
            claimed(result, scene, reading, Severity::Warning, || {
                "move the scene's date or time, or what its prose says of time".to_owned()
            });
        }
    }
}

/// B1: the share of judged scenes outside a run of `gap` that leave the
/// flaw unchallenged; a finding for each run, and each challenge's claims.
fn flaw(result: &mut CheckResult, judged: &Judged, gap: usize) {
    let gaps = runs(judged, gap, |verdict| verdict == "not challenged");
    let in_gaps: usize = gaps.iter().map(Vec::len).sum();
    result.score = CheckResult::score_of(judged.len() - in_gaps, judged.len());
    for run in gaps {
        let (first, _) = run[0];
        let (last, _) = run[run.len() - 1];
        result.findings.push(Finding {
            message: format!(
                "the protagonist's flaw goes unchallenged for {} scenes in a row, from {} to {}",
                run.len(),
                first.label(),
                last.label()
            ),
            recommendation: "give the flaw a cost or a test in one of these scenes".into(),
            severity: Severity::Information,
            at: Some((first.file.path.clone(), first.file.head_range())),
            related: vec![last.related("the last scene of the run")],
        });
    }
    for (scene, reading) in judged {
        if reading.verdict == "challenged" {
            claimed(result, scene, reading, Severity::Information, || {
                "a test of the flaw: keep it, and let the next one cost more".to_owned()
            });
        }
    }
}

/// C2: strong 100, weak 50, none 0, averaged over the judged scenes; a
/// finding for each run of `gap` scenes that do not speak to the theme.
fn theme(result: &mut CheckResult, judged: &Judged, gap: usize) {
    let points: usize = judged
        .iter()
        .map(|(_, r)| match r.verdict.as_str() {
            "strong" => 2,
            "weak" => 1,
            _ => 0,
        })
        .sum();
    result.score = CheckResult::score_of(points, 2 * judged.len());
    for run in runs(judged, gap, |verdict| verdict == "none") {
        let (first, _) = run[0];
        result.findings.push(Finding {
            message: format!(
                "{} scenes in a row do not speak to the theme, from {}",
                run.len(),
                first.label()
            ),
            recommendation: "let a choice or an image in one of them answer the theme statement"
                .into(),
            severity: Severity::Information,
            at: Some((first.file.path.clone(), first.file.head_range())),
            related: Vec::new(),
        });
    }
}

/// A finding for each of a reading's claims.
fn claimed(
    result: &mut CheckResult,
    scene: &super::Placed,
    reading: &Reading,
    severity: Severity,
    recommendation: impl Fn() -> String,
) {
    for claim in &reading.claims {
        result.findings.push(Finding {
            message: format!("{}: {}", scene.label(), claim.message),
            recommendation: recommendation(),
            severity,
            at: claim.at.clone(),
            related: Vec::new(),
        });
    }
}

/// The runs of at least `gap` judged scenes in a row whose verdict `is`.
fn runs<'a, 'b>(
    judged: &'b [&'b (&'a super::Placed, &'a Reading)],
    gap: usize,
    is: impl Fn(&str) -> bool,
) -> Vec<Vec<(&'a super::Placed, &'a Reading)>> {
    let mut runs = Vec::new();
    let mut current: Vec<(&super::Placed, &Reading)> = Vec::new();
    for (scene, reading) in judged.iter().map(|pair| **pair) {
        if is(&reading.verdict) {
            current.push((scene, reading));
        } else {
            if current.len() >= gap {
                runs.push(std::mem::take(&mut current));
            }
            current.clear();
        }
    }
    if current.len() >= gap {
        runs.push(current);
    }
    runs
}

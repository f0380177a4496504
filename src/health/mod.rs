//! The story's health (the third brain of the agent-instruction spec,
//! §11.5): seven checks of the book's shape, each with a score from 0 to
//! 100, findings with a recommendation, and, where a finding points at
//! text, a diagnostic.
//!
//! Four are deterministic, read from the text as it is:
//! - A1 pacing plateaus (`pacing`, code `pacing-plateau`);
//! - A2 beat progress (`beats`, `beat-progress`);
//! - B2 cast function (`cast`, `cast-function`);
//! - C1 symbolic layering (`layering`, `motif-gap`).
//!
//! A3 timeline semantics, B1 fatal-flaw challenges and C2 theme resonance
//! need a model to read the story's meaning: the recipe "Read a scene's
//! story health" reads one scene, each claim quoting it, and `model` scores
//! what the runs read ([`model::Reading`], which the engine gathers) with
//! the writer's `overrides` kept over them; without a reading, the report
//! says how to get one.
//!
//! [`Health::check`] reads every scene's [`measure::SceneMeasures`] through
//! a [`Measures`] memo, so after an edit only the edited scene is measured
//! again; the checks themselves are sums over the scenes' measures.

pub mod beats;
mod cast;
mod layering;
pub mod measure;
pub mod model;
pub mod overrides;
mod pacing;
pub mod report;

use std::sync::Arc;

use serde::Serialize;

use crate::checks::{Code, Diagnostic, Related, Severity};
use crate::index::{Book, FilePath, SourceFile, Workspace};
use crate::text::TextRange;

use crate::index::motifs::Motifs;
pub use measure::{Measures, SceneCast, SceneMeasures};

/// How a check reads the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// From the text, the same every time.
    Deterministic,
    /// Through a model, its claims quoting the text.
    Model,
}

/// One finding of a check.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub message: String,
    pub recommendation: String,
    #[serde(skip)]
    pub severity: Severity,
    /// Where it points: a file and the text in it.
    #[serde(skip)]
    pub at: Option<(FilePath, TextRange)>,
    #[serde(skip)]
    pub related: Vec<Related>,
}

/// One check's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckResult {
    /// The spec's id: `A1`, `B2`…
    pub id: &'static str,
    pub name: &'static str,
    /// The diagnostic code of its findings, for the deterministic checks.
    pub code: Option<&'static str>,
    pub method: Method,
    /// From 0 to 100; `None` when the check could not judge the book.
    pub score: Option<u8>,
    /// One line on what it found, or why it did not judge.
    pub summary: String,
    pub findings: Vec<Finding>,
}

impl CheckResult {
    fn new(id: &'static str, name: &'static str, code: Code) -> CheckResult {
        CheckResult {
            id,
            name,
            code: Some(code.as_str()),
            method: Method::Deterministic,
            score: None,
            summary: String::new(),
            findings: Vec::new(),
        }
    }

    /// The score of `good` out of `all`, in percent; `None` of nothing.
    fn score_of(good: usize, all: usize) -> Option<u8> {
        (all > 0).then(|| (100.0 * good as f64 / all as f64).round() as u8)
    }
}

/// One scene of the book in order, where it stands and what it measures.
pub(crate) struct Placed {
    /// An outline scene nobody wrote yet comes just before it.
    pub after_gap: bool,
    pub file: Arc<SourceFile>,
    pub id: String,
    /// Its words before and through it, as shares of the book's, 0 to 100.
    pub from: f64,
    pub to: f64,
    pub measures: Arc<SceneMeasures>,
}

impl Placed {
    /// The scene as messages name it: “The Fall” (SCN-the-fall), or its id.
    pub fn label(&self) -> String {
        match self.file.scene().and_then(|scene| scene.title.as_ref()) {
            Some(title) => format!("“{title}” ({})", self.id),
            None => self.id.clone(),
        }
    }

    /// A related place in the scene's heading.
    pub fn related(&self, message: impl Into<String>) -> Related {
        Related {
            path: self.file.path.clone(),
            range: self.file.head_range(),
            message: message.into(),
        }
    }
}

/// The book as the checks read it.
pub(crate) struct Shape {
    /// The written scenes, in the book's order.
    pub scenes: Vec<Placed>,
    /// The outline's scenes nobody wrote yet.
    pub unwritten: usize,
    pub motifs: Motifs,
}

/// The story's health.
#[derive(Clone, Debug, Serialize)]
pub struct Health {
    /// The mean of the judged checks' scores.
    pub score: Option<u8>,
    /// How many of the checks judged the book (the score is theirs alone).
    pub judged: usize,
    pub scenes: usize,
    pub words: usize,
    pub checks: Vec<CheckResult>,
    /// Each scene's pace and tension, in the book's order.
    pub pace: Vec<ScenePace>,
}

/// A scene's pace and tension, as A1 reads them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenePace {
    pub scene: String,
    pub words: usize,
    /// Words per sentence of narration.
    pub narration: f64,
    /// The share of dialogue, 0 to 1.
    pub dialogue: f64,
    /// Questions and exclamations (`?`, `!`) per 1,000 words.
    pub tension: f64,
}

impl Health {
    /// Every check on the manuscript as `workspace` holds it, measuring
    /// through `measures` only the scenes it does not know.
    pub fn check(workspace: &Workspace, measures: &mut Measures) -> Health {
        Health::check_keyed(workspace, measures, &|file| {
            crate::checks::dependency_key(workspace, file)
        })
    }

    /// [`Health::check`], with each scene's `checks::dependency_key` from
    /// `key` (the editor has computed them already).
    pub fn check_keyed(
        workspace: &Workspace,
        measures: &mut Measures,
        key: &dyn Fn(&SourceFile) -> u64,
    ) -> Health {
        Health::check_read(workspace, measures, key, &[])
    }

    /// [`Health::check_keyed`], with what a model read of the scenes for
    /// A3, B1 and C2 (the writer's overrides applied).
    pub fn check_read(
        workspace: &Workspace,
        measures: &mut Measures,
        key: &dyn Fn(&SourceFile) -> u64,
        readings: &[model::Reading],
    ) -> Health {
        let shape = Shape::read(workspace, measures, key);
        let settings = &workspace.config().health;
        let [timeline, flaw, theme] = model::results(&shape, readings, settings);
        let checks = vec![
            pacing::check(&shape, settings),
            beats::check(workspace, &shape, settings),
            timeline,
            flaw,
            cast::check(workspace, &shape, settings),
            layering::check(&shape, settings),
            theme,
        ];
        let judged: Vec<u8> = checks.iter().filter_map(|check| check.score).collect();
        Health {
            judged: judged.len(),
            score: (!judged.is_empty()).then(|| {
                (judged.iter().map(|&s| f64::from(s)).sum::<f64>() / judged.len() as f64).round()
                    as u8
            }),
            scenes: shape.scenes.len(),
            words: shape.scenes.iter().map(|scene| scene.measures.words).sum(),
            checks,
            pace: shape
                .scenes
                .iter()
                .map(|scene| ScenePace {
                    scene: scene.id.clone(),
                    words: scene.measures.words,
                    narration: scene.measures.narration,
                    dialogue: scene.measures.dialogue,
                    tension: scene.measures.tension,
                })
                .collect(),
        }
    }

    /// The score as the writer reads it, saying how many checks it rests
    /// on: "71 of 100, from the 2 of 7 checks that judged".
    pub fn headline(&self) -> String {
        match self.score {
            Some(score) => format!(
                "{score} of 100, from the {} of {} checks that judged",
                self.judged,
                self.checks.len()
            ),
            None => format!(
                "not judged: none of the {} checks could judge the book yet",
                self.checks.len()
            ),
        }
    }

    /// The findings that point at text, as diagnostics of their files,
    /// settled as the checks' are (severity settings, the writer's marks).
    pub fn diagnostics(&self, workspace: &Workspace) -> Vec<Diagnostic> {
        let mut by_file: std::collections::BTreeMap<FilePath, Vec<Diagnostic>> = Default::default();
        for check in &self.checks {
            let Some(code) = check
                .code
                .and_then(|code| Code::ALL.into_iter().find(|c| c.as_str() == code))
            else {
                continue;
            };
            for finding in &check.findings {
                let Some((path, range)) = &finding.at else {
                    continue;
                };
                by_file.entry(path.clone()).or_default().push(Diagnostic {
                    path: path.clone(),
                    range: *range,
                    severity: finding.severity,
                    code,
                    message: finding.message.clone(),
                    related: finding.related.clone(),
                    fixes: Vec::new(),
                });
            }
        }
        let mut all = Vec::new();
        for (path, mut diagnostics) in by_file {
            if let Some(file) = workspace.file(&path) {
                crate::checks::settle(workspace, file, &mut diagnostics);
                all.extend(diagnostics);
            }
        }
        all
    }
}

impl Shape {
    /// What a summary adds while outline scenes are unwritten: its shares
    /// are shares of what is written.
    pub fn written_so_far(&self) -> String {
        match self.unwritten {
            0 => String::new(),
            1 => " (of what is written: 1 outline scene is not yet)".to_owned(),
            n => format!(" (of what is written: {n} outline scenes are not yet)"),
        }
    }

    fn read(
        workspace: &Workspace,
        measures: &mut Measures,
        key: &dyn Fn(&SourceFile) -> u64,
    ) -> Shape {
        let book = Book::of(workspace);
        let motifs = Motifs::of(workspace);
        let mut unwritten = 0;
        let mut seen = std::collections::HashSet::new();
        let mut written: Vec<(&Arc<SourceFile>, &str, bool)> = Vec::new();
        let mut gap = false;
        for scene in &book.scenes {
            let Some(file) = &scene.file else {
                unwritten += 1;
                gap = true;
                continue;
            };
            // An outline may list a scene twice; it is read once.
            if seen.insert(scene.scene_id.as_str()) {
                written.push((file, scene.scene_id.as_str(), gap));
                gap = false;
            }
        }
        let keyed: Vec<(&Arc<SourceFile>, u64)> = written
            .iter()
            .map(|(file, ..)| (*file, key(file)))
            .collect();
        let measured = measures.get_all(workspace, &keyed, &motifs);
        let mut scenes: Vec<Placed> = written
            .iter()
            .zip(measured)
            .map(|((file, id, after_gap), measures)| Placed {
                after_gap: *after_gap,
                file: Arc::clone(file),
                id: (*id).to_owned(),
                from: 0.0,
                to: 0.0,
                measures,
            })
            .collect();
        measures.retain(workspace);
        let total: usize = scenes.iter().map(|scene| scene.measures.words).sum();
        let mut before = 0;
        for scene in &mut scenes {
            let share = |words: usize| {
                if total == 0 {
                    0.0
                } else {
                    100.0 * words as f64 / total as f64
                }
            };
            scene.from = share(before);
            before += scene.measures.words;
            scene.to = share(before);
        }
        Shape {
            scenes,
            unwritten,
            motifs,
        }
    }
}

/// The codes of the health's findings, as diagnostics.
pub const CODES: [Code; 4] = [
    Code::PacingPlateau,
    Code::BeatProgress,
    Code::CastFunction,
    Code::MotifGap,
];

/// Whether the writer turned every health diagnostic off (severity `off`):
/// then a diagnostics pass does not measure the book at all.
pub fn diagnostics_off(workspace: &Workspace) -> bool {
    CODES
        .iter()
        .all(|code| workspace.severity_setting(code.as_str()) == Some("off"))
}

/// Every diagnostic of the manuscript: the checks' (`checks::check_workspace`)
/// and the story's health's, in path order. What `control-room check`
/// prints.
pub fn check_workspace(workspace: &Workspace) -> Vec<Diagnostic> {
    if diagnostics_off(workspace) {
        return crate::checks::check_workspace(workspace);
    }
    with_checks(
        workspace,
        &Health::check(workspace, &mut Measures::default()),
    )
}

/// The checks' diagnostics with those of `health`, already measured (the
/// Foreman's `run_health_check` shows its scores too).
pub fn with_checks(workspace: &Workspace, health: &Health) -> Vec<Diagnostic> {
    let mut diagnostics = crate::checks::check_workspace(workspace);
    if !diagnostics_off(workspace) {
        diagnostics.extend(health.diagnostics(workspace));
    }
    // In path order, and within a file in the order of the text, as the
    // checks' own are.
    diagnostics.sort_by(|a, b| {
        (&a.path, a.range.start, a.range.end, a.code).cmp(&(
            &b.path,
            b.range.start,
            b.range.end,
            b.code,
        ))
    });
    diagnostics
}

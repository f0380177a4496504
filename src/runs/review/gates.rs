//! The deterministic gates of the review loop (ADR-003's first layer, for
//! prose): a draft is judged as the scene it would become, by the same
//! checks the writer sees in the editor, before any reviewer reads it. A
//! model cannot argue past them, and a draft that fails one costs no review.
//!
//! - `continuity`: no `dead-character`, `attribute-mismatch`, `name-typo` or
//!   `unknown-reference` in the draft's prose;
//! - `anti_patterns`: no zero-tolerance phrase of the anti-pattern sheets;
//! - `word_count`: within the tolerance (±20%) of the scene's `words:`
//!   target (or the task's `words` argument); with no target, at least
//!   `min_words` (100), so that a model's chatter never passes for a scene;
//! - `pov`: told in the person (first or third) of the point-of-view
//!   character's other scenes, and, told in the third, naming that character.
//!
//! Only what lies in the draft's body counts: the scene's front matter is
//! the writer's, not the draft's.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::checks::{self, Code, Severity};
use crate::index::{CardKind, FilePath, SourceFile, Workspace};
use crate::runs::output::draft;
use crate::runs::recipe::GateSettings;

/// The codes the continuity gate holds a draft to.
const CONTINUITY_CODES: &[Code] = &[
    Code::DeadCharacter,
    Code::AttributeMismatch,
    Code::NameTypo,
    Code::UnknownReference,
];

/// Other scenes of the same point of view read to learn its person.
const POV_SAMPLE: usize = 6;

/// Paragraphs of first-person narration that make a draft first person
/// (when they are also most of its paragraphs).
const FIRST_PERSON_MIN: usize = 2;

/// What the gates found, the gates step's output (and its receipt's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    pub passed: bool,
    pub words: usize,
    pub target: Option<u32>,
    pub gates: Vec<GateResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub gate: String,
    pub passed: bool,
    /// In words, for the writer agent and the report.
    pub failures: Vec<String>,
}

/// The scene a draft is for.
pub struct DraftScene<'a> {
    pub scene_path: Option<&'a str>,
    pub scene_id: Option<&'a str>,
    pub brief: Option<&'a str>,
    /// The task's arguments (`words` may set the target).
    pub args: &'a Map<String, Value>,
}

impl GateReport {
    /// The failures as the writer agent reads them when it tries again.
    pub fn feedback(&self) -> String {
        let mut out = String::new();
        for gate in self.gates.iter().filter(|gate| !gate.passed) {
            for failure in &gate.failures {
                out.push_str(&format!("- {} gate: {failure}\n", gate.gate));
            }
        }
        out
    }

    /// A one-line summary for the receipt and the report.
    pub fn summary(&self) -> String {
        let failed: Vec<&str> = self
            .gates
            .iter()
            .filter(|gate| !gate.passed)
            .map(|gate| gate.gate.as_str())
            .collect();
        if failed.is_empty() {
            format!("the draft ({} words) passed every gate", self.words)
        } else {
            format!(
                "the draft ({} words) failed the {} gate{}",
                self.words,
                failed.join(", "),
                if failed.len() == 1 { "" } else { "s" }
            )
        }
    }
}

/// Judges `draft` as the scene it would become.
pub fn run(
    workspace: &Workspace,
    settings: &GateSettings,
    scene: &DraftScene,
    draft: &str,
) -> GateReport {
    let (candidate, body_start) = candidate(workspace, scene, draft);
    let path = candidate.path.clone();
    let mut snapshot = workspace.clone();
    snapshot.insert_file(candidate);
    let file = snapshot.file(&path).expect("just inserted").clone();
    let diagnostics = checks::check_file(&snapshot, &path);
    let in_body = |code: &Code| {
        diagnostics
            .iter()
            .filter(|d| {
                d.code == *code && d.range.start >= body_start && d.severity <= Severity::Warning
            })
            .map(|d| {
                format!(
                    "{}: “{}”: {}",
                    d.code,
                    d.range.slice(&file.text).trim(),
                    d.message
                )
            })
            .collect::<Vec<_>>()
    };
    let mut gates = Vec::new();
    if settings.continuity {
        let failures: Vec<String> = CONTINUITY_CODES.iter().flat_map(in_body).collect();
        gates.push(GateResult::new("continuity", failures));
    }
    if settings.anti_patterns {
        gates.push(GateResult::new(
            "anti_patterns",
            in_body(&Code::AntiPattern),
        ));
    }
    let words = file.scene().map_or(0, |s| s.word_count);
    let target = file
        .scene()
        .and_then(|s| s.words_target)
        .or_else(|| target_from_args(scene.args));
    if settings.word_count {
        let mut failures = Vec::new();
        if let Some(target) = target {
            let low = f64::from(target) * (1.0 - settings.word_tolerance);
            let high = f64::from(target) * (1.0 + settings.word_tolerance);
            #[allow(clippy::cast_precision_loss)]
            let count = words as f64;
            if count < low || count > high {
                failures.push(format!(
                    "{words} words; the target is {target}, so between {} and {} ({}%)",
                    low.ceil(),
                    high.floor(),
                    (settings.word_tolerance * 100.0).round()
                ));
            }
        } else if words < settings.min_words as usize {
            failures.push(format!(
                "{words} words; with no target a scene has at least {}",
                settings.min_words
            ));
        }
        gates.push(GateResult::new("word_count", failures));
    }
    if settings.pov {
        gates.push(GateResult::new(
            "pov",
            pov_failures(&snapshot, &file, body_start),
        ));
    }
    GateReport {
        passed: gates.iter().all(|gate| gate.passed),
        words,
        target,
        gates,
    }
}

impl GateResult {
    fn new(gate: &str, failures: Vec<String>) -> GateResult {
        GateResult {
            gate: gate.to_owned(),
            passed: failures.is_empty(),
            failures,
        }
    }
}

fn target_from_args(args: &Map<String, Value>) -> Option<u32> {
    match args.get("words")? {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
    .filter(|&n| n > 0)
}

/// The scene file the draft would make, and where its body starts (after
/// the front matter): the existing scene's front matter over the draft, or a
/// new scene's.
fn candidate(workspace: &Workspace, scene: &DraftScene, draft: &str) -> (SourceFile, usize) {
    let existing = scene.scene_path.and_then(|path| workspace.file(path));
    let (path, text): (FilePath, String) = match existing {
        Some(file) => {
            let (range, body) = draft::replacement_body(file, draft);
            (
                file.path.clone(),
                format!("{}{body}", &file.text[..range.start]),
            )
        }
        None => {
            let id = scene.scene_id.unwrap_or("SCN-draft");
            let path = scene
                .scene_path
                .map_or_else(|| draft::new_scene_path(workspace, id), str::to_owned);
            let text = draft::new_scene_text(workspace, id, scene.brief, draft);
            (Arc::from(path.as_str()), text)
        }
    };
    let file = SourceFile::parse(path, text.into(), &workspace.config().paths);
    let body_start = file
        .front_matter
        .as_ref()
        .map_or(0, |front| front.range.end);
    (file, body_start)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Person {
    First,
    Third,
}

impl Person {
    fn as_str(self) -> &'static str {
        match self {
            Person::First => "first",
            Person::Third => "third",
        }
    }
}

/// The person a scene's narration is told in (dialogue aside), from
/// `start` on; `None` for a text with too little narration to tell. Judged
/// by paragraphs, so a letter or a diary entry quoted in a third-person
/// scene does not make it first person: first person when most paragraphs
/// of narration use a first-person pronoun in it.
fn person(file: &SourceFile, start: usize) -> Option<Person> {
    let prose = file.analyse_prose();
    let text = &file.text;
    // Paragraph of each narration word: the number of blank lines before it.
    let mut paragraphs: Vec<(usize, bool)> = Vec::new(); // (words, has first person)
    let mut words = 0;
    let mut last_end = start;
    for token in prose
        .tokens
        .iter()
        .filter(|t| t.is_word() && !t.quoted && t.range.start >= start)
    {
        if paragraphs.is_empty() || text[last_end..token.range.start].contains("\n\n") {
            paragraphs.push((0, false));
        }
        last_end = token.range.end;
        words += 1;
        let paragraph = paragraphs.last_mut().expect("pushed above");
        paragraph.0 += 1;
        if FIRST_PERSON.contains(&token.text(text)) {
            paragraph.1 = true;
        }
    }
    if words < 20 {
        return None;
    }
    let told: Vec<&(usize, bool)> = paragraphs.iter().filter(|(n, _)| *n >= 3).collect();
    let first = told.iter().filter(|(_, first)| *first).count();
    Some(
        if first >= FIRST_PERSON_MIN.min(told.len()) && first * 2 > told.len() {
            Person::First
        } else {
            Person::Third
        },
    )
}

/// First-person pronouns, as narration writes them.
const FIRST_PERSON: &[&str] = &[
    "I", "me", "Me", "my", "My", "mine", "Mine", "myself", "Myself", "I'm", "I’m", "I'd", "I’d",
    "I've", "I’ve", "I'll", "I’ll",
];

fn pov_failures(workspace: &Workspace, file: &SourceFile, body_start: usize) -> Vec<String> {
    let catalog = workspace.catalog();
    let Some(pov) = file.scene().and_then(|s| s.pov.as_ref()) else {
        return Vec::new();
    };
    let Some(card_file) = catalog.resolve_card(&pov.text, &[CardKind::Character]) else {
        // An unknown POV is the front matter's problem, not the draft's.
        return Vec::new();
    };
    let name = card_file
        .card()
        .and_then(|card| card.name.as_ref())
        .map_or_else(|| pov.text.clone(), |name| name.text.clone());
    let Some(told) = person(file, body_start) else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    // The person of the same point of view's other scenes.
    let mut others: Vec<(String, Person)> = Vec::new();
    for (other, scene) in catalog.scenes() {
        if other.path == file.path || others.len() >= POV_SAMPLE {
            continue;
        }
        let same = scene.pov.as_ref().is_some_and(|p| {
            catalog
                .resolve_card(&p.text, &[CardKind::Character])
                .is_some_and(|card| card.path == card_file.path)
        });
        if !same {
            continue;
        }
        let start = other.front_matter.as_ref().map_or(0, |f| f.range.end);
        if let Some(person) = person(other, start) {
            others.push((scene.id.clone(), person));
        }
    }
    let first = others.iter().filter(|(_, p)| *p == Person::First).count();
    let expected = match (first, others.len() - first) {
        (0, 0) => None,
        (f, t) if f > t => Some(Person::First),
        (f, t) if t > f => Some(Person::Third),
        _ => None,
    };
    if let Some(expected) = expected
        && expected != told
    {
        let ids: Vec<&str> = others
            .iter()
            .filter(|(_, p)| *p == expected)
            .map(|(id, _)| id.as_str())
            .collect();
        failures.push(format!(
            "told in the {} person, but {name}'s other scenes ({}) are in the {}",
            told.as_str(),
            ids.join(", "),
            expected.as_str()
        ));
    }
    if told == Person::Third
        && !workspace
            .mentions(&file.path)
            .iter()
            .any(|m| m.card == card_file.path && m.range.start >= body_start)
    {
        failures.push(format!(
            "the draft never names {name}, its point-of-view character: it may be told from someone else's view"
        ));
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace(files: &[(&str, &str)]) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        Workspace::load(dir.path())
    }

    const MARA: &str = "---\ntype: character\nname: Mara Vell\neyes: grey\n---\n";
    const KAEL: &str =
        "---\ntype: character\nname: Kael Maren\nstatus: dead\ndied_in: SCN-one\n---\n";
    const THIRD: &str = "Mara Vell walked to the harbour wall and looked out over the grey water. She counted the boats coming in and thought of her brother, who had sailed at dawn and not come back yet.";
    const FIRST: &str = "I walked to the harbour wall and looked out over the grey water. I counted the boats coming in and thought of my brother, who had sailed at dawn and not come back yet, and I waited.";

    fn files(scene_text: &str) -> Vec<(&str, &str)> {
        vec![
            ("Compendium/Characters/mara.md", MARA),
            ("Compendium/Characters/kael.md", KAEL),
            ("Story/Scenes/SCN-one.md", scene_text),
            (
                "Story/SCN-outline.md",
                "# Outline\n\n- SCN-one Mara waits.\n- SCN-two Mara sails.\n",
            ),
        ]
    }

    /// The gates on `draft`, whose fixtures are short: a scene of 20 words
    /// passes the length gate here.
    fn judge(workspace: &Workspace, draft: &str, words: Option<u32>) -> GateReport {
        judge_with(
            workspace,
            draft,
            words,
            &GateSettings {
                min_words: 20,
                ..GateSettings::default()
            },
        )
    }

    fn judge_with(
        workspace: &Workspace,
        draft: &str,
        words: Option<u32>,
        settings: &GateSettings,
    ) -> GateReport {
        let mut args = Map::new();
        if let Some(words) = words {
            args.insert("words".into(), words.into());
        }
        run(
            workspace,
            settings,
            &DraftScene {
                scene_path: Some("Story/Scenes/SCN-two.md"),
                scene_id: Some("SCN-two"),
                brief: Some("POV: Mara Vell"),
                args: &args,
            },
            draft,
        )
    }

    fn failed(report: &GateReport) -> Vec<&str> {
        report
            .gates
            .iter()
            .filter(|g| !g.passed)
            .map(|g| g.gate.as_str())
            .collect()
    }

    #[test]
    fn a_draft_of_a_few_words_with_no_target_is_no_scene() {
        let text = format!("---\nid: SCN-one\npov: Mara Vell\n---\n\n{THIRD}\n");
        let ws = workspace(&files(&text));
        let report = judge_with(&ws, THIRD, None, &GateSettings::default());
        assert_eq!(failed(&report), ["word_count"], "{report:?}");
        let failure = &report
            .gates
            .iter()
            .find(|g| g.gate == "word_count")
            .unwrap()
            .failures[0];
        assert!(
            failure.contains("with no target a scene has at least 100"),
            "{failure}"
        );
    }

    #[test]
    fn a_clean_draft_passes() {
        let text = format!("---\nid: SCN-one\npov: Mara Vell\n---\n\n{THIRD}\n");
        let ws = workspace(&files(&text));
        let report = judge(&ws, THIRD, None);
        assert!(report.passed, "{report:?}");
        assert_eq!(report.words, THIRD.split_whitespace().count());
    }

    #[test]
    fn continuity_and_word_count_fail_with_the_quoted_text() {
        let text = format!("---\nid: SCN-one\npov: Mara Vell\n---\n\n{THIRD}\n");
        let ws = workspace(&files(&text));
        let draft = format!("{THIRD} “Come home,” Kael Maren said.");
        let report = judge(&ws, &draft, Some(400));
        assert_eq!(failed(&report), ["continuity", "word_count"], "{report:?}");
        let feedback = report.feedback();
        assert!(
            feedback.contains("dead-character: “Kael Maren”"),
            "{feedback}"
        );
        assert!(
            feedback.contains("the target is 400, so between 320 and 480"),
            "{feedback}"
        );
    }

    #[test]
    fn a_first_person_draft_of_a_third_person_pov_fails() {
        let text = format!("---\nid: SCN-one\npov: Mara Vell\n---\n\n{THIRD}\n");
        let ws = workspace(&files(&text));
        let report = judge(&ws, FIRST, None);
        assert_eq!(failed(&report), ["pov"], "{report:?}");
        let feedback = report.feedback();
        assert!(
            feedback.contains(
                "told in the first person, but Mara Vell's other scenes (SCN-one) are in the third"
            ),
            "{feedback}"
        );
        assert!(!feedback.contains("never names Mara Vell"), "{feedback}");
    }

    #[test]
    fn a_third_person_draft_that_never_names_its_pov_fails() {
        let ws = workspace(&files("---\nid: SCN-one\n---\n\nNothing.\n"));
        let draft = THIRD.replace("Mara Vell", "The fisherman");
        let report = judge(&ws, &draft, None);
        assert_eq!(failed(&report), ["pov"], "{report:?}");
        assert!(report.feedback().contains("never names Mara Vell"));
    }
}

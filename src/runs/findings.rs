//! Agents' findings (the `Finding` shape of agent-outputs.md), read from a
//! finished run's JSON slots, kept with the run, and anchored at the text
//! they quote in whatever the file says now.
//!
//! A finding is only ever shown where its quote is found: a quote the agent
//! invented is dropped when the run ends (the run report says so), and a
//! quote the writer has since edited away makes the finding disappear. The
//! quote is looked up afresh on every anchoring, so a finding follows its
//! text when the text moves.
//!
//! Persistence: each run's findings are written to
//! `.control-room/runs/{runId}/findings.json` (atomic), read back when the
//! server starts; dismissals are appended to
//! `.control-room/findings/dismissed.jsonl` so they stay dismissed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::runs::store::{Disk, RUNS_DIR, RunFiles, RunManifest, StepRecord};
use crate::text::TextRange;
use crate::tools::check_relative_path;

/// The diagnostic code of findings in the editor.
pub const CODE: &str = "agent-finding";

/// Where dismissals are kept, relative to the root.
pub const DISMISSED_FILE: &str = ".control-room/findings/dismissed.jsonl";

/// A finding's file name inside its run's folder.
pub const FINDINGS_FILE: &str = "findings.json";

/// The shortest quote that can anchor a finding (agent-outputs.md).
pub const MIN_QUOTE_CHARS: usize = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingSeverity {
    Error,
    Warning,
    Information,
}

/// One finding as an agent wrote it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
struct RawFinding {
    severity: FindingSeverity,
    quote: String,
    #[serde(default)]
    file: Option<String>,
    message: String,
    #[serde(default)]
    suggestion: Option<String>,
    #[serde(default)]
    canon: Option<String>,
}

/// A finding as a run keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `{run_id}:{step_id}:{n}`, stable across restarts.
    pub id: String,
    pub run_id: String,
    pub step_id: String,
    /// The receipt of the agent step that reported it.
    pub receipt_id: Option<String>,
    /// The workspace file the quote is in.
    pub file: String,
    pub severity: FindingSeverity,
    pub quote: String,
    pub message: String,
    pub suggestion: Option<String>,
    pub canon: Option<String>,
    /// Its line (0-based) in the run report, for the editor's link.
    pub report_line: Option<u32>,
}

/// A finding that could not be anchored when the run ended, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DroppedFinding {
    pub step_id: String,
    pub quote: String,
    pub message: String,
    pub reason: String,
}

/// findings.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFindings {
    pub version: u32,
    pub run_id: String,
    pub recipe_id: String,
    /// The scene the run was about, if any.
    pub scene_path: Option<String>,
    pub completed_at: Option<String>,
    pub findings: Vec<Finding>,
    pub dropped: Vec<DroppedFinding>,
}

impl RunFindings {
    /// The findings of `manifest`'s run, about the scene it names.
    pub fn of_run(
        manifest: &RunManifest,
        findings: Vec<Finding>,
        dropped: Vec<DroppedFinding>,
    ) -> RunFindings {
        RunFindings {
            version: 1,
            run_id: manifest.run_id.clone(),
            recipe_id: manifest.recipe_id.clone(),
            scene_path: manifest
                .task
                .initial_args
                .get("scene_path")
                .and_then(Value::as_str)
                .map(str::to_owned),
            completed_at: manifest.completed_at.clone(),
            findings,
            dropped,
        }
    }
}

/// Reads the findings of a finished run's JSON slots (`findings` and
/// `concerns` arrays of Finding objects, in step order). `default_file` is
/// where a finding without `file` points (the scene the run is about, or the
/// file its draft went to); `text_of` gives the text each file will have
/// once the run's result lands, so quotes are checked against what the
/// writer will see.
pub fn collect(
    manifest: &RunManifest,
    steps: &[StepRecord],
    slots: &BTreeMap<String, Value>,
    default_file: Option<&str>,
    text_of: &dyn Fn(&str) -> Option<String>,
) -> RunFindings {
    let mut findings = Vec::new();
    let mut dropped = Vec::new();
    for step in steps {
        let Some(value) = slots.get(&step.output_slot) else {
            continue;
        };
        let items = ["findings", "concerns"]
            .iter()
            .filter_map(|key| value.get(key).and_then(Value::as_array))
            .flatten();
        for item in items {
            let drop = |quote: &str, message: &str, reason: String| DroppedFinding {
                step_id: step.step_id.clone(),
                quote: quote.to_owned(),
                message: message.to_owned(),
                reason,
            };
            let raw: RawFinding = match serde_json::from_value(item.clone()) {
                Ok(raw) => raw,
                Err(error) => {
                    let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
                    dropped.push(drop(
                        text("quote"),
                        text("message"),
                        format!("not a finding: {error}"),
                    ));
                    continue;
                }
            };
            if raw.quote.trim().chars().count() < MIN_QUOTE_CHARS {
                dropped.push(drop(
                    &raw.quote,
                    &raw.message,
                    format!("the quote is shorter than {MIN_QUOTE_CHARS} characters"),
                ));
                continue;
            }
            let file = match raw.file.as_deref().map(str::trim) {
                Some(file) if !file.is_empty() => {
                    if let Err(error) = check_relative_path(file) {
                        dropped.push(drop(&raw.quote, &raw.message, format!("its file {error}")));
                        continue;
                    }
                    file.to_owned()
                }
                _ => match default_file {
                    Some(file) => file.to_owned(),
                    None => {
                        dropped.push(drop(
                            &raw.quote,
                            &raw.message,
                            "it names no file and the run is about none".into(),
                        ));
                        continue;
                    }
                },
            };
            let canon = raw.canon.filter(|canon| check_relative_path(canon).is_ok());
            match text_of(&file) {
                Some(text) if anchor(&text, &raw.quote, None).is_some() => {}
                Some(_) => {
                    dropped.push(drop(
                        &raw.quote,
                        &raw.message,
                        format!("the quote is not in {file}"),
                    ));
                    continue;
                }
                None => {
                    dropped.push(drop(
                        &raw.quote,
                        &raw.message,
                        format!("{file} is not a file of the workspace"),
                    ));
                    continue;
                }
            }
            findings.push(Finding {
                id: format!(
                    "{}:{}:{}",
                    manifest.run_id,
                    step.step_id,
                    findings.len() + 1
                ),
                run_id: manifest.run_id.clone(),
                step_id: step.step_id.clone(),
                receipt_id: step.receipt_id.clone(),
                file,
                severity: raw.severity,
                quote: raw.quote,
                message: raw.message,
                suggestion: raw.suggestion.filter(|s| !s.trim().is_empty()),
                canon,
                report_line: None,
            });
        }
    }
    RunFindings::of_run(manifest, findings, dropped)
}

/// Where `quote` is in `text`: the exact text if it occurs, else the same
/// words with whitespace and quotation marks normalised (a model often
/// straightens curly quotes or rewraps lines). Of several occurrences, the
/// one nearest to `near` (where the finding was last seen) wins.
pub fn anchor(text: &str, quote: &str, near: Option<usize>) -> Option<TextRange> {
    let quote = quote.trim();
    if quote.is_empty() {
        return None;
    }
    let exact: Vec<TextRange> = text
        .match_indices(quote)
        .map(|(start, found)| TextRange::new(start, start + found.len()))
        .collect();
    if !exact.is_empty() {
        return Some(nearest(exact, near));
    }
    let (normal_text, offsets) = normalise(text);
    let (normal_quote, _) = normalise(quote);
    let normal_quote = normal_quote.trim();
    if normal_quote.is_empty() {
        return None;
    }
    let loose: Vec<TextRange> = normal_text
        .match_indices(normal_quote)
        .map(|(start, found)| {
            let end = start + found.len();
            // The end maps through the last character matched.
            let last = normal_text[..end]
                .char_indices()
                .next_back()
                .map_or(start, |(index, _)| index);
            let original_last = offsets[last];
            let last_len = text[original_last..]
                .chars()
                .next()
                .map_or(0, char::len_utf8);
            TextRange::new(offsets[start], original_last + last_len)
        })
        .collect();
    (!loose.is_empty()).then(|| nearest(loose, near))
}

fn nearest(mut ranges: Vec<TextRange>, near: Option<usize>) -> TextRange {
    if let Some(near) = near {
        ranges.sort_by_key(|range| range.start.abs_diff(near));
    }
    ranges[0]
}

/// `text` with runs of whitespace as one space and curly quotes, dashes and
/// ellipses spelt plainly, and for each byte of the result, the byte of
/// `text` it came from.
fn normalise(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len());
    let mut in_space = false;
    for (index, ch) in text.char_indices() {
        if ch.is_whitespace() {
            if !in_space {
                out.push(' ');
                offsets.push(index);
            }
            in_space = true;
            continue;
        }
        in_space = false;
        let plain = match ch {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => "'",
            '\u{201C}' | '\u{201D}' | '\u{201F}' | '\u{2033}' => "\"",
            '\u{2013}' | '\u{2014}' => "-",
            '\u{2026}' => "...",
            _ => {
                let start = out.len();
                out.push(ch);
                offsets.extend(std::iter::repeat_n(index, out.len() - start));
                continue;
            }
        };
        out.push_str(plain);
        offsets.extend(std::iter::repeat_n(index, plain.len()));
    }
    (out, offsets)
}

/// Writes a run's findings.json.
pub fn write(root: &Path, disk: &Disk, findings: &RunFindings) -> std::io::Result<()> {
    let files = RunFiles::new(root, &findings.run_id);
    let mut bytes = serde_json::to_vec_pretty(findings).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    disk.write_atomic(&files.dir.join(FINDINGS_FILE), &bytes)
}

/// Every run's findings.json that can be read, oldest run first.
pub fn load_all(root: &Path) -> Vec<RunFindings> {
    let Ok(entries) = std::fs::read_dir(root.join(RUNS_DIR)) else {
        return Vec::new();
    };
    let mut all: Vec<RunFindings> = entries
        .flatten()
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|entry| std::fs::read_to_string(entry.path().join(FINDINGS_FILE)).ok())
        .filter_map(|text| serde_json::from_str(&text).ok())
        .collect();
    all.sort_by(|a: &RunFindings, b: &RunFindings| {
        a.completed_at
            .cmp(&b.completed_at)
            .then_with(|| a.run_id.cmp(&b.run_id))
    });
    all
}

/// One line of dismissed.jsonl.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dismissal {
    pub finding_id: String,
    pub run_id: String,
    pub file: String,
    pub quote: String,
    pub message: String,
    pub dismissed_at: String,
}

/// Records that the writer dismissed `finding`.
pub fn dismiss(root: &Path, disk: &Disk, finding: &Finding, at: &str) -> std::io::Result<()> {
    let line = Dismissal {
        finding_id: finding.id.clone(),
        run_id: finding.run_id.clone(),
        file: finding.file.clone(),
        quote: finding.quote.clone(),
        message: finding.message.clone(),
        dismissed_at: at.to_owned(),
    };
    let mut bytes = serde_json::to_vec(&line).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    disk.append_line(&root.join(DISMISSED_FILE), &bytes)
}

/// The ids of every dismissed finding.
pub fn load_dismissed(root: &Path) -> HashSet<String> {
    crate::runs::store::read_jsonl::<Dismissal>(&root.join(DISMISSED_FILE))
        .into_iter()
        .map(|dismissal| dismissal.finding_id)
        .collect()
}

/// The findings the editor shows: of each recipe's runs on a scene, only
/// the latest one that reported (a newer check supersedes an older one),
/// less what the writer dismissed. Remembers where each finding was last
/// anchored, so it follows its own occurrence of a repeated quote.
#[derive(Clone, Debug, Default)]
pub struct FindingStore {
    /// (recipe_id, scene_path) → that pair's latest run's findings.
    runs: BTreeMap<(String, Option<String>), RunFindings>,
    dismissed: HashSet<String>,
    last_seen: HashMap<String, usize>,
}

/// A finding anchored in a file's current text.
#[derive(Clone, Debug, PartialEq)]
pub struct Anchored<'a> {
    pub finding: &'a Finding,
    pub range: TextRange,
}

impl FindingStore {
    /// Reads every run's findings and the dismissals from disk.
    pub fn load(root: &Path) -> FindingStore {
        let mut store = FindingStore {
            dismissed: load_dismissed(root),
            ..FindingStore::default()
        };
        for run in load_all(root) {
            store.insert(run);
        }
        store
    }

    /// Adds a finished run's findings, superseding the same recipe's
    /// earlier run on the same scene.
    pub fn insert(&mut self, run: RunFindings) {
        let key = (run.recipe_id.clone(), run.scene_path.clone());
        self.runs.insert(key, run);
    }

    pub fn dismiss(&mut self, finding_id: &str) {
        self.dismissed.insert(finding_id.to_owned());
    }

    pub fn get(&self, finding_id: &str) -> Option<&Finding> {
        self.findings().find(|finding| finding.id == finding_id)
    }

    /// Every finding not dismissed.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.runs
            .values()
            .flat_map(|run| &run.findings)
            .filter(|finding| !self.dismissed.contains(&finding.id))
    }

    /// The files that have findings.
    pub fn files(&self) -> HashSet<&str> {
        self.findings()
            .map(|finding| finding.file.as_str())
            .collect()
    }

    /// The findings of `file` that its `text` still quotes, where they are now.
    pub fn anchored(&mut self, file: &str, text: &str) -> Vec<Anchored<'_>> {
        let placed: Vec<(String, TextRange)> = self
            .of_file(file)
            .filter_map(|finding| {
                let near = self.last_seen.get(&finding.id).copied();
                Some((finding.id.clone(), anchor(text, &finding.quote, near)?))
            })
            .collect();
        for (id, range) in &placed {
            self.last_seen.insert(id.clone(), range.start);
        }
        let ranges: HashMap<&str, TextRange> = placed
            .iter()
            .map(|(id, range)| (id.as_str(), *range))
            .collect();
        self.of_file(file)
            .filter_map(|finding| {
                Some(Anchored {
                    finding,
                    range: *ranges.get(finding.id.as_str())?,
                })
            })
            .collect()
    }

    fn of_file<'s>(&'s self, file: &str) -> impl Iterator<Item = &'s Finding> {
        let file = file.to_owned();
        self.findings().filter(move |finding| finding.file == file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::store::{RunStatus, RunTask};
    use serde_json::json;

    fn manifest() -> RunManifest {
        let mut args = serde_json::Map::new();
        args.insert("scene_path".into(), json!("Story/Scenes/SCN-a.md"));
        RunManifest {
            run_id: "run_1".into(),
            recipe_id: "creative_draft_scene".into(),
            session_id: "sess_1".into(),
            status: RunStatus::Done,
            created_at: "2026-01-01T00:00:00.000Z".into(),
            updated_at: "2026-01-01T00:00:01.000Z".into(),
            completed_at: Some("2026-01-01T00:00:01.000Z".into()),
            task: RunTask {
                description: "draft scene SCN-a".into(),
                session_plan_task_id: None,
                initial_args: args,
            },
            current_step_index: 1,
            total_steps: 1,
            phase: None,
            error: None,
            review: None,
            scene: None,
            fresh: false,
        }
    }

    fn step(step_id: &str, slot: &str) -> StepRecord {
        StepRecord {
            agent_archetype: Some("continuity".into()),
            receipt_id: Some(format!("rcpt_{step_id}")),
            ..StepRecord::for_tests(0, step_id, slot)
        }
    }

    #[test]
    fn findings_are_kept_only_where_their_quote_is() {
        let draft = "Kael looked up. His blue eyes narrowed.\n\n\u{201C}Go,\u{201D} she said.";
        let slots: BTreeMap<String, Value> = [
            (
                "continuity_report".to_owned(),
                json!({"pass": false, "findings": [
                    {"severity": "error", "quote": "His blue eyes narrowed", "message": "Kael's eyes are grey", "canon": "Compendium/Characters/CHAR-kael.md"},
                    {"severity": "warning", "quote": "a sentence nobody wrote", "message": "invented"},
                    {"severity": "warning", "quote": "Go", "message": "too short"},
                    {"severity": "warning", "quote": "x is here", "file": "../../etc/passwd", "message": "escapes"},
                    {"severity": "loud", "quote": "Kael looked up", "message": "bad severity"}
                ]}),
            ),
            (
                "critique".to_owned(),
                json!({"summary": "ok", "strengths": [], "concerns": [
                    {"severity": "information", "quote": "\"Go,\" she said.", "message": "straight quotes still anchor"}
                ]}),
            ),
        ]
        .into_iter()
        .collect();
        let steps = [
            step("continuity", "continuity_report"),
            step("critique", "critique"),
        ];
        let text_of = |file: &str| (file == "Story/Scenes/SCN-a.md").then(|| draft.to_owned());
        let run = collect(
            &manifest(),
            &steps,
            &slots,
            Some("Story/Scenes/SCN-a.md"),
            &text_of,
        );
        let kept: Vec<(&str, &str)> = run
            .findings
            .iter()
            .map(|f| (f.id.as_str(), f.quote.as_str()))
            .collect();
        assert_eq!(
            kept,
            [
                ("run_1:continuity:1", "His blue eyes narrowed"),
                ("run_1:critique:2", "\"Go,\" she said.")
            ]
        );
        assert_eq!(
            run.findings[0].receipt_id.as_deref(),
            Some("rcpt_continuity")
        );
        let reasons: Vec<&str> = run.dropped.iter().map(|d| d.reason.as_str()).collect();
        assert_eq!(reasons.len(), 4, "{reasons:?}");
        assert!(reasons[0].contains("not in Story/Scenes/SCN-a.md"));
        assert!(reasons[1].contains("shorter than 6"));
        assert!(reasons[2].contains("leaves the workspace"));
        assert!(reasons[3].starts_with("not a finding"));
    }

    #[test]
    fn anchoring_follows_the_text_and_tolerates_rewrapping() {
        let text = "One line.\nThe tide  came\nin quietly.\n";
        let range = anchor(text, "The tide came in quietly.", None).unwrap();
        assert_eq!(&text[range.start..range.end], "The tide  came\nin quietly.");
        assert_eq!(anchor(text, "The tide went out", None), None);

        let repeated = "He waited. Then: he waited.";
        let first = anchor(repeated, "he waited", None).unwrap();
        assert_eq!(first.start, repeated.rfind("he waited").unwrap());
        let near_start = anchor(repeated, "aited", Some(0)).unwrap();
        assert_eq!(near_start.start, repeated.find("aited").unwrap());
        let near_end = anchor(repeated, "aited", Some(repeated.len())).unwrap();
        assert_eq!(near_end.start, repeated.rfind("aited").unwrap());
    }

    #[test]
    fn the_store_supersedes_older_runs_and_remembers_dismissals() {
        let mut store = FindingStore::default();
        let finding = |run: &str, quote: &str| Finding {
            id: format!("{run}:continuity:1"),
            run_id: run.into(),
            step_id: "continuity".into(),
            receipt_id: None,
            file: "Story/Scenes/SCN-a.md".into(),
            severity: FindingSeverity::Warning,
            quote: quote.into(),
            message: "m".into(),
            suggestion: None,
            canon: None,
            report_line: None,
        };
        let run = |id: &str, quote: &str| RunFindings {
            version: 1,
            run_id: id.into(),
            recipe_id: "analytical_consistency".into(),
            scene_path: Some("Story/Scenes/SCN-a.md".into()),
            completed_at: None,
            findings: vec![finding(id, quote)],
            dropped: Vec::new(),
        };
        store.insert(run("run_1", "first quote"));
        store.insert(run("run_2", "second quote"));
        let text = "first quote, second quote";
        let shown: Vec<String> = store
            .anchored("Story/Scenes/SCN-a.md", text)
            .iter()
            .map(|a| a.finding.id.clone())
            .collect();
        assert_eq!(shown, ["run_2:continuity:1"]);
        store.dismiss("run_2:continuity:1");
        assert!(store.anchored("Story/Scenes/SCN-a.md", text).is_empty());
    }
}

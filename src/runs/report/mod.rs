//! The run report: one Markdown file per run,
//! `.control-room/runs/{runId}/report.md`, that a writer opens to see what a
//! run did: where its result went, each agent's output (the brief, the
//! continuity report, the critique…), the findings that could not be
//! anchored and why, the Definition of Done, and a link to every step's
//! receipt. Links are relative, so they work in any Markdown viewer and in
//! git forges.

mod conclude;
mod edits;

pub use conclude::{Concluded, conclude, conclude_failed};

use std::path::Path;

use serde_json::Value;

use crate::receipts::audit;
use crate::runs::contract::ReceiptReply;
use crate::runs::findings::RunFindings;
use crate::runs::output::delivery::{Delivery, EditLine};
use crate::runs::recipe::Recipe;
use crate::runs::store::{Cache, CacheSlot, Disk, RunFiles, RunManifest, RunStatus, StepRecord};

/// The report's file name inside its run's folder.
pub const REPORT_FILE: &str = "report.md";

/// From the run's folder back to the workspace root.
const TO_ROOT: &str = "../../../";

/// Everything the report shows.
pub struct ReportInput<'a> {
    pub manifest: &'a RunManifest,
    pub recipe: Option<&'a Recipe>,
    pub steps: &'a [StepRecord],
    pub cache: &'a Cache,
    pub delivery: &'a Delivery,
    /// The slot holding the draft, for a recipe that writes a scene.
    pub result_slot: Option<&'a str>,
    /// Agent receipts: (receipt id, step id, path).
    pub agent_receipts: &'a [(String, String, String)],
    /// Whether `.control-room/issues/DOD-{runId}.md` exists.
    pub dod_issue: Option<&'a str>,
    /// The replies that broke their contract, kept in the run's folder
    /// (workspace-relative paths, in order).
    pub attempts: &'a [String],
}

/// The kept attempts of run `run_id` (see the runner's `keep_attempt`),
/// workspace-relative, in the order they were made.
pub fn kept_attempts(root: &Path, run_id: &str) -> Vec<String> {
    let folder = format!("{}/{run_id}/attempts", crate::runs::store::RUNS_DIR);
    let Ok(entries) = std::fs::read_dir(root.join(&folder)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .collect();
    // `draft.2.md` before `draft.10.md`.
    names.sort_by_key(|name| {
        let stem = name.trim_end_matches(".md");
        let (step, number) = stem.rsplit_once('.').unwrap_or((stem, "0"));
        (step.to_owned(), number.parse::<u32>().unwrap_or(0))
    });
    names
        .into_iter()
        .map(|name| format!("{folder}/{name}"))
        .collect()
}

/// The workspace-relative path of a run's report.
pub fn report_path(run_id: &str) -> String {
    format!("{}/{run_id}/{REPORT_FILE}", crate::runs::store::RUNS_DIR)
}

/// Writes the report atomically; returns its workspace-relative path.
pub fn write(root: &Path, disk: &Disk, run_id: &str, text: &str) -> std::io::Result<String> {
    let files = RunFiles::new(root, run_id);
    disk.write_atomic(&files.dir.join(REPORT_FILE), text.as_bytes())?;
    Ok(report_path(run_id))
}

/// The review loop: one row per draft, what the gates and the reviewer said.
fn review_section(
    out: &mut Lines,
    review: &crate::runs::review::ReviewState,
    block: &crate::runs::recipe::Review,
    input: &ReportInput,
) {
    use crate::runs::review::Outcome;
    out.push(String::new());
    out.push("## Review".to_owned());
    out.push(String::new());
    let outcome = match review.outcome {
        Outcome::Reviewing => "under way",
        Outcome::Approved => "approved",
        Outcome::Escalated => "left to you",
        Outcome::NeedsScoping => "the task needs scoping",
        Outcome::Split => "the task is split",
    };
    out.push(format!(
        "{} draft{} (at most {}); outcome: **{outcome}**.",
        review.iterations,
        if review.iterations == 1 { "" } else { "s" },
        block.max_iterations
    ));
    if let Some(reason) = &review.reason {
        out.push(String::new());
        out.push(format!("> {}", one_line(reason)));
    }
    for subtask in &review.subtasks {
        out.push(format!("- subtask: {subtask}"));
    }
    out.push(String::new());
    out.push("| draft | gates | verdict | confidence | feedback |".to_owned());
    out.push("|---|---|---|---|---|".to_owned());
    let writer_slot = input
        .recipe
        .and_then(|recipe| crate::runs::review::Schedule::new(recipe).review())
        .map_or(block.after.as_str(), |(_, writer)| {
            writer.output_slot.as_str()
        });
    for k in 1..=review.iterations {
        out.push(review_row(input, block, writer_slot, k));
    }
}

/// The review table's row for draft `k`: its length, the gates' summary,
/// and the reviewer's verdict, confidence and feedback.
fn review_row(
    input: &ReportInput,
    block: &crate::runs::recipe::Review,
    writer_slot: &str,
    k: u32,
) -> String {
    use crate::runs::review::iteration_slot;
    let words = match input.cache.get(&iteration_slot(writer_slot, k)) {
        Some(CacheSlot::Artifact { text, .. }) => {
            format!("{k} ({} words)", text.split_whitespace().count())
        }
        _ => k.to_string(),
    };
    let gates = match input
        .cache
        .get(&iteration_slot(crate::runs::recipe::GATES_STEP, k))
    {
        Some(CacheSlot::Pointer { summary, .. }) => {
            summary.replace("the draft ", "").replace('|', "\\|")
        }
        _ => "not run".to_owned(),
    };
    let (verdict, confidence, feedback) =
        match input.cache.get(&iteration_slot(&block.output_slot, k)) {
            Some(CacheSlot::Artifact { text, .. }) => {
                let value = crate::runs::contract::stored_json(text).unwrap_or(Value::Null);
                let verdict = match (value["verdict"].as_str(), value["rejection_type"].as_str()) {
                    (Some(verdict), Some(kind)) => format!("{verdict} ({kind})"),
                    (Some(verdict), None) => verdict.to_owned(),
                    _ => "unreadable".to_owned(),
                };
                (
                    verdict,
                    value["confidence"]
                        .as_f64()
                        .map_or_else(String::new, |c| format!("{c:.2}")),
                    one_line(value["feedback"].as_str().unwrap_or_default()).replace('|', "\\|"),
                )
            }
            _ => ("not reviewed".to_owned(), String::new(), String::new()),
        };
    format!("| {words} | {gates} | {verdict} | {confidence} | {feedback} |")
}

/// Renders the report, and notes in `findings` the line of each finding.
pub fn render(input: &ReportInput, findings: &mut RunFindings) -> String {
    let manifest = input.manifest;
    let mut out = Lines::default();
    summary_section(&mut out, input, findings);
    if let (Some(review), Some(block)) = (
        &manifest.review,
        input.recipe.and_then(|recipe| recipe.review.as_ref()),
    ) {
        review_section(&mut out, review, block, input);
    }
    edits::section(&mut out, input.delivery);
    outputs_section(&mut out, input, findings);
    dropped_section(&mut out, findings);
    attempts_section(&mut out, input);
    steps_section(&mut out, input);
    out.0.join("\n") + "\n"
}

/// The title and the run's summary: its task, times, result, Definition of
/// Done, error and how many findings the editor shows.
fn summary_section(out: &mut Lines, input: &ReportInput, findings: &RunFindings) {
    let manifest = input.manifest;
    let label = input
        .recipe
        .map_or(manifest.recipe_id.as_str(), |recipe| recipe.label.as_str());
    let scene = manifest
        .task
        .initial_args
        .get("scene_id")
        .or(manifest.task.initial_args.get("scene_path"))
        .and_then(Value::as_str);
    match scene {
        Some(scene) => out.push(format!("# {label}: {scene}")),
        None => out.push(format!("# {label}")),
    }
    out.push(String::new());
    out.push(format!(
        "- Run: `{}` ({}), **{}**",
        manifest.run_id,
        manifest.recipe_id,
        manifest.status.as_str()
    ));
    out.push(format!("- Task: {}", manifest.task.description));
    out.push(format!(
        "- Started {}; finished {}",
        manifest.created_at,
        manifest.completed_at.as_deref().unwrap_or("not yet")
    ));
    if let Some(result) = result_line(input.delivery) {
        out.push(result);
    }
    if let Some(issue) = input.dod_issue {
        out.push(format!(
            "- Definition of Done: **failed**, see {}",
            link(issue)
        ));
    } else if manifest.status == RunStatus::Done {
        out.push("- Definition of Done: passed".to_owned());
    }
    if let Some(error) = &manifest.error {
        out.push(format!("- Error: {error}"));
    }
    if !findings.findings.is_empty() {
        out.push(format!(
            "- Findings shown in the editor: {}",
            findings.findings.len()
        ));
    }
}

/// The summary's line saying where the result went, if the recipe has one.
fn result_line(delivery: &Delivery) -> Option<String> {
    match delivery {
        Delivery::Report => None,
        Delivery::Scene(path) => Some(format!("- Result: {}", link(path))),
        Delivery::Beside { path, reason } => Some(format!(
            "- Result: written beside the scene as {} because {reason}; nothing in the scene was changed",
            link(path)
        )),
        Delivery::Withheld(reason) => Some(format!("- Result: not written, {reason}")),
        Delivery::Edits { changed, refused } => Some(edits::result_line(changed, refused)),
    }
}

/// One section per agent output of the run's main phase, in step order.
fn outputs_section(out: &mut Lines, input: &ReportInput, findings: &mut RunFindings) {
    for step in input.steps.iter().filter(|step| step.phase == "b") {
        let Some(CacheSlot::Artifact { text, .. }) = input.cache.get(&step.output_slot) else {
            continue;
        };
        out.push(String::new());
        out.push(format!(
            "## {} (step `{}`, {})",
            heading(&step.output_slot),
            step.step_id,
            step.agent_archetype.as_deref().unwrap_or("agent")
        ));
        out.push(String::new());
        // A draft that landed is already linked as the result, so it is
        // not repeated here.
        let landed = matches!(input.delivery, Delivery::Scene(_) | Delivery::Beside { .. });
        let words = text.split_whitespace().count();
        if input.result_slot == Some(step.output_slot.as_str()) && landed {
            out.push(format!(
                "The final draft ({words} words) is the result above."
            ));
            continue;
        }
        let value = crate::runs::contract::stored_json(text).filter(Value::is_object);
        if let (Some(value), Delivery::Edits { .. }) = (&value, input.delivery)
            && value["edits"].is_array()
        {
            let count = value["edits"].as_array().map_or(0, Vec::len);
            out.push(format!("{count} edit(s) proposed: see Edits above."));
            continue;
        }
        if let Some(reply) = value
            .clone()
            .and_then(|value| serde_json::from_value::<ReceiptReply>(value).ok())
        {
            render_receipt(out, &reply);
        } else if let Some(value) = value {
            render_json(out, &step.step_id, &value, findings);
        } else {
            for line in text.trim().lines() {
                out.push(line.to_owned());
            }
        }
    }
}

/// The findings that could not be anchored in the text, and why; nothing
/// when every finding was shown.
fn dropped_section(out: &mut Lines, findings: &RunFindings) {
    if findings.dropped.is_empty() {
        return;
    }
    out.push(String::new());
    out.push("## Findings not shown".to_owned());
    out.push(String::new());
    out.push(
        "Only findings whose quote is in the text are shown as diagnostics; these were not:"
            .to_owned(),
    );
    out.push(String::new());
    for dropped in &findings.dropped {
        out.push(format!(
            "- step `{}`: “{}”: {} (*{}*)",
            dropped.step_id,
            one_line(&dropped.quote),
            one_line(&dropped.message),
            dropped.reason
        ));
    }
}

/// What the model wrote in the replies that broke their contract: kept for
/// the writer to read, never written into the manuscript.
fn attempts_section(out: &mut Lines, input: &ReportInput) {
    if input.attempts.is_empty() {
        return;
    }
    out.push(String::new());
    out.push("## What the model wrote that was not used".to_owned());
    out.push(String::new());
    out.push(
        "Each reply that broke its contract, as the model wrote it; none reached the manuscript."
            .to_owned(),
    );
    out.push(String::new());
    for path in input.attempts {
        out.push(format!("- {}", link(path)));
    }
}

/// The table of every step with a link to its receipt, and the run's files.
fn steps_section(out: &mut Lines, input: &ReportInput) {
    let manifest = input.manifest;
    out.push(String::new());
    out.push("## Steps and receipts".to_owned());
    out.push(String::new());
    out.push("| # | step | by | receipt | tokens | finished |".to_owned());
    out.push("|---|---|---|---|---|---|".to_owned());
    let tool_log = format!(
        ".control-room/audit/sessions/{}/tool_receipts.jsonl",
        manifest.session_id
    );
    for step in input.steps {
        let by = step
            .tool
            .as_deref()
            .or(step.agent_archetype.as_deref())
            .unwrap_or("");
        let receipt = receipt_cell(step, input, &tool_log);
        let tokens = step.tokens.map_or(String::new(), tokens_cell);
        out.push(format!(
            "| {} | `{}` | {by} | {receipt} | {tokens} | {} |",
            step.step_index + 1,
            step.step_id,
            step.completed_at
        ));
    }
    let total = input
        .steps
        .iter()
        .filter_map(|step| step.tokens)
        .reduce(crate::llm::model::Usage::plus);
    if let Some(total) = total {
        out.push(String::new());
        out.push(format!("The model calls cost {}.", tokens_cell(total)));
    }
    out.push(String::new());
    out.push(format!(
        "Run files: [run.json](run.json), [steps.jsonl](steps.jsonl), [cache.json](cache.json); packets and agent receipts in `{}/{}/`.",
        audit::AUDIT_DIR,
        manifest.run_id
    ));
}

/// "1,234 in (1,000 from the cache), 56 out", with how many calls, and
/// "estimated" where the server gave no figures.
pub fn tokens_cell(usage: crate::llm::model::Usage) -> String {
    use crate::text::grouped;
    let cached = usage.cached.map_or(String::new(), |cached| {
        format!(" ({} from the cache)", grouped(cached))
    });
    let calls = match usage.calls {
        1 => String::new(),
        calls => format!(" in {calls} calls"),
    };
    let estimated = match usage.estimated {
        0 => "",
        _ if usage.estimated == usage.calls => ", estimated",
        _ => ", partly estimated",
    };
    format!(
        "{} in{cached}, {} out{calls}{estimated}",
        grouped(usage.prompt),
        grouped(usage.reply)
    )
}

/// A step's receipt id, linked to the session's tool log for a tool and to
/// its own file for an agent when known; empty for a step without one.
fn receipt_cell(step: &StepRecord, input: &ReportInput, tool_log: &str) -> String {
    match (&step.receipt_id, &step.tool) {
        (Some(id), Some(_)) => format!("[`{id}`]({TO_ROOT}{tool_log})"),
        (Some(id), None) => input
            .agent_receipts
            .iter()
            .find(|(receipt, _, _)| receipt == id)
            .map_or_else(
                || format!("`{id}`"),
                |(_, _, path)| format!("[`{id}`]({TO_ROOT}{path})"),
            ),
        (None, _) => String::new(),
    }
}

/// Lines of the report, so findings can note where they are.
#[derive(Default)]
struct Lines(Vec<String>);

impl Lines {
    fn push(&mut self, line: String) {
        self.0.push(line);
    }

    fn next_line(&self) -> u32 {
        u32::try_from(self.0.len()).unwrap_or(u32::MAX)
    }
}

fn render_json(out: &mut Lines, step_id: &str, value: &Value, findings: &mut RunFindings) {
    let Some(object) = value.as_object() else {
        return;
    };
    for (key, item) in object {
        match (key.as_str(), item) {
            ("summary", Value::String(text)) => {
                out.push(text.trim().to_owned());
                out.push(String::new());
            }
            ("pass", Value::Bool(pass)) => {
                out.push(format!("Passes: **{}**", if *pass { "yes" } else { "no" }));
                out.push(String::new());
            }
            ("findings" | "concerns", Value::Array(items)) => {
                out.push(format!("{}:", heading(key)));
                out.push(String::new());
                if items.is_empty() {
                    out.push("- none".to_owned());
                }
                for item in items {
                    render_finding(out, step_id, item, findings);
                }
                out.push(String::new());
            }
            (_, Value::Array(items)) if items.iter().all(Value::is_string) => {
                out.push(format!("{}:", heading(key)));
                out.push(String::new());
                if items.is_empty() {
                    out.push("- none".to_owned());
                }
                for item in items.iter().filter_map(Value::as_str) {
                    out.push(format!("- {}", one_line(item)));
                }
                out.push(String::new());
            }
            (_, Value::String(text)) => {
                out.push(format!("{}: {}", heading(key), one_line(text)));
                out.push(String::new());
            }
            _ => {
                out.push(format!("{}:", heading(key)));
                out.push(String::new());
                out.push("```json".to_owned());
                let pretty = serde_json::to_string_pretty(item).unwrap_or_default();
                for line in pretty.lines() {
                    out.push(line.to_owned());
                }
                out.push("```".to_owned());
                out.push(String::new());
            }
        }
    }
}

/// A step whose reply is its receipt: the agent's report first, then its
/// decisions, its checks, what it fears and assumes, and what it advises.
fn render_receipt(out: &mut Lines, reply: &ReceiptReply) {
    out.push(reply.report_excerpt.trim().to_owned());
    out.push(String::new());
    let mut list = |title: &str, items: Vec<String>| {
        if items.is_empty() {
            return;
        }
        out.push(format!("{title}:"));
        out.push(String::new());
        for item in &items {
            out.push(format!("- {}", one_line(item)));
        }
        out.push(String::new());
    };
    list("Decisions", reply.decisions.clone());
    list(
        "Checks",
        reply
            .checks_performed
            .iter()
            .map(|check| {
                let held = if check.passed { "held" } else { "failed" };
                format!("{} ({held}): {}", check.check, check.detail)
            })
            .collect(),
    );
    list("Risks", reply.risks.clone());
    list("Assumptions", reply.assumptions.clone());
    list("Cited", reply.citations.clone());
    out.push(format!(
        "Next: {}",
        one_line(&reply.next_recommended_action)
    ));
}

fn render_finding(out: &mut Lines, step_id: &str, item: &Value, findings: &mut RunFindings) {
    let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
    let (quote, message) = (text("quote"), text("message"));
    let mut line = format!(
        "- **{}** “{}”: {}",
        text("severity"),
        one_line(quote),
        one_line(message)
    );
    if !text("suggestion").is_empty() {
        line.push_str(&format!(" Suggestion: {}", one_line(text("suggestion"))));
    }
    if !text("canon").is_empty() {
        line.push_str(&format!(" (canon: `{}`)", text("canon")));
    }
    let at = out.next_line();
    let shown = findings.findings.iter_mut().find(|finding| {
        finding.step_id == step_id
            && finding.quote == quote
            && finding.message == message
            && finding.report_line.is_none()
    });
    match shown {
        Some(finding) => {
            finding.report_line = Some(at);
            line.push_str(&format!(" [in {}]", link(&finding.file)));
        }
        None => line.push_str(" *(not shown: see below)*"),
    }
    out.push(line);
}

/// A Markdown link from the report to a workspace file.
fn link(path: &str) -> String {
    format!("[{path}]({TO_ROOT}{})", path.replace(' ', "%20"))
}

/// `continuity_report` as "Continuity report".
/// `scene_brief` → "Scene brief"; a review loop's `draft#2` → "Draft, draft 2".
fn heading(slot: &str) -> String {
    let (name, iteration) = slot
        .split_once('#')
        .map_or((slot, None), |(name, k)| (name, Some(k)));
    let spaced = name.replace('_', " ");
    let mut chars = spaced.chars();
    let title = chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().collect::<String>() + chars.as_str()
    });
    match iteration {
        Some(k) => format!("{title}, draft {k}"),
        None => title,
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;

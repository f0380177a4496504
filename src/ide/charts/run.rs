//! A run's timeline: one row a step, in the order it ran, a bar from when it
//! started to when it finished (from `steps.jsonl`), coloured by what ran it
//! (a tool, an agent) and red where it stopped; how many of an agent's
//! replies broke their contract (its receipt's checks) is written beside it. A step that stopped
//! (STOP_HOOK) has no line in `steps.jsonl`: its receipt gives its times.

use std::path::Path;

use svg::node::element::{Rectangle, Text, Title};

use crate::receipts::audit;
use crate::runs::store::RunFiles;

/// One step of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStep {
    pub step_id: String,
    /// `tool`, `agent`, or `stopped`.
    pub kind: &'static str,
    /// Milliseconds from the run's start to the step's start and end.
    pub start_ms: i64,
    pub end_ms: i64,
    /// The model's replies the step took (0 for a tool), and how many of
    /// them broke their contract (each asked again, or, the last, stopped).
    pub replies: u32,
    pub broken: u32,
}

/// A run's steps in time.
#[derive(Clone, Debug, PartialEq)]
pub struct RunChart {
    pub title: String,
    pub steps: Vec<RunStep>,
}

impl RunChart {
    /// The replies that broke their contract, over every step.
    pub fn broken(&self) -> u32 {
        self.steps.iter().map(|s| s.broken).sum()
    }
}

fn millis(at: &str) -> Option<i64> {
    at.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// A receipt's replies and the broken ones among them.
fn tally(receipt: &audit::AgentReceipt) -> (u32, u32) {
    let tally = audit::ContractTally::of(std::slice::from_ref(receipt));
    (tally.replies, tally.broken)
}

/// The chart of run `run_id` of the workspace at `root`.
pub fn run(root: &Path, run_id: &str) -> Result<RunChart, crate::runs::store::RunFileError> {
    let files = RunFiles::new(root, run_id);
    let manifest = files.read_manifest()?;
    let receipts = audit::load_receipts(root, run_id);
    let agent = |step_id: &str| {
        receipts
            .iter()
            .rev()
            .find(|receipt| receipt.step_id == step_id)
            .map_or((0, 0), tally)
    };
    let origin = millis(&manifest.created_at).unwrap_or(0);
    let mut steps: Vec<RunStep> = files
        .read_steps()
        .iter()
        .map(|line| {
            let start = millis(&line.started_at).unwrap_or(origin);
            let (replies, broken) = match line.tool {
                Some(_) => (0, 0),
                None => agent(&line.step_id),
            };
            RunStep {
                step_id: line.step_id.clone(),
                kind: if line.tool.is_some() { "tool" } else { "agent" },
                start_ms: start - origin,
                end_ms: millis(&line.completed_at).unwrap_or(start) - origin,
                replies,
                broken,
            }
        })
        .collect();
    for receipt in receipts.iter().filter(|receipt| receipt.stop_hook) {
        let start = millis(&receipt.started_at).unwrap_or(origin);
        let (replies, broken) = tally(receipt);
        steps.push(RunStep {
            step_id: receipt.step_id.clone(),
            kind: "stopped",
            start_ms: start - origin,
            end_ms: millis(&receipt.finished_at).unwrap_or(start) - origin,
            replies,
            broken,
        });
    }
    steps.sort_by_key(|step| step.start_ms);
    Ok(RunChart {
        title: format!(
            "Run {run_id} ({}): {}",
            manifest.recipe_id,
            manifest.status.as_str()
        ),
        steps,
    })
}

const LEFT: usize = 150;
const WIDTH: usize = 600;
const ROW: usize = 22;
const TOP: usize = 50;

fn colour(kind: &str) -> &'static str {
    match kind {
        "tool" => super::SKY,
        "agent" => super::BLUE,
        _ => super::VERMILION,
    }
}

/// A time as the axis writes it: `850 ms`, `12.5 s`, `3 min 5 s`.
fn time(ms: i64) -> String {
    match ms {
        ms if ms < 1000 => format!("{ms} ms"),
        ms if ms < 60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        ms => format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000),
    }
}

/// The run as a self-contained SVG document.
pub fn svg(chart: &RunChart) -> String {
    let end = chart
        .steps
        .iter()
        .map(|s| s.end_ms)
        .max()
        .unwrap_or(0)
        .max(1);
    let x_of = |ms: i64| LEFT + (ms.clamp(0, end) as f64 / end as f64 * WIDTH as f64) as usize;
    let rows = chart.steps.len() * ROW;
    let height = TOP + rows + 80;
    let items = [
        (super::SKY, "a tool"),
        (super::BLUE, "an agent (a model)"),
        (super::VERMILION, "a step that stopped"),
    ];
    let mut document = super::canvas(
        (LEFT + WIDTH + 120).max(super::legend_width(&items) + 16),
        height,
        &chart.title,
    );
    // The time axis: the run's start, its quarters, its end.
    for quarter in 0..=4 {
        let ms = end * quarter / 4;
        document = super::tick(document, x_of(ms), TOP, TOP + rows, &time(ms));
    }
    document = super::axis_label(
        document,
        LEFT + WIDTH / 2,
        TOP + rows + 18,
        "time since the run started; a step's bar from when it began to when it ended",
    );
    document = super::legend(document, 8, TOP + rows + 34, &items);
    for (row, step) in chart.steps.iter().enumerate() {
        let y = TOP + row * ROW;
        let seconds = (step.end_ms - step.start_ms) as f64 / 1000.0;
        let tooltip = format!(
            "{} ({}): {seconds:.2} s{}",
            step.step_id,
            step.kind,
            match (step.replies, step.broken) {
                (0 | 1, 0) => String::new(),
                (replies, 0) => format!(", {replies} replies"),
                (replies, broken) => {
                    format!(", {replies} replies, {broken} broke their contract")
                }
            }
        );
        document = document
            .add(
                Text::new(step.step_id.as_str())
                    .set("x", LEFT - 8)
                    .set("y", y + ROW - 8)
                    .set("text-anchor", "end"),
            )
            .add(
                Rectangle::new()
                    .set("class", format!("step {}", step.kind))
                    .set("x", x_of(step.start_ms))
                    .set("y", y + 4)
                    .set(
                        "width",
                        x_of(step.end_ms).saturating_sub(x_of(step.start_ms)).max(2),
                    )
                    .set("height", ROW - 8)
                    .set("fill", colour(step.kind))
                    .add(Title::new(tooltip)),
            );
        if step.broken > 0 {
            document = document.add(
                Text::new(format!("{} broken", step.broken))
                    .set("class", "retries")
                    .set("x", x_of(step.end_ms) + 4)
                    .set("y", y + ROW - 8),
            );
        }
    }
    document.to_string()
}

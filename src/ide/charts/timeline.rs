//! The story's timeline: each scene of the outline, in the outline's order
//! along the page, at its story date down it (the story clock's day, its
//! `time:` narrowing it), so the telling and the story's time can be seen
//! together. A scene marked `flashback: true` is drawn as one; a scene set
//! wholly before one already told, and not marked, is drawn as a jump
//! back (what `timeline-order` warns of). Scenes without a date stand on
//! the axis, undated.

use serde_json::{Value, json};
use svg::node::element::{Circle, Line, Polyline, Text, Title};

use crate::index::calendar::DAY;
use crate::index::{Book, Workspace};

/// How a scene stands against the story's time so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Later than, or with, what is told before it.
    Forward,
    /// Marked `flashback: true`.
    Flashback,
    /// Wholly before a scene told earlier, and not marked.
    Back,
}

impl Turn {
    fn as_str(self) -> &'static str {
        match self {
            Turn::Forward => "in order",
            Turn::Flashback => "flashback",
            Turn::Back => "goes back in time, unmarked",
        }
    }

    fn colour(self) -> &'static str {
        match self {
            Turn::Forward => "#1f3a5f",
            Turn::Flashback => "#d08a1a",
            Turn::Back => "#b3261e",
        }
    }
}

/// One scene of the outline on the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub scene_id: String,
    /// Its day, counted from the calendar's fixed day; `None` undated.
    pub day: Option<i64>,
    /// Its date as the calendar writes it.
    pub date: Option<String>,
    pub turn: Turn,
}

/// The timeline of the manuscript.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// In outline order.
    pub points: Vec<Point>,
}

impl Timeline {
    pub fn figures(&self) -> Value {
        let count = |turn: Turn| self.points.iter().filter(|p| p.turn == turn).count();
        json!({
            "scenes": self.points.len(),
            "dated": self.points.iter().filter(|p| p.day.is_some()).count(),
            "flashbacks": count(Turn::Flashback),
            "back": count(Turn::Back),
        })
    }
}

/// The timeline of the manuscript as `workspace` holds it.
pub fn timeline(workspace: &Workspace) -> Timeline {
    let book = Book::of(workspace);
    let clock = workspace.clock();
    // The earliest minute of the latest scene told so far, flashbacks aside.
    let mut told: Option<i64> = None;
    let points = book
        .scenes
        .iter()
        .map(|entry| {
            let scene = entry.file.as_ref().and_then(|file| file.scene());
            let span = scene.and_then(|scene| clock.when(scene));
            let flashback = scene.is_some_and(|scene| scene.flashback);
            let turn = match span {
                Some(_) if flashback => Turn::Flashback,
                Some(span) if told.is_some_and(|told| span.latest <= told) => Turn::Back,
                _ => Turn::Forward,
            };
            if let Some(span) = span
                && turn == Turn::Forward
            {
                told = Some(told.map_or(span.earliest, |told| told.max(span.earliest)));
            }
            Point {
                scene_id: entry.scene_id.clone(),
                day: span.map(|span| span.earliest.div_euclid(DAY)),
                date: scene
                    .and_then(|scene| scene.story_date.as_ref())
                    .map(|date| clock.format(date)),
                turn,
            }
        })
        .collect();
    Timeline { points }
}

const COLUMN: usize = 28;
const LEFT: usize = 110;
const TOP: usize = 40;
const HEIGHT: usize = 320;

/// The timeline as a self-contained SVG document.
pub fn svg(chart: &Timeline, title: &str) -> String {
    let title = format!("{title}: the story's time against the telling");
    let width = (LEFT + chart.points.len() * COLUMN + 80).max(480);
    let height = TOP + HEIGHT + 130;
    let days: Vec<i64> = chart.points.iter().filter_map(|p| p.day).collect();
    let (first, last) = (
        days.iter().copied().min().unwrap_or(0),
        days.iter().copied().max().unwrap_or(0),
    );
    let span = (last - first).max(1) as f64;
    let y_of = |day: i64| TOP + ((day - first) as f64 / span * HEIGHT as f64).round() as usize;
    let x_of = |at: usize| LEFT + at * COLUMN + COLUMN / 2;
    let mut document = super::canvas(width, height, &title)
        .add(
            Line::new()
                .set("x1", LEFT)
                .set("y1", TOP)
                .set("x2", LEFT)
                .set("y2", TOP + HEIGHT)
                .set("stroke", "#888888"),
        )
        .add(axis_label(first, TOP, chart))
        .add(axis_label(last, TOP + HEIGHT, chart));
    // The telling's line through the scenes in order, flashbacks aside.
    let path: Vec<(usize, usize)> = chart
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.turn != Turn::Flashback)
        .filter_map(|(at, p)| p.day.map(|day| (x_of(at), y_of(day))))
        .collect();
    document = document.add(
        Polyline::new()
            .set("points", path)
            .set("fill", "none")
            .set("stroke", "#8fb3dc"),
    );
    let legend_y = height - 16;
    for (at, turn) in [Turn::Forward, Turn::Flashback, Turn::Back]
        .into_iter()
        .enumerate()
    {
        let x = 14 + at * 110;
        document = document
            .add(
                Circle::new()
                    .set("cx", x)
                    .set("cy", legend_y - 4)
                    .set("r", 5)
                    .set("fill", turn.colour()),
            )
            .add(Text::new(turn.as_str()).set("x", x + 10).set("y", legend_y));
    }
    for (at, point) in chart.points.iter().enumerate() {
        let x = x_of(at);
        let label_y = TOP + HEIGHT + 14;
        document = document.add(
            Text::new(point.scene_id.trim_start_matches("SCN-"))
                .set("class", "scene")
                .set("x", x)
                .set("y", label_y)
                .set("transform", format!("rotate(60 {x} {label_y})")),
        );
        let Some(day) = point.day else {
            continue;
        };
        let tooltip = format!(
            "{}: {} ({})",
            point.scene_id,
            point.date.as_deref().unwrap_or("dated"),
            point.turn.as_str()
        );
        document = document.add(
            Circle::new()
                .set(
                    "class",
                    format!("scene {}", point.turn.as_str().replace([' ', ','], "-")),
                )
                .set("cx", x)
                .set("cy", y_of(day))
                .set("r", 5)
                .set("fill", point.turn.colour())
                .add(Title::new(tooltip)),
        );
    }
    document.to_string()
}

/// The date of the day on the axis, as the first scene on it writes it.
fn axis_label(day: i64, y: usize, chart: &Timeline) -> Text {
    let date = chart
        .points
        .iter()
        .find(|p| p.day == Some(day))
        .and_then(|p| p.date.clone())
        .unwrap_or_default();
    Text::new(date)
        .set("x", LEFT - 6)
        .set("y", y + 4)
        .set("text-anchor", "end")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_examples_timeline_runs_forward_but_for_the_vigil_dated_before_the_fall() {
        let workspace = Workspace::load(&crate::index::test_support::example_root());
        let chart = timeline(&workspace);
        assert_eq!(chart.points.first().unwrap().scene_id, "SCN-the-arrival");
        let back: Vec<&str> = chart
            .points
            .iter()
            .filter(|p| p.turn != Turn::Forward)
            .map(|p| p.scene_id.as_str())
            .collect();
        // The vigil (the 13th) is told after the fall (the 14th).
        assert_eq!(back, ["SCN-the-vigil"], "{chart:#?}");
        let reckoning = chart.points.last().unwrap();
        assert_eq!(
            (reckoning.scene_id.as_str(), reckoning.day),
            ("SCN-the-reckoning", None)
        );
        let svg = svg(&chart, "The Salt Road");
        let dated = chart.points.iter().filter(|p| p.day.is_some()).count();
        assert_eq!(svg.matches("<circle class=\"scene ").count(), dated);
    }
}

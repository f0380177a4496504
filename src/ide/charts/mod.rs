//! Pictures of the book, each as data (for tests and tools) and as a
//! self-contained SVG drawn with the `svg` crate, readable without a
//! network, every mark with its tooltip: `presence` (who is in which
//! scene), `timeline` (the scenes by story date against outline order,
//! flashbacks marked), `beats` (the beat sheet against where its scenes
//! stand in the manuscript) and `run` (a run's steps, their durations and
//! retries). `png` rasterises any of them. The command line and the
//! language server both draw through [`draw`].

pub mod beats;
pub mod png;
pub mod presence;
pub mod run;
pub mod timeline;

use crate::kb::graph::GraphCache;
use std::path::Path;

use serde_json::{Value, json};

pub use presence::{Presence, PresenceChart, presence, presence_svg};

use crate::index::{Book, Workspace};

/// The charts there are.
pub const KINDS: &str = "presence, timeline, beats, run RUN";

/// Which chart to draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChartKind {
    Presence,
    Timeline,
    Beats,
    /// The run with this id.
    Run(String),
}

impl ChartKind {
    /// The chart `kind` names (`run` with its run's id).
    pub fn parse(kind: &str, run: Option<&str>) -> Result<ChartKind, ChartError> {
        match (kind, run) {
            ("presence", _) => Ok(ChartKind::Presence),
            ("timeline", _) => Ok(ChartKind::Timeline),
            ("beats", _) => Ok(ChartKind::Beats),
            ("run", Some(run)) => Ok(ChartKind::Run(run.to_owned())),
            ("run", None) => Err(ChartError::NoRun),
            (other, _) => Err(ChartError::Unknown(other.to_owned())),
        }
    }

    /// Its name, which is also its file's (`run-RUN` for a run).
    pub fn name(&self) -> String {
        match self {
            ChartKind::Presence => "presence".into(),
            ChartKind::Timeline => "timeline".into(),
            ChartKind::Beats => "beats".into(),
            ChartKind::Run(run) => format!("run-{run}"),
        }
    }
}

/// Why a chart cannot be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("`{0}` is not a chart; the charts are: {KINDS}")]
    Unknown(String),
    #[error("the run chart needs the run's id: chart run RUN")]
    NoRun,
    #[error("the outline lists no scenes: there is nothing to chart")]
    NoScenes,
    #[error("no scene of the outline has a date: there is no timeline to draw")]
    NoDates,
    #[error("there is no beat sheet (Story/Bible/beat-sheet.md): there are no beats to place")]
    NoBeatSheet,
    #[error("run {run_id}: {error}")]
    Run {
        run_id: String,
        #[source]
        error: crate::runs::store::RunFileError,
    },
}

/// A chart drawn: its title, its SVG, and what it shows in figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Drawn {
    pub title: String,
    pub svg: String,
    /// Counts of what it shows (`cells`, `scenes`, `flashbacks`, `steps`…).
    pub figures: Value,
}

/// Draws chart `kind` of the manuscript `workspace` holds (a run's from
/// its folder under `root`).
pub fn draw(
    workspace: &Workspace,
    root: &Path,
    kind: &ChartKind,
    graph: &GraphCache,
) -> Result<Drawn, ChartError> {
    let book = Book::of(workspace);
    let title = book.title(workspace);
    match kind {
        ChartKind::Presence => {
            let chart = presence::presence_with(workspace, graph);
            if chart.scenes.is_empty() {
                return Err(ChartError::NoScenes);
            }
            let cells = chart.cells.iter().flatten().filter(|c| c.is_some()).count();
            Ok(Drawn {
                svg: presence_svg(&chart, &title),
                figures: json!({
                    "cells": cells,
                    "characters": chart.characters.len(),
                    "scenes": chart.scenes.len(),
                }),
                title,
            })
        }
        ChartKind::Timeline => {
            let chart = timeline::timeline(workspace);
            if chart.points.iter().all(|point| point.day.is_none()) {
                return Err(ChartError::NoDates);
            }
            Ok(Drawn {
                svg: timeline::svg(&chart, &title),
                figures: chart.figures(),
                title,
            })
        }
        ChartKind::Beats => {
            let (beats, partial) =
                crate::health::beats::places(workspace).ok_or(ChartError::NoBeatSheet)?;
            let tolerance = workspace.config().health.beat_tolerance;
            let placed = beats.iter().filter(|beat| beat.actual.is_some()).count();
            let off = beats.iter().filter(|beat| beat.is_off(tolerance)).count();
            Ok(Drawn {
                svg: beats::svg(&beats, &title, tolerance, partial),
                figures: json!({"beats": beats.len(), "placed": placed, "off": off, "estimated": partial}),
                title,
            })
        }
        ChartKind::Run(run_id) => {
            let chart = run::run(root, run_id).map_err(|error| ChartError::Run {
                run_id: run_id.clone(),
                error,
            })?;
            Ok(Drawn {
                svg: run::svg(&chart),
                figures: json!({"steps": chart.steps.len(), "broken": chart.broken()}),
                title: chart.title.clone(),
            })
        }
    }
}

/// Colours told apart by readers with any kind of colour blindness (the
/// Okabe–Ito palette), strongest first.
pub(crate) const BLUE: &str = "#0072b2";
pub(crate) const ORANGE: &str = "#e69f00";
pub(crate) const GREEN: &str = "#009e73";
pub(crate) const SKY: &str = "#56b4e9";
pub(crate) const VERMILION: &str = "#d55e00";
pub(crate) const GREY: &str = "#bbbbbb";

/// The width a legend of `items` takes in one row.
fn legend_width(items: &[(&str, &str)]) -> usize {
    items
        .iter()
        .map(|(_, label)| 14 + 4 + label.chars().count() * 6 + 18)
        .sum()
}

/// `document` with a legend at (`x`, `y`): a swatch and its label for each
/// of `items` (colour, label), in one row.
fn legend(
    mut document: svg::Document,
    x: usize,
    y: usize,
    items: &[(&str, &str)],
) -> svg::Document {
    use svg::node::element::{Rectangle, Text};
    let mut at = x;
    for (colour, label) in items {
        document = document
            .add(
                Rectangle::new()
                    .set("class", "legend")
                    .set("x", at)
                    .set("y", y)
                    .set("width", 12)
                    .set("height", 12)
                    .set("fill", *colour),
            )
            .add(
                Text::new(*label)
                    .set("class", "legend")
                    .set("x", at + 16)
                    .set("y", y + 10),
            );
        at += 14 + 4 + label.chars().count() * 6 + 18;
    }
    document
}

/// `document` with a tick at `x`: a grey line from `top` to `bottom`, its
/// `label` above it.
fn tick(
    document: svg::Document,
    x: usize,
    top: usize,
    bottom: usize,
    label: &str,
) -> svg::Document {
    use svg::node::element::{Line, Text};
    document
        .add(
            Line::new()
                .set("x1", x)
                .set("y1", top - 6)
                .set("x2", x)
                .set("y2", bottom)
                .set("stroke", "#dddddd"),
        )
        .add(
            Text::new(label)
                .set("x", x)
                .set("y", top - 10)
                .set("text-anchor", "middle"),
        )
}

/// `document` with an axis's label centred at (`x`, `y`).
fn axis_label(document: svg::Document, x: usize, y: usize, label: &str) -> svg::Document {
    document.add(
        svg::node::element::Text::new(label)
            .set("class", "axis")
            .set("x", x)
            .set("y", y)
            .set("text-anchor", "middle")
            .set("fill", "#555555"),
    )
}

/// A chart's canvas: the document with its title, shown and as a tooltip.
fn canvas(width: usize, height: usize, title: &str) -> svg::Document {
    use svg::node::element::{Rectangle, Text, Title};
    // Room for the title, at about 8 pixels a character of 14-pixel text.
    let width = width.max(title.chars().count() * 8 + 24);
    svg::Document::new()
        .set("viewBox", (0, 0, width, height))
        .set("width", width)
        .set("height", height)
        .set("font-family", "sans-serif")
        .set("font-size", 10)
        .add(Title::new(title))
        .add(
            Rectangle::new()
                .set("width", width)
                .set("height", height)
                .set("fill", "#ffffff"),
        )
        .add(
            Text::new(title)
                .set("x", 8)
                .set("y", 18)
                .set("font-size", 14),
        )
}

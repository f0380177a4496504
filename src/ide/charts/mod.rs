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
            let beats =
                crate::stats::beats::beat_places(workspace).ok_or(ChartError::NoBeatSheet)?;
            let placed = beats.iter().filter(|beat| beat.actual.is_some()).count();
            Ok(Drawn {
                svg: beats::svg(&beats, &title),
                figures: json!({"beats": beats.len(), "placed": placed}),
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

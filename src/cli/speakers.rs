//! `control-room speakers`: who speaks each paragraph of dialogue and how
//! the checks found it, scene by scene, for people or as one JSON object
//! (positions in UTF-16 code units, as LSP and `check --format json` give
//! them).

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::checks::speakers::{Line, Speaker};
use crate::index::{SourceFile, Workspace};
use crate::text::PositionEncoding;

use super::check::JsonPosition;

/// The report; exit status 0.
pub fn speakers(dir: &Path, json_output: bool) -> anyhow::Result<i32> {
    let root = super::workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let scenes: Vec<(&SourceFile, Vec<Line>)> = workspace
        .catalog()
        .scenes()
        .map(|(file, _)| {
            let lines = crate::checks::speaker_lines(&workspace, &file.path);
            (&**file, lines)
        })
        .collect();
    let text = if json_output {
        let report = Report {
            version: 1,
            root: root.display().to_string(),
            lines: scenes
                .iter()
                .flat_map(|(file, lines)| {
                    lines.iter().map(|line| json_line(&workspace, file, line))
                })
                .collect(),
        };
        format!("{}\n", serde_json::to_string_pretty(&report)?)
    } else {
        human(&workspace, &scenes)
    };
    print!("{text}");
    Ok(0)
}

#[derive(Serialize)]
struct Report {
    version: u32,
    root: String,
    lines: Vec<JsonLine>,
}

#[derive(Serialize)]
struct JsonLine {
    /// Relative to the manuscript's root.
    path: String,
    /// The paragraph's first quotation mark.
    range: JsonRange,
    /// The card's name; `null` when nobody is found, or someone without a card.
    speaker: Option<String>,
    /// Someone without a card in a speaker's place: the word as written.
    unknown: Option<String>,
    how: &'static str,
}

#[derive(Serialize)]
struct JsonRange {
    start: JsonPosition,
    end: JsonPosition,
}

fn json_line(workspace: &Workspace, file: &SourceFile, line: &Line) -> JsonLine {
    let position = |offset| {
        JsonPosition::from(
            file.line_index
                .position(&file.text, offset, PositionEncoding::Utf16),
        )
    };
    let (speaker, unknown) = match &line.speaker {
        Speaker::Card(card) => (Some(workspace.catalog().card_name(card)), None),
        Speaker::Unknown(word) => (None, Some(word.slice(&file.text).to_owned())),
        Speaker::Nobody => (None, None),
    };
    JsonLine {
        path: file.path.to_string(),
        range: JsonRange {
            start: position(line.quote.start),
            end: position(line.quote.end),
        },
        speaker,
        unknown,
        how: line.how.as_str(),
    }
}

fn human(workspace: &Workspace, scenes: &[(&SourceFile, Vec<Line>)]) -> String {
    let mut out = String::new();
    let (mut total, mut named) = (0, 0);
    for (file, lines) in scenes {
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}", file.path);
        for line in lines {
            let at =
                file.line_index
                    .position(&file.text, line.quote.start, PositionEncoding::Utf32);
            let who = match &line.speaker {
                Speaker::Card(card) => {
                    named += 1;
                    workspace.catalog().card_name(card)
                }
                Speaker::Unknown(word) => format!("{} (no card)", word.slice(&file.text)),
                Speaker::Nobody => "nobody found".to_owned(),
            };
            total += 1;
            let _ = writeln!(
                out,
                "  {}:{}  {who}  ({})",
                at.line + 1,
                at.col + 1,
                line.how.as_str()
            );
        }
    }
    let _ = writeln!(
        out,
        "{total} paragraphs of dialogue; {named} of them spoken by a character with a card."
    );
    out
}

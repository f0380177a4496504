//! `control-room check`: the server's analysis, printed for people or scripts.
//!
//! Human output follows rustc (`severity[code]: message`, `--> path:line:col`,
//! the source line with carets). JSON output is the manuscript format's
//! contract: exactly one object with `version: 1`, UTF-16 LSP positions.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::checks::{Diagnostic, Severity};
use crate::index::Workspace;
use crate::text::{LineCol, PositionEncoding};

/// Which severities make the command fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    Errors,
    Warnings,
}

/// The outcome of a check: exit status 0 or 1.
pub fn exit_status(diagnostics: &[Diagnostic], fail_on: FailOn) -> i32 {
    let failing = diagnostics.iter().any(|diagnostic| match fail_on {
        FailOn::Errors => diagnostic.severity == Severity::Error,
        FailOn::Warnings => matches!(diagnostic.severity, Severity::Error | Severity::Warning),
    });
    i32::from(failing)
}

/// The JSON document of `check --format json` (wire format, version 1).
#[derive(Serialize)]
pub struct CheckReport<'a> {
    pub version: u32,
    pub root: String,
    pub files_indexed: usize,
    pub diagnostics: Vec<JsonDiagnostic<'a>>,
}

#[derive(Serialize)]
pub struct JsonDiagnostic<'a> {
    pub path: &'a str,
    pub range: JsonRange,
    pub severity: &'static str,
    pub code: &'static str,
    pub message: &'a str,
    pub source: &'static str,
}

#[derive(Serialize)]
pub struct JsonRange {
    pub start: JsonPosition,
    pub end: JsonPosition,
}

#[derive(Serialize)]
pub struct JsonPosition {
    pub line: u32,
    pub character: u32,
}

impl From<LineCol> for JsonPosition {
    fn from(position: LineCol) -> Self {
        JsonPosition {
            line: position.line,
            character: position.col,
        }
    }
}

/// Line and column of a diagnostic's ends in its file (the config file is read on demand).
fn positions(
    workspace: &Workspace,
    diagnostic: &Diagnostic,
    encoding: PositionEncoding,
) -> (LineCol, LineCol, Option<String>) {
    if let Some(file) = workspace.file(&diagnostic.path) {
        let start = file
            .line_index
            .position(&file.text, diagnostic.range.start, encoding);
        let end = file
            .line_index
            .position(&file.text, diagnostic.range.end, encoding);
        let line = file
            .line_index
            .line_range(start.line, &file.text)
            .map(|range| range.slice(&file.text).to_owned());
        return (start, end, line);
    }
    let text =
        std::fs::read_to_string(workspace.absolute_path(&diagnostic.path)).unwrap_or_default();
    let index = crate::text::LineIndex::new(&text);
    let start = index.position(&text, diagnostic.range.start, encoding);
    let end = index.position(&text, diagnostic.range.end, encoding);
    let line = index
        .line_range(start.line, &text)
        .map(|range| range.slice(&text).to_owned());
    (start, end, line)
}

pub fn write_json(
    out: &mut impl Write,
    workspace: &Workspace,
    diagnostics: &[Diagnostic],
) -> io::Result<()> {
    let report = CheckReport {
        version: 1,
        root: workspace.root().display().to_string(),
        files_indexed: workspace.files().len(),
        diagnostics: diagnostics
            .iter()
            .map(|diagnostic| {
                let (start, end, _) = positions(workspace, diagnostic, PositionEncoding::Utf16);
                JsonDiagnostic {
                    path: &diagnostic.path,
                    range: JsonRange {
                        start: start.into(),
                        end: end.into(),
                    },
                    severity: diagnostic.severity.as_str(),
                    code: diagnostic.code.as_str(),
                    message: &diagnostic.message,
                    source: "control-room",
                }
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &report)?;
    writeln!(out)
}

pub fn write_human(
    out: &mut impl Write,
    workspace: &Workspace,
    diagnostics: &[Diagnostic],
) -> io::Result<()> {
    for diagnostic in diagnostics {
        let (start, end, line) = positions(workspace, diagnostic, PositionEncoding::Utf32);
        writeln!(
            out,
            "{}[{}]: {}",
            diagnostic.severity.as_str(),
            diagnostic.code,
            diagnostic.message
        )?;
        let gutter = " ".repeat((start.line + 1).to_string().len());
        writeln!(
            out,
            "{gutter}--> {}:{}:{}",
            diagnostic.path,
            start.line + 1,
            start.col + 1
        )?;
        if let Some(line) = line {
            let shown = line.trim_end();
            let width = if end.line == start.line {
                (end.col - start.col).max(1)
            } else {
                1
            };
            // Tabs are kept so the caret line lines up under them in a terminal.
            let pad: String = shown
                .chars()
                .take(start.col as usize)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            writeln!(out, "{gutter} |")?;
            writeln!(out, "{} | {shown}", start.line + 1)?;
            writeln!(out, "{gutter} | {pad}{}", "^".repeat(width as usize))?;
        }
        for related in &diagnostic.related {
            let position = workspace.file(&related.path).map(|file| {
                file.line_index
                    .position(&file.text, related.range.start, PositionEncoding::Utf32)
            });
            if let Some(position) = position {
                writeln!(
                    out,
                    "{gutter} = note: {} ({}:{}:{})",
                    related.message,
                    related.path,
                    position.line + 1,
                    position.col + 1
                )?;
            }
        }
        writeln!(out)?;
    }
    let count = |severity: Severity| {
        diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.severity == severity)
            .count()
    };
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    writeln!(
        out,
        "{}: {}, {}, {} in {} ({} files)",
        display_root(workspace.root()),
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning"),
        plural(count(Severity::Information) + count(Severity::Hint), "note"),
        if diagnostics.is_empty() {
            "a clean manuscript"
        } else {
            "the manuscript"
        },
        workspace.files().len()
    )
}

fn display_root(root: &Path) -> String {
    root.file_name().map_or_else(
        || root.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

//! Session plans open in the editor: `plan.md` read as the engine reads it
//! (the editor's unsaved text wins), with its own mistakes and the plan's
//! problems (an unknown dependency, a cycle, an unknown recipe; a task that
//! needs scoping, with its question) shown at their lines. Saving the
//! checklist puts it into `plan.json`.

use tower_lsp_server::ls_types as lsp;

use super::convert;
use super::recipes::OpenRecipe;
use crate::engine::plan::{self, Plan, PlanFiles, markdown};
use crate::engine::recipe::Registry;
use crate::engine::store::Disk;
use crate::index::{FilePath, Workspace};
use crate::text::{PositionEncoding, TextRange};

/// The plan id of a checklist's path (`.control-room/sessions/<id>/plan.md`).
fn session_id(path: &str) -> Option<&str> {
    path.strip_prefix(plan::SESSIONS_DIR)?
        .strip_prefix('/')?
        .strip_suffix("/plan.md")
}

/// The plan with the checklist's text taken in, routed and settled, and the
/// checklist as read.
fn current(
    workspace: &Workspace,
    registry: &Registry,
    path: &str,
    text: &str,
) -> Result<(Plan, markdown::Parsed), String> {
    let id = session_id(path).ok_or_else(|| format!("{path} is not a plan's checklist"))?;
    let saved = PlanFiles::new(workspace.root(), id)
        .load()
        .map_err(|error| format!("{error:#}"))?;
    let parsed = markdown::parse(text);
    let mut plan = markdown::merge(&saved, &parsed);
    plan.route(registry, Some(workspace));
    plan.settle();
    Ok((plan, parsed))
}

/// The whole of line `line` (0-based) of `text`, as a byte range.
fn line_range(text: &str, line: usize) -> TextRange {
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let end = text[start..]
        .find('\n')
        .map_or(text.len(), |length| start + length);
    TextRange::new(start, end)
}

fn diagnostic(
    text: &str,
    line: usize,
    code: &str,
    severity: lsp::DiagnosticSeverity,
    message: String,
    encoding: PositionEncoding,
) -> lsp::Diagnostic {
    lsp::Diagnostic {
        range: convert::range_in_text(text, line_range(text, line), encoding),
        severity: Some(severity),
        code: Some(lsp::NumberOrString::String(code.to_owned())),
        source: Some("control-room".to_owned()),
        message,
        ..lsp::Diagnostic::default()
    }
}

/// The diagnostics of every open plan checklist, with its version.
pub fn diagnostics(
    workspace: &Workspace,
    registry: &Registry,
    open: &[OpenRecipe],
    encoding: PositionEncoding,
) -> Vec<(FilePath, Vec<lsp::Diagnostic>, i32)> {
    open.iter()
        .map(|(path, text, version)| {
            let found = match current(workspace, registry, path, text) {
                Err(message) => vec![diagnostic(
                    text,
                    0,
                    "plan-file",
                    lsp::DiagnosticSeverity::ERROR,
                    message,
                    encoding,
                )],
                Ok((plan, parsed)) => {
                    let mut found: Vec<lsp::Diagnostic> = parsed
                        .problems
                        .iter()
                        .map(|problem| {
                            diagnostic(
                                text,
                                problem.line,
                                "plan-syntax",
                                lsp::DiagnosticSeverity::ERROR,
                                problem.message.clone(),
                                encoding,
                            )
                        })
                        .collect();
                    for problem in plan.problems(registry) {
                        let line = parsed.line_of(problem.task, problem.field).unwrap_or(0);
                        let (code, severity) = match (problem.field, problem.is_error) {
                            (_, false) => {
                                ("plan-needs-scoping", lsp::DiagnosticSeverity::INFORMATION)
                            }
                            (Some("deps"), true) => {
                                ("plan-dependency", lsp::DiagnosticSeverity::ERROR)
                            }
                            (Some("recipe"), true) => {
                                ("plan-recipe", lsp::DiagnosticSeverity::ERROR)
                            }
                            _ => ("plan-task", lsp::DiagnosticSeverity::ERROR),
                        };
                        found.push(diagnostic(
                            text,
                            line,
                            code,
                            severity,
                            problem.message,
                            encoding,
                        ));
                    }
                    found
                }
            };
            (path.clone(), found, *version)
        })
        .collect()
}

/// Takes a saved checklist into `plan.json` (routed and settled), unless it
/// has mistakes of its own; answers why not.
pub fn save(
    workspace: &Workspace,
    registry: &Registry,
    path: &str,
    text: &str,
) -> Result<(), String> {
    let (plan, parsed) = current(workspace, registry, path, text)?;
    if let Some(problem) = parsed.problems.first() {
        return Err(format!(
            "{path} was not taken into plan.json: line {}: {}",
            problem.line + 1,
            problem.message
        ));
    }
    let id = session_id(path).unwrap_or_default();
    PlanFiles::new(workspace.root(), id)
        .save_json(&Disk::default(), &plan)
        .map_err(|error| format!("cannot write plan.json of {id}: {error}"))
}

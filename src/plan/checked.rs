//! A plan as the writer has it: `plan.json` with the checklist's text taken
//! in (the editor's unsaved text, or `plan.md` on disk), routed and settled,
//! and every problem of the two as a [`ChecklistProblem`] with its code and
//! the checklist line it is on. The command line prints them, the editor
//! shows them as diagnostics: the same problems, found once.

use std::path::Path;

use super::markdown::{self, Parsed};
use super::{Plan, PlanFiles};
use crate::index::Workspace;
use crate::runs::recipe::Registry;
use crate::text::TextRange;

/// The codes of a checklist's problems, as [`crate::codes`] lists them.
pub const PLAN_CODES: [&str; 5] = [
    "plan-syntax",
    "plan-dependency",
    "plan-recipe",
    "plan-task",
    "plan-needs-scoping",
];

/// How much a checklist problem matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemLevel {
    /// The plan cannot run until the writer fixes it.
    Error,
    /// A state the writer should know of (a task needing scoping).
    Note,
}

/// A problem of a plan or of its checklist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecklistProblem {
    /// `plan-file`, `plan-syntax`, `plan-dependency`, `plan-recipe`,
    /// `plan-task` or `plan-needs-scoping` (see [`crate::codes`]).
    pub code: &'static str,
    pub level: ProblemLevel,
    /// The 0-based line of the checklist it is on, when it is on one.
    pub line: Option<usize>,
    pub message: String,
}

impl ChecklistProblem {
    pub fn is_error(&self) -> bool {
        self.level == ProblemLevel::Error
    }

    /// Its range in the checklist `text`: its line (the first when it has
    /// none).
    pub fn range(&self, text: &str) -> TextRange {
        line_range(text, self.line.unwrap_or(0))
    }
}

/// The whole of line `line` (0-based) of `text`, as a byte range.
pub fn line_range(text: &str, line: usize) -> TextRange {
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let end = text[start..]
        .find('\n')
        .map_or(text.len(), |length| start + length);
    TextRange::new(start, end)
}

/// A plan with the writer's checklist taken in, and its problems.
pub struct Checked {
    pub plan: Plan,
    /// The checklist as read, when there is one.
    pub parsed: Option<Parsed>,
    pub problems: Vec<ChecklistProblem>,
}

impl Checked {
    /// Whether a problem keeps the plan from running.
    pub fn broken(&self) -> bool {
        self.problems.iter().any(ChecklistProblem::is_error)
    }
}

/// Why a plan cannot be read at all.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlanUnreadable(pub String);

/// The plan `session_id` of the workspace at `root`, with `checklist` (the
/// text of its `plan.md`, `None` when there is none) taken in.
pub fn check(
    root: &Path,
    session_id: &str,
    checklist: Option<&str>,
    registry: &Registry,
    workspace: &Workspace,
) -> Result<Checked, PlanUnreadable> {
    let saved = PlanFiles::new(root, session_id)
        .load()
        .map_err(|error| PlanUnreadable(format!("{error:#}")))?;
    let parsed = checklist.map(markdown::parse);
    let mut plan = match &parsed {
        Some(parsed) => markdown::merge(&saved, parsed),
        None => saved,
    };
    plan.route(registry, Some(workspace));
    plan.settle();
    let mut problems: Vec<ChecklistProblem> = parsed
        .iter()
        .flat_map(|parsed| &parsed.problems)
        .map(|problem| ChecklistProblem {
            code: "plan-syntax",
            level: ProblemLevel::Error,
            line: Some(problem.line),
            message: problem.message.clone(),
        })
        .collect();
    for problem in plan.problems(registry) {
        let line = parsed
            .as_ref()
            .and_then(|parsed| parsed.line_of(problem.task, problem.field));
        let (code, level) = match (problem.field, problem.is_error) {
            (_, false) => ("plan-needs-scoping", ProblemLevel::Note),
            (Some("deps"), true) => ("plan-dependency", ProblemLevel::Error),
            (Some("recipe"), true) => ("plan-recipe", ProblemLevel::Error),
            _ => ("plan-task", ProblemLevel::Error),
        };
        problems.push(ChecklistProblem {
            code,
            level,
            line,
            message: problem.message,
        });
    }
    Ok(Checked {
        plan,
        parsed,
        problems,
    })
}

/// The plan id of a checklist's path (`.control-room/sessions/<id>/plan.md`).
pub fn session_of_checklist(path: &str) -> Option<&str> {
    path.strip_prefix(super::SESSIONS_DIR)?
        .strip_prefix('/')?
        .strip_suffix("/plan.md")
}

//! `plan.md`: a plan as a checklist the writer edits. Each task is a task
//! line with its fields as sub-items:
//!
//! ```markdown
//! - [ ] 2. Write Scene 22
//!   - recipe: creative_draft_scene
//!   - deps: 1
//!   - status: blocked
//!   - dod: Scene file exists, continuity pass
//! ```
//!
//! Ticking a box marks the task done; unticking a done task makes it ready
//! again. A line that is neither a task nor one of its fields is the
//! writer's own prose and is left alone. Reading never fails: what cannot
//! be read is a [`LineProblem`] at its line, and the rest is kept.

use std::collections::{BTreeMap, BTreeSet};

use super::{Plan, Task, TaskStatus};
use crate::text::TextRange;

/// The fields a task line may have, as `plan.md` names them.
pub const FIELDS: [&str; 9] = [
    "recipe", "deps", "status", "run", "dod", "question", "args", "from", "issue",
];

/// Renders the plan's checklist.
pub fn render(plan: &Plan) -> String {
    let mut out = format!(
        "# Plan {}\n\n<!-- control-room keeps this file and plan.json in step. Tick a box to mark a task done; add a task as `- [ ] N. what to do`, with `  - deps: 1, 2` under it. -->\n\nStatus: {}\n\n",
        plan.session_id, plan.status
    );
    for task in &plan.tasks {
        out.push_str(&render_task(task));
    }
    out
}

/// One task's checklist line and its fields.
fn render_task(task: &Task) -> String {
    let mut out = String::new();
    let tick = if task.status == TaskStatus::Done {
        'x'
    } else {
        ' '
    };
    out.push_str(&format!(
        "- [{tick}] {}. {}\n",
        task.id,
        one_line(&task.description)
    ));
    if let Some(recipe) = &task.recipe_id {
        out.push_str(&format!("  - recipe: {recipe}\n"));
    }
    if !task.deps.is_empty() {
        let deps: Vec<String> = task.deps.iter().map(u32::to_string).collect();
        out.push_str(&format!("  - deps: {}\n", deps.join(", ")));
    }
    out.push_str(&format!("  - status: {}\n", task.status.as_str()));
    if let Some(run) = &task.run_id {
        out.push_str(&format!("  - run: {run}\n"));
    }
    if let Some(dod) = &task.dod {
        out.push_str(&format!("  - dod: {}\n", one_line(dod)));
    }
    if let Some(question) = &task.scoping_question {
        out.push_str(&format!("  - question: {}\n", one_line(question)));
    }
    if let Some(from) = task.split_from {
        out.push_str(&format!("  - from: {from}\n"));
    }
    if let Some(issue) = &task.issue {
        out.push_str(&format!("  - issue: {issue}\n"));
    }
    if !task.args.is_empty() {
        out.push_str(&format!(
            "  - args: {}\n",
            serde_json::Value::Object(task.args.clone())
        ));
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Something in `plan.md` that could not be read, at its line (0-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineProblem {
    pub line: usize,
    pub message: String,
}

/// What `plan.md` says, with where each task and field is.
#[derive(Debug, Default)]
pub struct Parsed {
    pub tasks: Vec<Task>,
    /// Task id → its line, and each of its fields' lines (0-based).
    pub lines: BTreeMap<u32, TaskLines>,
    pub problems: Vec<LineProblem>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskLines {
    pub line: usize,
    pub fields: BTreeMap<&'static str, usize>,
}

impl TaskLines {
    /// The task's last line: its task line or its last field's.
    fn last_line(&self) -> usize {
        self.fields
            .values()
            .copied()
            .max()
            .unwrap_or(self.line)
            .max(self.line)
    }
}

impl Parsed {
    /// The line a problem about `task` (and `field`) belongs on.
    pub fn line_of(&self, task: u32, field: Option<&str>) -> Option<usize> {
        let lines = self.lines.get(&task)?;
        Some(
            field
                .and_then(|field| lines.fields.get(field).copied())
                .unwrap_or(lines.line),
        )
    }
}

/// A task line: `- [ ] 2. Write Scene 22` (any list marker, `x` or `X`).
fn task_line(line: &str) -> Option<(bool, &str, &str)> {
    let rest = line
        .strip_prefix("- [")
        .or_else(|| line.strip_prefix("* ["))?;
    let (tick, rest) = rest.split_at_checked(1)?;
    let rest = rest.strip_prefix("] ")?;
    let done = match tick {
        " " => false,
        "x" | "X" => true,
        _ => return None,
    };
    let (number, description) = rest.split_once(". ").or_else(|| rest.split_once(") "))?;
    Some((done, number.trim(), description.trim()))
}

/// A field line: `  - deps: 1, 2`.
fn field_line(line: &str) -> Option<(&str, &str)> {
    if !line.starts_with(' ') && !line.starts_with('\t') {
        return None;
    }
    let rest = line.trim_start();
    let rest = rest
        .strip_prefix("- ")
        .or_else(|| rest.strip_prefix("* "))?;
    let (key, value) = rest.split_once(':')?;
    let key = key.trim();
    (!key.is_empty() && key.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
        .then_some((key, value.trim()))
}

/// Reads `plan.md`.
pub fn parse(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut current: Option<usize> = None;
    for (number, line) in text.lines().enumerate() {
        let problem = |message: String| LineProblem {
            line: number,
            message,
        };
        if let Some((done, id, description)) = task_line(line) {
            current = None;
            let Ok(id) = id.parse::<u32>() else {
                parsed.problems.push(problem(format!(
                    "`{id}` is not a task number: write `- [ ] N. what to do`"
                )));
                continue;
            };
            if id == 0 {
                parsed
                    .problems
                    .push(problem("task numbers start at 1".to_owned()));
                continue;
            }
            if parsed.lines.contains_key(&id) {
                parsed
                    .problems
                    .push(problem(format!("task {id} is numbered twice")));
                continue;
            }
            if description.is_empty() {
                parsed
                    .problems
                    .push(problem(format!("task {id} says nothing to do")));
            }
            let mut task = Task::new(id, description);
            // Until a status field says otherwise; `settle` derives the rest.
            task.status = if done {
                TaskStatus::Done
            } else {
                TaskStatus::Pending
            };
            parsed.lines.insert(
                id,
                TaskLines {
                    line: number,
                    fields: BTreeMap::new(),
                },
            );
            parsed.tasks.push(task);
            current = Some(parsed.tasks.len() - 1);
            continue;
        }
        let Some((key, value)) = field_line(line) else {
            if !line.starts_with(' ') && !line.trim().is_empty() {
                current = None;
            }
            continue;
        };
        let Some(index) = current else {
            continue;
        };
        let Some(field) = FIELDS.iter().find(|field| **field == key) else {
            parsed.problems.push(problem(format!(
                "`{key}` is not a task field; the fields are {}",
                FIELDS.join(", ")
            )));
            continue;
        };
        let task = &mut parsed.tasks[index];
        if let Some(lines) = parsed.lines.get_mut(&task.id) {
            lines.fields.insert(field, number);
        }
        let ticked = task.status == TaskStatus::Done;
        match *field {
            "recipe" => task.recipe_id = (!value.is_empty()).then(|| value.to_owned()),
            "deps" => {
                task.deps.clear();
                for dep in value.split([',', ' ']).filter(|dep| !dep.is_empty()) {
                    match dep.trim_start_matches('#').parse::<u32>() {
                        Ok(dep) => task.deps.push(dep),
                        Err(_) => parsed.problems.push(problem(format!(
                            "`{dep}` is not a task number; write `deps: 1, 2`"
                        ))),
                    }
                }
            }
            "status" => match TaskStatus::parse(value) {
                // The box wins over the field: a ticked task is done, and a
                // done task unticked is ready to run again.
                Some(status) if ticked || status == TaskStatus::Done => {
                    task.status = if ticked {
                        TaskStatus::Done
                    } else {
                        TaskStatus::Pending
                    };
                }
                Some(status) => task.status = status,
                None => parsed.problems.push(problem(format!(
                    "`{value}` is not a task status; use one of {}",
                    TaskStatus::ALL.map(TaskStatus::as_str).join(", ")
                ))),
            },
            "run" => task.run_id = (!value.is_empty()).then(|| value.to_owned()),
            "issue" => task.issue = (!value.is_empty()).then(|| value.to_owned()),
            "dod" => task.dod = (!value.is_empty()).then(|| value.to_owned()),
            "question" => task.scoping_question = (!value.is_empty()).then(|| value.to_owned()),
            "from" => match value.parse() {
                Ok(from) => task.split_from = Some(from),
                Err(_) if value.is_empty() => task.split_from = None,
                Err(_) => parsed.problems.push(problem(format!(
                    "`from` is the number of the task this one was split from, not `{value}`"
                ))),
            },
            "args" => match serde_json::from_str::<serde_json::Value>(value) {
                Ok(serde_json::Value::Object(args)) => task.args = args,
                _ => parsed.problems.push(problem(
                    "`args` must be a JSON object, such as {\"scene_id\": \"SCN-x\"}".to_owned(),
                )),
            },
            _ => unreachable!("every field is matched"),
        }
    }
    parsed
}

/// The plan with the writer's `plan.md` taken in: its tasks replace the
/// plan's, except that a task the server is running keeps its run.
pub fn merge(plan: &Plan, parsed: &Parsed) -> Plan {
    let mut merged = plan.clone();
    merged.tasks = parsed
        .tasks
        .iter()
        .map(|task| {
            let mut task = task.clone();
            if let Some(known) = plan.task(task.id)
                && known.status == TaskStatus::Running
                && task.status != TaskStatus::Done
            {
                task.status = TaskStatus::Running;
                task.run_id = known.run_id.clone();
            }
            task
        })
        .collect();
    merged
}

/// The edits that bring the checklist `text` in step with `plan`: only its
/// boxes and state lines ([`status_edits`]) while it lists the plan's
/// tasks, else (a task was split, or added) the whole checklist rendered
/// anew.
pub fn edits_in_step(text: &str, plan: &Plan) -> Vec<(TextRange, String)> {
    let parsed = parse(text);
    let listed: std::collections::BTreeSet<u32> = parsed.lines.keys().copied().collect();
    let planned: std::collections::BTreeSet<u32> = plan.tasks.iter().map(|task| task.id).collect();
    if text.trim().is_empty() || listed != planned {
        let rendered = render(plan);
        if rendered == text {
            return Vec::new();
        }
        return vec![(TextRange::new(0, text.len()), rendered)];
    }
    status_edits(text, plan)
}

/// The edits that bring `text`'s boxes and its `status` and `run` fields in
/// line with `plan`, leaving every other line as the writer wrote it (their
/// notes, their order, their wording). Byte ranges, in order, never
/// overlapping.
pub fn status_edits(text: &str, plan: &Plan) -> Vec<(TextRange, String)> {
    let parsed = parse(text);
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .collect();
    let line_range = |line: usize| {
        let start = starts[line];
        let end = text[start..].find('\n').map_or(text.len(), |at| start + at);
        TextRange::new(start, end)
    };
    let mut edits = Vec::new();
    for task in &plan.tasks {
        let Some(lines) = parsed.lines.get(&task.id) else {
            continue;
        };
        let head = line_range(lines.line);
        if let Some(bracket) = text[head.start..head.end].find('[') {
            let at = head.start + bracket + 1;
            let tick = if task.status == TaskStatus::Done {
                "x"
            } else {
                " "
            };
            let shown = &text[at..at + 1];
            if shown.eq_ignore_ascii_case("x") != (tick == "x") {
                edits.push((TextRange::new(at, at + 1), tick.to_owned()));
            }
        }
        let mut wanted = vec![("status", task.status.as_str().to_owned())];
        if let Some(run) = &task.run_id {
            wanted.push(("run", run.clone()));
        }
        if let Some(question) = &task.scoping_question {
            wanted.push(("question", one_line(question)));
        }
        if let Some(issue) = &task.issue {
            wanted.push(("issue", issue.clone()));
        }
        let mut inserted = String::new();
        for (field, value) in wanted {
            let line = format!("  - {field}: {value}");
            match lines.fields.get(field) {
                Some(&at) => {
                    let range = line_range(at);
                    if text[range.start..range.end].trim() != line.trim() {
                        edits.push((range, line));
                    }
                }
                None => {
                    inserted.push('\n');
                    inserted.push_str(&line);
                }
            }
        }
        if !inserted.is_empty() {
            let end = line_range(lines.last_line()).end;
            edits.push((TextRange::new(end, end), inserted));
        }
    }
    // A task split into others: its block becomes theirs. Other tasks the
    // text lacks go after the last task.
    let block = |lines: &TaskLines| {
        let end = line_range(lines.last_line()).end;
        let end = if text[end..].starts_with('\n') {
            end + 1
        } else {
            end
        };
        TextRange::new(line_range(lines.line).start, end)
    };
    let mut placed: BTreeSet<u32> = parsed.lines.keys().copied().collect();
    for (id, lines) in &parsed.lines {
        if plan.task(*id).is_some() {
            continue;
        }
        let parts: String = plan
            .tasks
            .iter()
            .filter(|task| task.split_from == Some(*id) && !placed.contains(&task.id))
            .map(render_task)
            .collect();
        placed.extend(
            plan.tasks
                .iter()
                .filter(|task| task.split_from == Some(*id))
                .map(|task| task.id),
        );
        // Edits on a removed task's own lines would overlap its replacement.
        let range = block(lines);
        edits.retain(|(edit, _)| edit.end <= range.start || edit.start >= range.end);
        edits.push((range, parts));
    }
    let missing: String = plan
        .tasks
        .iter()
        .filter(|task| !placed.contains(&task.id))
        .map(render_task)
        .collect();
    if !missing.is_empty() {
        let end = parsed
            .lines
            .values()
            .map(|lines| block(lines).end)
            .max()
            .unwrap_or(text.len());
        let lead = if end > 0 && !text[..end].ends_with('\n') {
            "\n"
        } else {
            ""
        };
        edits.push((TextRange::new(end, end), format!("{lead}{missing}")));
    }
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    edits
}

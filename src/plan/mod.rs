//! Session plans (execution-modes appendix G): a list of tasks with
//! dependencies, each run through a recipe, kept in
//! `.control-room/sessions/<id>/plan.json` with a Markdown view, `plan.md`,
//! that the writer edits as a checklist.
//!
//! A plan is the coordination layer and a run the execution layer: a task
//! that becomes `pending` is started as a run, and its `run_id` links the two.
//! States follow the spec: `pending` (every dependency done), `blocked`
//! (waiting on one), `needs_scoping` (no recipe takes it: the writer must
//! say more), `running`, `done`, `failed`. [`Plan::settle`] derives
//! `pending`/`blocked` from the dependencies; [`Plan::problems`] names what is
//! wrong (an unknown dependency, a cycle, an unknown recipe).
//!
//! `markdown` renders and reads `plan.md`; [`PlanFiles`] keeps the two files
//! in step, each written atomically.
//!
//! ## Parts
//!
//! `plan/` session plans; `checked` the plan with its checklist and its problems; `driver` runs
//! ready tasks one at a time through a `PlanHost` (the CLI's or the editor's).

pub mod checked;
pub mod driver;
pub mod markdown;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::index::Workspace;
use crate::runs::recipe::Registry;
use crate::runs::review::Outcome;
use crate::runs::router;
use crate::runs::store::{Disk, RunManifest, RunStatus};

/// The issue a run's error names when its Definition of Done failed
/// (`… ; see .control-room/issues/DOD-run_x.md`).
fn dod_issue(error: &str) -> Option<String> {
    let (_, path) = error.rsplit_once("; see ")?;
    let path = path.trim();
    (path.starts_with(".control-room/issues/") && path.ends_with(".md")).then(|| path.to_owned())
}

/// Where the plans live, under the workspace root.
pub const SESSIONS_DIR: &str = ".control-room/sessions";

/// A task's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    Blocked,
    NeedsScoping,
    Running,
    Done,
    Failed,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 6] = [
        TaskStatus::Pending,
        TaskStatus::Blocked,
        TaskStatus::NeedsScoping,
        TaskStatus::Running,
        TaskStatus::Done,
        TaskStatus::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Blocked => "blocked",
            TaskStatus::NeedsScoping => "needs_scoping",
            TaskStatus::Running => "running",
            TaskStatus::Done => "done",
            TaskStatus::Failed => "failed",
        }
    }

    pub fn parse(name: &str) -> Option<TaskStatus> {
        TaskStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == name.trim())
    }
}

/// One task of a plan, with the spec's field names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: u32,
    pub description: String,
    #[serde(default)]
    pub recipe_id: Option<String>,
    #[serde(default)]
    pub deps: Vec<u32>,
    /// The Definition of Done, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dod: Option<String>,
    pub status: TaskStatus,
    #[serde(default)]
    pub run_id: Option<String>,
    /// What the writer must answer before the task can be routed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoping_question: Option<String>,
    /// The run's arguments (the router completes them from the description).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub args: Map<String, Value>,
    /// The task this one was split from, when a reviewer judged it too big.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_from: Option<u32>,
    /// The issue a failed run wrote (its Definition of Done), workspace-relative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<String>,
}

impl Task {
    /// A new task, its recipe left for [`Plan::route`] to find.
    pub fn new(id: u32, description: impl Into<String>) -> Task {
        Task {
            id,
            description: description.into(),
            recipe_id: None,
            deps: Vec::new(),
            dod: None,
            status: TaskStatus::Pending,
            run_id: None,
            scoping_question: None,
            args: Map::new(),
            split_from: None,
            issue: None,
        }
    }
}

/// A session plan, as `plan.json` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub session_id: String,
    pub created_by: String,
    /// `running` while a task is unfinished, `paused` when the writer paused
    /// it, `done` when every task is, `failed` when one failed.
    pub status: String,
    pub created_at: String,
    pub tasks: Vec<Task>,
}

/// Something wrong with a plan, on a task (and one of its fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanProblem {
    pub task: u32,
    /// `deps`, `recipe`… as `plan.md` names the field; `None` for the task line.
    pub field: Option<&'static str>,
    pub message: String,
    /// A problem the writer must fix (an error), or a state they should know
    /// of (a task needing scoping).
    pub is_error: bool,
}

impl Plan {
    /// A new plan of `tasks`, numbered from 1 in order.
    pub fn new(session_id: String, created_by: &str, created_at: String, tasks: Vec<Task>) -> Plan {
        Plan {
            session_id,
            created_by: created_by.to_owned(),
            status: "running".to_owned(),
            created_at,
            tasks,
        }
    }

    pub fn task(&self, id: u32) -> Option<&Task> {
        self.tasks.iter().find(|task| task.id == id)
    }

    /// How many tasks are done.
    pub fn done(&self) -> usize {
        self.tasks
            .iter()
            .filter(|task| task.status == TaskStatus::Done)
            .count()
    }

    pub fn task_mut(&mut self, id: u32) -> Option<&mut Task> {
        self.tasks.iter_mut().find(|task| task.id == id)
    }

    /// Gives each task without a recipe the one its description routes to,
    /// with the arguments the router completes; a task no recipe takes
    /// needs scoping, with the router's reason as the question.
    pub fn route(&mut self, registry: &Registry, workspace: Option<&Workspace>) {
        for task in &mut self.tasks {
            if task.recipe_id.is_some() || task.status == TaskStatus::Done {
                continue;
            }
            let routed = router::route(registry, workspace, &task.description);
            match routed.recipe_id {
                Some(recipe_id) if routed.routable => {
                    task.recipe_id = Some(recipe_id);
                    for (key, value) in routed.initial_args {
                        task.args.entry(key).or_insert(value);
                    }
                    if task.status == TaskStatus::NeedsScoping {
                        task.status = TaskStatus::Pending;
                        task.scoping_question = None;
                    }
                }
                _ => {
                    task.status = TaskStatus::NeedsScoping;
                    task.scoping_question = Some(routed.reason);
                }
            }
        }
    }

    /// Records how task `id`'s run ended and returns the task's new state:
    /// `done`, `pending` again after a cancel, `failed`; or, when its review
    /// loop sent the task back, `needs_scoping` with the reviewer's reason as
    /// the question, or the task split into the reviewer's subtasks (the
    /// state of the first of them).
    pub fn finish_task(
        &mut self,
        id: u32,
        run: &RunManifest,
        registry: &Registry,
        workspace: Option<&Workspace>,
    ) -> TaskStatus {
        let review = run
            .review
            .as_ref()
            .filter(|_| run.status == RunStatus::Failed);
        let status = match (run.status, review.map(|r| &r.outcome)) {
            (RunStatus::Done, _) => TaskStatus::Done,
            (RunStatus::Cancelled | RunStatus::Pending | RunStatus::Running, _) => {
                TaskStatus::Pending
            }
            (RunStatus::Failed, Some(Outcome::NeedsScoping)) => TaskStatus::NeedsScoping,
            // A part of a split task is not split again: the writer decides.
            (RunStatus::Failed, Some(Outcome::Split))
                if self.task(id).is_some_and(|task| task.split_from.is_some()) =>
            {
                if let Some(task) = self.task_mut(id) {
                    task.status = TaskStatus::NeedsScoping;
                    task.run_id = Some(run.run_id.clone());
                    task.scoping_question = Some(format!(
                        "{} This task was split once already; split or reword it yourself.",
                        review.and_then(|r| r.reason.clone()).unwrap_or_default()
                    ));
                }
                self.settle();
                return TaskStatus::NeedsScoping;
            }
            (RunStatus::Failed, Some(Outcome::Split))
                if review.is_some_and(|r| !r.subtasks.is_empty()) =>
            {
                let subtasks = review.map(|r| r.subtasks.clone()).unwrap_or_default();
                return self.split(id, &subtasks, registry, workspace);
            }
            (RunStatus::Failed, _) => TaskStatus::Failed,
        };
        if let Some(task) = self.task_mut(id) {
            task.status = status;
            task.run_id = Some(run.run_id.clone());
            task.issue = (status == TaskStatus::Failed)
                .then(|| run.error.as_deref().and_then(dod_issue))
                .flatten();
            if status == TaskStatus::NeedsScoping {
                task.scoping_question = review.and_then(|r| r.reason.clone());
            }
        }
        self.settle();
        status
    }

    /// Replaces task `id` with one task per description, in order, each
    /// depending on the one before (the first on `id`'s dependencies); tasks
    /// that depended on `id` depend on the last. Each is routed afresh, and
    /// takes `id`'s recipe and arguments when no recipe takes it.
    fn split(
        &mut self,
        id: u32,
        descriptions: &[String],
        registry: &Registry,
        workspace: Option<&Workspace>,
    ) -> TaskStatus {
        let Some(position) = self.tasks.iter().position(|task| task.id == id) else {
            return TaskStatus::Failed;
        };
        let original = self.tasks.remove(position);
        let first_id = self
            .tasks
            .iter()
            .map(|task| task.id)
            .max()
            .unwrap_or(0)
            .max(id)
            + 1;
        let mut previous: Option<u32> = None;
        let mut parts = Vec::new();
        for (next_id, description) in (first_id..).zip(descriptions) {
            let mut task = Task::new(next_id, description.trim());
            task.split_from = Some(id);
            task.dod.clone_from(&original.dod);
            task.deps = previous.map_or_else(|| original.deps.clone(), |p| vec![p]);
            let routed = router::route(registry, workspace, description);
            match routed.recipe_id {
                Some(recipe_id) if routed.routable => {
                    task.recipe_id = Some(recipe_id);
                    task.args = original.args.clone();
                    for (key, value) in routed.initial_args {
                        task.args.insert(key, value);
                    }
                }
                _ => {
                    task.recipe_id.clone_from(&original.recipe_id);
                    task.args = original.args.clone();
                }
            }
            previous = Some(next_id);
            parts.push(task);
        }
        let last = previous.unwrap_or(id);
        for task in &mut self.tasks {
            for dep in &mut task.deps {
                if *dep == id {
                    *dep = last;
                }
            }
        }
        let first = parts.first().map(|task| task.id);
        for (offset, task) in parts.into_iter().enumerate() {
            self.tasks.insert(position + offset, task);
        }
        self.settle();
        first
            .and_then(|first| self.task(first))
            .map_or(TaskStatus::Failed, |task| task.status)
    }

    /// Derives `pending` and `blocked` from the dependencies, for tasks that
    /// are neither running, finished nor waiting for scoping, and the plan's
    /// status from its tasks (a paused plan stays paused).
    pub fn settle(&mut self) {
        let done: BTreeSet<u32> = self
            .tasks
            .iter()
            .filter(|task| task.status == TaskStatus::Done)
            .map(|task| task.id)
            .collect();
        for task in &mut self.tasks {
            if matches!(task.status, TaskStatus::Pending | TaskStatus::Blocked) {
                task.status = if task.deps.iter().all(|dep| done.contains(dep)) {
                    TaskStatus::Pending
                } else {
                    TaskStatus::Blocked
                };
            }
        }
        if self
            .tasks
            .iter()
            .all(|task| task.status == TaskStatus::Done)
        {
            self.status = "done".to_owned();
        } else if self
            .tasks
            .iter()
            .any(|task| task.status == TaskStatus::Failed)
        {
            self.status = "failed".to_owned();
        } else if self.status != "paused" {
            self.status = "running".to_owned();
        }
    }

    /// The tasks that can start now, in dependency order (then by id).
    pub fn ready(&self) -> Vec<u32> {
        self.order()
            .into_iter()
            .filter(|id| {
                self.task(*id)
                    .is_some_and(|task| task.status == TaskStatus::Pending)
            })
            .collect()
    }

    /// Every task in an order where each comes after its dependencies (ties
    /// by id); tasks in a cycle come last, by id.
    pub fn order(&self) -> Vec<u32> {
        let ids: BTreeSet<u32> = self.tasks.iter().map(|task| task.id).collect();
        let mut placed = BTreeSet::new();
        let mut order = Vec::new();
        loop {
            let next = self
                .tasks
                .iter()
                .map(|task| task.id)
                .filter(|id| !placed.contains(id))
                .find(|id| {
                    self.task(*id).is_some_and(|task| {
                        task.deps
                            .iter()
                            .all(|dep| placed.contains(dep) || !ids.contains(dep))
                    })
                });
            match next {
                Some(id) => {
                    placed.insert(id);
                    order.push(id);
                }
                None => break,
            }
        }
        let mut rest: Vec<u32> = ids.difference(&placed).copied().collect();
        rest.sort_unstable();
        order.extend(rest);
        order
    }

    /// What is wrong with the plan: duplicate ids, dependencies on unknown
    /// tasks or on the task itself, cycles, unknown recipes; and, as notes,
    /// the tasks that need scoping, with their question.
    pub fn problems(&self, registry: &Registry) -> Vec<PlanProblem> {
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for task in &self.tasks {
            if !seen.insert(task.id) {
                problems.push(error(
                    task.id,
                    None,
                    format!("task {} is numbered twice", task.id),
                ));
            }
        }
        for task in &self.tasks {
            for dep in &task.deps {
                if *dep == task.id {
                    problems.push(error(
                        task.id,
                        Some("deps"),
                        format!("task {} depends on itself", task.id),
                    ));
                } else if self.task(*dep).is_none() {
                    problems.push(error(
                        task.id,
                        Some("deps"),
                        format!(
                            "task {} depends on task {dep}, which is not in the plan",
                            task.id
                        ),
                    ));
                }
            }
            if let Some(recipe) = &task.recipe_id
                && registry.get(recipe).is_none()
            {
                problems.push(error(
                    task.id,
                    Some("recipe"),
                    format!("no recipe `{recipe}`; known: {}", recipe_ids(registry)),
                ));
            }
            if task.status == TaskStatus::NeedsScoping {
                let question = task
                    .scoping_question
                    .as_deref()
                    .unwrap_or("say what this task should do, or give it a recipe");
                problems.push(PlanProblem {
                    task: task.id,
                    field: None,
                    message: format!("task {} needs scoping: {question}", task.id),
                    is_error: false,
                });
            }
        }
        for cycle in self.cycles() {
            let path = cycle
                .iter()
                .chain(cycle.first())
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" → ");
            for id in &cycle {
                problems.push(error(
                    *id,
                    Some("deps"),
                    format!("tasks depend on each other in a cycle: {path}"),
                ));
            }
        }
        problems
    }

    /// The dependency cycles, each as its tasks in order, smallest id first.
    fn cycles(&self) -> Vec<Vec<u32>> {
        let edges: BTreeMap<u32, Vec<u32>> = self
            .tasks
            .iter()
            .map(|task| {
                let deps = task
                    .deps
                    .iter()
                    .copied()
                    .filter(|dep| *dep != task.id && self.task(*dep).is_some())
                    .collect();
                (task.id, deps)
            })
            .collect();
        let mut cycles: Vec<Vec<u32>> = Vec::new();
        let mut finished = BTreeSet::new();
        for start in edges.keys() {
            let mut path = Vec::new();
            walk(*start, &edges, &mut path, &mut finished, &mut cycles);
        }
        cycles
    }
}

/// Depth-first search recording each back edge's cycle once.
fn walk(
    node: u32,
    edges: &BTreeMap<u32, Vec<u32>>,
    path: &mut Vec<u32>,
    finished: &mut BTreeSet<u32>,
    cycles: &mut Vec<Vec<u32>>,
) {
    if finished.contains(&node) {
        return;
    }
    if let Some(at) = path.iter().position(|id| *id == node) {
        let mut cycle = path[at..].to_vec();
        let smallest = cycle
            .iter()
            .enumerate()
            .min_by_key(|(_, id)| **id)
            .map_or(0, |(index, _)| index);
        cycle.rotate_left(smallest);
        if !cycles.contains(&cycle) {
            cycles.push(cycle);
        }
        return;
    }
    path.push(node);
    for next in edges.get(&node).into_iter().flatten() {
        walk(*next, edges, path, finished, cycles);
    }
    path.pop();
    finished.insert(node);
}

fn error(task: u32, field: Option<&'static str>, message: String) -> PlanProblem {
    PlanProblem {
        task,
        field,
        message,
        is_error: true,
    }
}

fn recipe_ids(registry: &Registry) -> String {
    registry
        .recipes()
        .map(|recipe| recipe.recipe_id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A plan's two files.
pub struct PlanFiles {
    dir: PathBuf,
}

impl PlanFiles {
    pub fn new(root: &Path, session_id: &str) -> PlanFiles {
        PlanFiles {
            dir: root.join(SESSIONS_DIR).join(session_id),
        }
    }

    pub fn json(&self) -> PathBuf {
        self.dir.join("plan.json")
    }

    pub fn markdown(&self) -> PathBuf {
        self.dir.join("plan.md")
    }

    /// Reads `plan.json`, naming the file in an error.
    pub fn load(&self) -> Result<Plan, PlanFileError> {
        let path = self.json();
        let text = std::fs::read_to_string(&path).map_err(|error| PlanFileError::Unreadable {
            path: path.clone(),
            error,
        })?;
        serde_json::from_str(&text).map_err(|error| PlanFileError::Damaged { path, error })
    }

    /// Writes `plan.json` and then `plan.md`, each atomically.
    pub fn save(&self, disk: &Disk, plan: &Plan) -> std::io::Result<()> {
        self.save_json(disk, plan)?;
        disk.write_atomic(&self.markdown(), markdown::render(plan).as_bytes())
    }

    /// Writes `plan.json`, then brings `plan.md` in step by changing only
    /// its boxes and its `status`, `run`, `question` and `issue` lines, so
    /// the writer's notes in it stay (a missing `plan.md`, or one whose
    /// tasks are no longer the plan's, is rendered whole).
    pub fn save_in_step(&self, disk: &Disk, plan: &Plan) -> std::io::Result<()> {
        self.save_json(disk, plan)?;
        let current = std::fs::read_to_string(self.markdown()).unwrap_or_default();
        let text = crate::text::apply_edits(&current, &markdown::edits_in_step(&current, plan));
        if text == current {
            return Ok(());
        }
        disk.write_atomic(&self.markdown(), text.as_bytes())
    }

    /// Writes `plan.json` alone, atomically (the writer's `plan.md` was
    /// just saved from the editor and stays as they wrote it).
    pub fn save_json(&self, disk: &Disk, plan: &Plan) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut json = serde_json::to_vec_pretty(plan).map_err(std::io::Error::other)?;
        json.push(b'\n');
        disk.write_atomic(&self.json(), &json)
    }
}

/// Why `plan.json` could not be read: the file, then what went wrong. The
/// underlying error is part of the message rather than a source, so a chain
/// printed with `{:#}` says it once.
#[derive(Debug, thiserror::Error)]
pub enum PlanFileError {
    #[error("{}: {error}", path.display())]
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: {error}", path.display())]
    Damaged {
        path: PathBuf,
        error: serde_json::Error,
    },
}

/// Every plan of the workspace, newest first; unreadable ones are skipped.
pub fn list(root: &Path) -> Vec<Plan> {
    let Ok(entries) = std::fs::read_dir(root.join(SESSIONS_DIR)) else {
        return Vec::new();
    };
    let mut plans: Vec<Plan> = entries
        .flatten()
        .filter_map(|entry| {
            let id = entry.file_name().into_string().ok()?;
            PlanFiles::new(root, &id).load().ok()
        })
        .collect();
    plans.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then(b.session_id.cmp(&a.session_id))
    });
    plans
}

#[cfg(test)]
mod tests;

//! `control-room plan new|list|show|run`: session plans from the command line.
//!
//! `new` makes a plan of tasks (each routed to a recipe, or marked as
//! needing scoping); `show` prints its `plan.md` and what is wrong with it;
//! `run` takes the writer's `plan.md` in, then runs every ready task, one
//! run each, in dependency order, until none is ready. A blocked task runs
//! only when named with `--force`.

use std::path::Path;

use anyhow::{Context, bail};

use super::run::{ModelArgs, execute_run, finish_run, model, runner};
use super::workspace_root;
use serde_json::Value;

use crate::engine::drafting;
use crate::engine::plan::{Plan, PlanFiles, Task, TaskStatus, markdown};
use crate::engine::report::Delivery;
use crate::engine::runner::{PlanTask, Runner, new_id, now};
use crate::engine::store::{Disk, RunFiles, RunManifest, RunStatus};

/// What `plan new` takes.
pub struct NewPlan<'a> {
    pub tasks: &'a [String],
    /// `TASK:DEP` pairs, 1-based task numbers.
    pub deps: &'a [String],
}

/// `control-room plan new "<task>"… [--dep 2:1]…`: prints the new plan's id.
pub fn new(dir: &Path, request: &NewPlan) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    if request.tasks.is_empty() {
        bail!("a plan needs at least one task: control-room plan new \"draft scene SCN-x\" …");
    }
    let mut tasks: Vec<Task> = request
        .tasks
        .iter()
        .zip(1..)
        .map(|(description, id)| Task::new(id, description.trim()))
        .collect();
    for pair in request.deps {
        let (task, dep) = pair
            .split_once(':')
            .with_context(|| format!("`--dep {pair}` must be TASK:DEP, such as 2:1"))?;
        let number = |text: &str| {
            text.trim()
                .parse::<u32>()
                .with_context(|| format!("`--dep {pair}`: `{text}` is not a task number"))
        };
        let (task, dep) = (number(task)?, number(dep)?);
        let Some(entry) = tasks.iter_mut().find(|entry| entry.id == task) else {
            bail!("`--dep {pair}`: there is no task {task}");
        };
        entry.deps.push(dep);
    }
    let runner = runner(&root, None);
    let mut plan = Plan::new(new_id("sp_"), "writer", now(), tasks);
    plan.route(&runner.registry, Some(&runner.workspace));
    plan.settle();
    let problems = plan.problems(&runner.registry);
    if let Some(problem) = problems.iter().find(|problem| problem.is_error) {
        bail!("the plan cannot be made: {}", problem.message);
    }
    PlanFiles::new(&root, &plan.session_id).save(&Disk::default(), &plan)?;
    for problem in &problems {
        eprintln!("note: {}", problem.message);
    }
    println!("{}", plan.session_id);
    Ok(0)
}

/// The plan with the writer's `plan.md` taken in (routed and settled), and
/// the problems of `plan.md` and of the plan, as `path:line: message`.
fn current(root: &Path, session_id: &str) -> anyhow::Result<(Plan, Vec<String>, bool)> {
    let files = PlanFiles::new(root, session_id);
    let saved = files.load()?;
    let runner = runner(root, None);
    let shown = files.markdown().display().to_string();
    let (mut plan, parsed) = match std::fs::read_to_string(files.markdown()) {
        Ok(text) => {
            let parsed = markdown::parse(&text);
            (markdown::merge(&saved, &parsed), Some(parsed))
        }
        Err(_) => (saved, None),
    };
    plan.route(&runner.registry, Some(&runner.workspace));
    plan.settle();
    let mut lines = Vec::new();
    let mut broken = false;
    if let Some(parsed) = &parsed {
        for problem in &parsed.problems {
            broken = true;
            lines.push(format!(
                "{shown}:{}: error: {}",
                problem.line + 1,
                problem.message
            ));
        }
    }
    for problem in plan.problems(&runner.registry) {
        broken |= problem.is_error;
        let line = parsed
            .as_ref()
            .and_then(|parsed| parsed.line_of(problem.task, problem.field))
            .map_or(String::new(), |line| format!("{}:", line + 1));
        let kind = if problem.is_error { "error" } else { "note" };
        lines.push(format!("{shown}:{line} {kind}: {}", problem.message));
    }
    Ok((plan, lines, broken))
}

/// `control-room plan list`: every plan, newest first, a line each.
pub fn list(dir: &Path) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    for plan in crate::engine::plan::list(&root) {
        let done = plan.done();
        println!(
            "{}  {:<8}  {done}/{} tasks done  {}",
            plan.session_id,
            plan.status,
            plan.tasks.len(),
            plan.created_at
        );
    }
    Ok(0)
}

/// `control-room plan show <id>`: `plan.md` as it stands, and its problems
/// on stderr (exit 1 when one is an error).
pub fn show(dir: &Path, session_id: &str) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let (plan, problems, broken) = current(&root, session_id)?;
    print!("{}", markdown::render(&plan));
    for problem in &problems {
        eprintln!("{problem}");
    }
    Ok(i32::from(broken))
}

/// `control-room plan run <id> [--force TASK]`: runs the ready tasks in
/// dependency order (and the forced one first), saving the plan at every
/// change of state. Exit 0 when every task is done.
pub fn run(
    dir: &Path,
    session_id: &str,
    force: Option<u32>,
    model_args: &ModelArgs,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let files = PlanFiles::new(&root, session_id);
    let (mut plan, problems, broken) = current(&root, session_id)?;
    for problem in &problems {
        eprintln!("{problem}");
    }
    if broken {
        bail!("plan {session_id} has errors; fix plan.md and run it again");
    }
    let disk = Disk::default();
    plan.status = "running".to_owned();
    files.save(&disk, &plan)?;
    let model = model(&root, model_args)?;
    let mut forced = force;
    if let Some(id) = force {
        let task = plan
            .task(id)
            .with_context(|| format!("plan {session_id} has no task {id}"))?;
        if !matches!(task.status, TaskStatus::Pending | TaskStatus::Blocked) {
            bail!(
                "task {id} is {}; only a pending or blocked task can be forced",
                task.status.as_str()
            );
        }
    }
    loop {
        let next = forced.take().or_else(|| plan.ready().first().copied());
        let Some(id) = next else {
            break;
        };
        // Each run sees the manuscript as the tasks before it left it.
        let runner = runner(&root, Some((model.clone(), model_args)));
        let task = plan.task(id).cloned().context("the task went")?;
        let Some(recipe_id) = task.recipe_id.clone() else {
            bail!("task {id} has no recipe");
        };
        let manifest = runner.create(
            &recipe_id,
            &task.description,
            task.args.clone(),
            Some(PlanTask {
                session_id,
                task_id: id,
            }),
        )?;
        eprintln!("task {id}: {} (run {})", task.description, manifest.run_id);
        if let Some(entry) = plan.task_mut(id) {
            entry.status = TaskStatus::Running;
            entry.run_id = Some(manifest.run_id.clone());
        }
        files.save(&disk, &plan)?;
        let outcome = match execute_run(&runner, &manifest.run_id) {
            Ok(finished) => {
                let delivery = if finished.status == RunStatus::Done {
                    deliver(&runner, &finished)?
                } else {
                    Delivery::Withheld(format!("because the run is {}", finished.status.as_str()))
                };
                finish_run(&runner, &finished, &delivery);
                let outcome =
                    plan.finish_task(id, &finished, &runner.registry, Some(&runner.workspace));
                if let Some(review) = finished
                    .review
                    .as_ref()
                    .filter(|_| outcome != TaskStatus::Done)
                {
                    eprintln!(
                        "task {id}: {} after {} draft(s): {}",
                        outcome.as_str(),
                        review.iterations,
                        finished.error.as_deref().unwrap_or("")
                    );
                }
                outcome
            }
            Err(_) => {
                if let Some(entry) = plan.task_mut(id) {
                    entry.status = TaskStatus::Failed;
                }
                plan.settle();
                TaskStatus::Failed
            }
        };
        files.save(&disk, &plan)?;
        // A split task's parts run on; anything else that is not done stops the plan.
        let split = plan.task(id).is_none();
        if outcome != TaskStatus::Done && !split {
            break;
        }
    }
    let done = plan.done();
    println!(
        "plan {session_id}: {done} of {} tasks done ({})",
        plan.tasks.len(),
        plan.status
    );
    Ok(i32::from(plan.status != "done"))
}

/// Puts a drafting run's scene into the manuscript, so the tasks after it
/// read it: a new scene file when there is none, else beside the scene
/// (`SCN-x.draft-<run>.md`), never over the writer's text.
fn deliver(runner: &Runner, manifest: &RunManifest) -> anyhow::Result<Delivery> {
    let Some(recipe) = runner.registry.get(&manifest.recipe_id) else {
        return Ok(Delivery::Report);
    };
    let cache = RunFiles::new(runner.workspace.root(), &manifest.run_id).read_cache()?;
    let (Some(draft), brief) = drafting::run_draft(recipe, &cache) else {
        return Ok(Delivery::Report);
    };
    let args = &manifest.task.initial_args;
    let (Some(scene_id), Some(scene_path)) = (
        args.get("scene_id").and_then(Value::as_str),
        args.get("scene_path").and_then(Value::as_str),
    ) else {
        return Ok(Delivery::Withheld(
            "because the task names no scene to put it in".to_owned(),
        ));
    };
    let absolute = runner.workspace.absolute_path(scene_path);
    let (path, text) = if absolute.exists() {
        let beside = drafting::beside_path(scene_path, &manifest.run_id);
        (
            runner.workspace.absolute_path(&beside),
            drafting::draft_body(&draft),
        )
    } else {
        let text = drafting::new_scene_text(&runner.workspace, scene_id, brief.as_deref(), &draft);
        (absolute, text)
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    Disk::default().write_atomic(&path, text.as_bytes())?;
    eprintln!("  the draft is in {}", path.display());
    let relative = runner
        .workspace
        .relative_path(&path)
        .map_or_else(|| path.display().to_string(), |path| path.to_string());
    Ok(if relative == scene_path {
        Delivery::Scene(relative)
    } else {
        Delivery::Beside {
            path: relative,
            reason: "the scene already has text".to_owned(),
        }
    })
}

//! `control-room plan new|list|show|run`: session plans from the command line.
//!
//! `new` makes a plan of tasks (each routed to a recipe, or marked as
//! needing scoping); `show` prints its `plan.md` and what is wrong with it;
//! `run` takes the writer's `plan.md` in, then runs every ready task, one
//! run each, in dependency order, until none is ready. A blocked task runs
//! only when named with `--force`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};

use super::running::{ModelArgs, disk_text, model, print_end, run_to_end, runner, tokio_runtime};
use super::workspace_root;
use crate::index::Workspace;
use crate::llm::model::Model;
use crate::plan::driver::{self, DriveEnd, HostError, PlanHost, TaskRun};
use crate::plan::{Plan, PlanFiles, Task, TaskStatus, checked, markdown};
use crate::runs::launch::{self, LaunchRequest};
use crate::runs::recipe::Registry;
use crate::runs::runner::{new_id, now};
use crate::runs::store::{Disk, RunManifest};

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
fn current(
    root: &Path,
    session_id: &str,
    (workspace, registry): (&Workspace, &Registry),
) -> anyhow::Result<(Plan, Vec<String>, bool)> {
    let files = PlanFiles::new(root, session_id);
    let shown = files.markdown().display().to_string();
    let text = std::fs::read_to_string(files.markdown()).ok();
    let checked = checked::check(root, session_id, text.as_deref(), registry, workspace)?;
    let broken = checked.broken();
    let lines = checked
        .problems
        .iter()
        .map(|problem| {
            let line = problem
                .line
                .map_or(String::new(), |line| format!("{}:", line + 1));
            let kind = if problem.is_error() { "error" } else { "note" };
            format!("{shown}:{line} {kind}: {}", problem.message)
        })
        .collect();
    Ok((checked.plan, lines, broken))
}

/// `control-room plan list`: every plan, newest first, a line each.
pub fn list(dir: &Path) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    for plan in crate::plan::list(&root) {
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
    let engine = runner(&root, None);
    let (plan, problems, broken) =
        current(&root, session_id, (&engine.workspace, &engine.registry))?;
    print!("{}", markdown::render(&plan));
    for problem in &problems {
        eprintln!("{problem}");
    }
    Ok(i32::from(broken))
}

/// The command line's side of a plan's drive: runs on the disk's
/// manuscript with a progress bar, drafts delivered to the files.
struct CliPlan<'a> {
    root: PathBuf,
    session_id: String,
    model: Arc<dyn Model>,
    model_args: &'a ModelArgs,
    /// The workspace and recipes the last run started on.
    current: Mutex<(Arc<Workspace>, Arc<Registry>)>,
}

type RunWait = Pin<Box<dyn Future<Output = Result<RunManifest, HostError>> + Send>>;

impl PlanHost for CliPlan<'_> {
    type Wait = RunWait;

    fn load(&self) -> Result<Plan, HostError> {
        // The manuscript as the last task's run started on it: reading it
        // whole again for every look at the plan would cost a start-up each.
        let (workspace, registry) = PlanHost::current(self);
        let (plan, problems, broken) =
            current(&self.root, &self.session_id, (&workspace, &registry))
                .map_err(|error| HostError::Plan(format!("{error:#}").into()))?;
        if broken {
            return Err(HostError::Plan(
                format!(
                    "plan {} has errors; fix plan.md and run it again: {}",
                    self.session_id,
                    problems.join("; ")
                )
                .into(),
            ));
        }
        Ok(plan)
    }

    async fn start(&self, request: LaunchRequest) -> Result<TaskRun<RunWait>, HostError> {
        // Each run sees the manuscript as the tasks before it left it.
        let runner = runner(&self.root, Some((self.model.clone(), self.model_args)));
        let plan = request.plan.clone();
        let resolved = launch::resolve(&runner.registry, &runner.workspace, request)
            .map_err(|error| HostError::Start(error.into()))?;
        let created = launch::create(&runner, &resolved, plan.as_ref(), disk_text(&self.root))
            .map_err(|error| HostError::Start(error.into()))?;
        *self
            .current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) =
            (runner.workspace.clone(), runner.registry.clone());
        let run_id = created.manifest.run_id.clone();
        let finished: RunWait = Box::pin(async move {
            let manifest = run_to_end(runner, &created.manifest.run_id, created.lock)
                .await
                .map_err(|error| HostError::Run(format!("{error:#}").into()))?;
            print_end(&manifest);
            Ok(manifest)
        });
        Ok(TaskRun { run_id, finished })
    }

    async fn persist(&self, plan: &Plan) {
        let files = PlanFiles::new(&self.root, &self.session_id);
        if let Err(error) = files.save_in_step(&Disk::default(), plan) {
            eprintln!("warning: cannot write plan {}: {error}", self.session_id);
        }
    }

    fn current(&self) -> (Arc<Workspace>, Arc<Registry>) {
        self.current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    async fn note(&self, message: String) {
        eprintln!("{message}");
    }
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
    let start = runner(&root, None);
    let (plan, problems, broken) = current(&root, session_id, (&start.workspace, &start.registry))?;
    for problem in &problems {
        eprintln!("{problem}");
    }
    if broken {
        bail!("plan {session_id} has errors; fix plan.md and run it again");
    }
    let first = match force {
        Some(id) => {
            let task = plan
                .task(id)
                .with_context(|| format!("plan {session_id} has no task {id}"))?;
            if !matches!(task.status, TaskStatus::Pending | TaskStatus::Blocked) {
                bail!(
                    "task {id} is {}; only a pending or blocked task can be forced",
                    task.status.as_str()
                );
            }
            Some(id)
        }
        None => plan.ready().first().copied(),
    };
    let model = model(&root, model_args)?;
    if let Some(first) = first {
        let host = CliPlan {
            root: root.clone(),
            session_id: session_id.to_owned(),
            model,
            model_args,
            current: Mutex::new((start.workspace.clone(), start.registry.clone())),
        };
        let end = tokio_runtime()?.block_on(driver::drive(&host, first, false));
        if let DriveEnd::Failed(error) = end {
            bail!(error);
        }
    }
    let plan = PlanFiles::new(&root, session_id).load()?;
    let done = plan.done();
    println!(
        "plan {session_id}: {done} of {} tasks done ({})",
        plan.tasks.len(),
        plan.status
    );
    Ok(i32::from(plan.status != "done"))
}

//! Running a plan, the same way for every front end: take the next ready
//! task, start its run, await its end (its result delivered), record how it
//! went, and go on while tasks get ready.
//!
//! What differs between the command line and the editor is behind
//! [`PlanHost`]: where the plan is read from (the editor's unsaved
//! `plan.md` wins), how a run is started and shown, and how the plan's files
//! are brought in step (an edit of the open checklist, or the disk).

use std::future::Future;
use std::sync::Arc;

use super::{Plan, TaskStatus};
use crate::index::Workspace;
use crate::runs::launch::{LaunchRequest, PlanLink};
use crate::runs::recipe::Registry;
use crate::runs::store::RunManifest;

/// A run started for a task, and how to wait for its end.
pub struct TaskRun<W> {
    pub run_id: String,
    /// Resolves to the run's manifest once it ended and its result was
    /// delivered, or to why it did not run.
    pub finished: W,
}

/// What went wrong in a front end, as it says it.
pub type HostFailure = Box<dyn std::error::Error + Send + Sync>;

/// Why a front end could not read the plan, start a task's run, or see it
/// end.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The plan as the writer has it cannot be read, or has errors to fix.
    #[error("{0}")]
    Plan(#[source] HostFailure),
    /// The task's run could not be created or started.
    #[error("{0}")]
    Start(#[source] HostFailure),
    /// The run ended without a result to read (it crashed or was stopped).
    #[error("{0}")]
    Run(#[source] HostFailure),
}

/// Why a drive stopped before its tasks did.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error("plan {session_id} has no task {task}")]
    NoSuchTask { session_id: String, task: u32 },
    #[error("task {task} of plan {session_id} did not start: {error}")]
    NotStarted {
        session_id: String,
        task: u32,
        error: HostError,
    },
    #[error(transparent)]
    Host(#[from] HostError),
}

/// What a plan driver needs of its front end.
pub trait PlanHost {
    /// What awaits a started run.
    type Wait: Future<Output = Result<RunManifest, HostError>> + Send;

    /// The plan as the writer has it now (routed and settled), or why it
    /// cannot be read.
    fn load(&self) -> Result<Plan, HostError>;
    /// Starts the run of a task.
    fn start(
        &self,
        request: LaunchRequest,
    ) -> impl Future<Output = Result<TaskRun<Self::Wait>, HostError>> + Send;
    /// Brings the plan's files in step with `plan`.
    fn persist(&self, plan: &Plan) -> impl Future<Output = ()> + Send;
    /// The workspace and recipes as they are now (a task's run may have
    /// changed the manuscript).
    fn current(&self) -> (Arc<Workspace>, Arc<Registry>);
    /// Tells the writer about a task (started, ended, why it stopped).
    fn note(&self, message: String) -> impl Future<Output = ()> + Send;
}

/// How a drive ended.
#[derive(Debug)]
pub enum DriveEnd {
    /// No task is ready any more (every task is done, or the rest wait).
    NothingReady,
    /// A task did not end done, so the tasks after it wait.
    Stopped { task: u32, status: TaskStatus },
    /// Only one task was asked for, and it ran.
    RanOne,
    /// The writer paused the plan.
    Paused,
    /// The plan could not be read, or a task's run could not start.
    Failed(DriveError),
}

/// Runs task `first`, then (unless `only`) every task that gets ready, one
/// run at a time, until none is ready, one does not end done, or the plan
/// is paused. A split task's parts run on like the tasks after a done one.
pub async fn drive<H: PlanHost>(host: &H, first: u32, only: bool) -> DriveEnd {
    let mut next = first;
    loop {
        let mut plan = match host.load() {
            Ok(plan) => plan,
            Err(error) => return DriveEnd::Failed(error.into()),
        };
        let session_id = plan.session_id.clone();
        let Some(task) = plan.task(next).cloned() else {
            return DriveEnd::Failed(DriveError::NoSuchTask {
                session_id,
                task: next,
            });
        };
        let request = LaunchRequest {
            recipe: task.recipe_id.clone(),
            task: Some(task.description.clone()),
            description: None,
            args: task.args.clone(),
            plan: Some(PlanLink {
                session_id: session_id.clone(),
                task_id: next,
            }),
            fresh: false,
        };
        let run = match host.start(request).await {
            Ok(run) => run,
            Err(error) => {
                if let Some(task) = plan.task_mut(next) {
                    task.status = TaskStatus::Failed;
                }
                plan.settle();
                host.persist(&plan).await;
                return DriveEnd::Failed(DriveError::NotStarted {
                    session_id,
                    task: next,
                    error,
                });
            }
        };
        host.note(format!(
            "task {next}: {} (run {})",
            task.description, run.run_id
        ))
        .await;
        plan.status = "running".to_owned();
        if let Some(task) = plan.task_mut(next) {
            task.status = TaskStatus::Running;
            task.run_id = Some(run.run_id.clone());
        }
        host.persist(&plan).await;
        let finished = run.finished.await;
        // The writer may have edited the checklist while the run worked.
        let mut plan = match host.load() {
            Ok(plan) => plan,
            Err(error) => return DriveEnd::Failed(error.into()),
        };
        let (workspace, registry) = host.current();
        let outcome = match &finished {
            Ok(manifest) => {
                let outcome = plan.finish_task(next, manifest, &registry, Some(&workspace));
                if let Some(review) = manifest
                    .review
                    .as_ref()
                    .filter(|_| outcome != TaskStatus::Done)
                {
                    host.note(format!(
                        "task {next}: {} after {} draft(s): {}",
                        outcome.as_str(),
                        review.iterations,
                        manifest.error.as_deref().unwrap_or("")
                    ))
                    .await;
                }
                outcome
            }
            Err(error) => {
                if let Some(task) = plan.task_mut(next) {
                    task.status = TaskStatus::Failed;
                    task.run_id = Some(run.run_id.clone());
                }
                plan.settle();
                host.note(format!("task {next}: {error}")).await;
                TaskStatus::Failed
            }
        };
        host.persist(&plan).await;
        let split = plan.task(next).is_none();
        if outcome != TaskStatus::Done && !split {
            return DriveEnd::Stopped {
                task: next,
                status: outcome,
            };
        }
        if only {
            return DriveEnd::RanOne;
        }
        if plan.status == "paused" {
            return DriveEnd::Paused;
        }
        match plan.ready().first() {
            Some(id) => next = *id,
            None => return DriveEnd::NothingReady,
        }
    }
}

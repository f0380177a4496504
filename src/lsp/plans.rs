//! Session plans open in the editor: `plan.md` read as the engine reads it
//! (the editor's unsaved text wins), with its own mistakes and the plan's
//! problems (an unknown dependency, a cycle, an unknown recipe; a task that
//! needs scoping, with its question) shown at their lines. Saving the
//! checklist puts it into `plan.json`.
//!
//! `controlRoom.runPlan` runs tasks through the editor's runs (progress,
//! cancel, delivery as edits), one at a time in dependency order, and keeps
//! both files in step as states change; `controlRoom.pausePlan` lets the
//! running task finish and starts no other. Lenses on the checklist offer
//! both.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types as lsp;

use super::convert;
use super::recipes::OpenRecipe;
use super::runs::{self, Context};
use super::shared::{invalid, lock};
use crate::index::{FilePath, Workspace};
use crate::plan::checked::{self, Checked, ProblemLevel, line_range, session_of_checklist};
use crate::plan::driver::{self, DriveEnd, HostError, PlanHost, TaskRun};
use crate::plan::{self, Plan, PlanFiles, TaskStatus, markdown};
use crate::runs::launch::LaunchRequest;
use crate::runs::recipe::Registry;
use crate::runs::store::{Disk, RunManifest};
use crate::text::{PositionEncoding, TextRange};

/// The plan with the checklist's text taken in, routed and settled, and
/// its problems.
fn current(
    workspace: &Workspace,
    registry: &Registry,
    path: &str,
    text: &str,
) -> Result<Checked, String> {
    let id =
        session_of_checklist(path).ok_or_else(|| format!("{path} is not a plan's checklist"))?;
    checked::check(workspace.root(), id, Some(text), registry, workspace)
        .map_err(|error| error.to_string())
}

fn diagnostic(
    text: &str,
    range: TextRange,
    code: &str,
    severity: lsp::DiagnosticSeverity,
    message: String,
    encoding: PositionEncoding,
) -> lsp::Diagnostic {
    lsp::Diagnostic {
        range: convert::range_in_text(text, range, encoding),
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
                    line_range(text, 0),
                    "plan-file",
                    lsp::DiagnosticSeverity::ERROR,
                    message,
                    encoding,
                )],
                Ok(checked) => checked
                    .problems
                    .into_iter()
                    .map(|problem| {
                        let severity = match problem.level {
                            ProblemLevel::Error => lsp::DiagnosticSeverity::ERROR,
                            ProblemLevel::Note => lsp::DiagnosticSeverity::INFORMATION,
                        };
                        diagnostic(
                            text,
                            problem.range(text),
                            problem.code,
                            severity,
                            problem.message,
                            encoding,
                        )
                    })
                    .collect(),
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
    let checked = current(workspace, registry, path, text)?;
    if let Some(problem) = checked.problems.iter().find(|p| p.code == "plan-syntax") {
        return Err(format!(
            "{path} was not taken into plan.json: line {}: {}",
            problem.line.unwrap_or(0) + 1,
            problem.message
        ));
    }
    let id = session_of_checklist(path).unwrap_or_default();
    PlanFiles::new(workspace.root(), id)
        .save_json(&Disk::default(), &checked.plan)
        .map_err(|error| format!("cannot write plan.json of {id}: {error}"))
}

/// Runs a plan's ready tasks (or one task) through the editor's runs.
pub const RUN_PLAN: &str = "controlRoom.runPlan";
/// Lets the running task finish and starts no other.
pub const PAUSE_PLAN: &str = "controlRoom.pausePlan";

/// What `controlRoom.runPlan` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunPlanArgs {
    session_id: String,
    /// Run this task (then stop); else every ready task in order.
    #[serde(default)]
    task: Option<u32>,
    /// Start `task` even if it is blocked.
    #[serde(default)]
    force: bool,
}

/// What `controlRoom.pausePlan` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PausePlanArgs {
    session_id: String,
}

/// The plan as the editor shows it: `plan.json` with the open `plan.md`
/// (saved or not) taken in, routed and settled.
fn editor_plan(context: &Context, session_id: &str) -> Result<Plan, RpcError> {
    let (workspace, registry, text) = {
        let mut session = lock(&context.session);
        let path = format!("{}/{session_id}/plan.md", plan::SESSIONS_DIR);
        let text = session
            .documents
            .get(path.as_str())
            .map(|document| document.rope.to_string());
        (session.workspace.clone(), session.recipes(), text)
    };
    let checked = checked::check(
        workspace.root(),
        session_id,
        text.as_deref(),
        &registry,
        &workspace,
    )
    .map_err(|error| invalid(error.to_string()))?;
    if let Some(problem) = checked.problems.iter().find(|p| p.is_error()) {
        return Err(invalid(format!(
            "plan {session_id} has errors; fix plan.md first: {}",
            problem.message
        )));
    }
    Ok(checked.plan)
}

/// Writes `plan.json`, and brings `plan.md` in step: through the editor when
/// it is open (an edit of the boxes, status and run lines only, refused if
/// the writer typed meanwhile), else on disk.
async fn persist(context: &Context, plan: &Plan) {
    let (root, open) = {
        let session = lock(&context.session);
        let path = format!("{}/{}/plan.md", plan::SESSIONS_DIR, plan.session_id);
        let open = session
            .documents
            .get(path.as_str())
            .map(|document| (path.clone(), document.rope.to_string(), document.version));
        (session.workspace.root().to_path_buf(), open)
    };
    let files = PlanFiles::new(&root, &plan.session_id);
    let disk = Disk::default();
    if let Err(error) = files.save_json(&disk, plan) {
        let message = format!("cannot write plan.json of {}: {error}", plan.session_id);
        context
            .client
            .show_message(lsp::MessageType::ERROR, message)
            .await;
        return;
    }
    match open {
        Some((path, text, version)) => {
            let edits = markdown::edits_in_step(&text, plan);
            if edits.is_empty() {
                return;
            }
            let encoding = lock(&context.session).encoding;
            let Some(uri) = convert::uri_for_absolute(&root.join(&path)) else {
                return;
            };
            let edit = lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Edits(vec![lsp::TextDocumentEdit {
                    text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                        uri,
                        version: Some(version),
                    },
                    edits: edits
                        .into_iter()
                        .map(|(range, new_text)| {
                            lsp::OneOf::Left(lsp::TextEdit {
                                range: convert::range_in_text(&text, range, encoding),
                                new_text,
                            })
                        })
                        .collect(),
                }])),
                ..lsp::WorkspaceEdit::default()
            };
            // A refusal (the writer typed) leaves plan.md for the next update.
            let _ = context.client.apply_edit(edit).await;
        }
        None => {
            let _ = files.save_in_step(&disk, plan);
        }
    }
}

/// `controlRoom.runPlan`: checks the plan, then runs its tasks in the
/// background; answers `{session_id, task}` with the first task to run.
pub fn run(context: &Context, args: RunPlanArgs) -> Result<Value, RpcError> {
    let plan = editor_plan(context, &args.session_id)?;
    let first = match args.task {
        Some(id) => {
            let task = plan
                .task(id)
                .ok_or_else(|| invalid(format!("plan {} has no task {id}", plan.session_id)))?;
            let startable = task.status == TaskStatus::Pending
                || (args.force && task.status == TaskStatus::Blocked);
            if !startable {
                return Err(invalid(format!(
                    "task {id} is {}{}",
                    task.status.as_str(),
                    if task.status == TaskStatus::Blocked {
                        "; run it anyway to start it before its dependencies"
                    } else {
                        ""
                    }
                )));
            }
            id
        }
        None => *plan
            .ready()
            .first()
            .ok_or_else(|| invalid(format!("no task of plan {} is ready", plan.session_id)))?,
    };
    let context = context.clone();
    let only = args.task.is_some();
    let session_id = plan.session_id.clone();
    tokio::spawn(async move { drive(context, session_id, first, only).await });
    Ok(json!({"session_id": args.session_id, "task": first}))
}

/// The editor's side of a plan's drive: each task a run of the editor's
/// (progress, cancel, delivery as edits), the checklist kept in step
/// through the editor when it is open.
struct EditorPlan {
    context: Context,
    session_id: String,
}

type RunWait = Pin<Box<dyn Future<Output = Result<RunManifest, HostError>> + Send>>;

impl PlanHost for EditorPlan {
    type Wait = RunWait;

    fn load(&self) -> Result<Plan, HostError> {
        editor_plan(&self.context, &self.session_id)
            .map_err(|error| HostError::Plan(error.message.into_owned().into()))
    }

    async fn start(&self, request: LaunchRequest) -> Result<TaskRun<RunWait>, HostError> {
        let started = runs::start_request(&self.context, request, None)
            .map_err(|error| HostError::Start(error.message.into_owned().into()))?;
        let ended = started.ended;
        Ok(TaskRun {
            run_id: started.run_id,
            finished: Box::pin(async move {
                ended
                    .await
                    .unwrap_or_else(|_| Err("the run's task was stopped".to_owned()))
                    .map_err(|why| HostError::Run(why.into()))
            }),
        })
    }

    async fn persist(&self, plan: &Plan) {
        persist(&self.context, plan).await;
    }

    fn current(&self) -> (Arc<Workspace>, Arc<Registry>) {
        let mut session = lock(&self.context.session);
        (Arc::new(session.workspace.clone()), session.recipes())
    }

    async fn note(&self, message: String) {
        self.context
            .client
            .log_message(lsp::MessageType::INFO, message)
            .await;
    }
}

/// Runs `first`, then (unless `only`) every task that gets ready, one run
/// at a time, until none is ready, one fails, or the plan is paused.
async fn drive(context: Context, session_id: String, first: u32, only: bool) {
    let host = EditorPlan {
        context: context.clone(),
        session_id,
    };
    if let DriveEnd::Failed(error) = driver::drive(&host, first, only).await {
        context
            .client
            .show_message(lsp::MessageType::ERROR, error.to_string())
            .await;
    }
}

/// `controlRoom.pausePlan`: no new task starts; the running one finishes.
pub fn pause(context: &Context, args: PausePlanArgs) -> Result<Value, RpcError> {
    let root = lock(&context.session).workspace.root().to_path_buf();
    let files = PlanFiles::new(&root, &args.session_id);
    let mut plan = files
        .load()
        .map_err(|error| invalid(format!("{error:#}")))?;
    plan.status = "paused".to_owned();
    files
        .save_json(&Disk::default(), &plan)
        .map_err(|error| invalid(format!("cannot write plan.json: {error}")))?;
    Ok(json!({"session_id": args.session_id, "status": "paused"}))
}

/// The lenses of an open checklist: "Run all ready" and "Pause" at the top,
/// "Run task" on a ready task and "Run task anyway" on a blocked one.
pub fn code_lenses(
    workspace: &Workspace,
    registry: &Registry,
    path: &str,
    text: &str,
    encoding: PositionEncoding,
) -> Vec<lsp::CodeLens> {
    let Ok(Checked {
        plan,
        parsed: Some(parsed),
        ..
    }) = current(workspace, registry, path, text)
    else {
        return Vec::new();
    };
    let lens = |line: usize, title: &str, command: &str, argument: Value| lsp::CodeLens {
        range: convert::range_in_text(text, line_range(text, line), encoding),
        command: Some(lsp::Command {
            title: title.to_owned(),
            command: command.to_owned(),
            arguments: Some(vec![argument]),
        }),
        data: None,
    };
    let id = plan.session_id.as_str();
    let mut lenses = Vec::new();
    if !plan.ready().is_empty() {
        lenses.push(lens(
            0,
            "Run all ready",
            RUN_PLAN,
            json!({"session_id": id}),
        ));
    }
    if plan.status == "running" && plan.tasks.iter().any(|t| t.status == TaskStatus::Running) {
        lenses.push(lens(0, "Pause", PAUSE_PLAN, json!({"session_id": id})));
    }
    for task in &plan.tasks {
        let Some(line) = parsed.line_of(task.id, None) else {
            continue;
        };
        let (title, force) = match task.status {
            TaskStatus::Pending => ("Run task", false),
            TaskStatus::Blocked => ("Run task anyway", true),
            _ => continue,
        };
        lenses.push(lens(
            line,
            title,
            RUN_PLAN,
            json!({"session_id": id, "task": task.id, "force": force}),
        ));
    }
    lenses
}

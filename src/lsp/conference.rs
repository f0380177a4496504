//! `controlRoom.conference`: a conference round from the editor. The command
//! answers `{conference_id}` at once; the round runs in a task with
//! cancellable progress like a run (it is in the same in-flight list, so
//! `cancelRun` and `window/workDoneProgress/cancel` stop it), and at its close
//! the receipts are written, the transcript arrives as a workspace edit
//! creating `.control-room/issues/CONF-<id>.md`, and `window/showDocument`
//! opens it.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::convert::{self, path_for, uri_for};
use super::runs::{self, Context, EditPlan, InFlight, Progress};
use super::shared::{invalid, lock};
use crate::conference::envelope::Policy;
use crate::conference::{self, Conference, ConferenceError, Event, Passage, Request};
use crate::receipts::SigningKey;
use crate::runs::prompts::Prompts;
use crate::runs::store::Disk;

pub const CONFERENCE: &str = "controlRoom.conference";

/// What `controlRoom.conference` takes: a question, or a passage (`uri` and
/// `range`) to ask about, or both.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConferenceArgs {
    #[serde(default)]
    pub question: Option<String>,
    #[serde(default)]
    pub agents: Vec<String>,
    /// The tools the Chief may call (default all).
    #[serde(default)]
    pub tools: Vec<String>,
    /// Whether the Chief must call a tool first (default true).
    #[serde(default)]
    pub require_tool: Option<bool>,
    #[serde(default)]
    pub uri: Option<Uri>,
    #[serde(default)]
    pub range: Option<lsp::Range>,
}

/// Starts a round; answers its id before anything is asked of a model.
pub fn start(
    context: &Context,
    args: ConferenceArgs,
    client_token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let (workspace, editor_llm, encoding) = {
        let session = lock(&context.session);
        (
            Arc::new(session.workspace.clone()),
            session.editor_llm.clone(),
            session.encoding,
        )
    };
    let passage = match (&args.uri, &args.range) {
        (Some(uri), Some(range)) => {
            let path = path_for(&workspace, uri)
                .ok_or_else(|| invalid(format!("{CONFERENCE}: {uri:?} is not in the workspace")))?;
            let file = workspace
                .file(&path)
                .ok_or_else(|| invalid(format!("{CONFERENCE}: {path} is not indexed")))?;
            let start = convert::offset(file, range.start, encoding);
            let end = convert::offset(file, range.end, encoding);
            let (start, end) = (start.min(end), start.max(end));
            let text = file.text[start..end].trim().to_owned();
            (!text.is_empty()).then(|| Passage {
                path: path.to_string(),
                start_line: file.line_index.line_of(start) + 1,
                end_line: file.line_index.line_of(end.saturating_sub(1).max(start)) + 1,
                text,
            })
        }
        _ => None,
    };
    let question = match args.question.as_deref().map(str::trim) {
        Some(question) if !question.is_empty() => question.to_owned(),
        _ if passage.is_some() => conference::DEFAULT_QUESTION.to_owned(),
        _ => {
            return Err(invalid(format!(
                "{CONFERENCE}: give a `question`, or a passage (`uri` and `range`) to ask about"
            )));
        }
    };
    let mut request = Request::new(question)
        .with_agents(&args.agents)
        .map_err(|error| invalid(format!("{CONFERENCE}: {error}")))?;
    request.passage = passage;
    request.policy = Policy {
        require_tool_first: args.require_tool.unwrap_or(true),
        ..Policy::default()
    }
    .with_allowed(&args.tools)
    .map_err(|error| invalid(format!("{CONFERENCE}: {error}")))?;
    let root = workspace.root().to_path_buf();
    let model = runs::connect(&root, editor_llm.as_ref()).map_err(|error| {
        invalid(format!(
            "Convene conference: the model is not usable: {error}"
        ))
    })?;
    let disk = Disk::default();
    let key = SigningKey::load_or_create(&root, &disk).map_err(|error| {
        invalid(format!(
            "Convene conference: cannot read the receipt-signing key: {error}"
        ))
    })?;
    let conference = Conference {
        workspace,
        prompts: Arc::new(Prompts::load(&root)),
        model,
        key,
    };
    let conference_id = request.conference_id.clone();
    let created = client_token.is_none();
    let token = client_token.unwrap_or_else(|| {
        lsp::ProgressToken::String(format!("control-room/conference/{conference_id}"))
    });
    let cancel = CancellationToken::new();
    let label = format!(
        "Conference: {}",
        crate::tools::one_line(&request.question)
            .chars()
            .take(60)
            .collect::<String>()
    );
    context.runs.lock().insert(
        conference_id.clone(),
        InFlight {
            recipe_id: "conference".into(),
            label: label.clone(),
            scene_path: None,
            cancel: cancel.clone(),
            token: token.clone(),
            step: "starting".into(),
        },
    );
    tokio::spawn(drive(
        context.clone(),
        conference,
        request,
        label,
        cancel,
        token,
        created,
    ));
    Ok(json!({ "conference_id": conference_id }))
}

/// Runs the round to its close and delivers the transcript.
async fn drive(
    context: Context,
    conference: Conference,
    request: Request,
    label: String,
    cancel: CancellationToken,
    token: lsp::ProgressToken,
    create: bool,
) {
    let conference_id = request.conference_id.clone();
    let root = conference.workspace.root().to_path_buf();
    let progress = Progress::begin(&context, token, create, &label).await;
    let (events, mut received) = unbounded_channel();
    let round = tokio::spawn(async move {
        let report = move |event: Event| {
            let _ = events.send(event);
        };
        conference.convene(request, &report, &cancel).await
    });
    while let Some(event) = received.recv().await {
        let (message, percentage) = match event {
            Event::ChiefStep { step, max } => (
                format!("phase 1: the Chief gathers evidence (step {step} of at most {max})"),
                (step * 40 / max.max(1)) as u32,
            ),
            Event::ToolCall { step, tool } => (
                format!(
                    "phase 1: step {step}: {}",
                    tool.as_deref().unwrap_or("no tool")
                ),
                (step * 40 / 6).min(45) as u32,
            ),
            Event::Opinions { done, total } => (
                format!("phase 2: {done} of {total} replies"),
                (50 + done * 50 / total.max(1)) as u32,
            ),
            Event::Writing { agent, words, tail } => {
                let who = if agent == "chief" {
                    "phase 1: the Chief".to_owned()
                } else {
                    format!("phase 2: {agent}")
                };
                progress
                    .report_message(format!("{who}: {words} words … {tail}"))
                    .await;
                continue;
            }
        };
        if let Some(run) = context.runs.lock().get_mut(&conference_id) {
            run.step = message.clone();
        }
        progress.report(message, percentage).await;
    }
    let (summary, show, failure) = match round.await {
        Ok(Ok(round)) => close(&context, &root, round).await,
        Ok(Err(ConferenceError::Cancelled)) => {
            ("cancelled; nothing was written".to_owned(), None, None)
        }
        Ok(Err(error)) => (
            format!("failed: {error}"),
            None,
            Some(format!("The conference could not run: {error}")),
        ),
        Err(join) => {
            let reason = if join.is_panic() {
                crate::runs::launch::panic_message(&join.into_panic())
            } else {
                "its task was stopped".to_owned()
            };
            (
                format!("failed: {reason}"),
                None,
                Some(format!("The conference stopped: {reason}")),
            )
        }
    };
    context.runs.lock().remove(&conference_id);
    progress.end(summary).await;
    if let Some(uri) = show {
        runs::show(&context, uri, false).await;
    }
    if let Some(message) = failure {
        let client = context.client.clone();
        tokio::spawn(async move {
            client.show_message(lsp::MessageType::ERROR, message).await;
        });
    }
}

/// Closes the round: the receipts first, then the transcript as a workspace
/// edit creating its file (written here if the editor cannot or will not).
async fn close(
    context: &Context,
    root: &std::path::Path,
    round: conference::Round,
) -> (String, Option<Uri>, Option<String>) {
    let disk = Disk::default();
    if let Err(error) = conference::write_receipts(root, &disk, &round) {
        return (
            format!("failed: the receipts cannot be written ({error})"),
            None,
            Some(format!(
                "The conference's receipts cannot be written ({error}); the transcript was not saved"
            )),
        );
    }
    let path = conference::transcript_path(&round.request.conference_id);
    let text = conference::transcript(&round);
    let summary = conference::summary(&round);
    drop(round);
    let workspace = lock(&context.session).workspace.clone();
    let Some(uri) = uri_for(&workspace, &path) else {
        return (format!("failed: no URI for {path}"), None, None);
    };
    let applied = runs::apply(
        context,
        uri.clone(),
        EditPlan::Create { text: text.clone() },
        root,
        &path,
    )
    .await;
    if applied.is_err() {
        // The file is new and the round's own: writing it here loses nothing.
        let full = root.join(&path);
        if let Some(parent) = full.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(error) = disk.write_atomic(&full, text.as_bytes()) {
            return (
                format!("failed: {path} cannot be written ({error})"),
                None,
                Some(format!(
                    "The transcript cannot be written to {path}: {error}"
                )),
            );
        }
    }
    (format!("closed: {summary}"), Some(uri), None)
}

//! `controlRoom.askForeman`: a turn at the Foreman's desk from the editor,
//! the same as `control-room ask`. The command answers `{turn}` at once; the
//! turn runs in a task with cancellable progress. The writer's message (when
//! the command gave one) and a `## Foreman` block are appended at the end of
//! the desk at the version it was read (asked again at the new end if the
//! writer typed meanwhile: appending never overwrites); the reply streams
//! into the block between its markers as the model writes it (its message
//! only, never its reasoning or its actions, a few times a second, each edit
//! at the desk's version), and at its end the block becomes the reply; a
//! turn with no reply removes the block. The actions' changes arrive as edits of
//! their files (a file the writer changed since is left alone and said so),
//! new files created, a `write_scene` starts its run and a
//! `start_tournament` its tournament.

use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types as lsp;

use super::convert::uri_for;
use super::runs::{self, Context, EditPlan, Progress};
use super::shared::{invalid, lock};
use crate::foreman::chief::Decomposition;
use crate::foreman::desk::{self, DESK_FILE};
use crate::foreman::turn::{Desk, Reply};
use crate::index::Workspace;
use crate::llm::model::Written;
use crate::receipts::SigningKey;
use crate::runs::launch::LaunchRequest;
use crate::runs::prompts::Prompts;
use crate::runs::runner::now;
use crate::runs::store::Disk;

pub const ASK_FOREMAN: &str = "controlRoom.askForeman";
pub const SCAFFOLD: &str = "controlRoom.scaffold";

/// What `controlRoom.scaffold` takes.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaffoldArgs {
    pub scene_id: String,
    #[serde(default)]
    pub goal: Option<String>,
    #[serde(default)]
    pub conflict: Option<String>,
}

/// "Scaffold scene": the scene's scaffold as a new file, opened.
pub async fn scaffold(context: &Context, args: ScaffoldArgs) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let (said, change) = crate::foreman::actions::scaffold::scaffold_scene(
        &workspace,
        &args.scene_id,
        args.goal.as_deref(),
        args.conflict.as_deref(),
    )
    .map_err(|error| invalid(format!("{SCAFFOLD}: {error}")))?;
    runs::apply_change(context, &change).await.map_err(|why| {
        invalid(format!(
            "{SCAFFOLD}: {} was not written: {why}",
            change.path
        ))
    })?;
    if let Some(uri) = uri_for(&workspace, &change.path) {
        runs::show(context, uri, true).await;
    }
    Ok(json!({"scaffolded": change.path.to_string(), "said": said}))
}

/// The task of a `runRecipe` that names no recipe and that no recipe takes.
pub(super) fn unroutable(context: &Context, args: &runs::RunRecipeArgs) -> Option<String> {
    if args.recipe.is_some() || args.plan.is_some() {
        return None;
    }
    let task = args.task.as_deref()?.trim();
    if !task.contains(char::is_whitespace) {
        return None;
    }
    let engine = runs::editor_engine(context);
    let routed = crate::runs::router::route(&engine.registry, Some(&engine.workspace), task);
    (!routed.routable).then(|| task.to_owned())
}

/// A request no recipe takes goes to the Chief, in a task with progress:
/// a plan is saved and its checklist opened; a question is asked with its
/// choices as buttons, and the choice picked runs in its place. Answers
/// `{"decomposing": task}` at once.
pub(super) fn decompose(
    context: &Context,
    task: String,
    client_token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let engine = runs::editor_engine(context);
    let editor_llm = lock(&context.session).editor_llm.clone();
    let root = engine.workspace.root().to_path_buf();
    let model = runs::connect(&root, editor_llm.as_ref()).map_err(|error| {
        invalid(format!(
            "no recipe takes “{task}”, and the model is not usable to ask the Chief: {error}"
        ))
    })?;
    let created = client_token.is_none();
    let token = client_token.unwrap_or_else(|| {
        lsp::ProgressToken::String(format!(
            "control-room/chief/{}",
            crate::storage::new_id("c")
        ))
    });
    let context = context.clone();
    let answer = json!({ "decomposing": task });
    tokio::spawn(async move {
        let progress =
            Progress::begin(&context, token, created, "The Chief splits the request").await;
        let decomposition = crate::foreman::chief::decompose(
            &engine.workspace,
            engine.prompts.as_ref(),
            &engine.registry,
            model.as_ref(),
            &task,
        )
        .await;
        let summary = match decomposition {
            Err(error) => {
                let message =
                    format!("No recipe takes “{task}”, and the Chief could not split it: {error}");
                let client = context.client.clone();
                tokio::spawn(
                    async move { client.show_message(lsp::MessageType::ERROR, message).await },
                );
                format!("failed: {error}")
            }
            Ok(Decomposition::Plan(tasks)) => {
                let plan = crate::foreman::chief::plan_of(
                    &tasks,
                    &engine.registry,
                    &engine.workspace,
                    crate::storage::new_id("sp_"),
                    now(),
                );
                let files = crate::plan::PlanFiles::new(&root, &plan.session_id);
                match files.save(&Disk::default(), &plan) {
                    Ok(()) => {
                        let path = format!(".control-room/sessions/{}/plan.md", plan.session_id);
                        if let Some(uri) = uri_for(&engine.workspace, &path) {
                            runs::show(&context, uri, true).await;
                        }
                        format!("a plan of {} tasks: {}", plan.tasks.len(), plan.session_id)
                    }
                    Err(error) => format!("failed: the plan cannot be saved ({error})"),
                }
            }
            Ok(Decomposition::Clarify { question, choices }) => {
                let items: Vec<lsp::MessageActionItem> = choices
                    .iter()
                    .map(|choice| lsp::MessageActionItem {
                        title: choice.clone(),
                        properties: Default::default(),
                    })
                    .collect();
                let picked = context
                    .client
                    .show_message_request(lsp::MessageType::INFO, question.clone(), Some(items))
                    .await;
                match picked {
                    Ok(Some(item)) => {
                        let request = LaunchRequest {
                            task: Some(item.title.clone()),
                            ..LaunchRequest::default()
                        };
                        match runs::start_request(&context, request, None) {
                            Ok(started) => format!(
                                "asked “{question}”; running “{}” ({})",
                                item.title, started.run_id
                            ),
                            Err(error) => format!(
                                "asked “{question}”; “{}” could not start: {}",
                                item.title, error.message
                            ),
                        }
                    }
                    _ => format!("asked “{question}”; no choice was made"),
                }
            }
        };
        progress.end(summary).await;
    });
    Ok(answer)
}

/// What `controlRoom.askForeman` takes: the writer's message, or nothing
/// to ask the desk's last unanswered one.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    #[serde(default)]
    pub message: Option<String>,
}

/// The desk as the editor has it: its text and the open document's version.
fn desk_now(context: &Context) -> (Workspace, String, Option<i32>) {
    let session = lock(&context.session);
    let (text, version) = session.text_now(DESK_FILE).unwrap_or_default();
    (session.workspace.clone(), text, version)
}

/// Starts a turn; answers before the model is asked.
pub fn start(
    context: &Context,
    args: AskArgs,
    client_token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let (workspace, desk_text, version) = desk_now(context);
    let message = args
        .message
        .as_deref()
        .map(str::trim)
        .filter(|message| !message.is_empty());
    let asked = match message {
        Some(message) => desk::with_message(&desk_text, message),
        None => desk_text.clone(),
    };
    let turns = desk::read(&asked);
    let Some(pending) = desk::pending(&turns) else {
        return Err(invalid(format!(
            "Ask the Foreman: {DESK_FILE} has no message waiting: write one under `## Writer`, or give a `message`"
        )));
    };
    let turn = desk::turn_number(&turns);
    let history = desk::history(&turns);
    let pending = pending.text.clone();
    let root = workspace.root().to_path_buf();
    let editor_llm = lock(&context.session).editor_llm.clone();
    let model = runs::connect(&root, editor_llm.as_ref())
        .map_err(|error| invalid(format!("Ask the Foreman: the model is not usable: {error}")))?;
    let disk = Disk::default();
    let key = SigningKey::load_or_create(&root, &disk).map_err(|error| {
        invalid(format!(
            "Ask the Foreman: cannot read the receipt-signing key: {error}"
        ))
    })?;
    let prompts = Prompts::load(&root);
    let id = format!("foreman-{turn}-{}", crate::storage::new_id("t"));
    let runs::Tracked {
        token,
        created,
        cancel,
    } = context
        .runs
        .track(&id, "foreman", "Ask the Foreman", client_token);
    let context = context.clone();
    // What the reply's edit adds before the reply: the writer's message
    // (the whole new desk when there is none yet).
    let added = match message {
        Some(message) if desk_text.trim().is_empty() => desk::with_message("", message),
        Some(message) => desk::message_turn(message),
        None => String::new(),
    };
    tokio::spawn(async move {
        let progress = Progress::begin(&context, token, created, "Ask the Foreman").await;
        // The reply streams into a block of its own at the desk's end,
        // after the writer's message (appended again at the new end if the
        // writer typed meanwhile); without it, it lands whole at the end.
        let block = format!("{added}{}", desk::streaming_block());
        let mut placed = append_to_desk(&context, &block, version).await;
        if placed.is_err() {
            let (_, _, now_version) = desk_now(&context);
            placed = append_to_desk(&context, &block, now_version).await;
        }
        let streaming = placed.is_ok();
        let (words, mut heard) = unbounded_channel::<(String, String)>();
        let ask = async move {
            let at = now();
            let desk = Desk {
                workspace: &workspace,
                prompts: &prompts,
                model: model.as_ref(),
                key: &key,
                disk: &disk,
                at: &at,
            };
            let listener = move |written: Written<'_>| {
                let said = format!("{} words … {}", written.words, written.tail);
                let _ = words.send((said, written.text.to_owned()));
            };
            desk.answer(turn, &history, &pending, Some(&listener)).await
        };
        tokio::pin!(ask);
        let mut shown = std::time::Instant::now();
        let result = loop {
            tokio::select! {
                result = &mut ask => break Some(result),
                Some((said, so_far)) = heard.recv() => {
                    progress.report_message(format!("the Foreman: {said}")).await;
                    if streaming && shown.elapsed() >= STREAM_EVERY {
                        shown = std::time::Instant::now();
                        let partial = desk::partial_message(&so_far);
                        let shown_text = if partial.is_empty() { partial } else { format!("{partial}\n") };
                        // A refused edit (the writer typing) waits for the next one.
                        let _ = edit_streaming(&context, false, &shown_text).await;
                    }
                }
                () = cancel.cancelled() => break None,
            }
        };
        if streaming && !matches!(result, Some(Ok(_))) {
            // No reply: the block goes, and the writer's message waits again.
            let _ = edit_streaming(&context, true, "").await;
        }
        let summary = match result {
            None => "cancelled; nothing was written".to_owned(),
            Some(Err(error)) => {
                let message = format!("The Foreman could not answer: {error}");
                let client = context.client.clone();
                tokio::spawn(
                    async move { client.show_message(lsp::MessageType::ERROR, message).await },
                );
                format!("failed: {error}")
            }
            Some(Ok(reply)) if streaming => deliver(&context, None, version, reply).await,
            Some(Ok(reply)) => deliver(&context, Some(&added), version, reply).await,
        };
        context.runs.lock().remove(&id);
        progress.end(summary).await;
    });
    Ok(json!({ "turn": turn }))
}

/// How often the reply's text in the desk is brought up to date.
const STREAM_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// Replaces what the streaming block holds (or, with `whole`, the block
/// itself) in the desk as the editor has it now, at its version.
async fn edit_streaming(context: &Context, whole: bool, text: &str) -> Result<(), String> {
    let (mut workspace, mut desk_text, mut version) = desk_now(context);
    // An open desk learns of the block's edit by the editor's didChange,
    // which may come a moment after the edit was applied.
    for _ in 0..10 {
        if version.is_none() || desk::streaming_ranges(&desk_text).is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        (workspace, desk_text, version) = desk_now(context);
    }
    let (block, inner) =
        desk::streaming_ranges(&desk_text).ok_or("the Foreman's block is no longer in the desk")?;
    let range = if whole { block } else { inner };
    if !whole && range.slice(&desk_text) == text {
        return Ok(());
    }
    let encoding = lock(&context.session).encoding;
    let edit = lsp::TextEdit {
        range: lsp::Range {
            start: position(&desk_text, range.start, encoding),
            end: position(&desk_text, range.end, encoding),
        },
        new_text: text.to_owned(),
    };
    let uri = uri_for(&workspace, DESK_FILE).ok_or("no URI for the desk")?;
    runs::apply_files(context, vec![(uri, version, vec![edit])]).await
}

/// Sends the reply and the actions' changes, starts the runs; says what
/// happened. The reply takes the streaming block's place; without one
/// (`added`: what goes before it), it is appended.
async fn deliver(
    context: &Context,
    added: Option<&str>,
    version: Option<i32>,
    reply: Reply,
) -> String {
    let mut done = reply.done.clone();
    for change in &reply.changes {
        if let Err(why) = runs::apply_change(context, change).await {
            done.push(format!("{} was not written: {why}", change.path));
        }
    }
    let said = desk::reply_text(&reply.message, &done, &reply.refused);
    let mut appended = Err(String::new());
    if added.is_none() {
        // Twice: the writer may have typed between reading and editing.
        for _ in 0..2 {
            appended = edit_streaming(context, true, &format!("\n{said}")).await;
            if appended.is_ok() {
                break;
            }
        }
    }
    let text = format!("{}{said}", added.unwrap_or_default());
    if appended.is_err() {
        appended = append_to_desk(context, &text, version).await;
        if added.is_none() {
            // The reply is at the end: the block it streamed into goes.
            let _ = edit_streaming(context, true, "").await;
        }
    }
    if appended.is_err() {
        // The writer typed meanwhile: append at the desk's new end.
        let (_, _, now_version) = desk_now(context);
        appended = append_to_desk(context, &text, now_version).await;
    }
    for tournament in reply.tournaments {
        let workspace = lock(&context.session).workspace.clone();
        if let Err(error) = super::voice::spawn(context, workspace.into(), tournament, None) {
            done.push(format!("the tournament could not start: {}", error.message));
        }
    }
    // Each move the Foreman proposed is asked of the writer; only their yes
    // moves the project.
    for proposed in reply.moves {
        let context = context.clone();
        tokio::spawn(async move {
            super::mode::confirm(&context, &proposed).await;
        });
    }
    for (recipe, args) in reply.runs {
        let request = LaunchRequest {
            recipe: Some(recipe),
            args,
            ..LaunchRequest::default()
        };
        if let Err(error) = runs::start_request(context, request, None) {
            done.push(format!("the run could not start: {}", error.message));
        }
    }
    match appended {
        Ok(()) => format!(
            "replied: {} done, {} refused",
            reply.done.len(),
            reply.refused.len()
        ),
        Err(why) => format!("the reply could not be added to {DESK_FILE}: {why}"),
    }
}

/// Appends `text` at the end of the desk as the editor has it (created if
/// there is none).
async fn append_to_desk(context: &Context, text: &str, version: Option<i32>) -> Result<(), String> {
    let (workspace, desk_text, now_version) = desk_now(context);
    if version.is_some() && version != now_version {
        return Err("the desk changed".to_owned());
    }
    let root = workspace.root().to_path_buf();
    let uri = uri_for(&workspace, DESK_FILE).ok_or("no URI for the desk")?;
    if desk_text.is_empty() && !root.join(DESK_FILE).exists() {
        return runs::apply(
            context,
            uri,
            EditPlan::Create {
                text: text.trim_start().to_owned(),
            },
            &root,
            DESK_FILE,
        )
        .await;
    }
    let end = end_position(&desk_text, lock(&context.session).encoding);
    let edit = lsp::TextEdit {
        range: lsp::Range { start: end, end },
        new_text: if desk_text.ends_with('\n') || desk_text.is_empty() {
            text.to_owned()
        } else {
            format!("\n{text}")
        },
    };
    runs::apply_files(context, vec![(uri, now_version, vec![edit])]).await
}

fn end_position(text: &str, encoding: crate::text::PositionEncoding) -> lsp::Position {
    position(text, text.len(), encoding)
}

fn position(text: &str, offset: usize, encoding: crate::text::PositionEncoding) -> lsp::Position {
    let index = crate::text::LineIndex::new(text);
    let at = index.position(text, offset, encoding);
    lsp::Position {
        line: at.line,
        character: at.col,
    }
}

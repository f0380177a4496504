//! Voice calibration from the editor, the same as `control-room voice`:
//! `controlRoom.voice.tournament` (a selection, a scene or words; answers
//! `{tournament}` at once, drafts with every contestant in a task with
//! cancellable progress, then creates the tournament file and opens it),
//! `controlRoom.voice.pick` (the gold standard and the bundle, as edits),
//! `controlRoom.voice.why` (the model's account inserted under the version,
//! at the version of the file it read), `controlRoom.voice.cross` (round
//! two), `controlRoom.voice.bundle`, `controlRoom.voice.lock` and
//! `controlRoom.voice.unlock`. The code
//! lenses of a tournament file and of the gold standard call them.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types as lsp;

use super::convert::{path_for, uri_for};
use super::runs::{self, Context, Progress};
use super::shared::{invalid, lock};
use crate::index::Workspace;
use crate::runs::output::changes::Change;
use crate::runs::prompts::Prompts;
use crate::voice::file::{self, TournamentFile};
use crate::voice::play;
use crate::voice::tournament::tournament_path;
use crate::voice::{Contestant, TestPassage, Tournament, Voice, VoiceError, bundle};

pub const VOICE_TOURNAMENT: &str = "controlRoom.voice.tournament";
pub const VOICE_PICK: &str = "controlRoom.voice.pick";
pub const VOICE_WHY: &str = "controlRoom.voice.why";
pub const VOICE_CROSS: &str = "controlRoom.voice.cross";
pub const VOICE_BUNDLE: &str = "controlRoom.voice.bundle";
pub const VOICE_LOCK: &str = "controlRoom.voice.lock";
pub const VOICE_UNLOCK: &str = "controlRoom.voice.unlock";

/// What `controlRoom.voice.tournament` takes: the passage as a selection
/// (`uri` and `range`), a `scene` of the outline, or `text`; the
/// contestants (default `[voice] contestants`) and the length.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentArgs {
    #[serde(default)]
    pub uri: Option<lsp::Uri>,
    #[serde(default)]
    pub range: Option<lsp::Range>,
    #[serde(default)]
    pub scene: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub contestants: Option<Vec<String>>,
    #[serde(default)]
    pub words: Option<u32>,
}

/// What pick, why and cross take: the tournament (its id or its file's
/// path) and versions by number or label.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionArgs {
    pub tournament: String,
    pub version: Value,
    #[serde(default)]
    pub why: Option<String>,
    /// For a cross: the other version.
    #[serde(default)]
    pub other: Option<Value>,
    #[serde(default)]
    pub words: Option<u32>,
}

/// What bundle takes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleArgs {
    #[serde(default)]
    pub summary: Option<String>,
}

fn version_name(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn refused(command: &str, error: impl std::fmt::Display) -> RpcError {
    invalid(format!("{command}: {error}"))
}

/// A document's text as the editor has it, or as it is on disk.
fn text_now(context: &Context, path: &str) -> Option<String> {
    lock(&context.session).text_now(path).map(|(text, _)| text)
}

/// Starts a tournament; answers before any contestant is asked.
pub fn start_tournament(
    context: &Context,
    args: TournamentArgs,
    token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let passage = passage(context, &workspace, &args)?;
    let names = args
        .contestants
        .unwrap_or_else(|| workspace.config().voice.contestants.clone());
    let contestants = names
        .iter()
        .map(|name| Contestant::parse(name))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| refused(VOICE_TOURNAMENT, error))?;
    let tournament = Tournament::new(passage, contestants, args.words)
        .map_err(|error| refused(VOICE_TOURNAMENT, error))?;
    spawn(context, Arc::new(workspace), tournament, token)
}

/// Runs `tournament` in a task with progress; answers `{tournament}`.
pub(super) fn spawn(
    context: &Context,
    workspace: Arc<Workspace>,
    tournament: Tournament,
    client_token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let brief = play::brief(&workspace, &tournament.passage)
        .map_err(|error| refused(VOICE_TOURNAMENT, error))?;
    let root = workspace.root().to_path_buf();
    let editor_llm = lock(&context.session).editor_llm.clone();
    let model = runs::connect(&root, editor_llm.as_ref()).map_err(|error| {
        refused(
            VOICE_TOURNAMENT,
            format!("the model is not usable: {error}"),
        )
    })?;
    let voice = Voice {
        workspace: workspace.clone(),
        prompts: Arc::new(Prompts::load(&root)),
        model,
    };
    let id = tournament.id.clone();
    let runs::Tracked {
        token,
        created,
        cancel,
    } = context
        .runs
        .track(&id, "voice_tournament", "Voice tournament", client_token);
    let context = context.clone();
    let answer = json!({ "tournament": id, "contestants": tournament.contestants.len() });
    tokio::spawn(async move {
        let title = format!(
            "Voice tournament: {} contestants",
            tournament.contestants.len()
        );
        let progress = Progress::begin(&context, token, created, &title).await;
        let (done_tx, mut done_rx) =
            tokio::sync::mpsc::unbounded_channel::<(usize, usize, String)>();
        let on_done = move |done: usize, of: usize, label: &str| {
            let _ = done_tx.send((done, of, label.to_owned()));
        };
        let running = play::run(&voice, &tournament, &on_done, &cancel);
        tokio::pin!(running);
        let result = loop {
            tokio::select! {
                result = &mut running => break result,
                Some((done, of, label)) = done_rx.recv() => {
                    progress
                        .report(format!("{done} of {of}: {label}"), (done * 100 / of.max(1)) as u32)
                        .await;
                }
            }
        };
        let summary = match result {
            Err(VoiceError::Cancelled) => "cancelled; nothing was written".to_owned(),
            Err(error) => {
                show_error(&context, format!("The voice tournament failed: {error}"));
                format!("failed: {error}")
            }
            Ok(entries) => {
                let path = tournament.path(&workspace);
                let change = Change {
                    path: path.clone(),
                    before: None,
                    after: file::render(&tournament, &brief, &entries),
                };
                match runs::apply_change(&context, &change).await {
                    Ok(()) => {
                        if let Some(uri) = uri_for(&workspace, &path) {
                            runs::show(&context, uri, true).await;
                        }
                        let wrote = entries.iter().filter(|e| e.outcome.is_ok()).count();
                        format!("{wrote} of {} versions in {path}", entries.len())
                    }
                    Err(why) => format!("{path} could not be created: {why}"),
                }
            }
        };
        context.runs.lock().remove(&id);
        progress.end(summary).await;
    });
    Ok(answer)
}

fn show_error(context: &Context, message: String) {
    let client = context.client.clone();
    tokio::spawn(async move { client.show_message(lsp::MessageType::ERROR, message).await });
}

/// The passage the arguments name.
fn passage(
    context: &Context,
    workspace: &Workspace,
    args: &TournamentArgs,
) -> Result<TestPassage, RpcError> {
    match (&args.uri, &args.scene, &args.text) {
        (Some(uri), None, None) => {
            let path = path_for(workspace, uri)
                .ok_or_else(|| refused(VOICE_TOURNAMENT, "the document is not in the workspace"))?;
            let text = text_now(context, &path)
                .ok_or_else(|| refused(VOICE_TOURNAMENT, format!("cannot read {path}")))?;
            let Some(range) = args.range else {
                let id = workspace
                    .file(&path)
                    .and_then(|file| file.scene())
                    .map(|scene| scene.id.clone())
                    .ok_or_else(|| {
                        refused(
                            VOICE_TOURNAMENT,
                            format!("{path} is not a scene: select a passage"),
                        )
                    })?;
                return Ok(TestPassage::Scene { id });
            };
            let first = range.start.line as usize;
            let mut last = range.end.line as usize;
            if last > first && range.end.character == 0 {
                last -= 1;
            }
            let chosen: Vec<&str> = text.lines().skip(first).take(last - first + 1).collect();
            if chosen.iter().all(|line| line.trim().is_empty()) {
                return Err(refused(VOICE_TOURNAMENT, "the selection holds no text"));
            }
            Ok(TestPassage::Selection {
                path: path.to_string(),
                start_line: first + 1,
                end_line: last + 1,
                text: chosen.join("\n"),
            })
        }
        (None, Some(scene), None) => Ok(TestPassage::Scene { id: scene.clone() }),
        (None, None, Some(text)) if !text.trim().is_empty() => {
            Ok(TestPassage::Description(text.trim().to_owned()))
        }
        _ => Err(refused(
            VOICE_TOURNAMENT,
            "give the passage one way: `uri` (with a `range` for a selection), `scene` or `text`",
        )),
    }
}

/// Applies `changes`; says what was not written.
async fn apply(context: &Context, changes: &[Change]) -> Vec<String> {
    let mut failed = Vec::new();
    for change in changes {
        if let Err(why) = runs::apply_change(context, change).await {
            failed.push(format!("{} was not written: {why}", change.path));
        }
    }
    failed
}

/// "Pick this voice": the gold standard and the bundle, as edits.
pub async fn pick(context: &Context, args: VersionArgs) -> Result<Value, RpcError> {
    let mut workspace = lock(&context.session).workspace.clone();
    let (said, changes) = bundle::pick(
        &mut workspace,
        &args.tournament,
        &version_name(&args.version),
        args.why.as_deref(),
    )
    .map_err(|error| refused(VOICE_PICK, error))?;
    let failed = apply(context, &changes).await;
    Ok(json!({"picked": failed.is_empty(), "said": said, "failed": failed}))
}

/// "Lock this voice".
pub async fn lock_voice(context: &Context) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let (said, change) = bundle::lock(&workspace).map_err(|error| refused(VOICE_LOCK, error))?;
    let failed = apply(context, &[change]).await;
    Ok(json!({"locked": failed.is_empty(), "said": said, "failed": failed}))
}

/// "Unlock the voice": `locked: false`, so that another version may be
/// picked.
pub async fn unlock_voice(context: &Context) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let (said, change) =
        bundle::unlock(&workspace).map_err(|error| refused(VOICE_UNLOCK, error))?;
    let failed = apply(context, &[change]).await;
    Ok(json!({"unlocked": failed.is_empty(), "said": said, "failed": failed}))
}

/// "Bring the bundle up to date".
pub async fn bundle(context: &Context, args: BundleArgs) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let (said, changes) = bundle::generate_bundle(&workspace, args.summary.as_deref())
        .map_err(|error| refused(VOICE_BUNDLE, error))?;
    let failed = apply(context, &changes).await;
    Ok(json!({"said": said, "written": changes.len() - failed.len(), "failed": failed}))
}

/// The tournament file's path and text as the editor has it.
fn tournament_file(
    context: &Context,
    workspace: &Workspace,
    tournament: &str,
    command: &str,
) -> Result<(String, String), RpcError> {
    let path = if tournament.ends_with(".md") {
        tournament.to_owned()
    } else {
        tournament_path(workspace, tournament).to_string()
    };
    let text = text_now(context, &path)
        .ok_or_else(|| refused(command, format!("there is no tournament file {path}")))?;
    Ok((path, text))
}

/// "Cross with the picked voice": round two.
pub fn cross(
    context: &Context,
    args: VersionArgs,
    token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let (_, text) = tournament_file(context, &workspace, &args.tournament, VOICE_CROSS)?;
    let file = TournamentFile::read(&text)
        .ok_or_else(|| refused(VOICE_CROSS, "not a tournament's file"))?;
    let other = args
        .other
        .as_ref()
        .map(version_name)
        .ok_or_else(|| refused(VOICE_CROSS, "name the `other` version to cross with"))?;
    let tournament = play::cross(&file, &version_name(&args.version), &other, args.words)
        .map_err(|error| refused(VOICE_CROSS, error))?;
    spawn(context, Arc::new(workspace), tournament, token)
}

/// "Why does this work?": asks in a task; the answer is inserted under
/// the version, in the file as it was read (refused if it changed).
pub fn why(
    context: &Context,
    args: VersionArgs,
    client_token: Option<lsp::ProgressToken>,
) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    let (path, text) = tournament_file(context, &workspace, &args.tournament, VOICE_WHY)?;
    let which = version_name(&args.version);
    let root = workspace.root().to_path_buf();
    let editor_llm = lock(&context.session).editor_llm.clone();
    let model = runs::connect(&root, editor_llm.as_ref())
        .map_err(|error| refused(VOICE_WHY, format!("the model is not usable: {error}")))?;
    let voice = Voice {
        workspace: Arc::new(workspace),
        prompts: Arc::new(Prompts::load(&root)),
        model,
    };
    let created = client_token.is_none();
    let token = client_token.unwrap_or_else(|| {
        lsp::ProgressToken::String(format!("control-room/{}", crate::storage::new_id("why")))
    });
    let context = context.clone();
    let answer = json!({"asking": which});
    tokio::spawn(async move {
        let progress = Progress::begin(&context, token, created, "Why does this voice work?").await;
        let summary = match play::why(&voice, &text, &which).await {
            Err(error) => {
                show_error(&context, format!("Why does this work? {error}"));
                format!("failed: {error}")
            }
            Ok((line, section)) => {
                let change = Change {
                    path: path.clone().into(),
                    after: file::insert_after_line(&text, line, &section),
                    before: Some(text.into()),
                };
                match runs::apply_change(&context, &change).await {
                    Ok(()) => format!("answered under version {which}"),
                    Err(why) => format!("{path} was not changed: {why}"),
                }
            }
        };
        progress.end(summary).await;
    });
    Ok(answer)
}

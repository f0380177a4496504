//! A run of the editor from start to end: its events become `$/progress`,
//! its result is put where [`crate::runs::output::delivery`] decides (an edit
//! through the editor, or a file beside the scene when the scene changed or
//! the editor refuses), its findings become diagnostics, and the writer is
//! told how it ended.
//!
//! Architecture invariant: progress always ends (done, failed, cancelled,
//! or a panic in the run), because the run executes in its own task whose
//! end, however it comes, is awaited here before the progress ends.

use std::collections::HashMap;

use tokio::sync::oneshot;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::edits::{EditPlan, FileEdits, Progress, apply, apply_files, show};
use super::{Context, Started, scene_now};
use crate::index::SourceFile;
use crate::lsp::convert::{self, uri_for};
use crate::lsp::shared::lock;
use crate::runs::events::RunEvent;
use crate::runs::launch::{RunEnd, RunHandle};
use crate::runs::output::delivery::{self, Applied, Decision, Delivery, Placement};
use crate::runs::output::edits::{self, EditSet};
use crate::runs::report;
use crate::runs::runner::RunError;
use crate::runs::store::{Cache, Disk, RunFiles, RunManifest, RunStatus};

/// A message for the writer: its kind, its text, and its actions with the
/// document each opens.
type Message = (lsp::MessageType, String, Vec<(String, Uri)>);

/// What a run's end tells the writer.
struct Outcome {
    /// The progress's last word.
    summary: String,
    /// A message to show, with the documents its actions open.
    message: Option<Message>,
    /// A document to show at once (the new scene, the report).
    show: Option<Uri>,
}

/// Runs a run to its end and delivers what it leaves; sends `ended` the
/// run's manifest, or why it did not run.
pub(super) async fn drive(
    context: &Context,
    started: Started,
    mut handle: RunHandle,
    token: lsp::ProgressToken,
    create: bool,
    ended: oneshot::Sender<Result<RunManifest, String>>,
) {
    let run_id = started.manifest.run_id.clone();
    let progress = Progress::begin(context, token, create, &started.label).await;
    // The channel closes when the run's task ends, however it ends, so
    // every event is forwarded before progress ends.
    // The step's place, for the words of a reply being written.
    let mut at = (String::new(), 0);
    while let Some(event) = handle.events.recv().await {
        let report = match event {
            RunEvent::StepStarted {
                index,
                total,
                step_id,
                actor,
                ..
            } => {
                at = (
                    format!("[{}/{total}]", index + 1),
                    (index * 100 / total.max(1)) as u32,
                );
                Some((format!("{} {step_id} ({actor})", at.0), at.1))
            }
            // A streamed reply shows as it is written, in the progress
            // itself: every client shows it, and the manuscript changes
            // only once, by one edit the writer can undo.
            RunEvent::Writing {
                step_id,
                words,
                tail,
                ..
            } => Some((format!("{} {step_id}: {words} words … {tail}", at.0), at.1)),
            RunEvent::Checking { .. } => Some(("checking the Definition of Done".to_owned(), 100)),
            _ => None,
        };
        if let Some((message, percentage)) = report {
            if let Some(run) = context.runs.lock().get_mut(&run_id) {
                run.step = message.clone();
            }
            progress.report(message, percentage).await;
        }
    }
    let root = started.workspace.root().to_path_buf();
    let recipe = started.registry.get(&started.manifest.recipe_id);
    let (outcome, result) = match handle.finish().await {
        RunEnd::Ended(manifest) => {
            let outcome = finish(context, &started, &manifest).await;
            (outcome, Ok(*manifest))
        }
        RunEnd::NotRun(error) => {
            let reason = error.to_string();
            // A run another process holds reports itself when it ends.
            if !matches!(error, RunError::Busy(_)) {
                report::conclude_failed(&root, recipe, &started.manifest, &reason);
            }
            (failed(&started, &reason), Err(reason))
        }
        RunEnd::Crashed(reason) => {
            report::conclude_failed(&root, recipe, &started.manifest, &reason);
            (failed(&started, &reason), Err(reason))
        }
    };
    // Out of the in-flight list before the progress ends, so a client that
    // starts the same run again on seeing the end is not refused.
    context.runs.lock().remove(&run_id);
    // Whoever waits for the run (a plan) goes on now: its result is
    // delivered and its findings published.
    let _ = ended.send(result);
    progress.end(outcome.summary.clone()).await;
    if let Some(uri) = outcome.show {
        show(context, uri, false).await;
    }
    if let Some((kind, text, actions)) = outcome.message {
        // Answered whenever the writer gets to it; nothing waits for it.
        let context = context.clone();
        tokio::spawn(async move {
            let items: Vec<lsp::MessageActionItem> = actions
                .iter()
                .map(|(title, _)| lsp::MessageActionItem {
                    title: title.clone(),
                    properties: HashMap::new(),
                })
                .collect();
            let chosen = context
                .client
                .show_message_request(kind, text, (!items.is_empty()).then_some(items))
                .await;
            if let Ok(Some(chosen)) = chosen
                && let Some((_, uri)) = actions.iter().find(|(title, _)| *title == chosen.title)
            {
                show(&context, uri.clone(), true).await;
            }
        });
    }
}

/// A run that ended (done, failed or cancelled): deliver its result,
/// publish its findings, write its report.
async fn finish(context: &Context, started: &Started, manifest: &RunManifest) -> Outcome {
    let root = started.workspace.root().to_path_buf();
    let recipe = started.registry.get(&manifest.recipe_id);
    let cache = RunFiles::new(&root, &manifest.run_id)
        .read_cache()
        .unwrap_or_default();
    let applied = deliver(context, started, manifest, &cache).await;
    let concluded = {
        let session = lock(&context.session);
        let text_of = |path: &str| -> Option<String> {
            session
                .workspace
                .file(path)
                .map(|file| file.text.to_string())
        };
        report::conclude(&root, recipe, manifest, &cache, &applied, &text_of)
    };
    if let Err(error) = &concluded.findings_written {
        context
            .client
            .log_message(
                lsp::MessageType::ERROR,
                format!(
                    "run {}: cannot write its findings: {error}",
                    manifest.run_id
                ),
            )
            .await;
    }
    let shown = concluded.findings.findings.len();
    let store = lock(&context.session).findings.clone();
    lock(&store).insert(concluded.findings);
    (context.republish)();
    let report_uri = concluded
        .report
        .ok()
        .and_then(|path| uri_for(&started.workspace, &path));
    outcome(started, manifest, &applied.delivery, report_uri, shown)
}

/// What the writer is told of a run that ended.
fn outcome(
    started: &Started,
    manifest: &RunManifest,
    delivery: &Delivery,
    report_uri: Option<Uri>,
    shown: usize,
) -> Outcome {
    let dod_issue = crate::runs::store::dod_issue(started.workspace.root(), &manifest.run_id);
    let report_action = |actions: &mut Vec<(String, Uri)>| {
        if let Some(uri) = &report_uri {
            actions.push(("Open report".to_owned(), uri.clone()));
        }
    };
    let uri = |path: &str| uri_for(&started.workspace, path);
    let findings_note = match shown {
        0 => String::new(),
        1 => ", 1 finding".to_owned(),
        n => format!(", {n} findings"),
    };
    match (manifest.status, delivery) {
        (RunStatus::Done, Delivery::Scene(path)) => Outcome {
            summary: format!("done: {path}{findings_note}"),
            message: None,
            show: uri(path),
        },
        (RunStatus::Done, Delivery::Beside { path, reason }) => {
            let mut actions: Vec<(String, Uri)> = uri(path)
                .map(|uri| vec![("Open draft".to_owned(), uri)])
                .unwrap_or_default();
            report_action(&mut actions);
            Outcome {
                summary: format!("done: the draft is in {path}"),
                message: Some((
                    lsp::MessageType::WARNING,
                    format!(
                        "{}: the draft was written beside the scene, as {path}, because {reason}. Nothing you wrote was changed.",
                        started.label
                    ),
                    actions,
                )),
                show: None,
            }
        }
        (RunStatus::Done, Delivery::Edits { changed, refused }) => {
            let mut files: Vec<&str> = changed.iter().filter_map(|e| e.path.as_deref()).collect();
            files.dedup();
            let mut actions: Vec<(String, Uri)> = files
                .iter()
                .take(3)
                .filter_map(|path| Some((format!("Open {path}"), uri(path)?)))
                .collect();
            report_action(&mut actions);
            let made = match changed.len() {
                0 => "no edit made".to_owned(),
                1 => format!("1 edit made in {}", files.join(", ")),
                n => format!("{n} edits made in {}", files.join(", ")),
            };
            let message = if refused.is_empty() {
                format!(
                    "{}: {made}; undo in the editor takes any back.",
                    started.label
                )
            } else {
                format!(
                    "{}: {made}; {} not made (their quotes are not in the text as it is now, or they name files the step may not change): see the report.",
                    started.label,
                    refused.len()
                )
            };
            let kind = if refused.is_empty() {
                lsp::MessageType::INFO
            } else {
                lsp::MessageType::WARNING
            };
            Outcome {
                summary: format!("done: {made}{findings_note}"),
                message: Some((kind, message, actions)),
                show: None,
            }
        }
        (RunStatus::Done, _) => Outcome {
            summary: format!("done{findings_note}"),
            message: None,
            show: report_uri.clone(),
        },
        (RunStatus::Cancelled, _) => Outcome {
            summary: "cancelled".to_owned(),
            message: Some((
                lsp::MessageType::INFO,
                format!("{}: cancelled; nothing was written", started.label),
                Vec::new(),
            )),
            show: None,
        },
        (_, _) => {
            let mut actions = Vec::new();
            if let Some(issue) = dod_issue.as_deref().and_then(uri) {
                actions.push(("Open issue".to_owned(), issue));
            }
            report_action(&mut actions);
            let error = manifest.error.clone().unwrap_or_default();
            Outcome {
                summary: format!("failed: {error}"),
                message: Some((
                    if dod_issue.is_some() {
                        lsp::MessageType::WARNING
                    } else {
                        lsp::MessageType::ERROR
                    },
                    format!("{} failed: {error}", started.label),
                    actions,
                )),
                show: None,
            }
        }
    }
}

/// Puts the run's result where the engine decides: a draft into the scene
/// through the editor, or beside it on the disk when the scene changed or
/// the editor refuses; edits of the manuscript through the editor, as one
/// workspace edit at the versions they were placed in.
async fn deliver(
    context: &Context,
    started: &Started,
    manifest: &RunManifest,
    cache: &Cache,
) -> Applied {
    let root = started.workspace.root();
    let recipe = started.registry.get(&manifest.recipe_id);
    // Decide and build the edit under the lock, so the state it is built
    // on is the state that was checked.
    let (decision, edit, files) = {
        let session = lock(&context.session);
        let text_of = |path: &str| scene_now(&session, path).0;
        let decision = delivery::decide(&session.workspace, recipe, manifest, cache, &text_of);
        let edit = match &decision {
            Decision::Draft(Placement::Replace {
                scene_path,
                range,
                body,
                ..
            }) => {
                let (text, version) = scene_now(&session, scene_path);
                Some(EditPlan::Replace {
                    range: convert::range_in_text(
                        text.as_deref().unwrap_or_default(),
                        *range,
                        session.encoding,
                    ),
                    body: body.clone(),
                    // The text is the one the run started from; if only the
                    // version moved (an edit undone), the current version is
                    // the one the editor will accept.
                    version: version.or(started.version),
                })
            }
            Decision::Draft(Placement::Create { text, .. }) => {
                Some(EditPlan::Create { text: text.clone() })
            }
            _ => None,
        };
        let files: Option<FileEdits> = match &decision {
            Decision::Edits(set) => set
                .changes
                .iter()
                .map(|change| {
                    let (text, version) = scene_now(&session, &change.path);
                    let text = text.unwrap_or_default();
                    let edits = change
                        .edits
                        .iter()
                        .map(|(range, new_text)| lsp::TextEdit {
                            range: convert::range_in_text(&text, *range, session.encoding),
                            new_text: new_text.clone(),
                        })
                        .collect();
                    Some((uri_for(&started.workspace, &change.path)?, version, edits))
                })
                .collect(),
            _ => None,
        };
        (decision, edit, files)
    };
    let placement = match decision {
        Decision::Draft(placement) => placement,
        Decision::Edits(set) => return deliver_edits(context, root, manifest, set, files).await,
        other => return Applied::nothing(&other),
    };
    let scene_path = placement.scene_path().to_owned();
    let placement = match (edit, uri_for(&started.workspace, &scene_path)) {
        (Some(edit), Some(uri)) => match apply(context, uri, edit, root, &scene_path).await {
            Ok(()) => {
                let text = placement.text().to_owned();
                learn_text(context, &scene_path, &text);
                return Applied {
                    delivery: Delivery::Scene(scene_path.clone()),
                    landed: vec![(scene_path, text)],
                };
            }
            Err(reason) => placement.beside(&manifest.run_id, reason),
        },
        (Some(_), None) => placement.beside(
            &manifest.run_id,
            format!("{scene_path} cannot be named as a URI"),
        ),
        (None, _) => placement,
    };
    let applied = delivery::apply_on_disk(root, &Disk::default(), &manifest.run_id, placement);
    if let Delivery::Beside { path, .. } = &applied.delivery {
        lock(&context.session).reload_from_disk(&path.as_str().into());
    }
    applied
}

/// Sends a run's edits to the editor as one workspace edit; when it does
/// not apply them, none is made and each is reported with the reason.
async fn deliver_edits(
    context: &Context,
    root: &std::path::Path,
    manifest: &RunManifest,
    set: EditSet,
    files: Option<FileEdits>,
) -> Applied {
    let outcome = match files {
        _ if set.changes.is_empty() => edits::Outcome {
            changed: Vec::new(),
            refused: set.refused,
        },
        Some(files) => match apply_files(context, files).await {
            Ok(()) => {
                let disk = Disk::default();
                for change in &set.changes {
                    learn_text(context, &change.path, &change.text);
                    let run = &manifest.run_id;
                    edits::keep_before(root, &disk, run, &change.path, Some(&change.before));
                }
                edits::Outcome {
                    changed: set.changes,
                    refused: set.refused,
                }
            }
            Err(why) => edits::Outcome::none_applied(set, edits::Refusal::EditorRefused { why }),
        },
        _ => edits::Outcome::none_applied(set, edits::Refusal::NoUri),
    };
    Applied::edits(outcome)
}

/// A file the editor does not have open learns the text an edit gave it
/// now; the editor's didOpen or a watched-file event confirms it.
fn learn_text(context: &Context, path: &str, text: &str) {
    let mut session = lock(&context.session);
    if session.version(path).is_none() {
        let paths = session.workspace.config().paths.clone();
        let file = SourceFile::parse(path.into(), text.into(), &paths);
        session.workspace.insert_file(file);
    }
}

/// A run that ended without reporting itself: its message.
fn failed(started: &Started, reason: &str) -> Outcome {
    Outcome {
        summary: format!("failed: {reason}"),
        message: Some((
            lsp::MessageType::ERROR,
            format!("{} failed: {reason}", started.label),
            Vec::new(),
        )),
        show: None,
    }
}

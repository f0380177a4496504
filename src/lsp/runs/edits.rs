//! What runs and conferences send the editor: `$/progress` of one run,
//! workspace edits (a scene's body replaced at the version it was read, a
//! new file created, a run's edits of several files at the versions they
//! were read), and documents to show.

use std::path::{Path, PathBuf};

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::Context;
use crate::lsp::convert::uri_for;
use crate::lsp::shared::lock;
use crate::runs::output::changes::Change;
use crate::runs::output::{NotWritten, write_guarded};
use crate::runs::store::{Disk, SceneMark};

/// `$/progress` of one run; silent when the client does not do progress.
pub(crate) struct Progress {
    client: Client,
    token: Option<lsp::ProgressToken>,
}

impl Progress {
    pub(crate) async fn begin(
        context: &Context,
        token: lsp::ProgressToken,
        create: bool,
        title: &str,
    ) -> Progress {
        let client = context.client.clone();
        let usable = context.support.work_done_progress
            && (!create
                || client
                    .create_work_done_progress(token.clone())
                    .await
                    .is_ok());
        let progress = Progress {
            client,
            token: usable.then_some(token),
        };
        progress
            .send(lsp::WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin {
                title: title.to_owned(),
                cancellable: Some(true),
                message: Some("starting".to_owned()),
                percentage: Some(0),
            }))
            .await;
        progress
    }

    pub(crate) async fn report(&self, message: String, percentage: u32) {
        self.send(lsp::WorkDoneProgress::Report(lsp::WorkDoneProgressReport {
            cancellable: Some(true),
            message: Some(message),
            percentage: Some(percentage),
        }))
        .await;
    }

    /// A report that says only what is happening now (its percentage
    /// stays where the last report put it).
    pub(crate) async fn report_message(&self, message: String) {
        self.send(lsp::WorkDoneProgress::Report(lsp::WorkDoneProgressReport {
            cancellable: Some(true),
            message: Some(message),
            percentage: None,
        }))
        .await;
    }

    pub(crate) async fn end(&self, message: String) {
        self.send(lsp::WorkDoneProgress::End(lsp::WorkDoneProgressEnd {
            message: Some(message),
        }))
        .await;
    }

    async fn send(&self, value: lsp::WorkDoneProgress) {
        if let Some(token) = &self.token {
            self.client
                .send_notification::<lsp::notification::Progress>(lsp::ProgressParams {
                    token: token.clone(),
                    value: lsp::ProgressParamsValue::WorkDone(value),
                })
                .await;
        }
    }
}

pub(crate) async fn show(context: &Context, uri: Uri, take_focus: bool) {
    if context.support.show_document {
        let _ = context
            .client
            .show_document(lsp::ShowDocumentParams {
                uri,
                external: Some(false),
                take_focus: Some(take_focus),
                selection: None,
            })
            .await;
    }
}

/// The edit that delivers a draft, or a conference's transcript.
pub(crate) enum EditPlan {
    /// An existing scene: its body replaced, at the version it was read.
    Replace {
        range: lsp::Range,
        body: String,
        version: Option<i32>,
    },
    /// A new file.
    Create { text: String },
}

/// Sends the edit; `Err` with why when the editor did not apply it (then
/// the caller keeps the text elsewhere). A client that cannot create files
/// through an edit gets the new file written here, only where no file is.
pub(crate) async fn apply(
    context: &Context,
    uri: Uri,
    plan: EditPlan,
    root: &Path,
    path: &str,
) -> Result<(), String> {
    let support = context.support;
    let edit = match plan {
        EditPlan::Replace {
            range,
            body,
            version,
        } => {
            let edits = vec![lsp::TextEdit {
                range,
                new_text: body,
            }];
            if support.document_changes {
                lsp::WorkspaceEdit {
                    document_changes: Some(lsp::DocumentChanges::Edits(vec![
                        lsp::TextDocumentEdit {
                            text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                                uri,
                                version,
                            },
                            edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
                        },
                    ])),
                    ..lsp::WorkspaceEdit::default()
                }
            } else {
                lsp::WorkspaceEdit {
                    changes: Some([(uri, edits)].into_iter().collect()),
                    ..lsp::WorkspaceEdit::default()
                }
            }
        }
        EditPlan::Create { text } => {
            if !(support.document_changes && support.create_files) {
                // The client cannot create files through an edit: create
                // the file here, only if none is there (nothing is lost).
                let absolute: PathBuf = root.join(path);
                return write_guarded(&Disk::default(), &absolute, &SceneMark::of(None), &text)
                    .map_err(|error| match error {
                        NotWritten::Io(error) => format!("the file cannot be written ({error})"),
                        _ => "the file appeared while the run worked".to_owned(),
                    });
            }
            lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Operations(vec![
                    lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Create(lsp::CreateFile {
                        uri: uri.clone(),
                        options: Some(lsp::CreateFileOptions {
                            overwrite: Some(false),
                            ignore_if_exists: Some(false),
                        }),
                        annotation_id: None,
                    })),
                    lsp::DocumentChangeOperation::Edit(lsp::TextDocumentEdit {
                        text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                            uri,
                            version: None,
                        },
                        edits: vec![lsp::OneOf::Left(lsp::TextEdit {
                            range: lsp::Range::default(),
                            new_text: text,
                        })],
                    }),
                ])),
                ..lsp::WorkspaceEdit::default()
            }
        }
    };
    send(context, edit).await
}

/// Edits of several files, each at the version its text was read (`None`:
/// a file the editor does not have open), sent as one workspace edit.
pub(crate) type FileEdits = Vec<(Uri, Option<i32>, Vec<lsp::TextEdit>)>;

/// Sends `files`' edits as one workspace edit; `Err` with why when the
/// editor did not apply it.
pub(crate) async fn apply_files(context: &Context, files: FileEdits) -> Result<(), String> {
    let edit = if context.support.document_changes {
        lsp::WorkspaceEdit {
            document_changes: Some(lsp::DocumentChanges::Edits(
                files
                    .into_iter()
                    .map(|(uri, version, edits)| lsp::TextDocumentEdit {
                        text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                            uri,
                            version,
                        },
                        edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
                    })
                    .collect(),
            )),
            ..lsp::WorkspaceEdit::default()
        }
    } else {
        lsp::WorkspaceEdit {
            changes: Some(
                files
                    .into_iter()
                    .map(|(uri, _, edits)| (uri, edits))
                    .collect(),
            ),
            ..lsp::WorkspaceEdit::default()
        }
    };
    send(context, edit).await
}

async fn send(context: &Context, edit: lsp::WorkspaceEdit) -> Result<(), String> {
    match context.client.apply_edit(edit).await {
        Ok(response) if response.applied => Ok(()),
        Ok(response) => Err(match response.failure_reason {
            Some(reason) if !reason.trim().is_empty() => {
                format!("the editor did not apply the edit ({reason})")
            }
            _ => "the editor did not apply the edit".to_owned(),
        }),
        Err(error) => Err(format!(
            "the editor did not apply the edit ({})",
            error.message
        )),
    }
}

/// One action's change as an edit of its file at the version it was read
/// (refused when the file is no longer the text the change was computed
/// on), or a new file.
pub(crate) async fn apply_change(context: &Context, change: &Change) -> Result<(), String> {
    let (workspace, encoding, current) = {
        let session = lock(&context.session);
        let current = session.text_now(&change.path);
        (session.workspace.clone(), session.encoding, current)
    };
    let root = workspace.root().to_path_buf();
    let uri = uri_for(&workspace, &change.path).ok_or("no URI")?;
    let Some(before) = &change.before else {
        return apply(
            context,
            uri,
            EditPlan::Create {
                text: change.after.clone(),
            },
            &root,
            &change.path,
        )
        .await;
    };
    let (text, version) = current.ok_or("the file is no longer there")?;
    if text != **before {
        return Err("it changed since it was read".to_owned());
    }
    let edit = minimal_edit(&text, &change.after, encoding);
    apply_files(context, vec![(uri, version, vec![edit])]).await
}

/// The one edit that turns `before` into `after`: what lies between their
/// common start and their common end.
fn minimal_edit(
    before: &str,
    after: &str,
    encoding: crate::text::PositionEncoding,
) -> lsp::TextEdit {
    let prefix = before
        .char_indices()
        .zip(after.chars())
        .find(|((_, a), b)| a != b)
        .map_or(before.len().min(after.len()), |((at, _), _)| at);
    let suffix = before[prefix..]
        .chars()
        .rev()
        .zip(after[prefix..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    let index = crate::text::LineIndex::new(before);
    let position = |offset: usize| {
        let at = index.position(before, offset, encoding);
        lsp::Position {
            line: at.line,
            character: at.col,
        }
    };
    lsp::TextEdit {
        range: lsp::Range {
            start: position(prefix),
            end: position(before.len() - suffix),
        },
        new_text: after[prefix..after.len() - suffix].to_owned(),
    }
}

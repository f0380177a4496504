//! `textDocument/codeAction`: the plain actions of `ide::code_actions` (fixes, dismiss, conference, remember, runs) as LSP code actions, and "Promote to card" in the knowledge base.

use serde_json::json;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::checks::{self, FixKind};
use crate::ide;
use crate::lsp::convert::{self, offset, path_for, range};
use crate::lsp::server::Server;
use crate::lsp::snapshot::Snapshot;

pub(crate) async fn code_action(
    server: &Server,
    params: lsp::CodeActionParams,
) -> RpcResult<Option<lsp::CodeActionResponse>> {
    server
        .query("codeAction", move |snapshot| {
            Some(code_actions(snapshot, &params))
        })
        .await
}

/// Quick fixes of the diagnostics under the cursor, "Dismiss" for the
/// agents' findings there, and the recipe runs that apply here.
pub fn code_actions(
    snapshot: &Snapshot,
    params: &lsp::CodeActionParams,
) -> Vec<lsp::CodeActionOrCommand> {
    if let Some(path) = path_for(&snapshot.workspace, &params.text_document.uri)
        && let Some(open) = snapshot.kb.iter().find(|(kb, _, _)| *kb == path)
    {
        return crate::lsp::knowledge::promotions(
            &snapshot.workspace,
            open,
            params.range,
            snapshot.encoding,
        );
    }
    let Some(file) = snapshot.file(&params.text_document.uri) else {
        return Vec::new();
    };
    let start = offset(file, params.range.start, snapshot.encoding);
    let end = offset(file, params.range.end, snapshot.encoding);
    let mut actions = Vec::new();
    let checked = checks::check_file(&snapshot.workspace, &file.path);
    for diagnostic in &checked {
        if diagnostic.range.end < start || diagnostic.range.start > end {
            continue;
        }
        let lsp_diagnostic =
            convert::diagnostic(&snapshot.workspace, diagnostic, snapshot.encoding);
        let corrections = diagnostic
            .fixes
            .iter()
            .filter(|fix| fix.kind == FixKind::Correction)
            .count();
        for fix in &diagnostic.fixes {
            // Preferred (applied by "fix all"): a correction that is the only one.
            let preferred = fix.kind == FixKind::Correction && corrections == 1;
            actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: fix.title.clone(),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![lsp_diagnostic.clone()]),
                edit: Some(snapshot.workspace_edit(&fix.edits)),
                is_preferred: Some(preferred),
                ..lsp::CodeAction::default()
            }));
        }
    }
    let wanted = lsp::Range {
        start: params.range.start,
        end: params.range.end,
    };
    let touches = |other: &lsp::Range| other.end >= wanted.start && other.start <= wanted.end;
    for finding in crate::lsp::findings::diagnostics(
        &snapshot.findings,
        &snapshot.workspace,
        &file.path,
        snapshot.encoding,
    ) {
        let Some(id) = finding
            .data
            .as_ref()
            .and_then(|data| data["finding_id"].as_str())
            .map(str::to_owned)
        else {
            continue;
        };
        if !touches(&finding.range) {
            continue;
        }
        actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: "Dismiss this finding".to_owned(),
            kind: Some(lsp::CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![finding]),
            command: Some(lsp::Command {
                title: "Dismiss this finding".to_owned(),
                command: crate::lsp::runs::DISMISS_FINDING.to_owned(),
                arguments: Some(vec![json!({ "finding_id": id })]),
            }),
            ..lsp::CodeAction::default()
        }));
    }
    // "Convene conference" on a selection of Markdown text.
    if start != end && file.path.ends_with(".md") {
        actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: "Convene conference".to_owned(),
            kind: Some(lsp::CodeActionKind::new(super::code_lens::RUN_ACTION_KIND)),
            command: Some(lsp::Command {
                title: "Convene conference".to_owned(),
                command: crate::lsp::conference::CONFERENCE.to_owned(),
                arguments: Some(vec![json!({
                    "uri": params.text_document.uri,
                    "range": params.range,
                })]),
            }),
            ..lsp::CodeAction::default()
        }));
    }
    // "Remember this": the selection becomes a decision of the knowledge base.
    if start != end && file.scene().is_some() {
        actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: "Remember this".to_owned(),
            kind: Some(lsp::CodeActionKind::new(super::code_lens::RUN_ACTION_KIND)),
            command: Some(lsp::Command {
                title: "Remember this".to_owned(),
                command: crate::lsp::knowledge::REMEMBER.to_owned(),
                arguments: Some(vec![json!({
                    "uri": params.text_document.uri,
                    "range": params.range,
                })]),
            }),
            ..lsp::CodeAction::default()
        }));
    }
    let missing: Vec<lsp::Diagnostic> = checked
        .iter()
        .filter(|diagnostic| diagnostic.code == checks::Code::MissingScene)
        .map(|diagnostic| convert::diagnostic(&snapshot.workspace, diagnostic, snapshot.encoding))
        .collect();
    for action in ide::run_actions(
        &snapshot.workspace,
        &snapshot.registry,
        file,
        crate::text::TextRange::new(start.min(end), end.max(start)),
    ) {
        let at = range(file, action.range, snapshot.encoding);
        // "Draft scene" is the missing-scene diagnostic's quick fix.
        let fixes: Vec<lsp::Diagnostic> = missing
            .iter()
            .filter(|diagnostic| action.drafts_missing_scene && diagnostic.range == at)
            .cloned()
            .collect();
        actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: action.title.clone(),
            kind: Some(if fixes.is_empty() {
                lsp::CodeActionKind::new(super::code_lens::RUN_ACTION_KIND)
            } else {
                lsp::CodeActionKind::QUICKFIX
            }),
            is_preferred: (!fixes.is_empty()).then_some(true),
            diagnostics: (!fixes.is_empty()).then_some(fixes),
            command: Some(super::code_lens::run_command(&action, &action.title)),
            ..lsp::CodeAction::default()
        }));
    }
    actions
}

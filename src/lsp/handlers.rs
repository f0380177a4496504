//! Request handlers: `from_proto` → an `ide` feature → `to_proto`, each on a
//! snapshot of the workspace, never on the live session.

use serde_json::json;
use tower_lsp_server::ls_types::{self as lsp};

use super::convert::{self, offset, path_for, range};
use super::snapshot::Snapshot;
use crate::checks::{self, FixKind};
use crate::ide::{self, CompletionKind, RunAction, SymbolKind};
use crate::index::SourceFile;
use crate::text::PositionEncoding;

/// The kind of the code actions that start a recipe run.
pub const RUN_ACTION_KIND: &str = "refactor.control-room.run";

pub fn hover(snapshot: &Snapshot, params: &lsp::HoverParams) -> Option<lsp::Hover> {
    let (file, offset) = snapshot.at(&params.text_document_position_params)?;
    let (target_range, markdown) =
        super::evidence::hover(&snapshot.receipts, &snapshot.workspace, file, offset)
            .or_else(|| ide::hover(&snapshot.workspace, &file.path, offset))?;
    Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(range(file, target_range, snapshot.encoding)),
    })
}

pub fn definition(
    snapshot: &Snapshot,
    params: &lsp::GotoDefinitionParams,
) -> Option<lsp::GotoDefinitionResponse> {
    let (file, offset) = snapshot.at(&params.text_document_position_params)?;
    let target = ide::definition(&snapshot.workspace, &file.path, offset)?;
    Some(lsp::GotoDefinitionResponse::Scalar(
        snapshot.location(&target)?,
    ))
}

pub fn references(snapshot: &Snapshot, params: &lsp::ReferenceParams) -> Vec<lsp::Location> {
    let Some((file, offset)) = snapshot.at(&params.text_document_position) else {
        return Vec::new();
    };
    ide::references(
        &snapshot.workspace,
        &file.path,
        offset,
        params.context.include_declaration,
    )
    .iter()
    .filter_map(|location| snapshot.location(location))
    .collect()
}

pub fn prepare_rename(
    snapshot: &Snapshot,
    params: &lsp::TextDocumentPositionParams,
) -> Result<Option<lsp::PrepareRenameResponse>, String> {
    let Some((file, offset)) = snapshot.at(params) else {
        return Ok(None);
    };
    match ide::prepare_rename(&snapshot.workspace, &file.path, offset) {
        Ok((target, placeholder)) => Ok(Some(lsp::PrepareRenameResponse::RangeWithPlaceholder {
            range: range(file, target, snapshot.encoding),
            placeholder,
        })),
        Err(error) => Err(error.to_string()),
    }
}

pub fn rename(
    snapshot: &Snapshot,
    params: &lsp::RenameParams,
) -> Result<Option<lsp::WorkspaceEdit>, String> {
    let Some((file, offset)) = snapshot.at(&params.text_document_position) else {
        return Ok(None);
    };
    let edits = ide::rename(&snapshot.workspace, &file.path, offset, &params.new_name)
        .map_err(|error| error.to_string())?;
    Ok(Some(snapshot.workspace_edit(&edits)))
}

pub fn document_symbols(
    snapshot: &Snapshot,
    params: &lsp::DocumentSymbolParams,
) -> Option<lsp::DocumentSymbolResponse> {
    let file = snapshot.file(&params.text_document.uri)?;
    #[allow(deprecated)] // `deprecated` is a required field of the protocol type.
    fn to_proto(
        file: &SourceFile,
        symbol: &ide::Symbol,
        encoding: PositionEncoding,
    ) -> lsp::DocumentSymbol {
        lsp::DocumentSymbol {
            name: if symbol.name.is_empty() {
                "(untitled)".to_owned()
            } else {
                symbol.name.clone()
            },
            detail: symbol.detail.clone(),
            kind: symbol_kind(symbol.kind),
            tags: None,
            deprecated: None,
            range: range(file, symbol.range, encoding),
            selection_range: range(file, symbol.selection, encoding),
            children: Some(
                symbol
                    .children
                    .iter()
                    .map(|child| to_proto(file, child, encoding))
                    .collect(),
            ),
        }
    }
    let symbols = ide::document_symbols(file);
    Some(lsp::DocumentSymbolResponse::Nested(
        symbols
            .iter()
            .map(|symbol| to_proto(file, symbol, snapshot.encoding))
            .collect(),
    ))
}

pub fn workspace_symbols(
    snapshot: &Snapshot,
    params: &lsp::WorkspaceSymbolParams,
) -> Vec<lsp::SymbolInformation> {
    ide::workspace_symbols(&snapshot.workspace, &params.query)
        .into_iter()
        .filter_map(|symbol| {
            let location = snapshot.location(&ide::Location {
                path: symbol.path.clone(),
                range: symbol.selection,
            })?;
            #[allow(deprecated)] // `deprecated` is a required field of the protocol type.
            Some(lsp::SymbolInformation {
                name: symbol.name,
                kind: symbol_kind(symbol.kind),
                tags: None,
                deprecated: None,
                location,
                container_name: symbol.detail,
            })
        })
        .collect()
}

fn symbol_kind(kind: SymbolKind) -> lsp::SymbolKind {
    match kind {
        SymbolKind::Heading => lsp::SymbolKind::NAMESPACE,
        SymbolKind::Scene => lsp::SymbolKind::EVENT,
        SymbolKind::Character => lsp::SymbolKind::CLASS,
        SymbolKind::Location => lsp::SymbolKind::PACKAGE,
        SymbolKind::Canon => lsp::SymbolKind::OBJECT,
    }
}

pub fn completion(
    snapshot: &Snapshot,
    params: &lsp::CompletionParams,
) -> Option<lsp::CompletionResponse> {
    let (file, offset) = snapshot.at(&params.text_document_position)?;
    let items = ide::completions(&snapshot.workspace, &file.path, offset)
        .into_iter()
        .map(|completion| lsp::CompletionItem {
            kind: Some(match completion.kind {
                CompletionKind::Character => lsp::CompletionItemKind::CLASS,
                CompletionKind::Location => lsp::CompletionItemKind::MODULE,
                CompletionKind::Canon => lsp::CompletionItemKind::VALUE,
                CompletionKind::Scene => lsp::CompletionItemKind::EVENT,
            }),
            detail: (!completion.detail.is_empty()).then_some(completion.detail),
            sort_text: Some(format!(
                "{}{}",
                if completion.preferred { 0 } else { 1 },
                completion.label
            )),
            label: completion.label,
            ..lsp::CompletionItem::default()
        })
        .collect();
    Some(lsp::CompletionResponse::Array(items))
}

pub fn folding_ranges(
    snapshot: &Snapshot,
    params: &lsp::FoldingRangeParams,
) -> Vec<lsp::FoldingRange> {
    let Some(file) = snapshot.file(&params.text_document.uri) else {
        return Vec::new();
    };
    ide::folding_ranges(file)
        .into_iter()
        .filter_map(|folded| {
            let range = range(file, folded, snapshot.encoding);
            (range.end.line > range.start.line).then(|| lsp::FoldingRange {
                start_line: range.start.line,
                end_line: range.end.line,
                kind: Some(lsp::FoldingRangeKind::Region),
                ..lsp::FoldingRange::default()
            })
        })
        .collect()
}

pub fn code_lenses(snapshot: &Snapshot, params: &lsp::CodeLensParams) -> Vec<lsp::CodeLens> {
    let uri = &params.text_document.uri;
    if let Some(path) = super::convert::path_for(&snapshot.workspace, uri)
        && let Some((_, text, _)) = snapshot.plans.iter().find(|(open, _, _)| *open == path)
    {
        return super::plans::code_lenses(
            &snapshot.workspace,
            &snapshot.registry,
            &path,
            text,
            snapshot.encoding,
        );
    }
    let Some(file) = snapshot.file(uri) else {
        return Vec::new();
    };
    let drafts = ide::draft_lenses(&snapshot.workspace, &snapshot.registry, file)
        .into_iter()
        .map(|action| lsp::CodeLens {
            range: range(file, action.range, snapshot.encoding),
            command: Some(run_command(&action, "Draft scene")),
            data: None,
        });
    ide::word_counts(&snapshot.workspace, file)
        .into_iter()
        .map(|count| lsp::CodeLens {
            range: range(file, count.range, snapshot.encoding),
            command: Some(lsp::Command {
                title: count.label(),
                command: String::new(),
                arguments: None,
            }),
            data: None,
        })
        .chain(drafts)
        .collect()
}

/// The `controlRoom.runRecipe` command that starts `action`.
fn run_command(action: &RunAction, title: &str) -> lsp::Command {
    lsp::Command {
        title: title.to_owned(),
        command: super::runs::RUN_RECIPE.to_owned(),
        arguments: Some(vec![json!({
            "recipe": action.recipe_id,
            "task": action.task,
            "args": action.args,
        })]),
    }
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
        return super::knowledge::promotions(
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
    for finding in super::findings::diagnostics(
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
                command: super::runs::DISMISS_FINDING.to_owned(),
                arguments: Some(vec![json!({ "finding_id": id })]),
            }),
            ..lsp::CodeAction::default()
        }));
    }
    // "Convene conference" on a selection of Markdown text.
    if start != end && file.path.ends_with(".md") {
        actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: "Convene conference".to_owned(),
            kind: Some(lsp::CodeActionKind::new(RUN_ACTION_KIND)),
            command: Some(lsp::Command {
                title: "Convene conference".to_owned(),
                command: super::conference::CONFERENCE.to_owned(),
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
            kind: Some(lsp::CodeActionKind::new(RUN_ACTION_KIND)),
            command: Some(lsp::Command {
                title: "Remember this".to_owned(),
                command: super::knowledge::REMEMBER.to_owned(),
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
                lsp::CodeActionKind::new(RUN_ACTION_KIND)
            } else {
                lsp::CodeActionKind::QUICKFIX
            }),
            is_preferred: (!fixes.is_empty()).then_some(true),
            diagnostics: (!fixes.is_empty()).then_some(fixes),
            command: Some(run_command(&action, &action.title)),
            ..lsp::CodeAction::default()
        }));
    }
    actions
}

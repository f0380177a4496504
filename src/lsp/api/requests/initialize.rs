//! `initialize`: the position encoding, how diagnostics travel, what the client can do with edits, and the server's capabilities.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::lsp::commands::{self};
use crate::lsp::diagnostics::publish::DiagnosticsMode;
use crate::lsp::runs;
use crate::lsp::session::Session;
use crate::lsp::state::{ClientSupport, Server};
use crate::text::PositionEncoding;

pub(crate) async fn initialize(
    server: &Server,
    params: lsp::InitializeParams,
) -> RpcResult<lsp::InitializeResult> {
    let root = workspace_root(&params)
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let root = root.canonicalize().unwrap_or(root);
    let capabilities = &params.capabilities;
    let offers_utf8 = capabilities
        .general
        .as_ref()
        .and_then(|general| general.position_encodings.as_ref())
        .is_some_and(|encodings| encodings.contains(&lsp::PositionEncodingKind::UTF8));
    let encoding = if offers_utf8 {
        PositionEncoding::Utf8
    } else {
        PositionEncoding::Utf16
    };
    let pull = capabilities
        .text_document
        .as_ref()
        .and_then(|text| text.diagnostic.as_ref())
        .is_some();
    let _ = server.mode.set(if pull {
        DiagnosticsMode::Pull
    } else {
        DiagnosticsMode::Push
    });
    let _ = server.support.set(ClientSupport {
        work_done_progress: capabilities
            .window
            .as_ref()
            .and_then(|window| window.work_done_progress)
            .unwrap_or(false),
        watched_files_registration: capabilities
            .workspace
            .as_ref()
            .and_then(|workspace| workspace.did_change_watched_files.as_ref())
            .and_then(|watched| watched.dynamic_registration)
            .unwrap_or(false),
        diagnostic_refresh: capabilities
            .workspace
            .as_ref()
            .and_then(|workspace| workspace.diagnostics.as_ref())
            .and_then(|diagnostics| diagnostics.refresh_support)
            .unwrap_or(false),
        edits: edit_support(capabilities),
    });
    // A cache: a folder that cannot be written is indexed afresh each time.
    let _ = crate::index::IndexCache::prepare(&root);
    let mut session = Session::new(&root, encoding);
    session.semantic_tokens_refresh.supported = capabilities
        .workspace
        .as_ref()
        .and_then(|workspace| workspace.semantic_tokens.as_ref())
        .and_then(|tokens| tokens.refresh_support)
        .unwrap_or(false);
    session.inlay_hints_refresh.supported = capabilities
        .workspace
        .as_ref()
        .and_then(|workspace| workspace.inlay_hint.as_ref())
        .and_then(|hints| hints.refresh_support)
        .unwrap_or(false);
    let settings = params
        .initialization_options
        .as_ref()
        .map(crate::lsp::settings::read)
        .unwrap_or_default();
    let problems = session.apply_settings(settings);
    for problem in problems {
        server
            .client
            .log_message(lsp::MessageType::WARNING, problem)
            .await;
    }
    let _ = server.session.set(Arc::new(Mutex::new(session)));
    Ok(lsp::InitializeResult {
        capabilities: capabilities_for(encoding, pull),
        server_info: Some(lsp::ServerInfo {
            name: "control-room".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
        offset_encoding: None,
    })
}

/// What the client can do with the edits and documents a run sends.
fn edit_support(capabilities: &lsp::ClientCapabilities) -> runs::EditSupport {
    let edit = capabilities
        .workspace
        .as_ref()
        .and_then(|workspace| workspace.workspace_edit.as_ref());
    runs::EditSupport {
        work_done_progress: capabilities
            .window
            .as_ref()
            .and_then(|window| window.work_done_progress)
            .unwrap_or(false),
        document_changes: edit.and_then(|edit| edit.document_changes).unwrap_or(false),
        create_files: edit
            .and_then(|edit| edit.resource_operations.as_ref())
            .is_some_and(|operations| operations.contains(&lsp::ResourceOperationKind::Create)),
        show_document: capabilities
            .window
            .as_ref()
            .and_then(|window| window.show_document.as_ref())
            .is_some_and(|show| show.support),
    }
}

#[allow(deprecated)] // `root_uri` is how older clients name the workspace.
fn workspace_root(params: &lsp::InitializeParams) -> Option<PathBuf> {
    let from_folders = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .map(|folder| &folder.uri);
    let uri = from_folders.or(params.root_uri.as_ref())?;
    uri.to_file_path().map(|path| path.into_owned())
}

fn capabilities_for(encoding: PositionEncoding, pull: bool) -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(match encoding {
            PositionEncoding::Utf8 => lsp::PositionEncodingKind::UTF8,
            _ => lsp::PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                // A saved plan checklist goes into its plan.json.
                save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
                ..lsp::TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
        })),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        workspace_symbol_provider: Some(lsp::OneOf::Left(true)),
        completion_provider: Some(lsp::CompletionOptions::default()),
        folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(super::semantic_tokens::capability()),
        inlay_hint_provider: Some(lsp::OneOf::Left(true)),
        code_lens_provider: Some(lsp::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
            lsp::CodeActionOptions {
                code_action_kinds: Some(vec![
                    lsp::CodeActionKind::QUICKFIX,
                    lsp::CodeActionKind::new(super::code_lens::RUN_ACTION_KIND),
                ]),
                ..lsp::CodeActionOptions::default()
            },
        )),
        execute_command_provider: Some(lsp::ExecuteCommandOptions {
            commands: commands::COMMANDS
                .iter()
                .map(|&command| command.to_owned())
                .collect(),
            work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
        }),
        diagnostic_provider: pull.then(|| {
            lsp::DiagnosticServerCapabilities::Options(lsp::DiagnosticOptions {
                identifier: Some("control-room".to_owned()),
                inter_file_dependencies: true,
                workspace_diagnostics: true,
                ..lsp::DiagnosticOptions::default()
            })
        }),
        ..lsp::ServerCapabilities::default()
    }
}

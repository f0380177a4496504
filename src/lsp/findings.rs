//! Agents' findings as `agent-finding` diagnostics: anchored afresh in the
//! file's current text every time diagnostics are computed, so a finding
//! follows its quote and disappears with it. The diagnostic's `data` names
//! the finding, its run and its receipt; its related information links the
//! run report (at the finding's line) and the canon card it cites.

use std::sync::Mutex;

use serde_json::json;
use tower_lsp_server::ls_types as lsp;

use super::convert::{self, uri_for};
use crate::index::Workspace;
use crate::runs::findings::{CODE, FindingSeverity, FindingStore};
use crate::runs::report;
use crate::text::PositionEncoding;

/// The `agent-finding` diagnostics of `path`.
pub fn diagnostics(
    store: &Mutex<FindingStore>,
    workspace: &Workspace,
    path: &str,
    encoding: PositionEncoding,
) -> Vec<lsp::Diagnostic> {
    let setting = workspace.severity_setting(CODE);
    if setting == Some("off") {
        return Vec::new();
    }
    let Some(file) = workspace.file(path) else {
        return Vec::new();
    };
    let mut store = store
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    store
        .anchored(path, &file.text)
        .into_iter()
        .map(|anchored| {
            let finding = anchored.finding;
            let severity = setting
                .and_then(crate::checks::Severity::parse)
                .map(convert::severity)
                .unwrap_or(match finding.severity {
                    FindingSeverity::Error => lsp::DiagnosticSeverity::ERROR,
                    FindingSeverity::Warning => lsp::DiagnosticSeverity::WARNING,
                    FindingSeverity::Information => lsp::DiagnosticSeverity::INFORMATION,
                });
            let mut message = format!("{}: {}", step_label(&finding.step_id), finding.message);
            if let Some(suggestion) = &finding.suggestion {
                message.push_str(&format!(" Suggestion: {suggestion}"));
            }
            let mut related = Vec::new();
            if let Some(uri) = uri_for(workspace, &report::report_path(&finding.run_id)) {
                let line = finding.report_line.unwrap_or(0);
                let at = lsp::Position { line, character: 0 };
                related.push(lsp::DiagnosticRelatedInformation {
                    location: lsp::Location {
                        uri,
                        range: lsp::Range { start: at, end: at },
                    },
                    message: format!("the report of run {}", finding.run_id),
                });
            }
            if let Some(canon) = &finding.canon
                && let Some(uri) = uri_for(workspace, canon)
            {
                let range = workspace
                    .file(canon)
                    .map(|card| convert::range(card, card.head_range(), encoding))
                    .unwrap_or_default();
                related.push(lsp::DiagnosticRelatedInformation {
                    location: lsp::Location { uri, range },
                    message: "the canon card".to_owned(),
                });
            }
            lsp::Diagnostic {
                range: convert::range(file, anchored.range, encoding),
                severity: Some(severity),
                code: Some(lsp::NumberOrString::String(CODE.to_owned())),
                source: Some("control-room".to_owned()),
                message,
                related_information: (!related.is_empty()).then_some(related),
                data: Some(json!({
                    "finding_id": finding.id,
                    "run_id": finding.run_id,
                    "step_id": finding.step_id,
                    "receipt_id": finding.receipt_id,
                })),
                ..lsp::Diagnostic::default()
            }
        })
        .collect()
}

/// `continuity` as "Continuity".
fn step_label(step_id: &str) -> String {
    let spaced = step_id.replace('_', " ");
    let mut chars = spaced.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().collect::<String>() + chars.as_str()
    })
}

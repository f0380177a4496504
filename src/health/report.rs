//! The health report as the front ends show it: as text for the writer
//! (`control-room health`, the editors' Show Story Health) and as JSON for
//! tools, each finding with its place as `path:line`.

use serde_json::{Value, json as object};

use super::Health;
use crate::index::Workspace;

/// Where a finding points, as `path:line`.
fn place(workspace: &Workspace, finding: &super::Finding) -> Option<String> {
    let (path, range) = finding.at.as_ref()?;
    let line = workspace
        .file(path)
        .map_or(0, |file| file.line_index.line_of(range.start) + 1);
    Some(format!("{path}:{line}"))
}

/// The report as JSON: the health, each finding with its place.
pub fn json(workspace: &Workspace, health: &Health) -> Value {
    let mut value = serde_json::to_value(health).unwrap_or(Value::Null);
    if let Some(checks) = value["checks"].as_array_mut() {
        for (check, result) in checks.iter_mut().zip(&health.checks) {
            if let Some(findings) = check["findings"].as_array_mut() {
                for (finding, found) in findings.iter_mut().zip(&result.findings) {
                    finding["at"] = object!(place(workspace, found));
                    finding["severity"] = object!(found.severity.as_str());
                }
            }
        }
    }
    value
}

/// The report as the writer reads it.
pub fn text(workspace: &Workspace, health: &Health) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "The story's health: {} ({} scenes, {} words)\n",
        health.headline(),
        health.scenes,
        health.words
    ));
    for check in &health.checks {
        let score = match (check.score, check.method) {
            (Some(score), _) => score.to_string(),
            (None, super::Method::Model) => "not read".to_owned(),
            (None, _) => "not judged".to_owned(),
        };
        let method = match check.method {
            super::Method::Deterministic => "from the text",
            super::Method::Model => "read by a model",
        };
        out.push_str(&format!(
            "\n{} {} ({method}): {score}\n   {}\n",
            check.id, check.name, check.summary
        ));
        for finding in &check.findings {
            let at = place(workspace, finding).unwrap_or_default();
            out.push_str(&format!(
                "   - {at} {}\n     → {}\n",
                finding.message, finding.recommendation
            ));
        }
    }
    out
}

//! `control-room health`: the story's health report (`health`): each of
//! the seven checks with its score, what it found and what to do, and the
//! findings' places as `file:line`; `--json` for tools.

use std::path::Path;

use serde_json::{Value, json};

use super::workspace_root;
use crate::health::{Health, Measures};
use crate::index::Workspace;

/// Prints the report; exits 0 (a report, not a gate: `check` gates).
pub fn health(dir: &Path, json: bool) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let health = Health::check(&workspace, &mut Measures::default());
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report_json(&workspace, &health))?
        );
    } else {
        print!("{}", report_text(&workspace, &health));
    }
    Ok(0)
}

/// Where a finding points, as `path:line`.
fn place(workspace: &Workspace, finding: &crate::health::Finding) -> Option<String> {
    let (path, range) = finding.at.as_ref()?;
    let line = workspace
        .file(path)
        .map_or(0, |file| file.line_index.line_of(range.start) + 1);
    Some(format!("{path}:{line}"))
}

/// The report as JSON: the health, each finding with its place.
pub fn report_json(workspace: &Workspace, health: &Health) -> Value {
    let mut value = serde_json::to_value(health).unwrap_or(Value::Null);
    if let Some(checks) = value["checks"].as_array_mut() {
        for (check, result) in checks.iter_mut().zip(&health.checks) {
            if let Some(findings) = check["findings"].as_array_mut() {
                for (finding, found) in findings.iter_mut().zip(&result.findings) {
                    finding["at"] = json!(place(workspace, found));
                    finding["severity"] = json!(found.severity.as_str());
                }
            }
        }
    }
    value
}

/// The report as the writer reads it.
pub fn report_text(workspace: &Workspace, health: &Health) -> String {
    let mut out = String::new();
    let score = health.score.map_or_else(
        || "not judged".to_owned(),
        |score| format!("{score} of 100"),
    );
    out.push_str(&format!(
        "The story's health: {score} ({} scenes, {} words)\n",
        health.scenes, health.words
    ));
    for check in &health.checks {
        let score = match (check.score, check.method) {
            (Some(score), _) => score.to_string(),
            (None, crate::health::Method::Model) => "not run".to_owned(),
            (None, _) => "not judged".to_owned(),
        };
        let method = match check.method {
            crate::health::Method::Deterministic => "from the text",
            crate::health::Method::Model => "needs a model",
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

//! `consistency_checker`: every continuity check on one file.
//!
//! Arguments: `scene_path` (required; a manuscript file the index holds,
//! usually a scene; cards and the outline are checked the same way).
//!
//! Runs `check_file`, which is exactly what the editor and `control-room
//! check` report for the file: every diagnostic code, with the severities
//! the workspace's settings give and the writer's `allow` marks applied.
//!
//! Output: `path`, `id` (the scene id, or null), `findings` ([{code,
//! severity, line, end_line, message, quote, related: [{path, line,
//! message}]}], in file order, lines 1-based, `quote` the text the finding
//! covers), `counts` ({error, warning, information, hint}), and `pass`
//! (true when no finding is an error).

use serde_json::json;

use super::{
    FileRef, Finding, Summary, ToolArgs, ToolContext, ToolError, ToolOutput, indexed_file,
    push_ref, related_refs,
};
use crate::checks::check_file;

const SEVERITIES: [&str; 4] = ["error", "warning", "information", "hint"];

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    let path = args.required_path("scene_path")?;
    let file = indexed_file(context, "scene_path", path)?;

    let mut file_refs = vec![FileRef::whole(file)];
    let mut findings = Vec::new();
    for diagnostic in check_file(workspace, &file.path) {
        for related in related_refs(workspace, &diagnostic) {
            push_ref(&mut file_refs, related);
        }
        findings.push(Finding::new(workspace, file, &diagnostic));
    }
    let count = |severity: &str| findings.iter().filter(|f| f.severity == severity).count();
    let counts = json!({
        "error": count("error"),
        "warning": count("warning"),
        "information": count("information"),
        "hint": count("hint"),
    });
    let pass = count("error") == 0;
    let id = file.scene().map(|scene| scene.id.clone());

    let mut summary = Summary::new();
    let name = match &id {
        Some(id) => format!("{id} ({path})"),
        None => path.to_owned(),
    };
    if findings.is_empty() {
        summary.line(format!("{name}: no continuity problems found. Passes."));
    } else {
        let tally: Vec<String> = SEVERITIES
            .iter()
            .map(|severity| (severity, count(severity)))
            .filter(|(_, n)| *n > 0)
            .map(|(severity, n)| format!("{n} {severity}"))
            .collect();
        let noun = if findings.len() == 1 {
            "finding"
        } else {
            "findings"
        };
        summary.line(format!(
            "{name}: {} {noun} ({}). {}",
            findings.len(),
            tally.join(", "),
            if pass {
                "Passes (no errors)."
            } else {
                "Does not pass: fix the errors."
            }
        ));
        for finding in &findings {
            summary.line(format!("- {}", finding.describe()));
        }
    }

    Ok(ToolOutput {
        data: json!({
            "path": path,
            "id": id,
            "findings": findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
            "counts": counts,
            "pass": pass,
        }),
        summary: summary.finish(),
        file_refs,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{
        codes_and_lines, file_ref, output, rejected, salt_road, salt_road_output, scene, workspace,
    };

    #[test]
    fn a_scene_with_a_dead_character_does_not_pass() {
        let (dir, out) = salt_road_output(
            "consistency_checker",
            scene("Story/Scenes/SCN-the-vigil.md"),
        );
        let data = &out.data;
        assert_eq!(data["id"], "SCN-the-vigil");
        assert_eq!(data["pass"], false);
        assert_eq!(
            data["counts"],
            json!({"error": 1, "warning": 1, "information": 0, "hint": 0})
        );
        let first = &data["findings"][0];
        assert_eq!(first["code"], "dead-character");
        assert_eq!(first["severity"], "error");
        assert_eq!(
            (first["line"].as_u64(), first["end_line"].as_u64()),
            (Some(4), Some(4))
        );
        assert_eq!(first["quote"], "Tomas");
        // Related information points at the card and the death scene, which
        // the receipt records too.
        let related = first["related"].as_array().expect("related");
        assert!(
            related
                .iter()
                .any(|r| r["path"] == "Compendium/Characters/CHAR-old-tomas.md"),
            "{related:?}"
        );
        assert_eq!(data["findings"][1]["line"], 13);
        assert_eq!(data["findings"][1]["severity"], "warning");
        assert!(
            out.summary
                .contains("2 findings (1 error, 1 warning). Does not pass")
        );
        assert!(out.summary.contains("- line 4, error dead-character"));
        let scene = file_ref(&out, dir.path(), "Story/Scenes/SCN-the-vigil.md");
        assert_eq!((scene.start_line, scene.end_line), (1, 13));
        file_ref(&out, dir.path(), "Compendium/Characters/CHAR-old-tomas.md");
    }

    #[test]
    fn warnings_alone_pass_and_dates_out_of_order_are_found() {
        let (_dir, out) = salt_road_output(
            "consistency_checker",
            scene("Story/Scenes/SCN-the-saltmaster.md"),
        );
        assert_eq!(out.data["pass"], true);
        assert_eq!(
            codes_and_lines(&out.data["findings"]),
            [("timeline-order", 6), ("name-typo", 17)]
        );
        assert_eq!(out.data["findings"][0]["quote"], "1203-04-11");
    }

    #[test]
    fn a_clean_file_passes_and_says_so() {
        let (_dir, out) = salt_road_output(
            "consistency_checker",
            scene("Compendium/Characters/CHAR-kael-maren.md"),
        );
        assert_eq!(out.data["pass"], true);
        assert_eq!(out.data["findings"], json!([]));
        assert_eq!(out.data["id"], json!(null));
        assert!(out.summary.contains("no continuity problems found"));
    }

    #[test]
    fn an_unreadable_file_is_a_finding_not_a_failure() {
        let (_dir, ws) = workspace(&[("Story/Scenes/SCN-bad.md", "\u{0}binary")]);
        let out = output(&ws, "consistency_checker", scene("Story/Scenes/SCN-bad.md"));
        assert_eq!(out.data["findings"][0]["code"], "unreadable");
        assert_eq!(out.data["findings"][0]["line"], 1);
    }

    #[test]
    fn bad_arguments_are_named() {
        let (_dir, ws) = salt_road();
        let (name, message) = rejected(&ws, "consistency_checker", json!({}));
        assert_eq!(
            (name.as_str(), message.as_str()),
            ("scene_path", "is required")
        );
        let (name, message) = rejected(
            &ws,
            "consistency_checker",
            scene("Story/Scenes/SCN-the-reckoning.md"),
        );
        assert_eq!(name, "scene_path");
        assert!(message.contains("not a manuscript file"), "{message}");
    }
}

//! The session state's `<work_order>` (§6.1 and §6.5 of the agent-instruction
//! spec): where each Story Bible template stands, its parts done and missing.
//! In full in ARCHITECT, whose gate it is; one summary line in
//! VOICE_CALIBRATION and DIRECTOR (the gate out of those is the voice's and
//! the draft's), none in EDITOR.

use std::fmt::Write as _;

use super::registry::Variant;
use crate::index::{BibleKind, Workspace};
use crate::kb::mode::Mode;

/// Writes the work order for `mode` to `out` (nothing without a mode).
pub(super) fn work_order(
    out: &mut String,
    workspace: &Workspace,
    mode: Option<Mode>,
    variant: Variant,
) {
    let catalog = workspace.catalog();
    let templates =
        BibleKind::ALL.map(|kind| (kind, catalog.bible(kind).and_then(|file| file.bible())));
    match mode {
        Some(Mode::Architect) => {
            out.push_str("  <work_order>\n");
            for (kind, bible) in templates {
                let Some(bible) = bible else {
                    let _ = writeln!(
                        out,
                        "    <template name=\"{}\" status=\"not_started\"/>",
                        kind.title()
                    );
                    continue;
                };
                let gaps = bible.gaps();
                let status = bible.status().as_str();
                if gaps.is_empty() {
                    let _ = writeln!(
                        out,
                        "    <template name=\"{}\" status=\"{status}\"/>",
                        kind.title()
                    );
                    continue;
                }
                let missing: Vec<&str> = gaps.iter().map(|(spec, _)| spec.key).collect();
                let completed: Vec<&str> = bible
                    .parts
                    .iter()
                    .map(|part| part.spec.key)
                    .filter(|key| !missing.contains(key))
                    .collect();
                let _ = writeln!(
                    out,
                    "    <template name=\"{}\" status=\"{status}\">",
                    kind.title()
                );
                if !completed.is_empty() && variant == Variant::T5 {
                    let _ = writeln!(out, "      <completed>{}</completed>", completed.join(", "));
                }
                let _ = writeln!(out, "      <missing>{}</missing>", missing.join(", "));
                out.push_str("    </template>\n");
            }
            out.push_str("  </work_order>\n");
        }
        Some(Mode::VoiceCalibration | Mode::Director) => {
            let complete = templates
                .iter()
                .filter(|(_, bible)| bible.is_some_and(|bible| bible.is_complete()))
                .count();
            let _ = writeln!(
                out,
                "  <work_order summary=\"Story Bible: {complete} of {} templates complete\"/>",
                BibleKind::ALL.len()
            );
        }
        Some(Mode::Editor) | None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace_with_theme(theme: &str) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("Story/Bible")).unwrap();
        std::fs::write(dir.path().join("Story/Bible/theme.md"), theme).unwrap();
        let workspace = Workspace::load(dir.path());
        (dir, workspace)
    }

    #[test]
    fn the_work_order_names_what_each_template_misses_in_architect_and_sums_up_in_director() {
        let (_dir, workspace) = workspace_with_theme(
            "---\nstatus: in_progress\n---\n## Central Theme\nPride.\n## Theme Statement\nTBD\n",
        );
        let mut out = String::new();
        work_order(&mut out, &workspace, Some(Mode::Architect), Variant::T5);
        assert!(
            out.contains("<template name=\"Protagonist Profile\" status=\"not_started\"/>"),
            "{out}"
        );
        assert!(
            out.contains("<template name=\"Theme\" status=\"in_progress\">\n      <completed>central_theme</completed>\n      <missing>theme_statement</missing>"),
            "{out}"
        );
        let mut out = String::new();
        work_order(&mut out, &workspace, Some(Mode::Director), Variant::T5);
        assert_eq!(
            out,
            "  <work_order summary=\"Story Bible: 0 of 4 templates complete\"/>\n"
        );
        let mut out = String::new();
        work_order(&mut out, &workspace, Some(Mode::Editor), Variant::T5);
        assert!(out.is_empty());
    }
}

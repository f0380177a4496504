//! What can be done where the cursor is, as plain data: the fixes of the
//! diagnostics the range touches (with the preferred-fix rule), "Dismiss"
//! for the agents' findings there, "Convene conference" and "Remember this"
//! on a selection, and the recipe runs that apply. The language server only
//! turns each into an LSP code action.

use crate::checks::{self, Diagnostic, Fix, FixKind};
use crate::index::{SourceFile, Workspace};
use crate::runs::findings::FindingStore;
use crate::runs::recipe::Registry;
use crate::text::TextRange;

use super::RunAction;

/// One thing the writer can do at a range.
#[derive(Clone, Debug, PartialEq)]
pub enum CodeAction {
    /// A fix of a check's diagnostic. Preferred (what "fix all" applies):
    /// a correction that is the diagnostic's only correction.
    Fix {
        diagnostic: Box<Diagnostic>,
        fix: Fix,
        preferred: bool,
    },
    /// Add a misspelt word to the manuscript's dictionary (`spelling`).
    AddToDictionary {
        diagnostic: Box<Diagnostic>,
        word: String,
    },
    /// Dismiss an agent's finding, anchored at `range`.
    Dismiss {
        finding_id: String,
        range: TextRange,
    },
    /// Ask the agents about the selected passage.
    Conference { range: TextRange },
    /// Make the selected passage a decision of the knowledge base.
    Remember { range: TextRange },
    /// Draft the selected passage in several voices side by side.
    VoiceTournament { range: TextRange },
    /// Start a recipe run; `fixes` is the `missing-scene` diagnostic it is
    /// the fix of, when it drafts a scene the outline lacks.
    Run {
        action: RunAction,
        fixes: Option<Box<Diagnostic>>,
    },
}

/// Everything that can be done at `range` of `file`, in the order an editor
/// lists them: fixes, dismissals, conference, remember, runs. `book` holds
/// the file's diagnostics that come of the whole book (the story's health),
/// which the front end keeps.
pub fn code_actions(
    workspace: &Workspace,
    registry: &Registry,
    findings: &mut FindingStore,
    file: &SourceFile,
    range: TextRange,
    book: &[Diagnostic],
) -> Vec<CodeAction> {
    let touches = |other: TextRange| other.end >= range.start && other.start <= range.end;
    let mut actions = Vec::new();
    let checked = checks::check_file(workspace, &file.path);
    for diagnostic in checked.iter().chain(book).filter(|d| touches(d.range)) {
        let corrections = diagnostic
            .fixes
            .iter()
            .filter(|fix| fix.kind == FixKind::Correction)
            .count();
        for fix in &diagnostic.fixes {
            actions.push(CodeAction::Fix {
                diagnostic: Box::new(diagnostic.clone()),
                fix: fix.clone(),
                preferred: fix.kind == FixKind::Correction && corrections == 1,
            });
        }
        let word = diagnostic.range.slice(&file.text);
        if diagnostic.code == checks::Code::Spelling && super::dictionary::is_addable(word) {
            actions.push(CodeAction::AddToDictionary {
                diagnostic: Box::new(diagnostic.clone()),
                word: word.to_owned(),
            });
        }
    }
    let findings_shown = workspace.severity_setting(crate::runs::findings::CODE) != Some("off");
    let anchored = if findings_shown {
        findings.anchored(&file.path, &file.text)
    } else {
        Vec::new()
    };
    for anchored in anchored {
        if touches(anchored.range) {
            actions.push(CodeAction::Dismiss {
                finding_id: anchored.finding.id.clone(),
                range: anchored.range,
            });
        }
    }
    let selected = range.start != range.end;
    if selected && file.path.ends_with(".md") {
        actions.push(CodeAction::Conference { range });
    }
    if selected && file.scene().is_some() {
        actions.push(CodeAction::Remember { range });
        actions.push(CodeAction::VoiceTournament { range });
    }
    for action in super::run_actions(workspace, registry, file, range) {
        let fixes = checked
            .iter()
            .find(|diagnostic| {
                action.drafts_missing_scene
                    && diagnostic.code == checks::Code::MissingScene
                    && diagnostic.range == action.range
            })
            .map(|diagnostic| Box::new(diagnostic.clone()));
        actions.push(CodeAction::Run { action, fixes });
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::prompts::Prompts;

    #[test]
    fn draft_scene_on_a_missing_scene_is_its_fix_and_a_selection_offers_conference_and_remember() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road");
        let workspace = Workspace::load(&root);
        let registry = Registry::load(&root, &Prompts::load(&root));
        let mut findings = FindingStore::default();
        let outline = workspace.file("Story/SCN-outline.md").unwrap();
        let at = outline.text.find("SCN-the-reckoning").unwrap();
        let actions = code_actions(
            &workspace,
            &registry,
            &mut findings,
            outline,
            TextRange::new(at, at),
            &[],
        );
        let draft = actions
            .iter()
            .find_map(|action| match action {
                CodeAction::Run { action, fixes }
                    if action.title == "Draft scene SCN-the-reckoning" =>
                {
                    Some(fixes)
                }
                _ => None,
            })
            .expect("Draft scene on the missing entry");
        assert_eq!(
            draft.as_ref().map(|diagnostic| diagnostic.code),
            Some(checks::Code::MissingScene)
        );
        // A cursor offers no conference; a selection of a scene does, and
        // Remember this too.
        assert!(
            !actions
                .iter()
                .any(|a| matches!(a, CodeAction::Conference { .. }))
        );
        let scene = workspace.file("Story/Scenes/SCN-the-gate.md").unwrap();
        let selection = TextRange::new(scene.text.len() - 40, scene.text.len() - 10);
        let actions = code_actions(&workspace, &registry, &mut findings, scene, selection, &[]);
        assert!(actions.contains(&CodeAction::Conference { range: selection }));
        assert!(actions.contains(&CodeAction::Remember { range: selection }));
        assert!(actions.contains(&CodeAction::VoiceTournament { range: selection }));
    }
}

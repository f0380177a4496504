//! `missing-scene`: the outline lists a scene id that has no scene file.
//! Information, not a warning: an outline running ahead of the draft is how
//! novels get written. The "Draft scene" action offers to write it.

use super::{Code, Diagnostic, Severity};
use crate::index::{SourceFile, Workspace};

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(outline) = file.outline() else {
        return;
    };
    let catalog = workspace.catalog();
    for entry in &outline.entries {
        if catalog.scene_files(&entry.scene_id).is_empty() {
            let message = format!("`{}` has no scene file yet", entry.scene_id);
            diagnostics.push(Diagnostic::new(
                file,
                entry.id_range,
                Severity::Information,
                Code::MissingScene,
                message,
            ));
        }
    }
}

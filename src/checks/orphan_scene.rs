//! `orphan-scene`: a scene file that the outline does not list, so it has no
//! place in story order. Only reported when the workspace has an outline.
//! Quick fix: add an entry for it at the end of the outline.

use super::{Code, Diagnostic, FileEdit, Fix, FixKind, Severity};
use std::hash::{Hash, Hasher};

use crate::index::{SourceFile, Workspace};
use crate::text::TextRange;

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(scene) = file.scene() else { return };
    if file.load_error.is_some() {
        // One problem at a time: the file cannot be read at all.
        return;
    }
    let catalog = workspace.catalog();
    let Some(outline_file) = catalog.outline() else {
        return;
    };
    if catalog.outline_position(&scene.id).is_some() {
        return;
    }
    let range = scene.id_range.unwrap_or_else(|| file.head_range());
    let outline_path = &outline_file.path;
    let mut diagnostic = Diagnostic::new(
        file,
        range,
        Severity::Warning,
        Code::OrphanScene,
        format!(
            "`{}` is not in the outline ({outline_path}), so it has no place in story order",
            scene.id
        ),
    );
    let text = &outline_file.text;
    let end = text.trim_end().len();
    let beat = scene.title.as_deref().unwrap_or("");
    let entry = if beat.is_empty() {
        format!("- {}", scene.id)
    } else {
        format!("- {}: {beat}", scene.id)
    };
    diagnostic = diagnostic.with_fix(Fix {
        title: format!("Add {} to the outline", scene.id),
        edits: vec![FileEdit {
            path: outline_path.clone(),
            range: TextRange::new(end, text.len()),
            new_text: format!("\n{entry}\n"),
        }],
        kind: FixKind::Correction,
    });
    diagnostics.push(diagnostic);
}

/// Whether the outline lists the scene, and the outline's length (the quick
/// fix appends to it).
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    let Some(scene) = file.scene() else { return };
    let catalog = workspace.catalog();
    catalog.outline_position(&scene.id).is_some().hash(hasher);
    catalog
        .outline()
        .map(|outline| outline.text.len())
        .hash(hasher);
}

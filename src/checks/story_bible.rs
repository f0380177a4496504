//! `story-bible`: a Story Bible template that misses a required part (no
//! heading for it, or only a placeholder under it, or too few world rules),
//! a beat that names a scene the outline does not list, a protagonist's
//! profile whose `character:` is on no card, or a second file for one
//! template. What is missing is information while the template is being
//! written, and a warning once its `status:` says it is complete: then the
//! status is wrong, and the ARCHITECT gate stays shut.

use std::hash::{Hash, Hasher};

use super::{Code, Diagnostic, Severity};
use crate::index::bible::{Bible, Gap};
use crate::index::{BibleKind, BibleStatus, CardKind, SourceFile, Workspace};

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(bible) = file.bible() else { return };
    let catalog = workspace.catalog();
    if let Some(first) = catalog.bible(bible.kind)
        && first.path != file.path
    {
        diagnostics.push(Diagnostic::new(
            file,
            file.head_range(),
            Severity::Warning,
            Code::StoryBible,
            format!(
                "a second {}: the Story Bible reads {} and not this file",
                bible.kind.title(),
                first.path
            ),
        ));
        return;
    }
    gaps(file, bible, diagnostics);
    if let Some(character) = &bible.character
        && catalog
            .resolve_card(&character.text, &[CardKind::Character])
            .is_none()
    {
        diagnostics.push(Diagnostic::new(
            file,
            character.range,
            Severity::Warning,
            Code::StoryBible,
            format!(
                "the protagonist `{}` is on no character card",
                character.text
            ),
        ));
    }
    if bible.kind == BibleKind::BeatSheet && catalog.outline().is_some() {
        for part in &bible.parts {
            let Some(section) = part.section.map(|index| &bible.sections[index]) else {
                continue;
            };
            for id in &section.scene_ids {
                if catalog.outline_position(&id.text).is_none() {
                    diagnostics.push(Diagnostic::new(
                        file,
                        id.range,
                        Severity::Warning,
                        Code::StoryBible,
                        format!(
                            "the beat “{}” names `{}`, which the outline does not list",
                            part.spec.title, id.text
                        ),
                    ));
                }
            }
        }
    }
}

fn gaps(file: &SourceFile, bible: &Bible, diagnostics: &mut Vec<Diagnostic>) {
    let complete = bible.status() == BibleStatus::Complete;
    let (severity, prefix) = if complete {
        (Severity::Warning, "marked complete, but ")
    } else {
        (Severity::Information, "")
    };
    let status_range = bible.status.map(|(_, range)| range);
    for (spec, gap) in bible.gaps() {
        let (range, what) = match gap {
            Gap::Absent => (
                status_range.unwrap_or_else(|| file.head_range()),
                format!(
                    "the {} has no “{}”: add a heading `## {}` and write it under it",
                    bible.kind.title(),
                    spec.title,
                    spec.title
                ),
            ),
            Gap::Empty { heading } => (
                heading,
                format!("“{}” is empty or a placeholder", spec.title),
            ),
            Gap::TooFew { heading, have } => (
                heading,
                format!(
                    "the {} need at least {} rules; {have} {} written",
                    bible.kind.title(),
                    spec.min_items,
                    if have == 1 { "is" } else { "are" }
                ),
            ),
        };
        diagnostics.push(Diagnostic::new(
            file,
            range,
            severity,
            Code::StoryBible,
            format!("{prefix}{what}"),
        ));
    }
}

/// A template reads which file is first of its kind, the character cards
/// (in the names' fingerprint) and, for the beat sheet, the outline's ids.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    let Some(bible) = file.bible() else { return };
    let catalog = workspace.catalog();
    catalog
        .bible(bible.kind)
        .map(|first| first.path.clone())
        .hash(hasher);
    if bible.kind == BibleKind::BeatSheet {
        let ids: Vec<&str> = bible
            .sections
            .iter()
            .flat_map(|section| &section.scene_ids)
            .map(|id| id.text.as_str())
            .collect();
        catalog.outline().is_some().hash(hasher);
        for id in ids {
            catalog.outline_position(id).is_some().hash(hasher);
        }
    }
}

//! Completion of names and scene ids where they are written: card names in
//! prose, the right kind of name in front matter values, scene ids in the
//! outline and in `died_in`.

use crate::index::{CardKind, FileContent, Workspace};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Character,
    Location,
    Canon,
    Scene,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub detail: String,
    pub kind: CompletionKind,
    /// Sorts before others (scenes not yet in the outline, a card's main name).
    pub preferred: bool,
}

pub fn completions(workspace: &Workspace, path: &str, offset: usize) -> Vec<Completion> {
    let Some(file) = workspace.file(path) else {
        return Vec::new();
    };
    let in_front_matter = file
        .front_matter
        .as_ref()
        .is_some_and(|front| front.content.touches(offset));
    if in_front_matter {
        let key = front_matter_key_at(&file.text, offset);
        return match key.as_deref() {
            Some("pov" | "characters") => names(workspace, &[CardKind::Character]),
            Some("location") => names(workspace, &[CardKind::Location]),
            Some("died_in") => scene_ids(workspace, false),
            _ => Vec::new(),
        };
    }
    if let FileContent::Outline(_) = &file.content {
        let line_start = file.text[..offset]
            .rfind('\n')
            .map_or(0, |newline| newline + 1);
        let before = file.text[line_start..offset].trim_start();
        if before.starts_with(['-', '*', '+']) && !before.contains(':') {
            return scene_ids(workspace, true);
        }
    }
    names(
        workspace,
        &[CardKind::Character, CardKind::Location, CardKind::Other],
    )
}

/// The top-level key of the front matter entry holding `offset`.
fn front_matter_key_at(text: &str, offset: usize) -> Option<String> {
    let before = &text[..offset];
    before.lines().rev().find_map(|line| {
        if line.starts_with(|c: char| c.is_whitespace() || c == '-') || line.is_empty() {
            return None;
        }
        line.split_once(':').map(|(key, _)| key.trim().to_owned())
    })
}

fn names(workspace: &Workspace, kinds: &[CardKind]) -> Vec<Completion> {
    let mut completions = Vec::new();
    for (_, card) in workspace.catalog().cards() {
        if !kinds.contains(&card.kind) {
            continue;
        }
        let kind = match card.kind {
            CardKind::Character => CompletionKind::Character,
            CardKind::Location => CompletionKind::Location,
            CardKind::Other => CompletionKind::Canon,
        };
        for (index, name) in card.names().enumerate() {
            completions.push(Completion {
                label: name.text.clone(),
                detail: if index == 0 {
                    card.type_name.clone()
                } else {
                    format!("{} ({})", card.display_name(), card.type_name)
                },
                kind,
                preferred: index == 0,
            });
        }
    }
    completions
}

fn scene_ids(workspace: &Workspace, prefer_unlisted: bool) -> Vec<Completion> {
    let catalog = workspace.catalog();
    catalog
        .scenes()
        .map(|(_, scene)| Completion {
            label: scene.id.clone(),
            detail: scene.title.clone().unwrap_or_default(),
            kind: CompletionKind::Scene,
            preferred: prefer_unlisted && catalog.outline_position(&scene.id).is_none(),
        })
        .collect()
}

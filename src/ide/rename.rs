//! Renaming a character or place: the card's `name` (or one alias) and every
//! place that name is written, as one edit. Renaming the name leaves the
//! aliases alone and renaming an alias leaves the name alone, so "Kael" and
//! "Kael Maren" are renamed separately.

use super::navigation::front_matter_references;
use super::{Target, target_at};
use crate::checks::FileEdit;
use crate::index::Workspace;
use crate::text::TextRange;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RenameError {
    #[error("only the name or an alias of a character, place or other card can be renamed here")]
    NotRenamable,
    #[error("a name cannot be empty")]
    EmptyName,
    #[error("“{name}” already names {card}")]
    NameTaken { name: String, card: String },
}

/// The range to rename and its current text, if the cursor is on a name.
pub fn prepare_rename(
    workspace: &Workspace,
    path: &str,
    offset: usize,
) -> Result<(TextRange, String), RenameError> {
    match target_at(workspace, path, offset) {
        Some(Target::Card { range, .. }) => {
            let text = workspace
                .file(path)
                .map(|file| range.slice(&file.text).to_owned())
                .unwrap_or_default();
            Ok((range, text))
        }
        _ => Err(RenameError::NotRenamable),
    }
}

/// The edits that rename the name under the cursor to `new_name`.
pub fn rename(
    workspace: &Workspace,
    path: &str,
    offset: usize,
    new_name: &str,
) -> Result<Vec<FileEdit>, RenameError> {
    let Some(Target::Card {
        card, name_index, ..
    }) = target_at(workspace, path, offset)
    else {
        return Err(RenameError::NotRenamable);
    };
    let new_name = new_name.trim();
    if new_name.is_empty() {
        return Err(RenameError::EmptyName);
    }
    let catalog = workspace.catalog();
    if let Some(owner) = catalog
        .cards_named(new_name)
        .iter()
        .find(|owner| **owner != card)
    {
        return Err(RenameError::NameTaken {
            name: new_name.to_owned(),
            card: owner.to_string(),
        });
    }
    let card_file = catalog.card(&card).ok_or(RenameError::NotRenamable)?;
    let card_data = card_file.card().ok_or(RenameError::NotRenamable)?;
    let old_name = card_data
        .names()
        .nth(name_index)
        .ok_or(RenameError::NotRenamable)?;

    let mut edits = vec![replace_value(
        &card_file.text,
        &card,
        old_name.range,
        &old_name.text,
        new_name,
    )];
    for (location, written) in front_matter_references(workspace, &card) {
        if written == old_name.text
            && let Some(file) = workspace.file(&location.path)
        {
            edits.push(replace_value(
                &file.text,
                &location.path,
                location.range,
                &old_name.text,
                new_name,
            ));
        }
    }
    for (path, mention) in workspace.mentions_of(&card) {
        if usize::from(mention.name_index) != name_index {
            continue;
        }
        let Some(file) = workspace.file(path) else {
            continue;
        };
        let written = mention.range.slice(&file.text);
        edits.push(FileEdit {
            path: path.clone(),
            range: mention.range,
            new_text: same_case(written, &old_name.text, new_name),
        });
    }
    edits.sort_by(|a, b| (&a.path, a.range).cmp(&(&b.path, b.range)));
    edits.dedup();
    Ok(edits)
}

/// Replaces a front matter value, keeping its quotes if it had any.
fn replace_value(
    text: &str,
    path: &crate::index::FilePath,
    range: TextRange,
    old: &str,
    new: &str,
) -> FileEdit {
    let written = range.slice(text);
    let range = match written.find(old) {
        Some(start) if written != old => {
            TextRange::new(range.start + start, range.start + start + old.len())
        }
        _ => range,
    };
    let needs_quotes = written == old && new.contains([':', '#', '[', ']', ',', '{', '}']);
    let new_text = if needs_quotes {
        format!("\"{}\"", new.replace('"', "\\\""))
    } else {
        new.to_owned()
    };
    FileEdit {
        path: path.clone(),
        range,
        new_text,
    }
}

/// `new` in the case `written` uses for `old`: as is, in capitals, or capitalised.
fn same_case(written: &str, old: &str, new: &str) -> String {
    if written == old {
        new.to_owned()
    } else if written == old.to_uppercase() {
        new.to_uppercase()
    } else {
        let mut chars = new.chars();
        chars.next().map_or_else(String::new, |first| {
            first.to_uppercase().chain(chars).collect()
        })
    }
}

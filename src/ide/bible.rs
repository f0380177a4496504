//! The Story Bible in the editor: a world rule's name anywhere is a target
//! (hover shows the rule, definition goes to it, references find it); a
//! scene's hover names the beats that carry it; a character's hover shows
//! the protagonist's profile when the profile is theirs.

use std::fmt::Write as _;

use super::Location;
use super::Target;
use crate::index::{BibleKind, FilePath, SourceFile, Workspace};
use crate::text::TextRange;

/// How a rule's name is looked for: without a leading article, in ASCII
/// lower case (which keeps byte offsets).
fn search_form(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    for article in ["the ", "a ", "an "] {
        if let Some(rest) = lower.strip_prefix(article)
            && !rest.is_empty()
        {
            return rest.to_owned();
        }
    }
    lower
}

/// Where `needle` (in search form) occurs in `haystack` on word boundaries.
fn occurrences<'a>(haystack: &'a str, needle: &'a str) -> impl Iterator<Item = TextRange> + 'a {
    let lower = haystack.to_ascii_lowercase();
    let found: Vec<TextRange> = lower
        .match_indices(needle)
        .filter(|(start, _)| {
            let before = haystack[..*start].chars().next_back();
            let after = haystack[start + needle.len()..].chars().next();
            before.is_none_or(|c| !c.is_alphanumeric())
                && after.is_none_or(|c| !c.is_alphanumeric())
        })
        .map(|(start, _)| TextRange::new(start, start + needle.len()))
        .collect();
    found.into_iter()
}

/// The world rules' names with their file.
fn rules(workspace: &Workspace) -> Option<(&SourceFile, Vec<crate::index::model::Spanned>)> {
    let file = workspace.catalog().bible(BibleKind::WorldRules)?;
    let names = file.bible()?.rule_names(&file.text).collect();
    Some((file, names))
}

/// The world rule named at `offset` in `file`, if any.
pub(super) fn rule_at(workspace: &Workspace, file: &SourceFile, offset: usize) -> Option<Target> {
    let (rules_file, names) = rules(workspace)?;
    let line = file.line_index.line_of(offset);
    let line_range = file.line_index.line_range(line, &file.text)?;
    let text = line_range.slice(&file.text);
    for name in names {
        let needle = search_form(&name.text);
        if let Some(range) = occurrences(text, &needle)
            .map(|range| {
                TextRange::new(range.start + line_range.start, range.end + line_range.start)
            })
            .find(|range| range.touches(offset))
        {
            return Some(Target::Rule {
                bible: rules_file.path.clone(),
                name: name.text,
                range,
            });
        }
    }
    None
}

/// The rule `name`: its item in the world rules.
fn rule_item(workspace: &Workspace, name: &str) -> Option<(FilePath, TextRange, String)> {
    let file = workspace.catalog().bible(BibleKind::WorldRules)?;
    let section = file.bible()?.section("fundamental_rules")?;
    let item = section
        .items
        .iter()
        .find(|item| item.text.trim_start_matches('*').starts_with(name))?;
    let declared = file
        .bible()?
        .rule_names(&file.text)
        .find(|rule| rule.text == name)?;
    Some((file.path.clone(), declared.range, item.text.clone()))
}

/// Hover for a world rule: its name and what it says.
pub(super) fn rule_hover(workspace: &Workspace, name: &str) -> Option<String> {
    let (_, _, text) = rule_item(workspace, name)?;
    Some(format!("**{name}** · world rule\n\n{text}"))
}

/// Where the rule `name` is written in the world rules.
pub(super) fn rule_definition(workspace: &Workspace, name: &str) -> Option<Location> {
    let (path, range, _) = rule_item(workspace, name)?;
    Some(Location { path, range })
}

/// Every place the rule `name` is named, the world rules' own included.
pub(super) fn rule_references(workspace: &Workspace, name: &str) -> Vec<Location> {
    let needle = search_form(name);
    let mut found = Vec::new();
    for file in workspace.files() {
        for prose in &file.syntax.prose {
            let text = prose.slice(&file.text);
            found.extend(occurrences(text, &needle).map(|range| Location {
                path: file.path.clone(),
                range: TextRange::new(range.start + prose.start, range.end + prose.start),
            }));
        }
    }
    found
}

/// The beats of the beat sheet that name scene `id`: "Catalyst (beat 4)".
pub(super) fn beats_of_scene(workspace: &Workspace, id: &str) -> Vec<String> {
    let Some(bible) = workspace
        .catalog()
        .bible(BibleKind::BeatSheet)
        .and_then(|file| file.bible())
    else {
        return Vec::new();
    };
    bible
        .beats_naming(id)
        .map(|(number, spec)| format!("{} (beat {number})", spec.title))
        .collect()
}

/// The beat sheet's places that name scene `id`.
pub(super) fn beat_sheet_references(workspace: &Workspace, id: &str) -> Vec<Location> {
    let Some(file) = workspace.catalog().bible(BibleKind::BeatSheet) else {
        return Vec::new();
    };
    let Some(bible) = file.bible() else {
        return Vec::new();
    };
    bible
        .sections
        .iter()
        .flat_map(|section| &section.scene_ids)
        .filter(|scene| scene.text == id)
        .map(|scene| Location {
            path: file.path.clone(),
            range: scene.range,
        })
        .collect()
}

/// The protagonist's profile in brief, when the profile is `card`'s.
pub(super) fn protagonist_lines(workspace: &Workspace, card: &FilePath) -> Option<String> {
    let catalog = workspace.catalog();
    let bible = catalog.bible(BibleKind::Protagonist)?.bible()?;
    let named = bible.character.as_ref()?;
    let resolved = catalog.resolve_card(&named.text, &[crate::index::CardKind::Character])?;
    if &resolved.path != card {
        return None;
    }
    let mut text = String::from("Protagonist");
    for key in ["fatal_flaw", "the_lie"] {
        if let Some(section) = bible.section(key)
            && !crate::index::bible::is_placeholder(&section.text)
        {
            let title = BibleKind::Protagonist
                .part(key)
                .map_or(key, |part| part.title);
            let _ = write!(text, "\n- {title}: {}", section.text);
        }
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_found_on_word_boundaries_without_its_article() {
        assert_eq!(search_form("The Salt Oath"), "salt oath");
        let found: Vec<_> =
            occurrences("He swore the salt oath. Salt oaths bind.", "salt oath").collect();
        assert_eq!(found, [TextRange::new(13, 22)]);
    }
}

//! Hover: a card's essentials for a name (and the protagonist's profile),
//! a scene's for a scene id (and its beats), a world rule for its name.

use std::fmt::Write;

use super::{Target, target_at};
use crate::index::{CardKind, LifeStatus, Workspace};
use crate::text::TextRange;

/// Markdown describing what is under the cursor, and the range it describes.
pub fn hover(workspace: &Workspace, path: &str, offset: usize) -> Option<(TextRange, String)> {
    let target = target_at(workspace, path, offset)?;
    let catalog = workspace.catalog();
    let mut text = String::new();
    match &target {
        Target::Card { card, .. } => {
            let card = catalog.card(card)?.card()?;
            let kind = match card.kind {
                CardKind::Character => "character",
                CardKind::Location => "location",
                CardKind::Other => &card.type_name,
            };
            let _ = writeln!(text, "**{}** · {kind}", card.display_name());
            if let Some(aliases) = card.alias_list() {
                let _ = writeln!(text, "\nAlso: {aliases}");
            }
            if card.kind == CardKind::Character || card.status != LifeStatus::Alive {
                let _ = write!(text, "\nStatus: {}", card.status.as_str());
                if let Some(died_in) = &card.died_in {
                    let _ = write!(text, " (died in {})", died_in.text);
                }
                text.push('\n');
            }
            if !card.attributes.is_empty() {
                text.push('\n');
                for (key, value) in &card.attributes {
                    let _ = writeln!(text, "- {key}: {}", value.text);
                }
            }
            if let Some(summary) = &card.summary {
                let _ = writeln!(text, "\n{summary}");
            }
            if let Target::Card { card, .. } = &target
                && let Some(profile) = super::bible::protagonist_lines(workspace, card)
            {
                let _ = writeln!(text, "\n{profile}");
            }
        }
        Target::Rule { name, .. } => {
            text = super::bible::rule_hover(workspace, name)?;
        }
        Target::Scene { id, .. } => {
            let _ = write!(text, "**{id}**");
            let scene_file = catalog.scene(id);
            let scene = scene_file.and_then(|file| file.scene());
            if let Some(title) = scene.and_then(|scene| scene.title.as_ref()) {
                let _ = write!(text, " · {title}");
            }
            text.push('\n');
            let entry = catalog
                .outline()
                .and_then(|outline| outline.outline())
                .and_then(|outline| outline.entries.iter().find(|entry| &entry.scene_id == id));
            if let Some(entry) = entry.filter(|entry| !entry.beat.is_empty()) {
                let _ = writeln!(text, "\n{}", entry.beat);
            }
            let beats = super::bible::beats_of_scene(workspace, id);
            if !beats.is_empty() {
                let _ = writeln!(text, "\nBeat sheet: {}", beats.join(", "));
            }
            match scene {
                Some(scene) => {
                    let mut facts = Vec::new();
                    if let Some(pov) = &scene.pov {
                        facts.push(format!("POV {}", pov.text));
                    }
                    if let Some(location) = &scene.location {
                        facts.push(format!("at {}", location.text));
                    }
                    if let Some(date) = &scene.date {
                        facts.push(date.text.clone());
                    }
                    facts.push(match scene.words_target {
                        Some(target) => format!("{} of {target} words", scene.word_count),
                        None => format!("{} words", scene.word_count),
                    });
                    let _ = writeln!(text, "\n{}", facts.join(" · "));
                }
                None => text.push_str("\nNo scene file yet.\n"),
            }
        }
    }
    Some((target.range(), text.trim_end().to_owned()))
}

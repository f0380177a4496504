//! Editor features in the core's terms: what is under the cursor, where it is
//! defined, every place it is mentioned, how to rename it, symbols, folding,
//! completion, word counts, semantic tokens and the story clock's inlay hints. Offsets in, plain data out;
//! `src/lsp/` turns them into protocol types.
//!
//! ## Parts
//!
//! editor features in the core's terms: navigation, rename, hover, completion, word counts,
//! `code_actions` (fixes with the preferred-fix rule, dismiss, conference, remember, runs),
//! `run_actions`, `remember`, `decisions` (consolidation: each decision in force held against
//! the hard facts, its card, the Story Bible and the promoted decisions, through what each
//! plainly claims in `decisions::claims`; a contradiction carries both sides and a fix for
//! each: adopt it, or withdraw it), `inlay_hints` (the story clock's day, time and point of
//! view's age at each scene's heading and after each outline entry), `charts` (the book's
//! pictures as data and as SVG: `presence` who is in which scene, `timeline` story dates
//! against the telling, `beats` the beat sheet against the manuscript, `run` a run's steps in
//! time; `png` rasterises any with resvg; `draw` the one entry point of both front ends),
//! `bible` (a world rule's name as a target, a scene's beats, the protagonist's profile in a
//! hover), `semantic_tokens` (a file's names by kind, its dialogue from the prose layer, and
//! the dead after their death scene in outline order, as byte ranges that never overlap; and
//! the key of what they read of other files).

mod bible;
pub mod book_view;
pub mod charts;
mod code_actions;
mod completion;
mod decisions;
pub mod dictionary;
mod hover;
mod inlay_hints;
mod navigation;
mod outline_view;
mod remember;
mod rename;
mod run_actions;
mod semantic_tokens;

pub use code_actions::{CodeAction, code_actions};
pub use completion::{Completion, CompletionKind, completions};
pub use decisions::{
    CONTRADICTS_BIBLE, CONTRADICTS_CARD, CONTRADICTS_FACT, Contradiction, contradictions,
};
pub use hover::hover;
pub use inlay_hints::{InlayHint, inlay_hints, inlay_hints_key};
pub use navigation::{definition, references};

/// A range in a file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub path: FilePath,
    pub range: TextRange,
}
pub use outline_view::{
    CountOf, Symbol, SymbolKind, WordCount, document_symbols, folding_ranges, word_counts,
    workspace_symbols,
};
pub use remember::decision as remembered;
pub use rename::{RenameError, prepare_rename, rename};
pub use run_actions::{DraftNeed, RunAction, draft_lenses, draft_need, run_actions};
pub use semantic_tokens::{SemanticKind, SemanticToken, semantic_tokens, semantic_tokens_key};

use crate::index::{CardKind, FileContent, FilePath, SourceFile, Workspace};
use crate::text::TextRange;

/// Something the cursor can be on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A card, through one of its names (0 is `name`, 1.. the aliases).
    Card {
        card: FilePath,
        name_index: usize,
        range: TextRange,
    },
    /// A scene, through its id (in the outline, a `died_in`, the beat sheet,
    /// or its own front matter).
    Scene { id: String, range: TextRange },
    /// A world rule of the Story Bible, through its name.
    Rule {
        /// The world rules' file.
        bible: FilePath,
        /// The rule's name as the world rules write it.
        name: String,
        range: TextRange,
    },
}

impl Target {
    pub fn range(&self) -> TextRange {
        match self {
            Target::Card { range, .. }
            | Target::Scene { range, .. }
            | Target::Rule { range, .. } => *range,
        }
    }
}

/// What is at `offset` in `path`: a mention in prose, a front matter name or
/// scene id, a card's own name or alias, or an outline entry's id.
pub fn target_at(workspace: &Workspace, path: &str, offset: usize) -> Option<Target> {
    let file = workspace.file(path)?;
    if let Some(mention) = workspace
        .mentions(path)
        .iter()
        .find(|mention| mention.range.touches(offset))
    {
        return Some(Target::Card {
            card: mention.card.clone(),
            name_index: usize::from(mention.name_index),
            range: mention.range,
        });
    }
    let catalog = workspace.catalog();
    let card_reference = |text: &str, range: TextRange, kinds: &[CardKind]| {
        let card_file = catalog.resolve_card(text, kinds)?;
        let card = card_file.card()?;
        let name_index = card.names().position(|name| name.text == text).unwrap_or(0);
        Some(Target::Card {
            card: card_file.path.clone(),
            name_index,
            range,
        })
    };
    match &file.content {
        FileContent::Scene(scene) => {
            let characters = scene.pov.iter().chain(&scene.characters);
            for reference in characters {
                if reference.range.touches(offset) {
                    return card_reference(
                        &reference.text,
                        reference.range,
                        &[CardKind::Character],
                    );
                }
            }
            if let Some(location) = scene
                .location
                .as_ref()
                .filter(|location| location.range.touches(offset))
            {
                return card_reference(&location.text, location.range, &[CardKind::Location]);
            }
            if let Some(range) = scene.id_range.filter(|range| range.touches(offset)) {
                return Some(Target::Scene {
                    id: scene.id.clone(),
                    range,
                });
            }
        }
        FileContent::Card(card) => {
            if let Some((name_index, name)) = card
                .names()
                .enumerate()
                .find(|(_, name)| name.range.touches(offset))
            {
                return Some(Target::Card {
                    card: file.path.clone(),
                    name_index,
                    range: name.range,
                });
            }
            if let Some(died_in) = card
                .died_in
                .as_ref()
                .filter(|died_in| died_in.range.touches(offset))
            {
                return Some(Target::Scene {
                    id: died_in.text.clone(),
                    range: died_in.range,
                });
            }
        }
        FileContent::Outline(outline) => {
            if let Some(entry) = outline
                .entries
                .iter()
                .find(|entry| entry.id_range.touches(offset))
            {
                return Some(Target::Scene {
                    id: entry.scene_id.clone(),
                    range: entry.id_range,
                });
            }
        }
        FileContent::Bible(bible) => {
            if let Some(id) = bible
                .sections
                .iter()
                .flat_map(|section| &section.scene_ids)
                .find(|id| id.range.touches(offset))
            {
                return Some(Target::Scene {
                    id: id.text.clone(),
                    range: id.range,
                });
            }
            if let Some(character) = bible
                .character
                .as_ref()
                .filter(|character| character.range.touches(offset))
            {
                return card_reference(&character.text, character.range, &[CardKind::Character]);
            }
        }
        FileContent::AntiPatterns(_) | FileContent::VoiceGold(_) | FileContent::Other => {}
    }
    bible::rule_at(workspace, file, offset)
}

/// Where a card's name (or the given alias) is written in its front matter.
fn card_name_range(card_file: &SourceFile, name_index: usize) -> TextRange {
    card_file
        .card()
        .and_then(|card| card.names().nth(name_index).or(card.name.as_ref()))
        .map_or(TextRange::empty(0), |name| name.range)
}

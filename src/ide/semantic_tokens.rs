//! Semantic tokens: what an editor colours in a file of the manuscript.
//!
//! - Each name of a character or location card in the prose (the mentions of
//!   `index::mentions`), and in a scene's `pov`, `characters` and `location`,
//!   as a character or a place. Other canon (objects, factions) is not coloured.
//! - Dialogue, from its opening quote to its closing one (or to the end of its
//!   paragraph), as the prose layer reads it, within the prose ranges only.
//! - `dead` on every name of a dead character in a scene after their death:
//!   judged as `dead-character` judges it (`Catalog::dead_by_outline`): the card says
//!   `status: dead` and `died_in: SCN-x`, SCN-x comes before this scene in the
//!   outline, and this scene is not a flashback (a flashback happens before
//!   the death in story time); or, by the story clock, a character whose
//!   death by date (`died:`, or the `died_in` scene's `date`) is certainly
//!   before the scene's `date`, flashback or not. The death scene itself is not after the death,
//!   and a scene the outline does not list is after nothing. Unlike the check,
//!   talk about the dead is marked too: the mark says who is dead, not that
//!   the prose is wrong.
//!
//! Tokens come in text order and never overlap: a name inside dialogue is the
//! name's, and the dialogue around it is cut in two. Ranges are bytes; `lsp`
//! splits them by line and counts columns in the client's encoding.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::index::model::Spanned;
use crate::index::{Card, CardKind, Catalog, FilePath, LifeStatus, Scene, SourceFile, Workspace};
use crate::prose::{Prose, TokenKind};
use crate::text::TextRange;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SemanticKind {
    /// A name of a character card.
    Character,
    /// A name of a location card.
    Place,
    /// Quoted speech.
    Dialogue,
}

/// One coloured range of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemanticToken {
    pub range: TextRange,
    pub kind: SemanticKind,
    /// A dead character named in a scene after their death scene.
    pub dead: bool,
}

/// The tokens of the file at `path`, in text order, none overlapping another.
pub fn semantic_tokens(workspace: &Workspace, path: &str) -> Vec<SemanticToken> {
    let Some(file) = workspace.file(path) else {
        return Vec::new();
    };
    let catalog = workspace.catalog();
    let dead = dead_before(catalog, file);
    let name = |card: &FilePath, range: TextRange| {
        let kind = match catalog.card(card)?.card()?.kind {
            CardKind::Character => SemanticKind::Character,
            CardKind::Location => SemanticKind::Place,
            CardKind::Other => return None,
        };
        Some(SemanticToken {
            range,
            kind,
            dead: dead.contains(&card),
        })
    };
    let mut names: Vec<SemanticToken> = front_matter_names(catalog, file)
        .into_iter()
        .filter_map(|(card, range)| name(card, range))
        .collect();
    names.extend(
        workspace
            .mentions(path)
            .iter()
            .filter_map(|mention| name(&mention.card, mention.range)),
    );
    names.sort_by_key(|token| token.range.start);
    // A name read both as front matter and as prose (front matter the
    // Markdown parser did not see as such) is coloured once.
    let mut end = 0;
    names.retain(|token| {
        let apart = token.range.start >= end;
        end = end.max(token.range.end);
        apart
    });
    let dialogue = dialogue(&file.analyse_prose())
        .into_iter()
        .flat_map(|speech| file.syntax.prose_in(speech));
    around_names(&file.text, names, dialogue)
}

/// The cards a scene's `pov`, `characters` and `location` name, at the names.
fn front_matter_names<'a>(
    catalog: &'a Catalog,
    file: &'a SourceFile,
) -> Vec<(&'a FilePath, TextRange)> {
    let Some(scene) = file.scene() else {
        return Vec::new();
    };
    let resolve = |reference: &Spanned, kind: CardKind| {
        let card = catalog.resolve_card(&reference.text, &[kind])?;
        Some((&card.path, reference.range))
    };
    let people = scene.pov.iter().chain(&scene.characters);
    people
        .filter_map(|reference| resolve(reference, CardKind::Character))
        .chain(
            scene
                .location
                .iter()
                .filter_map(|reference| resolve(reference, CardKind::Location)),
        )
        .collect()
}

/// The dead characters in `file`'s scene: whose death scene comes before it
/// in the outline (and it is no flashback), or whose death by date
/// (`died:`, or the `died_in` scene's date) is certainly before its `date`.
fn dead_before<'a>(catalog: &'a Catalog, file: &SourceFile) -> Vec<&'a FilePath> {
    let Some(scene) = file.scene() else {
        return Vec::new();
    };
    catalog
        .cards()
        .filter(|(path, card)| {
            catalog.dead_by_outline(card, scene) || dead_by_date(catalog, path, card, scene)
        })
        .map(|(path, _)| path)
        .collect()
}

/// Whether a character's death by date is certainly before the scene's date.
fn dead_by_date(catalog: &Catalog, path: &FilePath, card: &Card, scene: &Scene) -> bool {
    let Some(date) = scene.story_date else {
        return false;
    };
    card.kind == CardKind::Character
        && catalog
            .death_date(path, card)
            .is_some_and(|(died, _, _)| died.is_before(&date))
}

/// Each stretch of dialogue: an opening quote to its closing quote, or to
/// the last quoted token of its paragraph when it is never closed. Tokens
/// read again (a setext heading's text is also a paragraph's) are skipped.
fn dialogue(prose: &Prose) -> Vec<TextRange> {
    let mut spans = Vec::new();
    let mut open: Option<TextRange> = None;
    let mut read = 0;
    for token in &prose.tokens {
        if token.range.start < read {
            continue;
        }
        read = token.range.end;
        if token.kind == TokenKind::OpenQuote {
            spans.extend(open.take());
            open = Some(token.range);
        } else if token.quoted
            && let Some(speech) = &mut open
        {
            speech.end = token.range.end;
        } else {
            spans.extend(open.take());
        }
        if token.kind == TokenKind::CloseQuote {
            spans.extend(open.take());
        }
    }
    spans.extend(open);
    spans
}

/// `names` and the stretches of `dialogue` (sorted, disjoint) in text order,
/// the dialogue cut around the names inside it; blank pieces are left out.
fn around_names(
    text: &str,
    names: Vec<SemanticToken>,
    dialogue: impl Iterator<Item = TextRange>,
) -> Vec<SemanticToken> {
    let mut tokens = Vec::with_capacity(names.len() * 2);
    let mut names = names.into_iter().peekable();
    let mut covered = 0;
    let speech = |tokens: &mut Vec<SemanticToken>, range: TextRange| {
        if !range.slice(text).trim().is_empty() {
            tokens.push(SemanticToken {
                range,
                kind: SemanticKind::Dialogue,
                dead: false,
            });
        }
    };
    for piece in dialogue {
        while let Some(name) = names.next_if(|name| name.range.start < piece.end) {
            let start = covered.max(piece.start);
            if name.range.start > start {
                speech(&mut tokens, TextRange::new(start, name.range.start));
            }
            covered = covered.max(name.range.end);
            tokens.push(name);
        }
        let start = covered.max(piece.start);
        if start < piece.end {
            speech(&mut tokens, TextRange::new(start, piece.end));
        }
    }
    tokens.extend(names);
    tokens
}

/// What a file's tokens read of the other files: who is called what, each
/// card's kind, who is dead since which scene, and the outline's order. When
/// it changes, an editor is asked for the tokens of its open files again.
pub fn semantic_tokens_key(workspace: &Workspace) -> u64 {
    let catalog = workspace.catalog();
    let mut hasher = DefaultHasher::new();
    catalog.names_fingerprint().hash(&mut hasher);
    for (path, card) in catalog.cards() {
        let died_in = card.died_in.as_ref().map(|died_in| &died_in.text);
        (path, card.kind, card.status == LifeStatus::Dead, died_in).hash(&mut hasher);
        // A death by date: the card's `died`, or its death scene's date.
        let death_scene = died_in.and_then(|id| catalog.scene(id)?.scene());
        (&card.died, death_scene.map(|scene| scene.story_date)).hash(&mut hasher);
    }
    if let Some(outline) = catalog.outline().and_then(|file| file.outline()) {
        for entry in &outline.entries {
            entry.scene_id.hash(&mut hasher);
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Workspace {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road");
        Workspace::load(&root)
    }

    /// Each token as (text, kind, dead).
    fn shown(workspace: &Workspace, path: &str) -> Vec<(String, SemanticKind, bool)> {
        let text = &workspace.file(path).unwrap().text;
        semantic_tokens(workspace, path)
            .iter()
            .map(|token| (token.range.slice(text).to_owned(), token.kind, token.dead))
            .collect()
    }

    #[test]
    fn names_by_kind_and_dialogue_cut_around_them() {
        let workspace = example();
        let tokens = shown(&workspace, "Story/Scenes/SCN-the-arrival.md");
        use SemanticKind::*;
        // The front matter: pov, location, the characters with cards (not Brannoc).
        assert_eq!(
            tokens[..4],
            [
                ("Kael Maren".to_owned(), Character, false),
                ("The Glass Flats".to_owned(), Place, false),
                ("Kael".to_owned(), Character, false),
                ("Iria".to_owned(), Character, false),
            ]
        );
        // Aliases too, capitalised at a sentence start.
        assert!(tokens.contains(&("The fortress".to_owned(), Place, false)));
        assert!(tokens.contains(&("the flats".to_owned(), Place, false)));
        let said = tokens
            .iter()
            .position(|token| token.0 == "\"They'll open for this,\"")
            .expect("a line of dialogue whole");
        assert_eq!(tokens[said].1, Dialogue);
        // "Kael Maren. Warden of the road…": the name inside the quotes is the name's.
        let kael = tokens
            .windows(3)
            .find(|three| three[1].0 == "Kael Maren" && three[0].1 == Dialogue)
            .expect("a name inside dialogue");
        assert_eq!(kael[0].0, "\"");
        assert_eq!(kael[2].1, Dialogue);
        assert!(kael[2].0.starts_with(". Warden of the road"), "{kael:?}");
        let ranges = semantic_tokens(&workspace, "Story/Scenes/SCN-the-arrival.md");
        assert!(
            ranges
                .windows(2)
                .all(|pair| pair[0].range.end <= pair[1].range.start),
            "in order, none overlapping"
        );
    }

    #[test]
    fn a_dead_character_is_marked_after_the_death_scene_only() {
        let workspace = example();
        let tomas = |path: &str| -> Vec<bool> {
            shown(&workspace, path)
                .into_iter()
                .filter(|(text, _, _)| text.contains("Tomas"))
                .map(|(_, _, dead)| dead)
                .collect()
        };
        // Before the death and in the death scene itself: alive.
        let before = tomas("Story/Scenes/SCN-the-saltmaster.md");
        assert!(!before.is_empty() && before.iter().all(|dead| !dead));
        let fall = tomas("Story/Scenes/SCN-the-fall.md");
        assert!(!fall.is_empty() && fall.iter().all(|dead| !dead));
        // After it: dead, in the prose (memory and speech alike).
        assert_eq!(tomas("Story/Scenes/SCN-the-vigil.md"), [true]);
        assert_eq!(tomas("Story/Scenes/SCN-the-high-tide.md"), [true]);
        // Only the dead are marked.
        assert!(
            shown(&workspace, "Story/Scenes/SCN-the-high-tide.md")
                .iter()
                .all(|(text, _, dead)| *dead == text.contains("Tomas"))
        );
    }

    #[test]
    fn a_flashback_after_the_death_is_not_marked() {
        let mut workspace = example();
        let path = "Story/Scenes/SCN-the-high-tide.md";
        let text = workspace
            .file(path)
            .unwrap()
            .text
            .replace("words: 450\n", "words: 450\nflashback: true\n");
        let paths = workspace.config().paths.clone();
        let marked = |workspace: &Workspace| {
            shown(workspace, path)
                .into_iter()
                .filter(|(_, _, dead)| *dead)
                .count()
        };
        // Dated before the death (the 14th): nobody is dead yet.
        let before = text.replace("date: 1203-04-16", "date: 1203-04-13");
        workspace.insert_file(SourceFile::parse(path.into(), before.into(), &paths));
        assert_eq!(marked(&workspace), 0);
        // Dated after it, a flashback still happens after the death.
        workspace.insert_file(SourceFile::parse(path.into(), text.into(), &paths));
        assert!(marked(&workspace) > 0);
    }

    #[test]
    fn unclosed_and_curly_dialogue_and_blank_pieces() {
        let mut workspace = example();
        let path = "Story/Scenes/SCN-the-vigil.md";
        let paths = workspace.config().paths.clone();
        let text = "---\ntitle: The Vigil\n---\n\n“Kael,” she said. “Iria and\nKael Maren walked on.\n\n“Gone";
        workspace.insert_file(SourceFile::parse(path.into(), text.into(), &paths));
        use SemanticKind::*;
        assert_eq!(
            shown(&workspace, path),
            [
                ("“".to_owned(), Dialogue, false),
                ("Kael".to_owned(), Character, false),
                (",”".to_owned(), Dialogue, false),
                ("“".to_owned(), Dialogue, false),
                ("Iria".to_owned(), Character, false),
                (" and\n".to_owned(), Dialogue, false),
                ("Kael Maren".to_owned(), Character, false),
                (" walked on.".to_owned(), Dialogue, false),
                ("“Gone".to_owned(), Dialogue, false),
            ]
        );
    }

    #[test]
    fn a_setext_headings_text_read_twice_gives_its_dialogue_once() {
        let mut workspace = example();
        let path = "Story/Scenes/SCN-the-vigil.md";
        let paths = workspace.config().paths.clone();
        let text = "\"One\" and \"two\"\n---\n\nProse.\n";
        workspace.insert_file(SourceFile::parse(path.into(), text.into(), &paths));
        let dialogue: Vec<String> = shown(&workspace, path)
            .into_iter()
            .map(|(text, _, _)| text)
            .collect();
        assert_eq!(dialogue, ["\"One\"", "\"two\""]);
    }

    #[test]
    fn a_name_read_as_front_matter_and_as_prose_is_coloured_once() {
        let mut workspace = example();
        let path = "Story/Scenes/SCN-the-vigil.md";
        let paths = workspace.config().paths.clone();
        // Front matter at the very end, without its line break.
        let text = "---\nid: SCN-the-vigil\npov: Kael Maren\n---";
        workspace.insert_file(SourceFile::parse(path.into(), text.into(), &paths));
        let names: Vec<String> = shown(&workspace, path)
            .into_iter()
            .map(|(text, _, _)| text)
            .collect();
        assert_eq!(names, ["Kael Maren"]);
    }

    #[test]
    fn a_character_dead_by_date_is_marked_in_the_scenes_dated_after() {
        let mut workspace = example();
        let paths = workspace.config().paths.clone();
        let card = "Compendium/Characters/CHAR-ysolde-harrow.md";
        let key = semantic_tokens_key(&workspace);
        let text = workspace
            .file(card)
            .unwrap()
            .text
            .replace("status: alive\n", "status: alive\ndied: 1203-04-13\n");
        workspace.insert_file(SourceFile::parse(card.into(), text.into(), &paths));
        assert_ne!(semantic_tokens_key(&workspace), key, "the editor is told");
        let ysolde = |path: &str| -> Vec<bool> {
            shown(&workspace, path)
                .into_iter()
                .filter(|(text, _, _)| text.contains("Ysolde"))
                .map(|(_, _, dead)| dead)
                .collect()
        };
        // The gate is on the 12th, the high tide on the 16th.
        let gate = ysolde("Story/Scenes/SCN-the-gate.md");
        assert!(
            !gate.is_empty() && gate.iter().all(|dead| !dead),
            "{gate:?}"
        );
        let tide = ysolde("Story/Scenes/SCN-the-high-tide.md");
        assert!(
            !tide.is_empty() && tide.iter().all(|dead| *dead),
            "{tide:?}"
        );
    }

    #[test]
    fn the_key_changes_with_a_death_and_not_with_prose() {
        let mut workspace = example();
        let key = semantic_tokens_key(&workspace);
        let paths = workspace.config().paths.clone();
        let scene = "Story/Scenes/SCN-the-gate.md";
        let text = format!("{}\nMore prose.\n", workspace.file(scene).unwrap().text);
        workspace.insert_file(SourceFile::parse(scene.into(), text.into(), &paths));
        assert_eq!(semantic_tokens_key(&workspace), key);
        let card = "Compendium/Characters/CHAR-iria-vell.md";
        let text = workspace
            .file(card)
            .unwrap()
            .text
            .replace("status: alive\n", "status: dead\ndied_in: SCN-the-fall\n");
        workspace.insert_file(SourceFile::parse(card.into(), text.into(), &paths));
        assert_ne!(semantic_tokens_key(&workspace), key);
    }
}

//! The book as the editor's side bar shows it: the outline's chapters in
//! story order, each with its scenes (words against target, point of view,
//! date; a scene the outline lists that no file holds yet is marked
//! missing), and the scene files the outline does not list ([`outline`]);
//! the cards, each with the scenes it is in ([`cast`]). Plain data; the
//! VS Code extension draws it as trees, Neovim as lists.

use serde::Serialize;

use crate::index::Workspace;
use crate::index::book::Book;
use crate::stats;

/// The book's outline, for a side bar.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutlineView {
    pub title: String,
    /// In story order. Scenes the outline lists under no chapter heading are
    /// a first chapter whose title is empty.
    pub chapters: Vec<ChapterView>,
    /// Scene files the outline does not list.
    pub unlisted: Vec<SceneView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChapterView {
    pub title: String,
    pub words: usize,
    pub target: Option<u32>,
    pub scenes: Vec<SceneView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SceneView {
    pub id: String,
    /// The scene's `title`, else its id.
    pub title: String,
    /// Its file, relative to the root; `None` when nobody wrote it yet.
    pub path: Option<String>,
    pub words: usize,
    pub target: Option<u32>,
    /// "387 / 400 words", "387 words".
    pub label: String,
    pub pov: Option<String>,
    /// The scene's `date` (and `time`), as written.
    pub date: Option<String>,
    /// Listed in the outline, but no file holds it yet.
    pub missing: bool,
}

/// The outline of `workspace`'s book.
pub fn outline(workspace: &Workspace) -> OutlineView {
    let book = Book::of(workspace);
    let progress = stats::progress(workspace);
    let listed = |at: usize| {
        let counted = &progress.scenes[at];
        let scene = book.scenes[at].file.as_ref().and_then(|file| file.scene());
        scene_view(&counted.id, counted.path.clone(), scene, &counted.count)
    };
    let mut chapters: Vec<ChapterView> = Vec::new();
    let in_chapters: std::collections::HashSet<usize> = progress
        .chapters
        .iter()
        .flat_map(|chapter| chapter.scenes.iter().copied())
        .collect();
    let loose: Vec<usize> = (0..progress.scenes.len())
        .filter(|at| !in_chapters.contains(at))
        .collect();
    if !loose.is_empty() {
        chapters.push(ChapterView {
            title: String::new(),
            words: loose
                .iter()
                .map(|at| progress.scenes[*at].count.words)
                .sum(),
            target: None,
            scenes: loose.into_iter().map(listed).collect(),
        });
    }
    chapters.extend(progress.chapters.iter().map(|chapter| ChapterView {
        title: chapter.title.clone(),
        words: chapter.count.words,
        target: chapter.count.target,
        scenes: chapter.scenes.iter().map(|at| listed(*at)).collect(),
    }));
    let unlisted = progress
        .unlisted
        .iter()
        .filter_map(|path| {
            let scene = workspace.file(path)?.scene()?;
            let count = stats::Count {
                words: scene.word_count,
                target: stats::scene_target(workspace, scene.words_target).0,
            };
            Some(scene_view(
                &scene.id,
                Some(path.clone()),
                Some(scene),
                &count,
            ))
        })
        .collect();
    OutlineView {
        title: book.title(workspace),
        chapters,
        unlisted,
    }
}

/// A scene as the side bar shows it: `path` is `None` for a scene the
/// outline lists that no file holds yet, and `scene` its front matter.
fn scene_view(
    id: &str,
    path: Option<String>,
    scene: Option<&crate::index::Scene>,
    count: &stats::Count,
) -> SceneView {
    SceneView {
        id: id.to_owned(),
        title: scene
            .and_then(|scene| scene.title.clone())
            .unwrap_or_else(|| id.to_owned()),
        missing: path.is_none(),
        path,
        words: count.words,
        target: count.target,
        label: count.label(),
        pov: scene
            .and_then(|scene| scene.pov.as_ref())
            .map(|pov| pov.text.clone()),
        date: scene.and_then(when),
    }
}

/// One card of the cast and places.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CardView {
    /// "character", "location" or "other".
    pub kind: &'static str,
    pub name: String,
    pub path: String,
    /// Where the card writes its name (for "Show mentions"), when it does.
    #[serde(skip)]
    pub name_range: Option<crate::text::TextRange>,
    /// How many scenes name it in their prose, list it in `characters`,
    /// are told from it or set at it.
    pub scenes: usize,
}

/// Every card, characters first, then places, then the rest; each kind by
/// how many scenes it is in, most first, then by name.
pub fn cast(workspace: &Workspace) -> Vec<CardView> {
    use crate::index::CardKind;
    use std::collections::{HashMap, HashSet};
    let catalog = workspace.catalog();
    let mut in_scenes: HashMap<&str, usize> = HashMap::new();
    for (file, scene) in catalog.scenes() {
        let mut here: HashSet<&str> = workspace
            .mentions(&file.path)
            .iter()
            .map(|mention| &*mention.card)
            .collect();
        let named = scene
            .characters
            .iter()
            .chain(&scene.pov)
            .chain(&scene.location)
            .filter_map(|name| {
                catalog.resolve_card(&name.text, &[CardKind::Character, CardKind::Location])
            });
        here.extend(named.map(|card| &*card.path));
        for card in here {
            *in_scenes.entry(card).or_default() += 1;
        }
    }
    let mut cards: Vec<CardView> = catalog
        .cards()
        .map(|(path, card)| CardView {
            kind: match card.kind {
                CardKind::Character => "character",
                CardKind::Location => "location",
                CardKind::Other => "other",
            },
            name: card.display_name().to_owned(),
            path: path.to_string(),
            name_range: card.name.as_ref().map(|name| name.range),
            scenes: in_scenes.get(&**path).copied().unwrap_or(0),
        })
        .collect();
    let order = |kind: &str| match kind {
        "character" => 0,
        "location" => 1,
        _ => 2,
    };
    cards.sort_by(|a, b| {
        (order(a.kind), std::cmp::Reverse(a.scenes), &a.name).cmp(&(
            order(b.kind),
            std::cmp::Reverse(b.scenes),
            &b.name,
        ))
    });
    cards
}

/// "1203-04-12, dusk": the scene's date and time as written.
fn when(scene: &crate::index::Scene) -> Option<String> {
    match (&scene.date, &scene.time) {
        (Some(date), Some(time)) => Some(format!("{}, {}", date.text, time.text)),
        (Some(date), None) => Some(date.text.clone()),
        (None, Some(time)) => Some(time.text.clone()),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SourceFile;
    use crate::index::config::PathsConfig;

    #[test]
    fn chapters_hold_their_scenes_in_story_order_and_a_missing_one_is_marked() {
        let mut workspace = Workspace::new(std::path::Path::new("/novel"));
        let file = |path: &str, text: &str| {
            SourceFile::parse(path.into(), text.into(), &PathsConfig::default())
        };
        workspace.insert_files(vec![
            file(
                "Story/SCN-outline.md",
                "# The Book\n\n- SCN-prologue: before.\n\n## One\n\n- SCN-a: first.\n- SCN-b: second.\n\n## Two\n\n- SCN-c: third.\n",
            ),
            file("Story/Scenes/SCN-prologue.md", "---\ntitle: Before\n---\n\nIt began.\n"),
            file(
                "Story/Scenes/SCN-a.md",
                "---\ntitle: The Gate\npov: Iria\ndate: 1203-04-12\ntime: dusk\nwords: 10\n---\n\nOne two three.\n",
            ),
            file("Story/Scenes/SCN-b.md", "---\npov: Kael\n---\n\nFour five.\n"),
            file("Story/Scenes/SCN-stray.md", "---\ntitle: Stray\n---\n\nSix.\n"),
        ]);
        let view = outline(&workspace);
        assert_eq!(view.title, "The Book");
        let chapters: Vec<(&str, Vec<&str>)> = view
            .chapters
            .iter()
            .map(|chapter| {
                let scenes = chapter
                    .scenes
                    .iter()
                    .map(|scene| scene.title.as_str())
                    .collect();
                (chapter.title.as_str(), scenes)
            })
            .collect();
        assert_eq!(
            chapters,
            [
                ("", vec!["Before"]),
                ("One", vec!["The Gate", "SCN-b"]),
                ("Two", vec!["SCN-c"])
            ]
        );
        let gate = &view.chapters[1].scenes[0];
        assert_eq!(gate.words, 3);
        assert_eq!(gate.target, Some(10));
        assert_eq!(gate.pov.as_deref(), Some("Iria"));
        assert_eq!(gate.date.as_deref(), Some("1203-04-12, dusk"));
        assert_eq!(gate.path.as_deref(), Some("Story/Scenes/SCN-a.md"));
        assert!(!gate.missing);
        assert_eq!(view.chapters[1].words, 5);
        let missing = &view.chapters[2].scenes[0];
        assert!(missing.missing && missing.path.is_none());
        let unlisted: Vec<&str> = view
            .unlisted
            .iter()
            .map(|scene| scene.title.as_str())
            .collect();
        assert_eq!(unlisted, ["Stray"]);
    }

    #[test]
    fn the_cast_counts_the_scenes_that_name_list_or_are_told_from_each_card() {
        let mut workspace = Workspace::new(std::path::Path::new("/novel"));
        let file = |path: &str, text: &str| {
            SourceFile::parse(path.into(), text.into(), &PathsConfig::default())
        };
        workspace.insert_files(vec![
            file(
                "Compendium/Characters/CHAR-iria.md",
                "---\ntype: character\nname: Iria\n---\n\n# Iria\n",
            ),
            file(
                "Compendium/Characters/CHAR-kael.md",
                "---\ntype: character\nname: Kael\n---\n\n# Kael\n",
            ),
            file(
                "Compendium/Locations/LOC-gate.md",
                "---\ntype: location\nname: The Gate\n---\n\n# The Gate\n",
            ),
            file(
                "Story/Scenes/SCN-a.md",
                "---\npov: Iria\nlocation: The Gate\n---\n\nShe waited.\n",
            ),
            file(
                "Story/Scenes/SCN-b.md",
                "---\ncharacters: [Iria]\n---\n\nKael came. Iria smiled.\n",
            ),
        ]);
        let found: Vec<(&str, String, usize)> = cast(&workspace)
            .into_iter()
            .map(|card| (card.kind, card.name, card.scenes))
            .collect();
        assert_eq!(
            found,
            [
                ("character", "Iria".to_owned(), 2),
                ("character", "Kael".to_owned(), 1),
                ("location", "The Gate".to_owned(), 1)
            ]
        );
    }
}

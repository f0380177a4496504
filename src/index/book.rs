//! The book as the outline orders it: its title, its scenes in story order,
//! and the headings (parts, chapters) each scene stands under. Compiling,
//! word targets and statistics read the manuscript's structure from here.
//!
//! A heading of the outline holds the entries of its section. The outline's
//! single top heading is the book's title when it holds every entry and has
//! headings under it (`# The Salt Road` over `## Chapter 1…`); a lone
//! `# Chapter 1` over a list of scenes stays a chapter. A scene listed twice
//! counts at its first entry.

use std::collections::HashSet;
use std::sync::Arc;

use super::file::SourceFile;
use super::model::Outline;
use super::workspace::Workspace;

/// The manuscript's structure.
#[derive(Clone, Debug, Default)]
pub struct Book {
    /// The outline's heading that names the whole book, if it has one.
    pub title_heading: Option<usize>,
    /// The scenes in story order.
    pub scenes: Vec<BookScene>,
    /// Whether the order is the outline's (else the scene files' paths, as
    /// when there is no outline).
    pub from_outline: bool,
}

/// One scene of the book.
#[derive(Clone, Debug)]
pub struct BookScene {
    pub scene_id: String,
    /// Its outline entry, when the book comes from the outline.
    pub entry: Option<usize>,
    /// The outline headings it stands under, outermost first, the title
    /// heading left out (indices into [`Outline::headings`]).
    pub headings: Vec<usize>,
    /// Its file; `None` when the outline lists a scene nobody wrote yet.
    pub file: Option<Arc<SourceFile>>,
}

impl BookScene {
    /// The chapter: the nearest heading above the scene.
    pub fn chapter(&self) -> Option<usize> {
        self.headings.last().copied()
    }

    pub fn word_count(&self) -> usize {
        self.file
            .as_ref()
            .and_then(|file| file.scene())
            .map_or(0, |scene| scene.word_count)
    }
}

impl Book {
    /// Reads the book's structure from the workspace's outline; without
    /// one, every scene file in path order, under no heading.
    pub fn of(workspace: &Workspace) -> Book {
        let catalog = workspace.catalog();
        let Some(outline) = catalog.outline().and_then(|file| file.outline()) else {
            return Book {
                title_heading: None,
                scenes: catalog
                    .scenes()
                    .map(|(file, scene)| BookScene {
                        scene_id: scene.id.clone(),
                        entry: None,
                        headings: Vec::new(),
                        file: Some(file.clone()),
                    })
                    .collect(),
                from_outline: false,
            };
        };
        let title_heading = title_heading(outline);
        let mut seen = HashSet::new();
        let scenes = outline
            .entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| seen.insert(entry.scene_id.as_str()))
            .map(|(index, entry)| {
                let mut headings: Vec<usize> = outline
                    .headings
                    .iter()
                    .enumerate()
                    .filter(|(at, heading)| {
                        Some(*at) != title_heading
                            && heading.section.start <= entry.range.start
                            && entry.range.start < heading.section.end
                    })
                    .map(|(at, _)| at)
                    .collect();
                headings.sort_by_key(|at| (outline.headings[*at].level, *at));
                BookScene {
                    scene_id: entry.scene_id.clone(),
                    entry: Some(index),
                    headings,
                    file: catalog.scene(&entry.scene_id).cloned(),
                }
            })
            .collect();
        Book {
            title_heading,
            scenes,
            from_outline: true,
        }
    }

    /// The chapters in story order: each heading that is some scene's
    /// nearest heading, with its scenes' indices.
    pub fn chapters(&self) -> Vec<(usize, Vec<usize>)> {
        let mut chapters: Vec<(usize, Vec<usize>)> = Vec::new();
        for (index, scene) in self.scenes.iter().enumerate() {
            let Some(chapter) = scene.chapter() else {
                continue;
            };
            match chapters.iter_mut().find(|(heading, _)| *heading == chapter) {
                Some((_, scenes)) => scenes.push(index),
                None => chapters.push((chapter, vec![index])),
            }
        }
        chapters
    }

    /// Words of prose in every scene of the book.
    pub fn word_count(&self) -> usize {
        self.scenes.iter().map(BookScene::word_count).sum()
    }

    /// The book's title: `[manuscript] title`, else the outline's title
    /// heading, else the manuscript folder's name.
    pub fn title(&self, workspace: &Workspace) -> String {
        let from_outline = self.title_heading.and_then(|index| {
            let outline = workspace.catalog().outline()?.outline()?;
            Some(outline.headings.get(index)?.title.clone())
        });
        workspace
            .config()
            .manuscript
            .title
            .clone()
            .or(from_outline)
            .filter(|title| !title.trim().is_empty())
            .unwrap_or_else(|| {
                workspace.root().file_name().map_or_else(
                    || "Manuscript".to_owned(),
                    |name| name.to_string_lossy().into_owned(),
                )
            })
    }
}

/// The outline's heading that is the book's title: the only heading of the
/// top level, holding every entry, with headings under it.
fn title_heading(outline: &Outline) -> Option<usize> {
    let top = outline.headings.iter().map(|heading| heading.level).min()?;
    let mut at_top = outline
        .headings
        .iter()
        .enumerate()
        .filter(|(_, heading)| heading.level == top);
    let (index, heading) = at_top.next()?;
    if at_top.next().is_some() {
        return None;
    }
    let holds_every_entry = outline.entries.iter().all(|entry| {
        heading.section.start <= entry.range.start && entry.range.start < heading.section.end
    });
    let has_headings_under = outline.headings.iter().any(|other| other.level > top);
    (holds_every_entry && has_headings_under).then_some(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SourceFile;
    use crate::index::config::PathsConfig;

    fn workspace(outline: &str, scenes: &[&str]) -> Workspace {
        let mut workspace = Workspace::new(std::path::Path::new("/nowhere"));
        let paths = PathsConfig::default();
        let mut files = vec![SourceFile::parse(
            "Story/SCN-outline.md".into(),
            outline.into(),
            &paths,
        )];
        for id in scenes {
            files.push(SourceFile::parse(
                format!("Story/Scenes/{id}.md").into(),
                "Some words here.\n".into(),
                &paths,
            ));
        }
        workspace.insert_files(files);
        workspace
    }

    #[test]
    fn a_top_heading_over_chapters_is_the_title_and_scenes_stand_under_chapters() {
        let outline = "# The Book\n\n## One\n\n- SCN-a: a\n- SCN-b: b\n\n## Two\n\n- SCN-c: c\n- SCN-a: again\n";
        let workspace = workspace(outline, &["SCN-a", "SCN-b"]);
        let book = Book::of(&workspace);
        let file = workspace.catalog().outline().unwrap();
        let headings = &file.outline().unwrap().headings;
        assert_eq!(headings[book.title_heading.unwrap()].title, "The Book");
        let ids: Vec<&str> = book.scenes.iter().map(|s| s.scene_id.as_str()).collect();
        assert_eq!(ids, ["SCN-a", "SCN-b", "SCN-c"]);
        assert!(book.scenes[2].file.is_none(), "SCN-c has no file");
        let chapters: Vec<(&str, usize)> = book
            .chapters()
            .iter()
            .map(|(heading, scenes)| (headings[*heading].title.as_str(), scenes.len()))
            .collect();
        assert_eq!(chapters, [("One", 2), ("Two", 1)]);
        assert_eq!(book.word_count(), 6);
    }

    #[test]
    fn a_lone_chapter_heading_is_no_title_and_no_outline_means_path_order() {
        let workspace = workspace("# Chapter 1\n\n- SCN-b\n- SCN-a\n", &["SCN-a", "SCN-b"]);
        let book = Book::of(&workspace);
        assert_eq!(book.title_heading, None);
        assert_eq!(book.chapters().len(), 1);
        assert_eq!(book.scenes[0].scene_id, "SCN-b");
        let mut bare = Workspace::new(std::path::Path::new("/nowhere"));
        bare.insert_files(vec![SourceFile::parse(
            "Story/Scenes/SCN-z.md".into(),
            "Words.\n".into(),
            &PathsConfig::default(),
        )]);
        let book = Book::of(&bare);
        assert!(!book.from_outline);
        assert_eq!(book.scenes.len(), 1);
        assert!(book.chapters().is_empty());
    }
}

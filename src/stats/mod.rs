//! The writer's instruments: words against targets for each scene, chapter
//! and the whole manuscript (`progress`), words written per day from git
//! (`history`), the manuscript's most repeated phrases (`phrases`), and where
//! the beat sheet's beats land in the book (`beats`).
//!
//! A scene's target is its front matter's `words:` (or `target:`), else
//! `[targets] scene`; a chapter's is `[targets] chapter`; the manuscript's
//! `[targets] manuscript`, else the sum of its scenes' targets when every
//! scene has one.
//!
//! ## Parts
//!
//! the writer's instruments: `progress` (words of each scene, chapter and the book against
//! their targets, from `index::book` and `[targets]`), `history` (words per day: the scenes'
//! words at the last commit before each midnight, read with `git ls-tree` and one `git cat-file
//! --batch`, each blob counted once), `phrases` (the manuscript's most repeated phrases),
//! `beats` (where the beat sheet's beats land: the share of the book each is expected at
//! against the words before and through the scenes it names).

pub mod beats;
pub mod history;
pub mod phrases;

use serde::Serialize;

use crate::index::{Book, Workspace};

/// Words against a target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Count {
    pub words: usize,
    pub target: Option<u32>,
}

impl Count {
    /// How far along, in whole percent (`None` without a target).
    pub fn percent(&self) -> Option<u32> {
        let target = self.target.filter(|target| *target > 0)?;
        Some((self.words as f64 / f64::from(target) * 100.0).round() as u32)
    }

    /// "1,234 / 2,500 words (49%)", or "1,234 words" without a target.
    pub fn label(&self) -> String {
        match (self.target, self.percent()) {
            (Some(target), Some(percent)) => format!(
                "{} / {} words ({percent}%)",
                grouped(self.words),
                grouped(target as usize)
            ),
            _ => format!("{} words", grouped(self.words)),
        }
    }
}

/// `12345` → `12,345`.
pub fn grouped(n: usize) -> String {
    crate::text::grouped(n as u64)
}

/// A signed count of words: `+350`, `−20` (a true minus sign), `0`.
pub fn signed(n: i64) -> String {
    match n {
        0 => "0".to_owned(),
        n if n > 0 => format!("+{}", grouped(n as usize)),
        n => format!("−{}", grouped(n.unsigned_abs() as usize)),
    }
}

/// One scene's progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SceneProgress {
    pub id: String,
    /// Its file, relative to the root; `None` when nobody wrote it yet.
    pub path: Option<String>,
    #[serde(flatten)]
    pub count: Count,
    /// Whether the target is the scene's own (else `[targets] scene`).
    pub own_target: bool,
}

/// One chapter's progress: an outline heading that holds scenes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChapterProgress {
    pub title: String,
    /// Index into the outline's headings.
    #[serde(skip)]
    pub heading: usize,
    #[serde(flatten)]
    pub count: Count,
    /// Indices into [`Progress::scenes`].
    #[serde(skip)]
    pub scenes: Vec<usize>,
}

/// The manuscript's progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Progress {
    pub scenes: Vec<SceneProgress>,
    pub chapters: Vec<ChapterProgress>,
    pub total: Count,
    /// Scene files the outline does not list (counted in no total).
    pub unlisted: Vec<String>,
}

/// The target of a scene: its own, else the configured default.
pub fn scene_target(workspace: &Workspace, own: Option<u32>) -> (Option<u32>, bool) {
    match own {
        Some(target) => (Some(target), true),
        None => (workspace.config().targets.scene, false),
    }
}

/// Words against targets across the book.
pub fn progress(workspace: &Workspace) -> Progress {
    let book = Book::of(workspace);
    let targets = &workspace.config().targets;
    let scenes: Vec<SceneProgress> = book
        .scenes
        .iter()
        .map(|scene| {
            let own = scene
                .file
                .as_ref()
                .and_then(|file| file.scene())
                .and_then(|scene| scene.words_target);
            let (target, own_target) = scene_target(workspace, own);
            SceneProgress {
                id: scene.scene_id.clone(),
                path: scene.file.as_ref().map(|file| file.path.to_string()),
                count: Count {
                    words: scene.word_count(),
                    target,
                },
                own_target,
            }
        })
        .collect();
    let outline = workspace
        .catalog()
        .outline()
        .and_then(|file| file.outline());
    let chapters = book
        .chapters()
        .into_iter()
        .map(|(heading, members)| ChapterProgress {
            title: outline
                .and_then(|outline| outline.headings.get(heading))
                .map_or_else(String::new, |heading| heading.title.clone()),
            heading,
            count: Count {
                words: members.iter().map(|at| scenes[*at].count.words).sum(),
                target: targets.chapter,
            },
            scenes: members,
        })
        .collect();
    let words = scenes.iter().map(|scene| scene.count.words).sum();
    let summed: Option<u32> = scenes
        .iter()
        .map(|scene| scene.count.target)
        .try_fold(0u32, |sum, target| Some(sum.saturating_add(target?)))
        .filter(|sum| *sum > 0);
    let listed: std::collections::HashSet<&str> =
        scenes.iter().map(|scene| scene.id.as_str()).collect();
    let unlisted = if book.from_outline {
        workspace
            .catalog()
            .scenes()
            .filter(|(_, scene)| !listed.contains(scene.id.as_str()))
            .map(|(file, _)| file.path.to_string())
            .collect()
    } else {
        Vec::new()
    };
    Progress {
        scenes,
        chapters,
        total: Count {
            words,
            target: targets.manuscript.or(summed),
        },
        unlisted,
    }
}

/// Words of prose in every scene file of the workspace, listed in the
/// outline or not: what a session's and a day's count compare.
pub fn scene_words(workspace: &Workspace) -> usize {
    workspace
        .catalog()
        .scenes()
        .map(|(_, scene)| scene.word_count)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SourceFile;

    fn workspace(config: &str, files: &[(&str, &str)]) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("control-room.toml"), config).unwrap();
        let mut workspace = Workspace::new(dir.path());
        let paths = workspace.config().paths.clone();
        workspace.insert_files(
            files
                .iter()
                .map(|(path, text)| SourceFile::parse((*path).into(), (*text).into(), &paths))
                .collect(),
        );
        workspace
    }

    #[test]
    fn scenes_chapters_and_the_manuscript_count_against_their_targets() {
        let workspace = workspace(
            "[targets]\nscene = 10\nchapter = 20\n",
            &[
                (
                    "Story/SCN-outline.md",
                    "# Book\n\n## One\n\n- SCN-a\n- SCN-b\n\n## Two\n\n- SCN-c\n",
                ),
                (
                    "Story/Scenes/SCN-a.md",
                    "---\nwords: 4\n---\nOne two three.\n",
                ),
                ("Story/Scenes/SCN-b.md", "---\ntarget: 8\n---\nFour five.\n"),
                ("Story/Scenes/SCN-x.md", "Not listed here.\n"),
            ],
        );
        let progress = progress(&workspace);
        let scenes: Vec<(&str, usize, Option<u32>, bool)> = progress
            .scenes
            .iter()
            .map(|s| (s.id.as_str(), s.count.words, s.count.target, s.own_target))
            .collect();
        assert_eq!(
            scenes,
            [
                ("SCN-a", 3, Some(4), true),
                ("SCN-b", 2, Some(8), true),
                ("SCN-c", 0, Some(10), false),
            ]
        );
        assert_eq!(progress.chapters.len(), 2);
        assert_eq!(progress.chapters[0].title, "One");
        assert_eq!(progress.chapters[0].count.label(), "5 / 20 words (25%)");
        assert_eq!(progress.total.words, 5);
        assert_eq!(
            progress.total.target,
            Some(22),
            "the scenes' targets summed"
        );
        assert_eq!(progress.unlisted, ["Story/Scenes/SCN-x.md"]);
        assert_eq!(scene_words(&workspace), 8);
    }

    #[test]
    fn numbers_read_as_a_writer_writes_them() {
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(signed(1200), "+1,200");
        assert_eq!(signed(-5), "−5");
        assert_eq!(
            Count {
                words: 1234,
                target: Some(2500)
            }
            .label(),
            "1,234 / 2,500 words (49%)"
        );
        assert_eq!(
            Count {
                words: 3,
                target: None
            }
            .label(),
            "3 words"
        );
    }
}

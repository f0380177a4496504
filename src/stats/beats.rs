//! Where the beat sheet's beats land in the manuscript: each beat's share
//! of the book the 15-beat sheet expects (the Catalyst at 10–12%…) against
//! where the scenes it names stand, as a share of the manuscript's words
//! in the outline's order (from the words before its first scene to the
//! words up to the end of its last). A beat that names no scene, or only
//! scenes the outline does not list, has no place yet.

use serde::Serialize;

use crate::index::bible::BibleKind;
use crate::index::{Book, Workspace};

/// One beat of the beat sheet, and where it lands.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BeatPlace {
    /// Its number in the sheet, from 1.
    pub number: usize,
    pub title: &'static str,
    /// The share of the book where the sheet expects it, in percent.
    pub expected: (u8, u8),
    /// The scenes the beat names, as written.
    pub scenes: Vec<String>,
    /// Where those scenes stand, in percent of the manuscript's words;
    /// `None` when it names none the outline lists, or nothing is written.
    pub actual: Option<(f64, f64)>,
}

impl BeatPlace {
    /// Whether the beat lands more than `tolerance` points outside its
    /// expected share: the one rule the health report and the beat chart
    /// both judge by (`[health] beat_tolerance`).
    pub fn is_off(&self, tolerance: f64) -> bool {
        self.off_by().is_some_and(|off| off > tolerance)
    }

    /// How far the beat lands outside its expected share, in points of
    /// percent (0 inside it); `None` without a place.
    pub fn off_by(&self) -> Option<f64> {
        let (from, to) = (f64::from(self.expected.0), f64::from(self.expected.1));
        let (start, _) = self.actual?;
        Some(if start < from {
            from - start
        } else if start > to {
            start - to
        } else {
            0.0
        })
    }
}

/// The beats of the project's beat sheet with where each lands; `None`
/// without a beat sheet.
pub fn beat_places(workspace: &Workspace) -> Option<Vec<BeatPlace>> {
    let catalog = workspace.catalog();
    let file = catalog.bible(BibleKind::BeatSheet)?;
    let bible = file.bible()?;
    let book = Book::of(workspace);
    let total = book.word_count();
    // Each scene's place: the words before it and the words up to its end.
    let mut before = 0;
    let places: Vec<(&str, usize, usize)> = book
        .scenes
        .iter()
        .map(|scene| {
            let start = before;
            before += scene.word_count();
            (scene.scene_id.as_str(), start, before)
        })
        .collect();
    let share = |words: usize| 100.0 * words as f64 / total as f64;
    let beats = bible
        .parts
        .iter()
        .enumerate()
        .filter_map(|(at, part)| {
            let expected = part.spec.share?;
            let scenes: Vec<String> = part
                .section
                .map(|section| {
                    bible.sections[section]
                        .scene_ids
                        .iter()
                        .map(|id| id.text.clone())
                        .collect()
                })
                .unwrap_or_default();
            let named: Vec<&(&str, usize, usize)> = places
                .iter()
                .filter(|(id, ..)| scenes.iter().any(|scene| scene == id))
                .collect();
            let actual = (total > 0 && !named.is_empty()).then(|| {
                let start = named.iter().map(|(_, start, _)| *start).min().unwrap_or(0);
                let end = named.iter().map(|(.., end)| *end).max().unwrap_or(0);
                (share(start), share(end))
            });
            Some(BeatPlace {
                number: at + 1,
                title: part.spec.title,
                expected,
                scenes,
                actual,
            })
        })
        .collect();
    Some(beats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_beat_lands_where_its_scenes_stand_in_the_words_of_the_book() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("control-room.toml", "");
        write(
            "Story/SCN-outline.md",
            "# Outline\n\n- SCN-one: a start\n- SCN-two: a turn\n- SCN-three: an end\n",
        );
        for (id, words) in [("SCN-one", 100), ("SCN-two", 100), ("SCN-three", 200)] {
            write(
                &format!("Story/Scenes/{id}.md"),
                &format!("---\nid: {id}\n---\n\n{}\n", "word ".repeat(words)),
            );
        }
        write(
            "Story/Bible/beat-sheet.md",
            "---\ntype: beat_sheet\nstatus: draft\n---\n\n# Beat Sheet\n\n## Opening Image\n\nThe road. SCN-one\n\n## Catalyst\n\nThe turn. SCN-two\n\n## Final Image\n\nNothing yet.\n",
        );
        let workspace = Workspace::load(root);
        let beats = beat_places(&workspace).expect("a beat sheet");
        let opening = beats.iter().find(|b| b.title == "Opening Image").unwrap();
        assert_eq!(opening.actual, Some((0.0, 25.0)));
        assert_eq!(opening.off_by(), Some(0.0));
        let catalyst = beats.iter().find(|b| b.title == "Catalyst").unwrap();
        assert_eq!(catalyst.scenes, ["SCN-two"]);
        assert_eq!(catalyst.actual, Some((25.0, 50.0)));
        // Expected at 10–12%: it lands 13 points late.
        assert_eq!(
            catalyst.off_by(),
            Some(25.0 - f64::from(catalyst.expected.1))
        );
        let last = beats.iter().find(|b| b.title == "Final Image").unwrap();
        assert_eq!(last.actual, None);
        assert_eq!(beats.len(), 15, "every beat of the sheet, placed or not");
    }
}

//! `control-room import SOURCE [--into DIR]`: a book the writer already has,
//! made a manuscript. SOURCE is one Markdown or plain-text file, or a Word
//! (DOCX), OpenDocument (ODT), EPUB or RTF file, which pandoc converts to
//! Markdown first.
//!
//! The source is read into Markdown ([`super::source`], or a Scrivener
//! project's binder, [`super::scrivener`]) and cut into chapters and scenes
//! ([`super::book`]). Each scene becomes `Story/Scenes/SCN-<chapter>[-<n>].md`
//! (or its Scrivener document's title) with its title in front matter, the
//! outline lists them in order under their chapters, and cards are proposed
//! for the people and places the book names ([`super::cast`]).

use std::path::Path;

use super::book::{Chapter, chapters};
use super::cast::{Kind, Proposed};
pub use super::source::ImportError;
use crate::index::gender::Gender;

/// What an import made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    pub title: String,
    pub chapters: usize,
    pub scenes: usize,
    pub words: usize,
    /// Scenes the outline lists with no text yet (a Scrivener document
    /// with only a synopsis).
    pub planned: usize,
    /// What the source holds that is not the book (Scrivener's Research
    /// and Trash), by name.
    pub left_out: Vec<String>,
    /// The character and place cards proposed, persons first, each kind
    /// most named first.
    pub cast: Vec<Proposed>,
    /// Every file made, relative to the manuscript's root.
    pub files: Vec<String>,
}

impl Imported {
    /// What was made, for the writer: the book's shape, where it is, what
    /// was left out, and the cards proposed by name.
    pub fn report(&self, into: &Path) -> String {
        let mut report = format!(
            "Imported “{}” into {}: {}, {}, {}.\n\
             The outline is Story/SCN-outline.md; the scenes are in Story/Scenes/.\n",
            self.title,
            into.display(),
            counted(self.chapters, "chapter"),
            counted(self.scenes, "scene"),
            counted(self.words, "word"),
        );
        if self.planned > 0 {
            report.push_str(&format!(
                "{} with no text yet {} in the outline only, as missing scenes to write.\n",
                counted(self.planned, "planned scene"),
                if self.planned == 1 { "is" } else { "are" },
            ));
        }
        if !self.left_out.is_empty() {
            report.push_str(&format!(
                "Left out, as not the book: {}.\n",
                self.left_out.join(", ")
            ));
        }
        for (kind, folder, what) in [
            (Kind::Character, "Compendium/Characters/", "character card"),
            (Kind::Place, "Compendium/Locations/", "place card"),
        ] {
            let names: Vec<String> = self
                .cast
                .iter()
                .filter(|card| card.kind == kind)
                .map(|card| format!("{} ({})", card.name, card.occurrences))
                .collect();
            if !names.is_empty() {
                report.push_str(&format!(
                    "Proposed {} in {folder}, by how often the book names them: {}.\n",
                    counted(names.len(), what),
                    names.join(", ")
                ));
            }
        }
        if !self.cast.is_empty() {
            report.push_str(
                "Each proposed card says so: keep it, merge it with another, or delete it.\n",
            );
        }
        report
    }
}

/// "1 chapter", "61 chapters".
fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Imports `source` as the new manuscript `into` (a new or empty folder).
pub fn import(source: &Path, into: &Path) -> Result<Imported, ImportError> {
    let (title, chapters, left_out) = if super::scrivener::is_project(source) {
        let project = super::scrivener::read(source)?;
        (project.title, project.chapters, project.left_out)
    } else {
        let text = super::source::read(source)?;
        let title = source.file_stem().map_or_else(
            || "Imported".to_owned(),
            |stem| stem.to_string_lossy().into_owned(),
        );
        let (title, chapters) = chapters(&text, &title);
        (title, chapters, Vec::new())
    };
    let chapters: Vec<Chapter> = chapters
        .into_iter()
        .filter(|chapter| !chapter.scenes.is_empty())
        .collect();
    let scenes = chapters.iter().map(|chapter| chapter.scenes.len()).sum();
    if scenes == 0 {
        return Err(ImportError::Empty(source.to_path_buf()));
    }
    let texts: Vec<&str> = chapters
        .iter()
        .flat_map(|chapter| &chapter.scenes)
        .map(|scene| scene.text.as_str())
        .filter(|text| !text.is_empty())
        .collect();
    let cast = super::cast::propose(&texts);
    let mut files = files(&title, &chapters);
    files.extend(cards(&cast));
    super::write_whole(into, &files)?;
    Ok(Imported {
        cast,
        planned: scenes - texts.len(),
        left_out,
        words: texts
            .iter()
            .map(|text| text.split_whitespace().count())
            .sum(),
        title,
        chapters: chapters.len(),
        scenes,
        files: files.into_iter().map(|(path, _)| path).collect(),
    })
}

/// The lowercase slug of `title`: "Chapter 12: The Ball" → "chapter-12-the-ball".
fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug: String = slug.chars().take(48).collect();
    if slug.is_empty() {
        "scene".to_owned()
    } else {
        slug.trim_end_matches('-').to_owned()
    }
}

/// The manuscript's files: the settings, each scene, the outline.
fn files(title: &str, chapters: &[Chapter]) -> Vec<(String, String)> {
    let paths = crate::index::config::PathsConfig::default();
    let mut files = vec![(
        crate::index::config::CONFIG_FILE.to_owned(),
        format!(
            "# control-room settings for \"{title}\", imported. Every setting: docs/configuration.md.\n\n[manuscript]\ntitle = {}\n",
            toml_string(title)
        ),
    )];
    let mut outline = format!("# {title}\n");
    let mut used = std::collections::HashSet::new();
    // Titles that repeat (a book in volumes, each counting its chapters from
    // one) are told apart by the chapter's place in the book.
    let mut titles = std::collections::HashSet::new();
    let repeated = !chapters
        .iter()
        .all(|chapter| titles.insert(slug(&chapter.title)));
    for (place, chapter) in chapters.iter().enumerate() {
        outline.push_str(&format!("\n## {}\n\n", chapter.title));
        let chapter_slug = if repeated {
            format!("{:02}-{}", place + 1, slug(&chapter.title))
        } else {
            slug(&chapter.title)
        };
        for (number, scene) in chapter.scenes.iter().enumerate() {
            let base = match &scene.title {
                Some(title) => slug(title),
                None if chapter.scenes.len() == 1 => chapter_slug.clone(),
                None => format!("{chapter_slug}-{}", number + 1),
            };
            let mut id = format!("SCN-{base}");
            let mut again = 2;
            while !used.insert(id.clone()) {
                id = format!("SCN-{base}-{again}");
                again += 1;
            }
            let scene_title = match &scene.title {
                Some(title) => title.clone(),
                None if chapter.scenes.len() == 1 => chapter.title.clone(),
                None => format!("{} ({})", chapter.title, number + 1),
            };
            if !scene.text.is_empty() {
                files.push((
                    format!("{}/{id}.md", paths.scenes),
                    format!(
                        "---\ntitle: {}\n---\n\n{}\n",
                        yaml_string(&scene_title),
                        scene.text
                    ),
                ));
            }
            let line = match &scene.synopsis {
                Some(synopsis) => synopsis.clone(),
                None if scene.text.is_empty() => scene_title,
                None => first_sentence(&scene.text),
            };
            outline.push_str(&format!("- {id}: {line}\n"));
        }
    }
    files.push((paths.outline.clone(), outline));
    files
}

/// A card for each proposed character and place, saying it was proposed
/// and how often the book names it.
fn cards(cast: &[Proposed]) -> Vec<(String, String)> {
    let paths = crate::index::config::PathsConfig::default();
    let mut used = std::collections::HashSet::new();
    cast.iter()
        .map(|card| {
            let (folder, prefix, kind) = match card.kind {
                Kind::Character => (&paths.characters, "CHAR", "character"),
                Kind::Place => (&paths.locations, "LOC", "location"),
            };
            let base = format!("{prefix}-{}", slug(&card.name));
            let mut stem = base.clone();
            let mut again = 2;
            while !used.insert(stem.clone()) {
                stem = format!("{base}-{again}");
                again += 1;
            }
            let aliases: Vec<String> = card
                .aliases
                .iter()
                .map(|alias| yaml_string(alias))
                .collect();
            let (gender, named) = match card.gender {
                Some(Gender::He) => ("gender: male\n", "him"),
                Some(Gender::She) => ("gender: female\n", "her"),
                None if card.kind == Kind::Place => ("", "it"),
                None => ("", "them"),
            };
            let times = if card.occurrences == 1 {
                "time"
            } else {
                "times"
            };
            let text = format!(
                "---\ntype: {kind}\nname: {}\naliases: [{}]\n{gender}\
                 # Proposed by `control-room import`: the book names {named} {} {times}. \
                 Keep this card, merge it with another, or delete it.\n---\n\n# {}\n",
                yaml_string(&card.name),
                aliases.join(", "),
                card.occurrences,
                card.name,
            );
            (format!("{folder}/{stem}.md"), text)
        })
        .collect()
}

/// The first sentence of a scene, at most twelve words: its outline line.
fn first_sentence(text: &str) -> String {
    const ABBREVIATIONS: &[&str] = &[
        "Mr.", "Mrs.", "Ms.", "Dr.", "St.", "Jr.", "Sr.", "Mme.", "Mlle.",
    ];
    let mut words = Vec::new();
    for word in text.split_whitespace() {
        words.push(word);
        let ends = word
            .trim_end_matches(['"', '\'', '”', '’', ')'])
            .ends_with(['.', '!', '?']);
        if ends && !ABBREVIATIONS.contains(&word) {
            return words.join(" ");
        }
        if words.len() == 12 {
            return format!("{}…", words.join(" "));
        }
    }
    words.join(" ")
}

fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

fn yaml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manuscript::book::Scene;

    #[test]
    fn scene_ids_are_unique_and_the_outline_lists_them_in_order() {
        let chapters = vec![
            Chapter {
                title: "Chapter 1".into(),
                scenes: vec![Scene::of_text("One.".into()), Scene::of_text("Two.".into())],
            },
            Chapter {
                title: "Chapter 1-1".into(),
                scenes: vec![Scene::of_text("Three \"quoted\".".into())],
            },
        ];
        let files = files("A \"Book\"", &chapters);
        let paths: Vec<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "control-room.toml",
                "Story/Scenes/SCN-chapter-1-1.md",
                "Story/Scenes/SCN-chapter-1-2.md",
                "Story/Scenes/SCN-chapter-1-1-2.md",
                "Story/SCN-outline.md"
            ]
        );
        let outline = &files.last().unwrap().1;
        assert_eq!(
            outline,
            "# A \"Book\"\n\n## Chapter 1\n\n- SCN-chapter-1-1: One.\n- SCN-chapter-1-2: Two.\n\n## Chapter 1-1\n\n- SCN-chapter-1-1-2: Three \"quoted\".\n"
        );
        assert!(
            files[0].1.contains("title = \"A \\\"Book\\\"\""),
            "{}",
            files[0].1
        );
    }

    #[test]
    fn chapters_of_a_book_in_volumes_are_told_apart_by_their_place() {
        let chapters = vec![
            Chapter {
                title: "CHAPTER I.".into(),
                scenes: vec![Scene::of_text("Mr. Bennet came. He sat.".into())],
            },
            Chapter {
                title: "CHAPTER I.".into(),
                scenes: vec![Scene::of_text("Later.".into())],
            },
        ];
        let files = files("Two Volumes", &chapters);
        let outline = &files.last().unwrap().1;
        assert!(
            outline.contains("- SCN-01-chapter-i: Mr. Bennet came.\n"),
            "{outline}"
        );
        assert!(
            outline.contains("- SCN-02-chapter-i: Later.\n"),
            "{outline}"
        );
    }
}

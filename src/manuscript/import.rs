//! `control-room import SOURCE [--into DIR]`: a book the writer already has,
//! made a manuscript. SOURCE is one Markdown or plain-text file, or a Word
//! (DOCX), OpenDocument (ODT), EPUB or RTF file, which pandoc converts to
//! Markdown first.
//!
//! The text is cut into chapters at its chapter headings (Markdown headings,
//! or a line of its own such as "Chapter 12" or "CHAPTER XII."), and each
//! chapter into scenes at its scene breaks (`* * *`, `***`, `#`, `⁂` on a
//! line of their own). Each scene becomes `Story/Scenes/SCN-<chapter>[-<n>].md`
//! with its title in front matter, and the outline lists them in order under
//! their chapters. A book with no chapter heading is one chapter.

use std::path::Path;
use std::process::{Command, Stdio};

use super::MakeError;
use super::cast::{Kind, Proposed};
use crate::index::gender::Gender;

/// Why a book could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(
        "{} is not a kind of file import reads: give a Markdown (.md), text (.txt), Word (.docx), OpenDocument (.odt), EPUB (.epub) or RTF (.rtf) file, or a Scrivener 3 project (.scriv)",
        .0.display()
    )]
    Unsupported(std::path::PathBuf),
    #[error("cannot read {}: {source}", .path.display())]
    Unreadable {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not UTF-8 text: save it as UTF-8 (or as .docx, .odt or .rtf) and import it again", .0.display())]
    NotUtf8(std::path::PathBuf),
    #[error(
        "importing {} needs pandoc to read it, and there is no `pandoc` on the PATH. Install it: `apt install pandoc` (Debian, Ubuntu), `brew install pandoc` (macOS), `winget install JohnMacFarlane.Pandoc` (Windows), or the installer from https://pandoc.org/installing.html",
        .0.display()
    )]
    PandocMissing(std::path::PathBuf),
    #[error("pandoc could not read {}: {said}", .path.display())]
    PandocFailed {
        path: std::path::PathBuf,
        said: String,
    },
    #[error("{} holds no text to import", .0.display())]
    Empty(std::path::PathBuf),
    #[error("{} is not an RTF file: it does not start with {{\\rtf", .0.display())]
    NotRtf(std::path::PathBuf),
    #[error("{} holds no .scrivx file: a Scrivener 3 project keeps its binder in one", .0.display())]
    NoBinder(std::path::PathBuf),
    #[error("{}:{line}:{column}: the Scrivener binder cannot be read: {said}", .path.display())]
    Binder {
        path: std::path::PathBuf,
        line: u32,
        column: u32,
        said: String,
    },
    #[error("{} has no Draft folder (a binder item of type DraftFolder): there is no book in it to import", .0.display())]
    NoDraft(std::path::PathBuf),
    #[error(transparent)]
    Make(#[from] MakeError),
}

/// A chapter of the imported book: its title and its scenes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chapter {
    pub title: String,
    pub scenes: Vec<Scene>,
}

/// A scene of the imported book. A scene with no text yet is planned: the
/// outline lists it, and no file is made for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scene {
    /// Its own title (a Scrivener document's); else it is named after its
    /// chapter.
    pub title: Option<String>,
    /// What the outline says of it; else its first sentence.
    pub synopsis: Option<String>,
    pub text: String,
}

impl Scene {
    fn of_text(text: String) -> Scene {
        Scene {
            text,
            ..Scene::default()
        }
    }
}

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
        let text = read(source)?;
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

/// The source's text as Markdown.
fn read(source: &Path) -> Result<String, ImportError> {
    let extension = source
        .extension()
        .map(|extension| extension.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let from = match extension.as_str() {
        "md" | "markdown" | "txt" | "text" => None,
        "docx" => Some("docx"),
        "odt" => Some("odt"),
        "epub" => Some("epub"),
        "rtf" => Some("rtf"),
        _ => return Err(ImportError::Unsupported(source.to_path_buf())),
    };
    let unreadable = |source_error| ImportError::Unreadable {
        path: source.to_path_buf(),
        source: source_error,
    };
    let Some(from) = from else {
        let bytes = std::fs::read(source).map_err(unreadable)?;
        let text =
            String::from_utf8(bytes).map_err(|_| ImportError::NotUtf8(source.to_path_buf()))?;
        let text = text.trim_start_matches('\u{feff}').replace("\r\n", "\n");
        return Ok(without_front_matter(&text).to_owned());
    };
    std::fs::metadata(source).map_err(unreadable)?;
    if from == "rtf" {
        let bytes = std::fs::read(source).map_err(unreadable)?;
        return rtf_to_markdown(source, &bytes);
    }
    pandoc(source, from, None)
}

/// An RTF file's text (`bytes`, read from `source`) as Markdown, its
/// Unicode escapes carried past pandoc's reader (see [`super::rtf`]).
pub(super) fn rtf_to_markdown(source: &Path, bytes: &[u8]) -> Result<String, ImportError> {
    if !bytes.trim_ascii_start().starts_with(b"{\\rtf") {
        return Err(ImportError::NotRtf(source.to_path_buf()));
    }
    let markdown = pandoc(source, "rtf", Some(&super::rtf::shield(bytes)))?;
    Ok(super::rtf::unshield(&markdown))
}

/// `source` (or `input`, read from it) converted by pandoc from `from` to
/// Markdown.
fn pandoc(source: &Path, from: &str, input: Option<&[u8]>) -> Result<String, ImportError> {
    let unreadable = |source_error| ImportError::Unreadable {
        path: source.to_path_buf(),
        source: source_error,
    };
    let pandoc = crate::export::pandoc::on_path("pandoc")
        .ok_or_else(|| ImportError::PandocMissing(source.to_path_buf()))?;
    // `-smart`: the book's own curly quotes and dashes stay as they are; no
    // spans, divs, attributes or HTML: a word processor's bookmarks and an
    // EPUB's sections are not the book's prose.
    let mut command = Command::new(pandoc);
    command.args([
        "--from",
        from,
        "--to",
        "markdown-smart-bracketed_spans-native_spans-native_divs-fenced_divs-raw_html-header_attributes-link_attributes",
        "--wrap=none",
    ]);
    let output = match input {
        None => command
            .arg(source)
            .stdin(Stdio::null())
            .output()
            .map_err(unreadable)?,
        Some(input) => {
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(unreadable)?;
            let mut stdin = child.stdin.take().expect("stdin is piped");
            let input = input.to_vec();
            // Written from a thread so a large file's output cannot fill
            // the pipe while its input is still being written.
            let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &input));
            let output = child.wait_with_output().map_err(unreadable)?;
            // pandoc stops reading when it fails; its message says why.
            let _ = writer.join();
            output
        }
    };
    if !output.status.success() {
        return Err(ImportError::PandocFailed {
            path: source.to_path_buf(),
            said: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    String::from_utf8(output.stdout).map_err(|_| ImportError::NotUtf8(source.to_path_buf()))
}

/// `text` without a YAML front matter block at its start (a Markdown
/// book's metadata, not its prose).
fn without_front_matter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---\n") {
        Some(end) => &rest[end + "\n---\n".len()..],
        None => text,
    }
}

/// The book's title (a lone first heading above chapter headings, else
/// `fallback`) and its chapters.
pub fn chapters(text: &str, fallback: &str) -> (String, Vec<Chapter>) {
    let lines: Vec<&str> = text.lines().collect();
    let headings: Vec<(usize, u8, String)> = lines
        .iter()
        .enumerate()
        .filter_map(|(at, line)| heading(&lines, at, line).map(|(level, title)| (at, level, title)))
        .collect();
    // "# Title" then "## Chapter…": the one top heading is the book's title.
    let top = headings.iter().filter(|(_, level, _)| *level == 1).count();
    let (title, title_line, headings) = match headings.first() {
        Some((at, 1, title)) if top == 1 && headings.len() > 1 => {
            (title.clone(), Some(*at), headings[1..].to_vec())
        }
        _ => (fallback.to_owned(), None, headings),
    };
    let mut chapters = Vec::new();
    let first = headings.first().map_or(lines.len(), |(at, _, _)| *at);
    let opening: Vec<&str> = lines[..first]
        .iter()
        .enumerate()
        .filter(|(at, _)| Some(*at) != title_line)
        .map(|(_, line)| *line)
        .collect();
    let before = scenes(&opening);
    if !before.is_empty() {
        chapters.push(Chapter {
            title: if headings.is_empty() {
                title.clone()
            } else {
                "Opening".to_owned()
            },
            scenes: before.into_iter().map(Scene::of_text).collect(),
        });
    }
    for (index, (at, _, heading)) in headings.iter().enumerate() {
        let end = headings
            .get(index + 1)
            .map_or(lines.len(), |(next, _, _)| *next);
        let found = scenes(&lines[at + 1..end]);
        if !found.is_empty() {
            chapters.push(Chapter {
                title: heading.clone(),
                scenes: found.into_iter().map(Scene::of_text).collect(),
            });
        }
    }
    (title, chapters)
}

/// A chapter heading at line `at`: a Markdown heading of level 1 or 2, or
/// a line of its own that starts with "Chapter" and a number or word.
fn heading(lines: &[&str], at: usize, line: &str) -> Option<(u8, String)> {
    let trimmed = line.trim();
    if let Some(rest) = trimmed.strip_prefix("## ") {
        return Some((2, clean(rest)));
    }
    if let Some(rest) = trimmed.strip_prefix("# ") {
        return Some((1, clean(rest)));
    }
    let alone = |index: Option<usize>| {
        index
            .and_then(|index| lines.get(index))
            .is_none_or(|line| line.trim().is_empty())
    };
    let mut words = trimmed.split_whitespace();
    let first = words.next()?;
    let number = words.next()?;
    let is_chapter = first.trim_end_matches('.').eq_ignore_ascii_case("chapter")
        && (number
            .trim_end_matches(['.', ':'])
            .chars()
            .all(|c| c.is_ascii_digit())
            || number
                .trim_end_matches(['.', ':'])
                .chars()
                .all(|c| "IVXLCivxlc".contains(c))
            || number.chars().next().is_some_and(char::is_alphabetic))
        && trimmed.len() <= 80
        && alone(at.checked_sub(1))
        && alone(Some(at + 1));
    is_chapter.then(|| (2, clean(trimmed)))
}

/// A heading's title without Markdown's emphasis and trailing marks.
fn clean(title: &str) -> String {
    title
        .trim()
        .trim_end_matches('#')
        .trim()
        .trim_matches(|c| c == '*' || c == '_')
        .trim()
        .to_owned()
}

/// A scene break: `* * *`, `***`, `#`, `⁂`, `~` and the like alone on a
/// line (as typed, or escaped the way pandoc writes a word processor's
/// "* * *" paragraph), or a rule (`---`, pandoc's long one, `———`).
fn is_break(line: &str) -> bool {
    let marks: String = line
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '\\')
        .collect();
    let count = marks.chars().count();
    let typed = count <= 9
        && marks
            .chars()
            .all(|c| matches!(c, '*' | '#' | '⁂' | '~' | '•' | '·'));
    let rule = count >= 3
        && ['-', '_', '—', '–']
            .iter()
            .any(|&mark| marks.chars().all(|c| c == mark));
    count > 0 && (typed || rule)
}

/// The scenes of a chapter's lines, cut at its scene breaks; each trimmed,
/// empty ones left out.
fn scenes(lines: &[&str]) -> Vec<String> {
    lines
        .split(|line| is_break(line))
        .map(|part| part.join("\n").trim().to_owned())
        .filter(|part| !part.is_empty())
        .collect()
}

/// The scenes of a text, cut at its scene breaks.
pub(super) fn scenes_of(text: &str) -> Vec<String> {
    scenes(&text.lines().collect::<Vec<_>>())
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

    fn shape(text: &str) -> (String, Vec<(String, usize)>) {
        let (title, chapters) = chapters(text, "fallback");
        let shape = chapters
            .into_iter()
            .map(|chapter| (chapter.title, chapter.scenes.len()))
            .collect();
        (title, shape)
    }

    #[test]
    fn chapters_are_cut_at_headings_and_plain_chapter_lines_and_scenes_at_breaks() {
        let markdown = "# The Lighthouse\n\n## Chapter 1\n\nAda came.\n\n* * *\n\nShe slept.\n\n## Chapter 2: Storm\n\nRain.\n";
        assert_eq!(
            shape(markdown),
            (
                "The Lighthouse".to_owned(),
                vec![
                    ("Chapter 1".to_owned(), 2),
                    ("Chapter 2: Storm".to_owned(), 1)
                ]
            )
        );
        let text = "CHAPTER I.\n\nIt is a truth.\n\nCHAPTER II.\n\nMr. Bennet was among the earliest.\n\n#\n\nLater.\n";
        assert_eq!(
            shape(text),
            (
                "fallback".to_owned(),
                vec![("CHAPTER I.".to_owned(), 1), ("CHAPTER II.".to_owned(), 2)]
            )
        );
        // A sentence that starts with "Chapter" is prose, not a heading.
        let prose = "Chapter and verse, she said,\nand went on.\n";
        assert_eq!(
            shape(prose),
            ("fallback".to_owned(), vec![("fallback".to_owned(), 1)])
        );
    }

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

//! The manuscript as one Markdown text: the scenes in story order under the
//! outline's chapter headings, with what is not prose left out.
//!
//! Each scene gives its body without its front matter, its own headings
//! (working titles: chapter headings come from the outline), HTML blocks,
//! HTML comments (`<!-- … -->`, where writers keep notes and the allow
//! marks) and code blocks. A thematic break inside a scene and the passage
//! from one scene to the next within a chapter are scene breaks (`#`).

use crate::index::{Book, Workspace};
use crate::syntax::BlockKind;
use crate::text::TextRange;

/// Which Markdown the text is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// For reading and for any Markdown tool: a scene break is a `#` paragraph.
    Plain,
    /// For pandoc: a scene break is a paragraph in the custom style "Scene
    /// Break", which the manuscript reference document centres.
    Pandoc,
}

/// The manuscript, assembled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembled {
    pub title: String,
    pub author: Option<String>,
    /// The Markdown, with a metadata block (title, author) at its head.
    pub markdown: String,
    /// Scenes compiled.
    pub scenes: usize,
    /// Words of prose compiled (as the word counts count them).
    pub words: usize,
    /// Scenes the outline lists that have no file, left out.
    pub missing: Vec<String>,
    /// Scene files the outline does not list, left out.
    pub unlisted: Vec<String>,
}

/// One piece of the book in order.
enum Piece {
    Heading { level: usize, title: String },
    SceneBreak,
    Prose(String),
}

/// Assembles the workspace's manuscript.
pub fn assemble(workspace: &Workspace, flavour: Flavour) -> Assembled {
    let book = Book::of(workspace);
    let outline = workspace
        .catalog()
        .outline()
        .and_then(|file| file.outline());
    let heading_title = |index: usize| {
        outline
            .and_then(|outline| outline.headings.get(index))
            .map_or_else(String::new, |heading| heading.title.clone())
    };
    // Heading levels as the book uses them, the outermost becoming level 1.
    let mut levels: Vec<u8> = book
        .scenes
        .iter()
        .flat_map(|scene| &scene.headings)
        .filter_map(|index| outline.and_then(|outline| outline.headings.get(*index)))
        .map(|heading| heading.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let mut pieces = Vec::new();
    let mut missing = Vec::new();
    let mut previous: Vec<usize> = Vec::new();
    let mut scenes = 0;
    let mut words = 0;
    for scene in &book.scenes {
        let Some(file) = &scene.file else {
            missing.push(scene.scene_id.clone());
            continue;
        };
        let opened: Vec<usize> = scene
            .headings
            .iter()
            .filter(|heading| !previous.contains(heading))
            .copied()
            .collect();
        for heading in &opened {
            let level = outline
                .and_then(|outline| outline.headings.get(*heading))
                .map_or(1, |h| {
                    levels.iter().position(|l| *l == h.level).unwrap_or(0) + 1
                });
            pieces.push(Piece::Heading {
                level,
                title: heading_title(*heading),
            });
        }
        if opened.is_empty() && scenes > 0 {
            pieces.push(Piece::SceneBreak);
        }
        previous.clone_from(&scene.headings);
        pieces.extend(scene_pieces(file));
        scenes += 1;
        words += scene.word_count();
    }
    let listed: std::collections::HashSet<&str> =
        book.scenes.iter().map(|s| s.scene_id.as_str()).collect();
    let unlisted = if book.from_outline {
        workspace
            .catalog()
            .scenes()
            .filter(|(_, scene)| !listed.contains(scene.id.as_str()))
            .map(|(_, scene)| scene.id.clone())
            .collect()
    } else {
        Vec::new()
    };
    let title = book.title(workspace);
    let author = workspace
        .config()
        .manuscript
        .author
        .clone()
        .filter(|author| !author.trim().is_empty());
    Assembled {
        markdown: render(&title, author.as_deref(), &pieces, flavour),
        title,
        author,
        scenes,
        words,
        missing,
        unlisted,
    }
}

/// A scene's prose pieces: its body without what is not prose, cut at its
/// thematic breaks.
fn scene_pieces(file: &crate::index::SourceFile) -> Vec<Piece> {
    let text = &*file.text;
    let body_start = file
        .front_matter
        .as_ref()
        .map_or(0, |front| front.range.end);
    let mut cuts: Vec<(TextRange, bool)> = Vec::new();
    for block in &file.syntax.blocks {
        let dropped = matches!(
            block.kind,
            BlockKind::Heading { .. }
                | BlockKind::CodeBlock
                | BlockKind::HtmlBlock
                | BlockKind::FrontMatter
        );
        let is_break = block.kind == BlockKind::ThematicBreak;
        if dropped || is_break {
            cuts.push((block.range, is_break));
        }
    }
    cuts.sort_by_key(|(range, _)| (range.start, std::cmp::Reverse(range.end)));
    let mut pieces = Vec::new();
    let mut at = body_start.min(text.len());
    let mut kept = String::new();
    for (range, is_break) in cuts {
        if range.end <= at {
            continue;
        }
        if range.start > at {
            kept.push_str(&text[at..range.start]);
        }
        at = at.max(range.end);
        if is_break {
            push_prose(&mut pieces, &mut kept);
            pieces.push(Piece::SceneBreak);
        } else {
            kept.push_str("\n\n");
        }
    }
    if at < text.len() {
        kept.push_str(&text[at..]);
    }
    push_prose(&mut pieces, &mut kept);
    // A break at the very start or end of a scene says nothing.
    while matches!(pieces.first(), Some(Piece::SceneBreak)) {
        pieces.remove(0);
    }
    while matches!(pieces.last(), Some(Piece::SceneBreak)) {
        pieces.pop();
    }
    pieces
}

fn push_prose(pieces: &mut Vec<Piece>, kept: &mut String) {
    let prose = tidy(&without_comments(kept));
    if !prose.is_empty() {
        pieces.push(Piece::Prose(prose));
    }
    kept.clear();
}

/// `text` without its HTML comments (`<!-- … -->`); an unclosed `<!--` is
/// not a comment and stays.
pub(crate) fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        let Some(length) = rest[start + 4..].find("-->") else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + 4 + length + 3..];
        // "a <!-- note --> b" leaves one space, not two.
        if out.ends_with(' ') && rest.starts_with(' ') {
            rest = &rest[1..];
        }
        // A comment at the end of a line leaves no trailing spaces behind
        // (two would make a hard line break).
        if rest.is_empty() || rest.starts_with(['\n', '\r']) {
            out.truncate(out.trim_end_matches([' ', '\t']).len());
        }
    }
    out.push_str(rest);
    out
}

/// Trims each line's trailing spaces (but a hard break's two), drops lines
/// that only held a comment, and keeps at most one blank line in a row.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

fn render(title: &str, author: Option<&str>, pieces: &[Piece], flavour: Flavour) -> String {
    let quoted = |value: &str| serde_json::to_string(value).unwrap_or_default();
    let mut out = format!("---\ntitle: {}\n", quoted(title));
    if let Some(author) = author {
        out.push_str(&format!("author: {}\n", quoted(author)));
    }
    out.push_str("---\n");
    for piece in pieces {
        out.push('\n');
        match piece {
            Piece::Heading { level, title } => {
                out.push_str(&"#".repeat((*level).clamp(1, 6)));
                out.push(' ');
                out.push_str(title);
                out.push('\n');
            }
            Piece::SceneBreak => out.push_str(match flavour {
                Flavour::Plain => "\\#\n",
                Flavour::Pandoc => "::: {custom-style=\"Scene Break\"}\n\\#\n:::\n",
            }),
            Piece::Prose(prose) => {
                out.push_str(prose);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SourceFile;
    use crate::index::config::PathsConfig;

    fn workspace(files: &[(&str, &str)]) -> Workspace {
        let mut workspace = Workspace::new(std::path::Path::new("/books/My Novel"));
        let paths = PathsConfig::default();
        workspace.insert_files(
            files
                .iter()
                .map(|(path, text)| SourceFile::parse((*path).into(), (*text).into(), &paths))
                .collect(),
        );
        workspace
    }

    const OUTLINE: &str = "# The Book\n\n## Chapter 1: Gates\n\n- SCN-a: a\n- SCN-b: b\n\n## Chapter 2\n\n- SCN-c: c\n- SCN-gone: not written\n";

    #[test]
    fn scenes_come_in_outline_order_under_chapters_without_front_matter_or_notes() {
        let workspace = workspace(&[
            ("Story/SCN-outline.md", OUTLINE),
            (
                "Story/Scenes/SCN-a.md",
                "---\npov: Kael\nwords: 300\n---\n# Working title\n\nFirst scene. <!-- fix this -->\nSame paragraph.\n\n<!--\nA note\nover lines\n-->\n\nSecond paragraph.\n",
            ),
            (
                "Story/Scenes/SCN-b.md",
                "Scene b *opens*.\n\n***\n\nAfter the break.\n\n```\ncode\n```\n",
            ),
            ("Story/Scenes/SCN-c.md", "---\ntitle: C\n---\nScene c.\n"),
            ("Story/Scenes/SCN-orphan.md", "Not listed.\n"),
        ]);
        let assembled = assemble(&workspace, Flavour::Plain);
        assert_eq!(
            assembled.markdown,
            "---\ntitle: \"The Book\"\n---\n\n# Chapter 1: Gates\n\nFirst scene.\nSame paragraph.\n\nSecond paragraph.\n\n\\#\n\nScene b *opens*.\n\n\\#\n\nAfter the break.\n\n# Chapter 2\n\nScene c.\n"
        );
        assert_eq!(assembled.scenes, 3);
        assert_eq!(assembled.missing, ["SCN-gone"]);
        assert_eq!(assembled.unlisted, ["SCN-orphan"]);
        let pandoc = assemble(&workspace, Flavour::Pandoc).markdown;
        assert!(pandoc.contains("::: {custom-style=\"Scene Break\"}\n\\#\n:::\n"));
    }

    #[test]
    fn the_title_comes_from_the_configuration_then_the_outline_then_the_folder() {
        let workspace = workspace(&[("Story/Scenes/SCN-a.md", "Words.\n")]);
        let assembled = assemble(&workspace, Flavour::Plain);
        assert_eq!(assembled.title, "My Novel");
        assert!(
            assembled
                .markdown
                .starts_with("---\ntitle: \"My Novel\"\n---\n\nWords.\n")
        );
    }

    #[test]
    fn comments_are_cut_whole_and_an_unclosed_one_stays() {
        assert_eq!(without_comments("a <!-- b --> c <!-- d"), "a c <!-- d");
        assert_eq!(without_comments("end.  <!-- b -->\nnext"), "end.\nnext");
        assert_eq!(without_comments("<!--x-->"), "");
    }
}

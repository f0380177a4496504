//! The imported book's shape: its chapters and their scenes, cut from its
//! text at chapter headings (Markdown headings, or a line of its own such as
//! "Chapter 12" or "CHAPTER XII.") and at scene breaks (`* * *`, `***`,
//! `#`, `⁂` on a line of their own). A book with no chapter heading is one
//! chapter.

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
    pub(super) fn of_text(text: String) -> Scene {
        Scene {
            text,
            ..Scene::default()
        }
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
}

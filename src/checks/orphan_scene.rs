//! `orphan-scene`: a scene file that the outline does not list, so it has no
//! place in story order. Only reported when the workspace has an outline.
//!
//! Quick fix: add an entry for it where it belongs. The chapter is the
//! outline section whose heading names the scene's folder ("act-two/" under
//! "## Act Two", "chapter-03/" under "## Chapter 3"); within it (or the whole
//! outline when no heading matches) a dated scene goes before the first entry
//! whose scene is dated later. Otherwise it goes after the section's last entry,
//! or the outline's. The entry copies its neighbour's list marker, and an
//! ordered list is renumbered after it.

use super::{Code, Diagnostic, FileEdit, Fix, FixKind, Severity};
use std::hash::{Hash, Hasher};

use crate::index::{Catalog, Outline, OutlineEntry, SourceFile, Workspace};
use crate::text::TextRange;

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let Some(scene) = file.scene() else { return };
    if file.load_error.is_some() {
        // One problem at a time: the file cannot be read at all.
        return;
    }
    let catalog = workspace.catalog();
    let Some(outline_file) = catalog.outline() else {
        return;
    };
    if catalog.outline_position(&scene.id).is_some() {
        return;
    }
    let range = scene.id_range.unwrap_or_else(|| file.head_range());
    let outline_path = &outline_file.path;
    let mut diagnostic = Diagnostic::new(
        file,
        range,
        Severity::Warning,
        Code::OrphanScene,
        format!(
            "`{}` is not in the outline ({outline_path}), so it has no place in story order",
            scene.id
        ),
    );
    let beat = scene.title.as_deref().unwrap_or("");
    let entry = if beat.is_empty() {
        scene.id.clone()
    } else {
        format!("{}: {beat}", scene.id)
    };
    let text = &outline_file.text;
    let edits = match outline_file.outline() {
        Some(outline) => {
            let place = placement(catalog, outline, file);
            insertion(text, outline, place, &entry)
        }
        None => vec![append(text, &format!("- {entry}"))],
    };
    diagnostic = diagnostic.with_fix(Fix {
        title: format!("Add {} to the outline", scene.id),
        edits: edits
            .into_iter()
            .map(|(range, new_text)| FileEdit {
                path: outline_path.clone(),
                range,
                new_text,
            })
            .collect(),
        kind: FixKind::Correction,
    });
    diagnostics.push(diagnostic);
}

/// Whether the outline lists the scene; for an orphan, what places its entry:
/// the outline's text and its scenes' dates.
pub(super) fn depends_on(workspace: &Workspace, file: &SourceFile, hasher: &mut impl Hasher) {
    let Some(scene) = file.scene() else { return };
    let catalog = workspace.catalog();
    let listed = catalog.outline_position(&scene.id).is_some();
    listed.hash(hasher);
    if listed {
        return;
    }
    if let Some(outline_file) = catalog.outline() {
        outline_file.text.hash(hasher);
        if let Some(outline) = outline_file.outline() {
            for position in 0..outline.entries.len() {
                catalog.entry_date(position).hash(hasher);
            }
        }
    }
}

/// Where a new outline entry goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// After the entry at this index (and its sub-beats).
    After(usize),
    /// On its own line before the entry at this index.
    Before(usize),
    /// At the end of the section of the heading at this index, which has no entries.
    SectionEnd(usize),
    /// At the end of an outline without entries.
    FileEnd,
}

fn placement(catalog: &Catalog, outline: &Outline, file: &SourceFile) -> Place {
    let section = folder_section(outline, &file.path);
    let entries: Vec<usize> = match section {
        Some(heading) => {
            let span = outline.headings[heading].section;
            (0..outline.entries.len())
                .filter(|&index| span.contains_range(outline.entries[index].range))
                .collect()
        }
        None => (0..outline.entries.len()).collect(),
    };
    let date = file
        .scene()
        .filter(|scene| !scene.flashback)
        .and_then(|scene| scene.story_date);
    if let Some(date) = date
        && entries
            .iter()
            .any(|&index| catalog.entry_date(index).is_some())
    {
        let later = entries.iter().position(|&index| {
            catalog
                .entry_date(index)
                .is_some_and(|other| date.is_before(&other))
        });
        match later {
            Some(0) => return Place::Before(entries[0]),
            Some(position) => return Place::After(entries[position - 1]),
            None => {}
        }
    }
    match (entries.last(), section) {
        (Some(&last), _) => Place::After(last),
        (None, Some(heading)) => Place::SectionEnd(heading),
        (None, None) => Place::FileEnd,
    }
}

/// The heading that names the scene's folder, if any: the innermost match.
fn folder_section(outline: &Outline, path: &str) -> Option<usize> {
    let mut folders = path.rsplit('/').skip(1);
    let folder = words(folders.next()?);
    if folder.is_empty() {
        return None;
    }
    outline
        .headings
        .iter()
        .enumerate()
        .filter(|(_, heading)| {
            let title = words(&heading.title);
            title.len() >= folder.len() && title[..folder.len()] == folder[..]
        })
        .max_by_key(|(_, heading)| heading.level)
        .map(|(index, _)| index)
}

/// A folder name or heading as comparable words: lower case, numbers without
/// leading zeros, number words as digits ("Act Two" and "act-02" agree).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let word = word.to_lowercase();
            if let Some(number) = crate::text::number_word(&word) {
                return number.to_string();
            }
            if word.bytes().all(|byte| byte.is_ascii_digit()) {
                let trimmed = word.trim_start_matches('0');
                return if trimmed.is_empty() { "0" } else { trimmed }.to_owned();
            }
            word
        })
        .collect()
}

/// The edits that insert `entry` at `place`.
fn insertion(text: &str, outline: &Outline, place: Place, entry: &str) -> Vec<(TextRange, String)> {
    match place {
        Place::FileEnd => vec![append(text, &format!("- {entry}"))],
        Place::SectionEnd(heading) => {
            let end = outline.headings[heading].section.end;
            vec![(TextRange::empty(end), format!("\n\n- {entry}"))]
        }
        Place::After(index) => {
            let neighbour = &outline.entries[index];
            let marker = Marker::of(text, neighbour);
            let mut edits = vec![(
                TextRange::empty(neighbour.range.end),
                format!("\n{}{entry}", marker.next()),
            )];
            if let Some(number) = marker.number {
                renumber(text, outline, index + 1, number + 1, &marker, &mut edits);
            }
            edits
        }
        Place::Before(index) => {
            let neighbour = &outline.entries[index];
            let marker = Marker::of(text, neighbour);
            let start = line_start(text, neighbour.range.start);
            let mut edits = vec![(
                TextRange::empty(start),
                format!("{}{entry}\n", marker.same()),
            )];
            if let Some(number) = marker.number {
                renumber(text, outline, index, number, &marker, &mut edits);
            }
            edits
        }
    }
}

fn append(text: &str, line: &str) -> (TextRange, String) {
    let end = text.trim_end().len();
    (TextRange::new(end, text.len()), format!("\n{line}\n"))
}

/// Shifts by one the numbers of the ordered entries from `first` on that
/// continue the list: same indent and delimiter, numbered `number`,
/// `number + 1`, … in turn.
fn renumber(
    text: &str,
    outline: &Outline,
    first: usize,
    mut number: u64,
    like: &Marker,
    edits: &mut Vec<(TextRange, String)>,
) {
    for entry in &outline.entries[first.min(outline.entries.len())..] {
        let marker = Marker::of(text, entry);
        if marker.indent != like.indent
            || marker.delimiter != like.delimiter
            || marker.number != Some(number)
        {
            break;
        }
        edits.push((marker.number_range, (number + 1).to_string()));
        number += 1;
    }
}

/// A list item's marker: `- `, `* `, `  2. `.
struct Marker<'a> {
    indent: &'a str,
    /// `-`, `*`, `+`, or the `.`/`)` after a number.
    delimiter: char,
    number: Option<u64>,
    number_range: TextRange,
    /// The spaces between the marker and the text.
    gap: &'a str,
}

impl<'a> Marker<'a> {
    fn of(text: &'a str, entry: &OutlineEntry) -> Marker<'a> {
        let start = line_start(text, entry.range.start);
        let line = &text[start..entry.id_range.start];
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let bullet = Marker {
            indent,
            delimiter: '-',
            number: None,
            number_range: TextRange::empty(start),
            gap: " ",
        };
        let marker = body.trim_end();
        let gap = &body[marker.len()..];
        if gap.is_empty() || gap.contains('\n') {
            return bullet;
        }
        match marker.as_bytes() {
            [symbol @ (b'-' | b'*' | b'+')] => Marker {
                delimiter: char::from(*symbol),
                gap,
                ..bullet
            },
            [digits @ .., delimiter @ (b'.' | b')')]
                if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) =>
            {
                let number_start = start + indent.len();
                match marker[..digits.len()].parse() {
                    Ok(number) => Marker {
                        indent,
                        delimiter: char::from(*delimiter),
                        number: Some(number),
                        number_range: TextRange::new(number_start, number_start + digits.len()),
                        gap,
                    },
                    Err(_) => bullet,
                }
            }
            _ => bullet,
        }
    }

    /// The marker for the item after this one.
    fn next(&self) -> String {
        match self.number {
            Some(number) => format!(
                "{}{}{}{}",
                self.indent,
                number + 1,
                self.delimiter,
                self.gap
            ),
            None => self.same(),
        }
    }

    /// This marker again.
    fn same(&self) -> String {
        match self.number {
            Some(number) => format!("{}{number}{}{}", self.indent, self.delimiter, self.gap),
            None => format!("{}{}{}", self.indent, self.delimiter, self.gap),
        }
    }
}

fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |newline| newline + 1)
}

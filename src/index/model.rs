//! The writer's nouns: scenes, the outline, canon cards, the anti-pattern sheet.
//!
//! Each is read from one file's front matter and Markdown structure. Reading
//! never fails: a value of the wrong kind becomes a [`FieldProblem`] and the
//! field is left empty, so the rest of the file still counts.

use crate::syntax::{BlockKind, FrontMatter, MarkdownSyntax, YamlKind, YamlValue};
use crate::text::TextRange;

pub use super::fields::{FieldProblem, Spanned};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scene {
    /// The front matter `id`, or the file stem.
    pub id: String,
    /// Where the id is written, when it is in the front matter.
    pub id_range: Option<TextRange>,
    pub title: Option<String>,
    pub pov: Option<Spanned>,
    pub location: Option<Spanned>,
    pub characters: Vec<Spanned>,
    pub date: Option<Spanned>,
    /// The `date` read as a story date, when it is one.
    pub story_date: Option<StoryDate>,
    /// The story time of day (`time: 21:00`, `time: dusk`), as written.
    pub time: Option<Spanned>,
    /// What happens to objects and wounds here (`tracks:`).
    pub tracks: Vec<super::tracks::Track>,
    pub flashback: bool,
    pub words_target: Option<u32>,
    /// Where the `words:` target is written.
    pub words_target_range: Option<TextRange>,
    /// Words of prose in the body.
    pub word_count: usize,
}

pub use super::calendar::StoryDate;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CardKind {
    Character,
    Location,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LifeStatus {
    #[default]
    Alive,
    Dead,
    Missing,
    Unknown,
}

impl LifeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LifeStatus::Alive => "alive",
            LifeStatus::Dead => "dead",
            LifeStatus::Missing => "missing",
            LifeStatus::Unknown => "unknown",
        }
    }
}

/// A canon card: a character, a location, or any other canon (items, lore…).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    /// The file stem, `CHAR-kael-maren`.
    pub id: String,
    pub kind: CardKind,
    /// The `type:` value or the folder's name, for other canon.
    pub type_name: String,
    pub name: Option<Spanned>,
    pub aliases: Vec<Spanned>,
    pub status: LifeStatus,
    pub died_in: Option<Spanned>,
    /// A character's birth date (`born:`).
    pub born: Option<DateField>,
    /// A character's date of death (`died:`), beside or instead of `died_in`.
    pub died: Option<DateField>,
    /// A place's travel times to other places (`travel:`).
    pub travel: Vec<Road>,
    /// Every other scalar key, in source order (`eyes`, `hair`, `age`…).
    pub attributes: Vec<(String, Spanned)>,
    /// The first paragraph of the body, for hovers.
    pub summary: Option<String>,
}

/// A date written in front matter and read as a story date.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DateField {
    pub written: Spanned,
    pub date: StoryDate,
}

/// One entry of a location card's `travel:`: how long the way to another place takes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Road {
    /// The other place as written (a name, alias or `LOC-` id).
    pub to: Spanned,
    pub minutes: i64,
}

impl Card {
    /// The name and every alias.
    pub fn names(&self) -> impl Iterator<Item = &Spanned> {
        self.name.iter().chain(&self.aliases)
    }

    /// The aliases as written, joined with commas; `None` when there are none.
    pub fn alias_list(&self) -> Option<String> {
        let aliases: Vec<&str> = self
            .aliases
            .iter()
            .map(|alias| alias.text.as_str())
            .collect();
        (!aliases.is_empty()).then(|| aliases.join(", "))
    }

    pub fn display_name(&self) -> &str {
        self.name.as_ref().map_or(&self.id, |name| &name.text)
    }

    pub fn attribute(&self, key: &str) -> Option<&Spanned> {
        self.attributes
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outline {
    pub headings: Vec<OutlineHeading>,
    pub entries: Vec<OutlineEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineHeading {
    pub title: String,
    pub level: u8,
    /// The heading line.
    pub range: TextRange,
    /// The heading and everything up to the next heading of the same or a higher level.
    pub section: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineEntry {
    pub scene_id: String,
    pub id_range: TextRange,
    /// The text after the id: the entry's one-line beat.
    pub beat: String,
    /// Nested list items under the entry: further beats.
    pub sub_beats: Vec<String>,
    /// The whole list item.
    pub range: TextRange,
    /// Index into [`Outline::headings`] of the nearest heading above.
    pub heading: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tolerance {
    Zero,
    Deduction,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AntiPattern {
    pub phrase: String,
    pub tolerance: Tolerance,
    pub range: TextRange,
}

/// Reads a scene from its front matter and body.
pub fn read_scene(
    stem: &str,
    text: &str,
    front: Option<&FrontMatter>,
    syntax: &MarkdownSyntax,
    problems: &mut Vec<FieldProblem>,
) -> Scene {
    let mut fields = Fields {
        text,
        front,
        problems,
    };
    let id = fields.string("id");
    let words_target = match fields.integer("words") {
        Some(target) => Some(target),
        None => fields.integer("target"),
    };
    // A date that is not one stays written (tools show it as it is).
    let date = fields.string("date");
    let story_date = date
        .as_ref()
        .and_then(|written| fields.story_date("date", written));
    let pov = fields.string("pov");
    let mut tracks = super::tracks::read_tracks(text, front, fields.problems);
    tracks.extend(super::tracks::read_learns(
        text,
        front,
        pov.as_ref(),
        fields.problems,
    ));
    Scene {
        id_range: id.as_ref().map(|id| id.range),
        id: id.map_or_else(|| stem.to_owned(), |id| id.text),
        title: fields.string("title").map(|title| title.text),
        pov,
        location: fields.string("location"),
        characters: fields.string_list("characters"),
        date,
        story_date,
        time: fields.string("time"),
        tracks,
        flashback: fields.boolean("flashback").unwrap_or(false),
        words_target: words_target.as_ref().map(|(words, _)| *words),
        words_target_range: words_target.map(|(_, range)| range),
        word_count: count_words(text, syntax),
    }
}

/// Reads a canon card.
pub fn read_card(
    stem: &str,
    kind: CardKind,
    type_name: &str,
    text: &str,
    front: Option<&FrontMatter>,
    syntax: &MarkdownSyntax,
    problems: &mut Vec<FieldProblem>,
) -> Card {
    let mut fields = Fields {
        text,
        front,
        problems,
    };
    let name = fields.string("name");
    if name.is_none() && kind != CardKind::Other {
        let range = front.map_or(TextRange::empty(0), |front| {
            TextRange::new(0, 3.min(front.range.end))
        });
        fields.problems.push(FieldProblem {
            range,
            message: format!("a {type_name} card needs a `name:`"),
        });
    }
    let status = fields.string("status").map_or(LifeStatus::Alive, |status| {
        match status.text.to_ascii_lowercase().as_str() {
            "alive" => LifeStatus::Alive,
            "dead" | "deceased" => LifeStatus::Dead,
            "missing" => LifeStatus::Missing,
            "unknown" => LifeStatus::Unknown,
            other => {
                fields.problems.push(FieldProblem {
                    range: status.range,
                    message: format!(
                        "`status: {other}` is not one of alive, dead, missing, unknown"
                    ),
                });
                LifeStatus::Unknown
            }
        }
    });
    Card {
        id: stem.to_owned(),
        kind,
        type_name: type_name.to_owned(),
        name,
        aliases: fields.string_list("aliases"),
        status,
        died_in: fields.string("died_in"),
        born: fields.date("born"),
        died: fields.date("died"),
        travel: fields.travel(),
        attributes: fields
            .other_scalars(&["type", "name", "aliases", "status", "died_in", "allow"]),
        summary: super::summary::first_paragraph(text, syntax),
    }
}

/// Reads a file's `allow: [code, …]`: the diagnostic codes the writer has
/// marked intentional for the whole file.
pub fn read_allow(
    text: &str,
    front: Option<&FrontMatter>,
    problems: &mut Vec<FieldProblem>,
) -> Vec<Spanned> {
    Fields {
        text,
        front,
        problems,
    }
    .string_list("allow")
}

/// Reads the anti-pattern sheet: list items under "zero tolerance" or "deduction" headings.
pub fn read_anti_patterns(text: &str, syntax: &MarkdownSyntax) -> Vec<AntiPattern> {
    let mut tolerance = None;
    let mut patterns = Vec::new();
    for block in &syntax.blocks {
        match block.kind {
            BlockKind::Heading { .. } => {
                let title = block.inline.slice(text).to_lowercase();
                tolerance = if title.contains("zero tolerance") {
                    Some(Tolerance::Zero)
                } else if title.contains("deduction") {
                    Some(Tolerance::Deduction)
                } else {
                    None
                };
            }
            BlockKind::ListItem => {
                let Some(tolerance) = tolerance else { continue };
                let raw = block.inline.slice(text);
                let phrase = raw
                    .trim()
                    .trim_matches(|c| matches!(c, '"' | '“' | '”' | '`' | '\'' | '*'));
                if phrase.is_empty() {
                    continue;
                }
                let start = block.inline.start + raw.find(phrase).unwrap_or(0);
                patterns.push(AntiPattern {
                    phrase: phrase.to_owned(),
                    tolerance,
                    range: TextRange::new(start, start + phrase.len()),
                });
            }
            _ => {}
        }
    }
    patterns
}

/// `SCN-the-gate: beat` → (`SCN-the-gate`, `beat`). Also accepts `SCN-x — beat`
/// and a bare id.
pub fn split_scene_id(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start();
    if !line.starts_with("SCN-") {
        return None;
    }
    let id_len = line
        .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.'))
        .unwrap_or(line.len());
    let id = line[..id_len].trim_end_matches('.');
    if id.len() <= "SCN-".len() {
        return None;
    }
    let rest = line[id.len()..].trim_start_matches(|c: char| {
        c == ':' || c == '.' || c == '—' || c == '–' || c == '-' || c.is_whitespace()
    });
    Some((id, rest.trim_end()))
}

/// Words of prose outside headings.
pub fn count_words(text: &str, syntax: &MarkdownSyntax) -> usize {
    let headings: Vec<TextRange> = syntax
        .blocks
        .iter()
        .filter(|block| matches!(block.kind, BlockKind::Heading { .. }))
        .map(|block| block.range)
        .collect();
    syntax
        .prose
        .iter()
        .filter(|prose| {
            !headings
                .iter()
                .any(|heading| heading.contains_range(**prose))
        })
        .map(|prose| words_in(prose.slice(text)))
        .sum()
}

/// The words of `text`: runs between whitespace and dashes that hold a
/// letter or a digit. One pass over the bytes, an ASCII byte classed by a
/// table and counted without a branch (a scene's words are counted again
/// at every edit: a branch a byte took 200 µs on a 6,500-word scene).
fn words_in(text: &str) -> usize {
    const SEPARATES: u8 = 1;
    const ALPHANUMERIC: u8 = 2;
    const WIDE: u8 = 4;
    const CLASSES: [u8; 256] = {
        let mut classes = [0u8; 256];
        let mut byte = 0;
        while byte < 256 {
            let b = byte as u8;
            classes[byte] = if b >= 0x80 {
                WIDE
            } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
                SEPARATES
            } else if b.is_ascii_alphanumeric() {
                ALPHANUMERIC
            } else {
                0
            };
            byte += 1;
        }
        classes
    };
    let bytes = text.as_bytes();
    // `counted`: 1 once the run since the last separator held a letter or digit.
    let (mut count, mut at, mut counted) = (0usize, 0usize, 0u8);
    while at < bytes.len() {
        let mut class = CLASSES[usize::from(bytes[at])];
        let mut width = 1;
        if class & WIDE != 0 {
            let c = text[at..].chars().next().unwrap_or_default();
            class = if c.is_whitespace() || c == '—' || c == '–' {
                SEPARATES
            } else if c.is_alphanumeric() {
                ALPHANUMERIC
            } else {
                0
            };
            width = c.len_utf8();
        }
        let alphanumeric = (class & ALPHANUMERIC) >> 1;
        count += usize::from(alphanumeric & !counted & 1);
        counted = (counted | alphanumeric) & !(class & SEPARATES) & 1;
        at += width;
    }
    count
}

/// Typed access to front matter values that records wrong kinds as problems.
pub(super) struct Fields<'a> {
    pub(super) text: &'a str,
    pub(super) front: Option<&'a FrontMatter>,
    pub(super) problems: &'a mut Vec<FieldProblem>,
}

impl Fields<'_> {
    fn value(&self, key: &str) -> Option<&YamlValue> {
        self.front?.get(key).map(|entry| &entry.value)
    }

    fn wrong_kind(&mut self, key: &str, value: &YamlValue, wanted: &str) {
        self.problems.push(FieldProblem {
            range: value.range,
            message: format!("`{key}` should be {wanted}, not {}", value.kind_name()),
        });
    }

    pub(super) fn string(&mut self, key: &str) -> Option<Spanned> {
        let value = self.value(key)?.clone();
        match value.as_scalar_text(self.text) {
            Some(text) if !text.trim().is_empty() => Some(Spanned {
                text: text.trim().to_owned(),
                range: value.range,
            }),
            Some(_) => None,
            None if value.kind == YamlKind::Null => None,
            None => {
                self.wrong_kind(key, &value, "text");
                None
            }
        }
    }

    fn string_list(&mut self, key: &str) -> Vec<Spanned> {
        let Some(value) = self.value(key).cloned() else {
            return Vec::new();
        };
        match &value.kind {
            YamlKind::Null => Vec::new(),
            YamlKind::Sequence(items) => {
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    match item.as_scalar_text(self.text) {
                        Some(text) if !text.trim().is_empty() => {
                            list.push(Spanned {
                                text: text.trim().to_owned(),
                                range: item.range,
                            });
                        }
                        Some(_) => {}
                        None => self.wrong_kind(key, item, "a list of names"),
                    }
                }
                list
            }
            _ => match value.as_scalar_text(self.text) {
                // `characters: Kael` is read as a list of one, and reported.
                Some(text) => {
                    let text = text.trim().to_owned();
                    self.problems.push(FieldProblem {
                        range: value.range,
                        message: format!("`{key}` should be a list: write `{key}: [{text}]`"),
                    });
                    vec![Spanned {
                        text,
                        range: value.range,
                    }]
                }
                None => {
                    self.wrong_kind(key, &value, "a list");
                    Vec::new()
                }
            },
        }
    }

    /// A story date (`date`, `born`, `died`); one that cannot be read is a problem.
    fn date(&mut self, key: &str) -> Option<DateField> {
        let written = self.string(key)?;
        let date = self.story_date(key, &written)?;
        Some(DateField { written, date })
    }

    /// `written` read as a story date, or a problem at it.
    fn story_date(&mut self, key: &str, written: &Spanned) -> Option<StoryDate> {
        match StoryDate::parse(&written.text) {
            Some(date) => Some(date),
            None => {
                self.problems.push(FieldProblem {
                    range: written.range,
                    message: format!(
                        "`{key}: {}` is not a story date: write year-month-day, like 1203-04-12",
                        written.text
                    ),
                });
                None
            }
        }
    }

    /// A location's `travel:`, a mapping from places to travel times
    /// (`Vel Harbour: 3 days`); an entry that cannot be read is a problem.
    fn travel(&mut self) -> Vec<Road> {
        let Some(value) = self.value("travel").cloned() else {
            return Vec::new();
        };
        let entries = match &value.kind {
            YamlKind::Mapping(entries) => entries,
            YamlKind::Null => return Vec::new(),
            _ => {
                self.wrong_kind(
                    "travel",
                    &value,
                    "a mapping from places to travel times, like `Vel Harbour: 3 days`",
                );
                return Vec::new();
            }
        };
        let mut roads = Vec::with_capacity(entries.len());
        for (place, time) in entries {
            let written = time.as_scalar_text(self.text).map(str::trim);
            match written.and_then(super::calendar::parse_duration) {
                Some(minutes) => roads.push(Road {
                    to: Spanned {
                        text: place.trim().to_owned(),
                        range: time.range,
                    },
                    minutes,
                }),
                None => self.problems.push(FieldProblem {
                    range: time.range,
                    message: format!(
                        "`travel: {place}: {}` is not a travel time: write a number of days, or `6 hours`, `3 days`, `2 weeks`",
                        written.unwrap_or_default()
                    ),
                }),
            }
        }
        roads
    }

    fn boolean(&mut self, key: &str) -> Option<bool> {
        let value = self.value(key)?.clone();
        match value.kind {
            YamlKind::Bool(flag) => Some(flag),
            YamlKind::Null => None,
            _ => {
                self.wrong_kind(key, &value, "true or false");
                None
            }
        }
    }

    fn integer(&mut self, key: &str) -> Option<(u32, TextRange)> {
        let value = self.value(key)?.clone();
        match value.kind {
            YamlKind::Integer(number) if (0..=u32::MAX as i64).contains(&number) => {
                Some((number as u32, value.range))
            }
            YamlKind::Null => None,
            _ => {
                self.wrong_kind(key, &value, "a whole number");
                None
            }
        }
    }

    fn other_scalars(&mut self, known: &[&str]) -> Vec<(String, Spanned)> {
        let Some(front) = self.front else {
            return Vec::new();
        };
        front
            .entries
            .iter()
            .filter(|entry| !known.contains(&entry.key.as_str()))
            .filter_map(|entry| {
                let text = entry.value.as_scalar_text(self.text)?;
                Some((
                    entry.key.clone(),
                    Spanned {
                        text: text.trim().to_owned(),
                        range: entry.value.range,
                    },
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scene_ids_split_from_beats() {
        assert_eq!(
            split_scene_id("SCN-the-gate: Iria lets him in."),
            Some(("SCN-the-gate", "Iria lets him in."))
        );
        assert_eq!(split_scene_id("SCN-a — beat"), Some(("SCN-a", "beat")));
        assert_eq!(split_scene_id("SCN-a."), Some(("SCN-a", "")));
        assert_eq!(split_scene_id("Intro"), None);
        assert_eq!(split_scene_id("SCN-: nothing"), None);
    }

    /// Words as a writer counts them: split at whitespace and dashes, a
    /// piece counted when it holds a letter or a digit.
    fn words_as_split(text: &str) -> usize {
        text.split(|c: char| c.is_whitespace() || c == '—' || c == '–')
            .filter(|word| word.chars().any(char::is_alphanumeric))
            .count()
    }

    #[test]
    fn words_are_counted_across_dashes_marks_and_scripts() {
        for (text, words) in [
            ("She ran—no, flew—home.", 5),
            ("“Stop,” he said … 1,200 steps – é à\u{a0}ü", 8),
            ("— – … !? \t\n", 0),
            ("naïve café\u{2003}Zoë's 3rd", 4),
        ] {
            assert_eq!(words_in(text), words, "{text:?}");
            assert_eq!(words_in(text), words_as_split(text), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn words_counted_in_one_pass_as_split(text in "[a-zé9 \t\n\u{a0}\u{2003}\u{85}—–,.“”'’-]{0,80}") {
            proptest::prop_assert_eq!(words_in(&text), words_as_split(&text));
        }
    }
}

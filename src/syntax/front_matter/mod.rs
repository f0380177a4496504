//! YAML front matter with the source range of every key and value.
//!
//! The block is the text between a first line `---` and the next line `---`
//! (or `...`). It is parsed with serde-saphyr, which reports errors with a
//! location instead of panicking. When the block as a whole is not valid
//! YAML, each top-level entry is parsed on its own, so one bad line costs
//! that entry only and the rest of the card or scene is still indexed.
//! A block of the plain shape (`key: value` lines, lists of plain words,
//! dates and whole numbers) is read without the parser, to the same entries
//! ([`plain`]).

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::text::TextRange;

mod plain;

/// A parsed front matter block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrontMatter {
    /// The block with its delimiter lines.
    pub range: TextRange,
    /// The YAML between the delimiter lines.
    pub content: TextRange,
    /// Top-level entries in source order.
    pub entries: Vec<FrontMatterEntry>,
    pub errors: Vec<FrontMatterError>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FrontMatterEntry {
    pub key: String,
    pub key_range: TextRange,
    pub value: YamlValue,
}

#[derive(Clone, Debug, PartialEq)]
pub struct YamlValue {
    pub range: TextRange,
    pub kind: YamlKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum YamlKind {
    Null,
    Bool(bool),
    Integer(i64),
    Float(f64),
    String(String),
    Sequence(Vec<YamlValue>),
    Mapping(Vec<(String, YamlValue)>),
}

/// A syntax error in the block, at the offending range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontMatterError {
    pub range: TextRange,
    pub message: String,
}

impl FrontMatter {
    pub fn get(&self, key: &str) -> Option<&FrontMatterEntry> {
        self.entries.iter().find(|entry| entry.key == key)
    }
}

impl YamlValue {
    /// The value as text when it is a scalar (numbers and dates keep their spelling).
    pub fn as_scalar_text<'a>(&'a self, source: &'a str) -> Option<&'a str> {
        match &self.kind {
            YamlKind::String(text) => Some(text),
            YamlKind::Integer(_) | YamlKind::Float(_) | YamlKind::Bool(_) => {
                Some(self.range.slice(source).trim())
            }
            YamlKind::Null | YamlKind::Sequence(_) | YamlKind::Mapping(_) => None,
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            YamlKind::Null => "nothing",
            YamlKind::Bool(_) => "a true/false value",
            YamlKind::Integer(_) => "a whole number",
            YamlKind::Float(_) => "a number",
            YamlKind::String(_) => "text",
            YamlKind::Sequence(_) => "a list",
            YamlKind::Mapping(_) => "a mapping",
        }
    }
}

/// Finds and parses the front matter at the start of `text`.
///
/// Returns `None` when the file does not start with `---`. An opening line
/// without a closing one is reported as an error on the opening line, and the
/// block is taken to be empty, so the body is not swallowed.
pub fn parse(text: &str) -> Option<FrontMatter> {
    // A byte order mark an editor sent with the text comes before the block.
    let start = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let (first_line_end, content_start) = line_end(text, start);
    if text[start..first_line_end].trim_end() != "---" {
        return None;
    }
    let mut line_start = content_start;
    while line_start < text.len() {
        let (end, next) = line_end(text, line_start);
        let line = text[line_start..end].trim_end();
        if line == "---" || line == "..." {
            let content = TextRange::new(content_start, line_start);
            let range = TextRange::new(0, next);
            let (entries, errors) = parse_content(text, content);
            return Some(FrontMatter {
                range,
                content,
                entries,
                errors,
            });
        }
        line_start = next;
    }
    Some(FrontMatter {
        range: TextRange::new(0, first_line_end),
        content: TextRange::empty(content_start),
        entries: Vec::new(),
        errors: vec![FrontMatterError {
            range: TextRange::new(0, first_line_end),
            message: "front matter is not closed: add a line `---` after its last entry".into(),
        }],
    })
}

/// The end of the line that starts at `from` (before its line break) and
/// where the next line starts. A line ends at `\n`, `\r\n`, or a lone `\r`
/// (old Mac files, and editors that keep them).
fn line_end(text: &str, from: usize) -> (usize, usize) {
    match text[from..].find(['\n', '\r']) {
        None => (text.len(), text.len()),
        Some(at) => {
            let end = from + at;
            let next = if text[end..].starts_with("\r\n") {
                end + 2
            } else {
                end + 1
            };
            (end, next)
        }
    }
}

/// The largest front matter read, in bytes: a scene's or a card's is under
/// a kilobyte. A larger one is one problem, not a parse of every line.
pub const MAX_BLOCK_BYTES: usize = 64 * 1024;

fn parse_content(text: &str, content: TextRange) -> (Vec<FrontMatterEntry>, Vec<FrontMatterError>) {
    let yaml = content.slice(text);
    if yaml.trim().is_empty() {
        return (Vec::new(), Vec::new());
    }
    if yaml.len() > MAX_BLOCK_BYTES {
        let first_line = yaml.find('\n').unwrap_or(yaml.len());
        let error = FrontMatterError {
            range: TextRange::new(content.start, content.start + first_line),
            message: format!(
                "front matter is too large to read ({} KiB; the limit is {} KiB)",
                yaml.len() / 1024,
                MAX_BLOCK_BYTES / 1024
            ),
        };
        return (Vec::new(), vec![error]);
    }
    if let Some(entries) = plain::entries(yaml, content.start) {
        return (entries, Vec::new());
    }
    match parse_mapping(yaml, content.start) {
        Ok(entries) => (entries, Vec::new()),
        // Parsed entry by entry, an alias bomb would give each line that
        // uses an anchor of another line an error about that anchor.
        Err(Refused::OverBudget(error)) => (Vec::new(), vec![error]),
        Err(Refused::Invalid(whole_error)) => salvage(text, content, whole_error),
    }
}

/// Parses each top-level entry (a line at column 0 and its indented
/// continuation lines) on its own, keeping those that parse.
fn salvage(
    text: &str,
    content: TextRange,
    whole_error: FrontMatterError,
) -> (Vec<FrontMatterEntry>, Vec<FrontMatterError>) {
    let mut chunks: Vec<TextRange> = Vec::new();
    let mut offset = content.start;
    for line in content.slice(text).split_inclusive('\n') {
        let starts_entry = line.starts_with(|c: char| !c.is_whitespace() && c != '#' && c != '-');
        match chunks.last_mut() {
            Some(chunk) if !starts_entry => chunk.end = offset + line.len(),
            _ => chunks.push(TextRange::new(offset, offset + line.len())),
        }
        offset += line.len();
    }
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for chunk in chunks {
        match parse_mapping(chunk.slice(text), chunk.start) {
            Ok(mut parsed) => entries.append(&mut parsed),
            Err(Refused::Invalid(error) | Refused::OverBudget(error)) => errors.push(error),
        }
    }
    if errors.is_empty() {
        // The entries are fine on their own but not together, for instance a
        // duplicated key: report what the parser said about the whole block.
        errors.push(whole_error);
    }
    (entries, errors)
}

/// The most values a front matter may hold, aliases expanded: a scene's or a
/// card's has a few dozen. Past it the parser stops, so an alias bomb (each
/// line a list of nine uses of the line before) costs microseconds, not the
/// millions of values it would expand to.
pub const MAX_VALUES: usize = 10_000;

/// Why a block was not read.
enum Refused {
    /// It is not valid YAML (or not a mapping): worth reading entry by entry.
    Invalid(FrontMatterError),
    /// It holds more than [`MAX_VALUES`], or nests too deep: one problem.
    OverBudget(FrontMatterError),
}

fn parse_mapping(yaml: &str, base: usize) -> Result<Vec<FrontMatterEntry>, Refused> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
        budget: serde_saphyr::budget! { max_nodes: MAX_VALUES },
        alias_limits: serde_saphyr::alias_limits! { max_total_replayed_events: MAX_VALUES },
    };
    let raw: Option<RawMapping> =
        serde_saphyr::from_str_with_options(yaml, options).map_err(|error| {
            match over_budget(&error) {
                Some(message) => Refused::OverBudget(FrontMatterError {
                    range: error_range(&error, yaml, base),
                    message,
                }),
                None => Refused::Invalid(describe_error(&error, yaml, base)),
            }
        })?;
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    Ok(raw
        .0
        .into_iter()
        .map(|(key, value)| FrontMatterEntry {
            key_range: span_range(&key, base, yaml),
            key: key.value,
            value: value.into_value(base, yaml),
        })
        .collect())
}

/// What to tell the writer when `error` is the parser's budget, not the
/// YAML's syntax: too many aliases, too many values, too deep.
fn over_budget(error: &serde_saphyr::Error) -> Option<String> {
    use serde_saphyr::Error;
    use serde_saphyr::budget::BudgetBreach;
    let mut inner = error;
    let mut through_alias = false;
    loop {
        match inner {
            Error::WithSnippet { error, .. } => inner = error,
            Error::AliasError { error, .. } => {
                through_alias = true;
                inner = error;
            }
            _ => break,
        }
    }
    let aliases = format!(
        "front matter uses too many YAML aliases: expanded, they make more than {MAX_VALUES} values; write the values out instead of repeating `*` aliases"
    );
    match inner {
        Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. }
        | Error::AliasReplayCounterOverflow { .. } => Some(aliases),
        Error::Budget { breach, .. } => Some(match breach {
            _ if through_alias => aliases,
            BudgetBreach::Aliases { .. } | BudgetBreach::Anchors { .. } => aliases,
            BudgetBreach::Depth { .. } => {
                "front matter nests lists and mappings too deep to read".to_owned()
            }
            _ => {
                format!("front matter is too large to read: it holds more than {MAX_VALUES} values")
            }
        }),
        _ => None,
    }
}

/// The range of the line where `error` happened, from its location on.
fn error_range(error: &serde_saphyr::Error, yaml: &str, base: usize) -> TextRange {
    let offset = error.location().map(|location| {
        let line_start = line_starts(yaml)
            .nth(location.line().saturating_sub(1) as usize)
            .unwrap_or(yaml.len());
        let column = location.column().saturating_sub(1) as usize;
        yaml[line_start..]
            .char_indices()
            .take_while(|(_, c)| *c != '\n')
            .nth(column)
            .map_or_else(
                || {
                    line_start
                        + yaml[line_start..]
                            .find('\n')
                            .unwrap_or(yaml.len() - line_start)
                },
                |(index, _)| line_start + index,
            )
    });
    match offset {
        Some(start) => {
            let line_end = yaml[start..].find('\n').map_or(yaml.len(), |n| start + n);
            TextRange::new(base + start, base + line_end.max(start))
        }
        None => TextRange::new(base, base + yaml.trim_end().len()),
    }
}

/// Turns a parser error into a writer's message at the right place in the file.
///
/// The parser's own text ends with "at line N, column M" counted inside the
/// piece it was given, which is not the file's line; the range says where
/// instead. A duplicated key is reported at its second appearance.
fn describe_error(error: &serde_saphyr::Error, yaml: &str, base: usize) -> FrontMatterError {
    let rendered = error.without_snippet().to_string();
    let mut reason = rendered
        .lines()
        .next()
        .unwrap_or("invalid YAML")
        .trim()
        .to_owned();
    if let Some(at) = reason.rfind(" at line ") {
        reason.truncate(at);
    }
    if let Some(rest) = reason.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(',').next().unwrap_or(rest).trim();
        let second = line_starts(yaml)
            .filter(|&start| {
                yaml[start..]
                    .strip_prefix(key)
                    .is_some_and(|after| after.trim_start().starts_with(':'))
            })
            .nth(1);
        if let Some(start) = second {
            return FrontMatterError {
                range: TextRange::new(base + start, base + start + key.len()),
                message: format!("`{key}` is given twice in the front matter: keep one"),
            };
        }
        reason = format!("`{key}` is given twice");
    }
    FrontMatterError {
        range: error_range(error, yaml, base),
        message: format!("front matter is not valid YAML: {reason}"),
    }
}

fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(
        text.match_indices('\n')
            .map(|(index, _)| index + 1)
            .filter(move |&start| start < text.len()),
    )
}

fn span_range<T>(spanned: &Spanned<T>, base: usize, yaml: &str) -> TextRange {
    let span = spanned.referenced.span();
    let start = span
        .byte_offset()
        .map_or(0, |offset| offset as usize)
        .min(yaml.len());
    let length = span.byte_len().map_or(0, |length| length as usize);
    let end = (start + length).min(yaml.len());
    TextRange::new(base + start, base + end)
}

/// A top-level mapping with spanned keys and values, in source order.
struct RawMapping(Vec<(Spanned<String>, Spanned<RawValue>)>);

enum RawValue {
    Null,
    Bool(bool),
    Integer(i64),
    Float(f64),
    String(String),
    Sequence(Vec<Spanned<RawValue>>),
    Mapping(Vec<(Spanned<String>, Spanned<RawValue>)>),
}

trait IntoValue {
    fn into_value(self, base: usize, yaml: &str) -> YamlValue;
}

impl IntoValue for Spanned<RawValue> {
    fn into_value(self, base: usize, yaml: &str) -> YamlValue {
        let mut range = span_range(&self, base, yaml);
        let kind = match self.value {
            RawValue::Null => YamlKind::Null,
            RawValue::Bool(value) => YamlKind::Bool(value),
            RawValue::Integer(value) => YamlKind::Integer(value),
            RawValue::Float(value) => YamlKind::Float(value),
            RawValue::String(value) => YamlKind::String(value),
            RawValue::Sequence(items) => {
                let items: Vec<YamlValue> = items
                    .into_iter()
                    .map(|item| item.into_value(base, yaml))
                    .collect();
                if let (Some(first), Some(last)) = (items.first(), items.last()) {
                    range = TextRange::new(
                        range.start.min(first.range.start),
                        range.end.max(last.range.end),
                    );
                }
                YamlKind::Sequence(items)
            }
            RawValue::Mapping(entries) => YamlKind::Mapping(
                entries
                    .into_iter()
                    .map(|(key, value)| (key.value, value.into_value(base, yaml)))
                    .collect(),
            ),
        };
        YamlValue { range, kind }
    }
}

impl<'de> de::Deserialize<'de> for RawMapping {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MappingVisitor;
        impl<'de> Visitor<'de> for MappingVisitor {
            type Value = RawMapping;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a mapping of keys to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMapping, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(RawMapping(entries))
            }
        }
        deserializer.deserialize_map(MappingVisitor)
    }
}

impl<'de> de::Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawValueVisitor)
    }
}

struct RawValueVisitor;

impl<'de> Visitor<'de> for RawValueVisitor {
    type Value = RawValue;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_none<E>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawValue, D::Error> {
        de::Deserialize::deserialize(deserializer)
    }
    fn visit_bool<E>(self, value: bool) -> Result<RawValue, E> {
        Ok(RawValue::Bool(value))
    }
    fn visit_i64<E>(self, value: i64) -> Result<RawValue, E> {
        Ok(RawValue::Integer(value))
    }
    fn visit_u64<E>(self, value: u64) -> Result<RawValue, E> {
        Ok(i64::try_from(value).map_or(RawValue::Float(value as f64), RawValue::Integer))
    }
    fn visit_f64<E>(self, value: f64) -> Result<RawValue, E> {
        Ok(RawValue::Float(value))
    }
    fn visit_str<E>(self, value: &str) -> Result<RawValue, E> {
        Ok(RawValue::String(value.to_owned()))
    }
    fn visit_string<E>(self, value: String) -> Result<RawValue, E> {
        Ok(RawValue::String(value))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(RawValue::Sequence(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(RawValue::Mapping(entries))
    }
}

/// `text` with `key: value` in its front matter, replacing the value there
/// is, or adding the entry, or the front matter.
pub fn set_field(text: &str, key: &str, value: &str) -> String {
    let value = if value.contains([':', '#', '\'', '"'])
        || value.starts_with(['[', '{', '-', '*', '&', '!'])
    {
        serde_json::to_string(value).expect("a string serialises")
    } else {
        value.to_owned()
    };
    match parse(text) {
        Some(front) => match front.get(key) {
            Some(entry) if !matches!(entry.value.kind, YamlKind::Null) => {
                crate::text::apply_edits(text, &[(entry.value.range, value)])
            }
            Some(entry) => crate::text::apply_edits(
                text,
                &[(
                    TextRange::new(
                        entry.key_range.start,
                        entry.value.range.end.max(entry.key_range.end + 1),
                    ),
                    format!("{key}: {value}"),
                )],
            ),
            None => {
                let at = front.content.end;
                let newline = if text[..at].ends_with('\n') || at == front.content.start {
                    ""
                } else {
                    "\n"
                };
                crate::text::apply_edits(
                    text,
                    &[(TextRange::empty(at), format!("{newline}{key}: {value}\n"))],
                )
            }
        },
        None => format!("---\n{key}: {value}\n---\n\n{text}"),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn front_matter_closed_by_a_lone_cr_is_closed() {
        let text = "---\rtitle: The Gate\r---\rBody.\r";
        let front = parse(text).unwrap();
        assert!(front.errors.is_empty(), "{:?}", front.errors);
        assert_eq!(
            &text[front.range.start..front.range.end],
            "---\rtitle: The Gate\r---\r"
        );
        assert_eq!(front.entries.len(), 1);
    }

    #[test]
    fn a_byte_order_mark_before_the_front_matter_is_skipped() {
        let text = "\u{feff}---\ntitle: The Gate\n---\nBody.\n";
        let front = parse(text).unwrap();
        assert!(front.errors.is_empty(), "{:?}", front.errors);
        assert_eq!(front.entries.len(), 1);
        assert_eq!(front.range.end, text.find("Body").unwrap());
    }

    use super::*;

    #[test]
    fn entries_carry_the_ranges_of_their_values() {
        let text =
            "---\nname: Kael Maren\naliases: [Kael, the Warden]\nage: 34\nstatus: dead\n---\nBody";
        let front = parse(text).unwrap();
        assert!(front.errors.is_empty(), "{:?}", front.errors);
        let name = front.get("name").unwrap();
        assert_eq!(name.key_range.slice(text), "name");
        assert_eq!(name.value.range.slice(text), "Kael Maren");
        let YamlKind::Sequence(aliases) = &front.get("aliases").unwrap().value.kind else {
            panic!()
        };
        let spelled: Vec<_> = aliases
            .iter()
            .map(|alias| alias.range.slice(text))
            .collect();
        assert_eq!(spelled, ["Kael", "the Warden"]);
        assert_eq!(front.get("age").unwrap().value.kind, YamlKind::Integer(34));
        assert_eq!(&text[front.range.end..], "Body");
    }

    #[test]
    fn a_broken_line_costs_only_its_entry() {
        let text = "---\nname: Kael\neyes: [grey\nhair: black\n---\n";
        let front = parse(text).unwrap();
        let keys: Vec<_> = front
            .entries
            .iter()
            .map(|entry| entry.key.as_str())
            .collect();
        assert_eq!(keys, ["name", "hair"]);
        assert_eq!(front.errors.len(), 1);
        let error_line = text[..front.errors[0].range.start].matches('\n').count();
        assert!(
            (2..=3).contains(&error_line),
            "error on line {error_line}: {:?}",
            front.errors
        );
        assert!(
            front.errors[0]
                .message
                .starts_with("front matter is not valid YAML")
        );
    }

    #[test]
    fn unclosed_block_is_an_error_and_swallows_nothing() {
        let front = parse("---\nname: Kael\n\nProse").unwrap();
        assert_eq!(front.range, TextRange::new(0, 3));
        assert!(front.errors[0].message.contains("not closed"));
    }

    /// Billion laughs: each line a list of nine uses of the line before, a
    /// thousand million values expanded. Refused whole, it used to be read
    /// line by line and give every line an error about an unknown anchor.
    #[test]
    fn a_yaml_alias_bomb_is_one_problem_on_the_line_where_it_goes_past_the_limit() {
        let mut text =
            String::from("---\ntitle: The Gate\na: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
        let names: Vec<char> = ('a'..='j').collect();
        for pair in names.windows(2) {
            let uses = vec![format!("*{}", pair[0]); 9].join(",");
            text.push_str(&format!("{}: &{} [{uses}]\n", pair[1], pair[1]));
        }
        text.push_str("---\nBody.\n");
        let started = std::time::Instant::now();
        let front = parse(&text).unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(front.errors.len(), 1, "{:?}", front.errors);
        let error = &front.errors[0];
        assert_eq!(
            error.message,
            "front matter uses too many YAML aliases: expanded, they make more than 10000 values; write the values out instead of repeating `*` aliases"
        );
        // Where the expansion passed the limit: a line of aliases.
        let line = error.range.slice(&text);
        assert!(line.contains("*"), "{line:?}");
        assert!(text[error.range.end..].starts_with('\n'));
    }

    #[test]
    fn a_front_matter_over_its_size_limit_is_one_problem_not_a_parse_of_each_line() {
        let text = format!("---\n{}---\nBody.\n", "name: [Kael\n".repeat(7_000));
        let front = parse(&text).unwrap();
        assert_eq!(front.errors.len(), 1, "{:?}", front.errors);
        assert_eq!(
            front.errors[0].message,
            "front matter is too large to read (82 KiB; the limit is 64 KiB)"
        );
        assert_eq!(front.errors[0].range.slice(&text), "name: [Kael");
    }

    #[test]
    fn a_few_aliases_are_read_as_their_values() {
        let front = parse("---\nname: &n Kael\naliases: [*n, the Warden]\n---\n").unwrap();
        assert!(front.errors.is_empty(), "{:?}", front.errors);
        let YamlKind::Sequence(aliases) = &front.get("aliases").unwrap().value.kind else {
            panic!()
        };
        assert_eq!(aliases[0].kind, YamlKind::String("Kael".into()));
    }

    #[test]
    fn no_block_without_an_opening_line() {
        assert!(parse("# Title\n---\n").is_none());
        assert!(parse("").is_none());
    }
}

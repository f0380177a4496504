//! Front matter of the plain shape read without the YAML parser.
//!
//! Most cards and scenes hold only `key: value` lines, lists of plain words
//! (`[Kael, Iria]`, or `- Kael` lines under the key), dates and whole
//! numbers. Reading those with serde-saphyr costs tens of microseconds a
//! file, most of a card's reading for a cold start's first diagnostics.
//! [`entries`] reads that shape alone, with the values and ranges the parser
//! gives, and answers `None` at the first line of any other shape (a nested
//! mapping, a comment, an anchor, a multi-line scalar, a quote with an
//! escape, a number the parser might read otherwise, a keyword, a tab, a
//! duplicated key...): the parser reads those. `plain_front_matter_reads_as_the_parser_does`
//! holds the two to the same answer.

use super::{FrontMatterEntry, MAX_VALUES, YamlKind, YamlValue};
use crate::text::TextRange;

/// The entries of `yaml` (the block's content, at offset `base` in the
/// file) when every line is of the plain shape; `None` otherwise.
pub(super) fn entries(yaml: &str, base: usize) -> Option<Vec<FrontMatterEntry>> {
    let mut entries: Vec<FrontMatterEntry> = Vec::new();
    // The indent of the items of the last entry's block list.
    let mut list: Option<usize> = None;
    let mut offset = 0;
    for raw in yaml.split_inclusive('\n') {
        let start = base + offset;
        offset += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.contains(['\r', '\t']) {
            return None;
        }
        if line.trim_start_matches(' ').is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 0 {
            // An item of the last entry's block list, all at one indent: the
            // list starts at the first item's dash.
            let item = line[indent..].strip_prefix("- ")?;
            let entry = entries.last_mut()?;
            let dash = start + indent;
            let value = scalar(item, dash + 2, Context::Block)?;
            let end = value.range.end;
            match (&mut entry.value.kind, list) {
                (YamlKind::Null, None) => {
                    entry.value = YamlValue {
                        range: TextRange::new(dash, end),
                        kind: YamlKind::Sequence(vec![value]),
                    };
                    list = Some(indent);
                }
                (YamlKind::Sequence(items), Some(list_indent)) if indent == list_indent => {
                    items.push(value);
                    entry.value.range.end = end;
                }
                _ => return None,
            }
            continue;
        }
        list = None;
        let colon = line.find(':')?;
        let key = &line[..colon];
        if !is_plain_key(key) || entries.iter().any(|entry| entry.key == key) {
            return None;
        }
        let rest = &line[colon + 1..];
        let value_start = start + colon + 1;
        let value = if rest.trim_start_matches(' ').is_empty() {
            // Null, unless a block list follows.
            YamlValue {
                range: TextRange::empty(start + colon),
                kind: YamlKind::Null,
            }
        } else {
            let rest = rest.strip_prefix(' ')?;
            let leading = rest.len() - rest.trim_start_matches(' ').len();
            let rest = &rest[leading..];
            if rest.starts_with('[') {
                flow_list(rest, value_start + 1 + leading)?
            } else {
                scalar(rest, value_start + 1 + leading, Context::Block)?
            }
        };
        entries.push(FrontMatterEntry {
            key: key.to_owned(),
            key_range: TextRange::new(start, start + colon),
            value,
        });
    }
    // The parser's budget counts every value: a block past it is its to refuse.
    let values: usize = entries
        .iter()
        .map(|entry| match &entry.value.kind {
            YamlKind::Sequence(items) => 2 + items.len(),
            _ => 2,
        })
        .sum();
    (values <= MAX_VALUES / 2).then_some(entries)
}

/// Where a scalar stands: a flow list's items end at a comma or bracket.
#[derive(Clone, Copy, PartialEq)]
enum Context {
    Block,
    Flow,
}

/// `[a, b, c]` on one line, `text` starting at its bracket at `start`.
fn flow_list(text: &str, start: usize) -> Option<YamlValue> {
    let inner = text
        .trim_end_matches(' ')
        .strip_prefix('[')?
        .strip_suffix(']')?;
    if inner.trim_start_matches(' ').is_empty() {
        return Some(YamlValue {
            range: TextRange::new(start, start + 1),
            kind: YamlKind::Sequence(Vec::new()),
        });
    }
    let mut items = Vec::new();
    let mut at = start + 1;
    for part in inner.split(',') {
        let leading = part.len() - part.trim_start_matches(' ').len();
        items.push(scalar(&part[leading..], at + leading, Context::Flow)?);
        at += part.len() + 1;
    }
    let end = items.last()?.range.end;
    Some(YamlValue {
        range: TextRange::new(start, end),
        kind: YamlKind::Sequence(items),
    })
}

/// One scalar of the plain shape, `text` starting at its first character at
/// `start` and running to the end of the line (or of the flow item).
fn scalar(text: &str, start: usize, context: Context) -> Option<YamlValue> {
    let text = text.trim_end_matches(' ');
    let range = TextRange::new(start, start + text.len());
    let first = text.chars().next()?;
    let kind = match first {
        '\'' if context == Context::Block => {
            let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
            if inner.replace("''", "").contains('\'') {
                return None;
            }
            YamlKind::String(inner.replace("''", "'"))
        }
        '"' if context == Context::Block => {
            let inner = text.strip_prefix('"')?.strip_suffix('"')?;
            if inner.contains(['"', '\\']) {
                return None;
            }
            YamlKind::String(inner.to_owned())
        }
        '0'..='9' => number_or_date(text)?,
        _ if is_plain_text(text, context) => YamlKind::String(text.to_owned()),
        _ => return None,
    };
    Some(YamlValue { range, kind })
}

/// A whole number the parser reads as one (no sign, no leading zero, no
/// separators, well inside `i64`), or a date or time of day it reads as
/// text: `1203-04-12`, `14:30`.
fn number_or_date(text: &str) -> Option<YamlKind> {
    let digits = |part: &str, most: usize| {
        !part.is_empty() && part.len() <= most && part.bytes().all(|byte| byte.is_ascii_digit())
    };
    if digits(text, 18) && (text == "0" || !text.starts_with('0')) {
        return text.parse().ok().map(YamlKind::Integer);
    }
    let date: Vec<&str> = text.split('-').collect();
    let is_date = matches!(date.as_slice(), [year, month, day]
        if digits(year, 4) && digits(month, 2) && digits(day, 2));
    let time: Vec<&str> = text.split(':').collect();
    let is_time = matches!(time.as_slice(), [hours, minutes]
        if digits(hours, 2) && minutes.len() == 2 && digits(minutes, 2));
    (is_date || is_time).then(|| YamlKind::String(text.to_owned()))
}

/// A key of letters, digits, `_` and `-`, starting with a letter, that no
/// schema reads as anything but text.
fn is_plain_key(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
        && !is_keyword(key)
}

/// Words some YAML schema reads as a boolean, a null or a number.
fn is_keyword(text: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "inf", "nan", "infinity",
    ];
    KEYWORDS
        .iter()
        .any(|keyword| keyword.eq_ignore_ascii_case(text))
}

/// Text the parser reads as a plain string: it starts with a letter or a
/// character that is no YAML indicator, holds nothing that could start a
/// comment, a mapping or a flow collection, and is no keyword.
fn is_plain_text(text: &str, context: Context) -> bool {
    let starts_plainly = text
        .chars()
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '(' || first == '_');
    let flow_marks: &[char] = match context {
        Context::Block => &['[', ']', '{', '}'],
        Context::Flow => &['[', ']', '{', '}', ',', ':', '\'', '"'],
    };
    starts_plainly
        && !text.contains(": ")
        && !text.ends_with(':')
        && !text.contains(" #")
        && !text.contains(flow_marks)
        && !is_keyword(text)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::parse_mapping;
    use super::*;

    /// What the parser reads of `yaml` at `base`, when it reads it.
    fn parsed(yaml: &str, base: usize) -> Option<Vec<FrontMatterEntry>> {
        parse_mapping(yaml, base).ok()
    }

    const KEYS: &[&str] = &[
        "name", "aliases", "age", "title", "pov", "status", "eyes", "hair", "role", "date", "time",
        "x-y", "a_b", "k1",
    ];

    /// Keys of another shape: numbers, keywords, spaces.
    const ODD_KEYS: &[&str] = &["True", "null", "yes", "1a", "a b", "-a", "a:b"];

    /// Values of the plain shape.
    const VALUES: &[&str] = &[
        "Agnes Northcote",
        "the Kit",
        "Zoë",
        "C#",
        "x:y",
        "x :y",
        "a,b",
        "(aside)",
        "_x",
        "Tom & Jerry",
        "63",
        "0",
        "123456789012345678",
        "1203-04-12",
        "2024-1-5",
        "1-1-1",
        "14:30",
        "1:30",
        "10:60",
        "'it''s'",
        "''",
        "\"dq\"",
        "\"\"",
        "[a, b]",
        "[]",
        "[ ]",
        "[ a ]",
        "[1, x]",
        "[a b, c]",
        "[a, b c ,d]",
        "a  b",
        "a\u{a0}",
        "é",
    ];

    /// Values of other shapes, or that some schema reads as no text.
    const ODD_VALUES: &[&str] = &[
        "a #b",
        "a: b",
        "a [b]",
        "yes",
        "No",
        "TRUE",
        "true",
        "null",
        "Null",
        "~",
        "inf",
        ".inf",
        "nan",
        "007",
        "-3",
        "+3",
        "1.5",
        "1e3",
        "0x1F",
        "1_000",
        "99999999999999999999",
        "1203-04-12T10:00",
        "1203-04-12 10:00",
        "'a'b'",
        "\"a\\\"b\"",
        "'x' y",
        "&anchor",
        "*alias",
        "!tag x",
        "|",
        ">",
        "%x",
        "@x",
        "`x`",
        "-",
        "- a",
        "\u{a0}a",
        "a\tb",
        "?x",
        "{a: b}",
        "[a,]",
        "[,a]",
        "[a, [b]]",
        "[a:b]",
        "['a', b]",
        "[a, b] x",
        "[a",
        "[yes, x]",
        "[a #b]",
    ];

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            8 => prop::sample::select(VALUES).prop_map(str::to_owned),
            1 => prop::sample::select(ODD_VALUES).prop_map(str::to_owned),
            1 => "[a-zA-Z0-9 :#,'\"\\[\\]-]{1,8}",
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            12 => prop::sample::select(KEYS).prop_map(str::to_owned),
            1 => prop::sample::select(ODD_KEYS).prop_map(str::to_owned),
        ]
    }

    fn line() -> impl Strategy<Value = String> {
        let gap = prop::sample::select(vec!["", " ", "  "]);
        let indent = prop::sample::select(vec!["", " ", "  ", "    "]);
        prop_oneof![
            8 => (key(), gap.clone(), value(), gap.clone())
                .prop_map(|(key, gap, value, trail)| format!("{key}:{gap}{value}{trail}")),
            2 => (key(), gap.clone()).prop_map(|(key, trail)| format!("{key}:{trail}")),
            4 => value().prop_map(|value| format!("  - {value}")),
            1 => (indent.clone(), value()).prop_map(|(indent, value)| format!("{indent}- {value}")),
            1 => (indent.clone(), value()).prop_map(|(indent, value)| format!("{indent}-  {value}")),
            1 => gap.prop_map(str::to_owned),
            1 => prop::sample::select(vec!["  -", "-", "# a comment", "  # a comment", " x"])
                .prop_map(str::to_owned),
            1 => (indent, key(), value())
                .prop_map(|(indent, key, value)| format!("{indent}{key}: {value}")),
        ]
    }

    /// An entry as cards and scenes write them: a scalar, nothing, or a
    /// block list, its values now and then of another shape.
    fn entry(key: &'static str) -> impl Strategy<Value = Vec<String>> {
        let indent = prop::sample::select(vec![" ", "  ", "    "]);
        prop_oneof![
            4 => value().prop_map(move |value| vec![format!("{key}: {value}")]),
            1 => Just(vec![format!("{key}:")]),
            2 => (indent, prop::collection::vec(value(), 1..4)).prop_map(move |(indent, items)| {
                std::iter::once(format!("{key}:"))
                    .chain(items.iter().map(|item| format!("{indent}- {item}")))
                    .collect()
            }),
        ]
    }

    /// A block of lines drawn one by one (most of them of another shape), or
    /// of whole entries under distinct keys (most of them plain).
    fn block() -> impl Strategy<Value = Vec<String>> {
        let entries = prop::sample::subsequence(KEYS, 0..7)
            .prop_flat_map(|keys| keys.into_iter().map(entry).collect::<Vec<_>>())
            .prop_map(|entries| entries.concat());
        prop_oneof![
            1 => prop::collection::vec(line(), 0..8),
            2 => entries,
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Whatever the plain reader answers, the parser reads alike, values
        /// and ranges.
        #[test]
        fn plain_front_matter_reads_as_the_parser_does(
            lines in block(),
            crlf in any::<bool>(),
            base in 0usize..8,
        ) {
            let ending = if crlf { "\r\n" } else { "\n" };
            let yaml: String = lines.iter().map(|line| format!("{line}{ending}")).collect();
            if let Some(plain) = entries(&yaml, base) {
                prop_assert_eq!(Some(plain), parsed(&yaml, base), "{:?}", yaml);
            }
        }
    }

    /// The shapes cards and scenes are written in are read without the
    /// parser (else the reader is never used), and as the parser reads them.
    #[test]
    fn the_plain_shape_is_read_without_the_parser() {
        let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road");
        let mut blocks: Vec<String> = vec![
            "name: Agnes Northcote\naliases:\n  - Agnes\n  - the Kit\nstatus: alive\neyes: pale blue\nage: 63\n".into(),
            "title: 'The Mill'\r\npov: \"Agnes\"\r\ncharacters: [Agnes, Oona]\r\ndate: 1847-03-12\r\ntime: 14:30\r\nempty:\r\nnone: []\r\n".into(),
        ];
        let mut folders = vec![example];
        let mut files = Vec::new();
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|extension| extension == "md") {
                    files.push(path);
                }
            }
        }
        for path in files {
            let text = std::fs::read_to_string(path).unwrap();
            let Some(front) = super::super::parse(&text) else {
                continue;
            };
            let yaml = front.content.slice(&text);
            if !yaml.contains("travel:") && !yaml.trim().is_empty() {
                blocks.push(yaml.to_owned());
            }
        }
        assert!(
            blocks.len() > 15,
            "the example's front matter was not found"
        );
        for yaml in &blocks {
            let plain = entries(yaml, 4);
            assert!(plain.is_some(), "not read as plain: {yaml:?}");
            assert_eq!(plain, parsed(yaml, 4), "{yaml:?}");
        }
    }
}

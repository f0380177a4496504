//! Where a proposed edit lands in a file's text: a quoted passage found
//! once (exactly, or with spaces and quote marks folded, as a model copies
//! them), the end of the paragraph holding a quote, a front matter field.
//!
//! Every function here answers a byte range in the text it was given, or
//! why there is none; nothing is applied here.

use serde_json::Value;

use super::Refusal;
use crate::syntax::front_matter;
use crate::text::TextRange;

/// The fewest characters a quote must have to name one place.
pub const MIN_QUOTE_CHARS: usize = 6;

/// Finds `quote` in `text` exactly once; else why not, in a writer's words.
pub fn find_once(text: &str, quote: &str) -> Result<TextRange, Refusal> {
    let quote = quote.trim();
    if quote.chars().count() < MIN_QUOTE_CHARS {
        return Err(Refusal::QuoteTooShort {
            quote: quote.to_owned(),
        });
    }
    let exact: Vec<usize> = text.match_indices(quote).map(|(at, _)| at).collect();
    match exact.as_slice() {
        [at] => return Ok(TextRange::new(*at, at + quote.len())),
        [] => {}
        many => return Err(ambiguous(quote, many.len())),
    }
    // A model copies a passage with its line breaks as spaces and its curly
    // quotes straight: compare the text folded the same way.
    let hay = Folded::of(text);
    let needle = Folded::of(quote);
    let needle = needle.text.trim();
    let found: Vec<usize> = hay.text.match_indices(needle).map(|(at, _)| at).collect();
    match found.as_slice() {
        [at] => Ok(TextRange::new(
            hay.origin[*at],
            hay.origin[at + needle.len() - 1] + hay.width(at + needle.len() - 1, text),
        )),
        [] => Err(Refusal::QuoteNotFound {
            quote: crate::text::clip(quote, 80).to_string(),
        }),
        many => Err(ambiguous(quote, many.len())),
    }
}

fn ambiguous(quote: &str, times: usize) -> Refusal {
    Refusal::QuoteAmbiguous {
        quote: crate::text::clip(quote, 80).to_string(),
        times,
    }
}

/// A text with whitespace runs folded to one space and curly quote marks
/// made straight; `origin[i]` is the byte in the original text where the
/// folded text's byte `i` came from.
struct Folded {
    text: String,
    origin: Vec<usize>,
}

impl Folded {
    fn of(text: &str) -> Folded {
        let mut folded = Folded {
            text: String::with_capacity(text.len()),
            origin: Vec::with_capacity(text.len()),
        };
        let mut in_space = false;
        for (at, c) in text.char_indices() {
            let c = match c {
                '\u{2018}' | '\u{2019}' => '\'',
                '\u{201C}' | '\u{201D}' => '"',
                c if c.is_whitespace() => ' ',
                c => c,
            };
            if c == ' ' && in_space {
                continue;
            }
            in_space = c == ' ';
            folded.text.push(c);
            folded.origin.extend(std::iter::repeat_n(at, c.len_utf8()));
        }
        folded
    }

    /// The length in the original text of the character that folded byte
    /// `at` came from.
    fn width(&self, at: usize, original: &str) -> usize {
        original[self.origin[at]..]
            .chars()
            .next()
            .map_or(0, char::len_utf8)
    }
}

/// Where a paragraph inserted after the one holding `range` begins: the
/// end of that paragraph (the next blank line, or the end of the text).
pub fn paragraph_end(text: &str, range: TextRange) -> usize {
    let rest = &text[range.end..];
    let line_end = rest.find('\n').map_or(text.len(), |at| range.end + at);
    let mut at = line_end;
    // Walk down the paragraph's lines until a blank one.
    while at < text.len() {
        let next = at + 1;
        let line = text[next..].split('\n').next().unwrap_or_default();
        if line.trim().is_empty() {
            break;
        }
        at = next + line.len();
    }
    at
}

/// The edit that sets a top-level front matter `field` of `text` to
/// `value`: (range, new text) in `text`, or why it cannot.
pub fn set_field(text: &str, field: &str, value: &Value) -> Result<(TextRange, String), Refusal> {
    if !field_name_ok(field) {
        return Err(Refusal::NotAFieldName {
            field: crate::text::clip(field, 40).to_string(),
        });
    }
    let rendered = yaml_value(value).ok_or_else(|| Refusal::NotAFieldValue {
        field: field.to_owned(),
    })?;
    let Some(front) = front_matter::parse(text) else {
        return Err(Refusal::NoFrontMatter);
    };
    let line = format!("{field}: {rendered}");
    match front.get(field) {
        Some(entry) => Ok((
            TextRange::new(
                entry.key_range.start,
                entry.value.range.end.max(entry.key_range.end),
            ),
            line,
        )),
        None => {
            let at = front.content.end;
            let before = &text[..at];
            let line = if before.ends_with('\n') {
                format!("{line}\n")
            } else {
                format!("\n{line}")
            };
            Ok((TextRange::new(at, at), line))
        }
    }
}

/// Whether the front matter of `text` reads `field` as `value`, with no
/// more errors than `errors_before`.
pub fn field_reads_as(text: &str, field: &str, value: &Value, errors_before: usize) -> bool {
    let Some(front) = front_matter::parse(text) else {
        return false;
    };
    if front.errors.len() > errors_before {
        return false;
    }
    let Some(entry) = front.get(field) else {
        return false;
    };
    let scalar = |value: &Value, yaml: &front_matter::YamlValue| match value {
        Value::String(expected) => yaml.as_scalar_text(text) == Some(expected.as_str()),
        Value::Number(_) | Value::Bool(_) => {
            let expected = value.to_string();
            yaml.as_scalar_text(text).map(str::trim) == Some(expected.as_str())
                || yaml.range.slice(text).trim() == expected
        }
        _ => false,
    };
    match (value, &entry.value.kind) {
        (Value::Array(items), front_matter::YamlKind::Sequence(read)) => {
            items.len() == read.len()
                && items
                    .iter()
                    .zip(read)
                    .all(|(item, read)| scalar(item, read))
        }
        (Value::Array(_), _) => false,
        (value, _) => scalar(value, &entry.value),
    }
}

/// Front matter errors of `text` now.
pub fn front_matter_errors(text: &str) -> usize {
    front_matter::parse(text).map_or(0, |front| front.errors.len())
}

fn field_name_ok(field: &str) -> bool {
    let mut chars = field.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && field.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `value` written as YAML on one line: plain where plain reads back as the
/// same text, else double-quoted (JSON's quoting is YAML's).
fn yaml_value(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(yaml_text(text)),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Array(items) => {
            let items: Option<Vec<String>> = items
                .iter()
                .map(|item| match item {
                    Value::String(text) => Some(yaml_text(text)),
                    Value::Number(number) => Some(number.to_string()),
                    _ => None,
                })
                .collect();
            Some(format!("[{}]", items?.join(", ")))
        }
        _ => None,
    }
}

fn yaml_text(text: &str) -> String {
    let reserved = [
        "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n",
    ];
    let plain = !text.is_empty()
        && text.trim() == text
        && text.chars().next().is_some_and(char::is_alphabetic)
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '-' | '\'' | '(' | ')'))
        && !reserved.contains(&text.to_ascii_lowercase().as_str())
        && text.parse::<f64>().is_err();
    if plain {
        text.to_owned()
    } else {
        serde_json::Value::String(text.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_quote_is_found_once_exactly_or_folded_or_not_at_all() {
        let text = "She said, \u{201C}Hold the gate.\u{201D}\nThe tide\n  turned.";
        let range = find_once(text, "The tide turned.").unwrap();
        assert_eq!(range.slice(text), "The tide\n  turned.");
        let range = find_once(text, "said, \"Hold the gate.\"").unwrap();
        assert_eq!(range.slice(text), "said, \u{201C}Hold the gate.\u{201D}");
        assert_eq!(
            find_once(text, "The moon rose"),
            Err(Refusal::QuoteNotFound {
                quote: "The moon rose".to_owned()
            })
        );
        assert_eq!(
            find_once("the sea, the sea", "the sea"),
            Err(Refusal::QuoteAmbiguous {
                quote: "the sea".to_owned(),
                times: 2
            })
        );
        assert_eq!(
            find_once(text, "tide"),
            Err(Refusal::QuoteTooShort {
                quote: "tide".to_owned()
            })
        );
    }

    #[test]
    fn an_insertion_goes_after_the_paragraph_holding_the_quote() {
        let text = "First line\nstill first.\n\nSecond.\n";
        let range = find_once(text, "First line").unwrap();
        assert_eq!(
            &text[..paragraph_end(text, range)],
            "First line\nstill first."
        );
        let range = find_once(text, "Second.").unwrap();
        assert_eq!(paragraph_end(text, range), text.len() - 1);
    }

    #[test]
    fn a_field_is_replaced_or_added_and_reads_back_as_its_value() {
        let text = "---\nname: Kael\neyes: grey\n---\nBody\n";
        for (field, value) in [
            ("eyes", json!("green")),
            ("eyes", json!("yes")),
            ("hair", json!("black: dyed")),
            ("age", json!(34)),
            ("aliases", json!(["the Warden", "Kael"])),
        ] {
            let (range, new) = set_field(text, field, &value).unwrap();
            let after = crate::text::apply_edits(text, &[(range, new)]);
            assert!(field_reads_as(&after, field, &value, 0), "{after}");
            assert!(after.ends_with("---\nBody\n"), "{after}");
        }
        assert!(set_field("No front matter", "eyes", &json!("x")).is_err());
        assert!(set_field(text, "bad key:", &json!("x")).is_err());
        assert!(set_field(text, "eyes", &json!({"a": 1})).is_err());
    }
}

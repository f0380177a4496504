//! An action's XML parameters read into the shape its schema asks for. A
//! model writes every parameter as text; a number, a list or an object is
//! read from that text here, and whatever cannot be read stays text, so
//! that the schema reports it in words the model can act on.

use serde_json::{Map, Value};

/// The parameters as a JSON object shaped by `schema`'s properties.
pub(super) fn params(params: &[(String, String)], schema: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for (name, raw) in params {
        let property = &schema["properties"][name];
        let value = value(raw, property);
        // A list parameter written as several elements of its name adds up.
        match (out.get_mut(name), value) {
            (Some(Value::Array(list)), Value::Array(more)) if is_type(property, "array") => {
                list.extend(more);
            }
            (_, value) => {
                out.insert(name.clone(), value);
            }
        }
    }
    out
}

fn is_type(property: &Value, wanted: &str) -> bool {
    property["type"].as_str() == Some(wanted)
}

fn value(raw: &str, property: &Value) -> Value {
    let text = raw.trim();
    match property["type"].as_str() {
        Some("integer") => text
            .parse::<i64>()
            .map_or_else(|_| Value::String(text.to_owned()), Value::from),
        Some("boolean") => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" => Value::Bool(true),
            "false" | "no" => Value::Bool(false),
            _ => Value::String(text.to_owned()),
        },
        Some("array") => list(text).unwrap_or_else(|| Value::String(text.to_owned())),
        Some("object") => object(text),
        _ if property.get("anyOf").is_some() => loose(text),
        _ => Value::String(text.to_owned()),
    }
}

/// Text whose shape the schema leaves open: a list when it is written as
/// one (JSON, `<item>`s, or lines that are list items), else text.
fn loose(text: &str) -> Value {
    if let Some(list) = json_list(text) {
        return list;
    }
    let items = children(text);
    if !items.is_empty() && items.iter().all(|(name, _)| name == "item") {
        return strings(items.into_iter().map(|(_, inner)| inner));
    }
    let lines = lines_of(text);
    if lines.len() > 1 && lines.iter().all(|line| is_list_item(line)) {
        return strings(lines.into_iter().map(bare_item));
    }
    Value::String(text.to_owned())
}

/// `text` when it is a JSON list.
fn json_list(text: &str) -> Option<Value> {
    if !text.starts_with('[') {
        return None;
    }
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_array)
}

fn strings<S: Into<String>>(items: impl Iterator<Item = S>) -> Value {
    Value::Array(items.map(|item| Value::String(item.into())).collect())
}

/// The lines of `text` that say something, trimmed.
fn lines_of(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect()
}

fn is_list_item(line: &str) -> bool {
    line.starts_with("- ")
        || line.starts_with("* ")
        || line
            .split_once(". ")
            .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
}

fn bare_item(line: &str) -> &str {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return rest.trim();
    }
    match line.split_once(". ") {
        Some((n, rest)) if n.parse::<u32>().is_ok() => rest.trim(),
        _ => line,
    }
}

/// A list written as JSON, as `<item>`s, as list lines, or as one line of
/// commas; `None` when it is none of them.
fn list(text: &str) -> Option<Value> {
    if text.is_empty() {
        return Some(Value::Array(Vec::new()));
    }
    if text.starts_with('[') {
        return json_list(text);
    }
    let items = children(text);
    if !items.is_empty() {
        return Some(strings(items.into_iter().map(|(_, inner)| inner)));
    }
    let lines = lines_of(text);
    Some(if lines.len() == 1 {
        strings(
            lines[0]
                .split(',')
                .map(str::trim)
                .filter(|part| !part.is_empty()),
        )
    } else {
        strings(lines.into_iter().map(bare_item))
    })
}

/// An object written as JSON or as child elements; else the text itself.
fn object(text: &str) -> Value {
    if text.starts_with('{')
        && let Ok(object @ Value::Object(_)) = serde_json::from_str(text)
    {
        return object;
    }
    let fields = children(text);
    if fields.is_empty() {
        return Value::String(text.to_owned());
    }
    let mut object = Map::new();
    for (name, inner) in fields {
        object.insert(name, loose(&inner));
    }
    Value::Object(object)
}

/// The child elements of `text` at its top level: `<name>inner</name>`,
/// each inner trimmed. Text between them is left out; an element left open
/// ends the reading.
pub(super) fn children(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        if name.is_empty()
            || !after[name_len..].starts_with('>')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            rest = after;
            continue;
        }
        let body = &after[name_len + 1..];
        let close = format!("</{name}>");
        let Some(end) = body.find(&close) else { break };
        found.push((name.to_owned(), body[..end].trim().to_owned()));
        rest = &body[end + close.len()..];
    }
    found
}

//! Reasoning removed before anything else is read: `<thinking>` and
//! `<think>` blocks, closed or not, stray closing tags, and the `<message>`
//! wrapper that [`super::strip_reasoning`] unwraps from a reply meant to be
//! JSON or bare text.

use super::lex::{Name, Tag, lex};
use super::text::join_pieces;

/// Where an unclosed thinking block ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Until {
    /// At the next `<message>`, `<action` or `<content_update` opening tag.
    Protocol,
    /// Where the JSON starts, or at the next protocol opening tag.
    Json,
}

/// `text` without thinking blocks, whose text goes to `thinking`. Repeats
/// until no thinking tag is left (joining the text around a removed block
/// could form a new one).
pub(super) fn remove_thinking(
    text: &str,
    until: Until,
    leading_rule: bool,
    thinking: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> String {
    let mut current = remove_thinking_once(text, until, leading_rule, thinking, warnings);
    while let Some(text) = &current
        && let Some(next) = remove_thinking_once(text, until, false, thinking, warnings)
    {
        current = Some(next);
    }
    current.unwrap_or_else(|| text.to_owned())
}

/// One pass of [`remove_thinking`]; `None` when there was no thinking tag.
fn remove_thinking_once(
    text: &str,
    until: Until,
    leading_rule: bool,
    thinking: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Option<String> {
    let tags = lex(text);
    if !tags.iter().any(|tag| tag.name.is_thinking()) {
        return None;
    }
    let mut keep: Vec<&str> = Vec::new();
    let mut pos = 0;
    let mut k = 0;
    while let Some(&tag) = tags.get(k) {
        k += 1;
        if !tag.name.is_thinking() {
            continue;
        }
        let name = tag.name.as_str();
        if tag.closing {
            if leading_rule && k == 1 {
                push_thinking(thinking, &text[..tag.start]);
                warnings.push(format!(
                    "text before a stray </{name}> was taken as thinking"
                ));
            } else {
                keep.push(&text[pos..tag.start]);
                warnings.push(format!("a stray </{name}> was dropped"));
            }
            pos = tag.end;
            continue;
        }
        keep.push(&text[pos..tag.start]);
        if tag.self_closing {
            pos = tag.end;
            continue;
        }
        let close = tags[k..]
            .iter()
            .position(|other| other.closing && other.name.is_thinking());
        if let Some(offset) = close {
            let close = tags[k + offset];
            push_thinking(thinking, &text[tag.end..close.start]);
            pos = close.end;
            k += offset + 1;
        } else if let Some((stop, what)) = unclosed_thinking_end(text, &tags[k..], tag.end, until) {
            push_thinking(thinking, &text[tag.end..stop]);
            warnings.push(format!("unclosed <{name}> was dropped up to {what}"));
            pos = stop;
            k = tags.partition_point(|other| other.start < stop);
        } else {
            push_thinking(thinking, &text[tag.end..]);
            warnings.push(format!(
                "unclosed <{name}> was dropped to the end of the reply"
            ));
            pos = text.len();
            k = tags.len();
        }
    }
    keep.push(&text[pos..]);
    Some(join_pieces(keep))
}

fn push_thinking(thinking: &mut Vec<String>, text: &str) {
    let text = text.trim();
    if !text.is_empty() {
        thinking.push(text.to_owned());
    }
}

/// Where an unclosed thinking block opened before `from` ends, and what ends it.
fn unclosed_thinking_end(
    text: &str,
    later: &[Tag],
    from: usize,
    until: Until,
) -> Option<(usize, String)> {
    let protocol = later
        .iter()
        .find(|tag| tag.opens(Name::is_block))
        .map(|tag| (tag.start, format!("<{}>", tag.name.as_str())));
    let json = match until {
        Until::Protocol => None,
        Until::Json => json_start(text, from).map(|at| (at, "the JSON".to_owned())),
    };
    match (protocol, json) {
        (Some(protocol), Some(json)) => Some(if json.0 < protocol.0 { json } else { protocol }),
        (protocol, json) => protocol.or(json),
    }
}

/// Where the JSON begins in `text[from..]`: the first `{` or `[` from which
/// the rest parses as JSON, else the first line that begins with `{`, `[` or
/// a code fence.
fn json_start(text: &str, from: usize) -> Option<usize> {
    const MAX_TRIES: usize = 256;
    let rest = text.get(from..)?;
    let parses = rest
        .match_indices(['{', '['])
        .take(MAX_TRIES)
        .map(|(offset, _)| from + offset)
        .find(|&at| {
            text.get(at..).is_some_and(|json| {
                serde_json::from_str::<serde::de::IgnoredAny>(json.trim_end()).is_ok()
            })
        });
    parses.or_else(|| {
        let mut line_start = from;
        for line in rest.split_inclusive('\n') {
            let body = line.trim_start();
            if body.starts_with(['{', '[']) || body.starts_with("```") {
                return Some(line_start + line.len() - body.len());
            }
            line_start += line.len();
        }
        None
    })
}

/// Removes thinking tags that joining text formed (rare); no-op otherwise.
pub(super) fn scrub(
    text: String,
    thinking: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> String {
    match remove_thinking_once(&text, Until::Protocol, false, thinking, warnings) {
        None => text,
        Some(once) => remove_thinking(&once, Until::Protocol, false, thinking, warnings)
            .trim()
            .to_owned(),
    }
}

/// The inside of a `<message>` wrapping the whole of `text`.
pub(super) fn unwrap_message(text: &str) -> Option<&str> {
    let tags = lex(text);
    let messages: Vec<&Tag> = tags
        .iter()
        .filter(|tag| tag.name == Name::Message)
        .collect();
    match messages.as_slice() {
        [open] if !open.closing && !open.self_closing && open.start == 0 => text.get(open.end..),
        [open, close]
            if !open.closing
                && !open.self_closing
                && open.start == 0
                && close.closing
                && close.end == text.len() =>
        {
            text.get(open.end..close.start)
        }
        _ => None,
    }
}

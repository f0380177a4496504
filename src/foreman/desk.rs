//! The Foreman's desk: the conversation kept as Markdown in the manuscript
//! (`Notes/foreman.md`), one `## Writer` or `## Foreman` heading per turn,
//! plain text the writer can edit and keep in git. The history the Foreman
//! is given (layer 6) is read from it; a turn is answered when the writer's
//! last message has no reply after it.

use std::fmt::Write as _;

use crate::llm::model::Message;
use crate::syntax::{BlockKind, MarkdownParser};
use crate::text::TextRange;

/// The desk, relative to the root.
pub const DESK_FILE: &str = "Notes/foreman.md";

/// What a new desk starts with.
pub const DESK_HEAD: &str = "# The Foreman\n\nWrite under a `## Writer` heading, then ask the Foreman (the editor's \"Ask the Foreman\", or `control-room ask`). The reply comes under `## Foreman`.\n";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speaker {
    Writer,
    Foreman,
}

/// One turn of the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    pub speaker: Speaker,
    /// The turn's heading line.
    pub heading: TextRange,
    /// What was said, trimmed.
    pub text: String,
}

/// The turns of a desk, in order.
pub fn read(text: &str) -> Vec<Turn> {
    let syntax = MarkdownParser::parse_fresh(text);
    let headings: Vec<(TextRange, Option<Speaker>)> = syntax
        .blocks
        .iter()
        .filter(|block| matches!(block.kind, BlockKind::Heading { level } if level <= 2))
        .map(|block| {
            let title = block.inline.slice(text).trim();
            let speaker = if title.starts_with("Writer") {
                Some(Speaker::Writer)
            } else if title.starts_with("Foreman") {
                Some(Speaker::Foreman)
            } else {
                None
            };
            let level_two = matches!(block.kind, BlockKind::Heading { level: 2 });
            (block.range, speaker.filter(|_| level_two))
        })
        .collect();
    headings
        .iter()
        .enumerate()
        .filter_map(|(at, (range, speaker))| {
            let speaker = (*speaker)?;
            let end = headings
                .get(at + 1)
                .map_or(text.len(), |(next, _)| next.start);
            let heading_end = text[range.start..]
                .find('\n')
                .map_or(text.len(), |line| range.start + line);
            Some(Turn {
                speaker,
                heading: TextRange::new(range.start, heading_end),
                text: text[heading_end.min(end)..end].trim().to_owned(),
            })
        })
        .collect()
}

/// The writer's last message when it has no reply yet.
pub fn pending(turns: &[Turn]) -> Option<&Turn> {
    turns
        .last()
        .filter(|turn| turn.speaker == Speaker::Writer && !turn.text.is_empty())
}

/// The turns before `pending` as the model's messages, oldest first.
pub fn history(turns: &[Turn]) -> Vec<Message> {
    let before = match pending(turns) {
        Some(_) => &turns[..turns.len() - 1],
        None => turns,
    };
    before
        .iter()
        .filter(|turn| !turn.text.is_empty())
        .map(|turn| match turn.speaker {
            Speaker::Writer => Message::user(turn.text.clone()),
            Speaker::Foreman => Message::assistant(turn.text.clone()),
        })
        .collect()
}

/// The number of the writer's turns: the turn a reply answers.
pub fn turn_number(turns: &[Turn]) -> usize {
    turns
        .iter()
        .filter(|turn| turn.speaker == Speaker::Writer)
        .count()
}

/// `desk` with the writer's `message` added as a new turn (a new desk when
/// `desk` is empty).
pub fn with_message(desk: &str, message: &str) -> String {
    let mut out = if desk.trim().is_empty() {
        DESK_HEAD.to_owned()
    } else {
        desk.trim_end().to_owned() + "\n"
    };
    out.push_str(&message_turn(message));
    out
}

/// The writer's `message` as the turn added to the end of a desk.
pub fn message_turn(message: &str) -> String {
    format!("\n## Writer\n\n{}\n", demote_headings(message.trim()))
}

/// What the Foreman's reply adds to the desk: its heading, its message
/// (headings demoted so that they cannot start a turn) and what its actions
/// did, each on a line.
pub fn reply_text(message: &str, done: &[String], refused: &[String]) -> String {
    let mut out = String::from("\n## Foreman\n\n");
    out.push_str(demote_headings(message.trim()).trim());
    out.push('\n');
    if !done.is_empty() || !refused.is_empty() {
        out.push('\n');
    }
    for line in done {
        let _ = writeln!(out, "- Done: {line}");
    }
    for line in refused {
        let _ = writeln!(out, "- Refused: {line}");
    }
    out
}

/// Headings of level one or two moved to level three.
fn demote_headings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fenced = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
        }
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if !fenced && (1..=2).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            out.push_str("###");
            out.push_str(&trimmed[hashes..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Where a reply streams while the Foreman writes it: the first line of the
/// block, after its `## Foreman` heading.
pub const STREAMING_OPEN: &str = "<!-- the Foreman is writing… -->";
/// The block's last line.
pub const STREAMING_CLOSE: &str = "<!-- (end of what the Foreman has written so far) -->";

/// The block appended while the reply streams: its heading and markers.
pub fn streaming_block() -> String {
    format!("\n## Foreman\n\n{STREAMING_OPEN}\n{STREAMING_CLOSE}\n")
}

/// Where the streaming block is in `text`: the whole block, from its
/// heading to the end of its last line, and what lies between its markers.
/// `None` when the writer removed a marker.
pub fn streaming_ranges(text: &str) -> Option<(TextRange, TextRange)> {
    let open = text.rfind(STREAMING_OPEN)?;
    let close = open + text[open..].find(STREAMING_CLOSE)?;
    let heading = text[..open].rfind("## Foreman")?;
    // The blank line before the heading belongs to the block.
    let start = text[..heading].trim_end_matches('\n').len();
    let mut end = close + STREAMING_CLOSE.len();
    if text[end..].starts_with('\n') {
        end += 1;
    }
    let inner_start = open + STREAMING_OPEN.len() + 1;
    Some((
        TextRange::new(start, end),
        TextRange::new(inner_start.min(close), close),
    ))
}

/// What the writer should see of a reply still being written: its
/// `<message>` so far (its reasoning and its actions never), or, from a
/// model that writes no tags, its text before any tag.
pub fn partial_message(raw: &str) -> String {
    let mut text = raw;
    // Reasoning is dropped, finished or not.
    let mut without_thinking = String::new();
    while let Some(open) = text.find("<thinking>") {
        without_thinking.push_str(&text[..open]);
        match text[open..].find("</thinking>") {
            Some(close) => text = &text[open + close + "</thinking>".len()..],
            None => {
                text = "";
                break;
            }
        }
    }
    without_thinking.push_str(text);
    let text = without_thinking.as_str();
    let said = match text.find("<message>") {
        Some(open) => {
            let rest = &text[open + "<message>".len()..];
            rest.find("</message>").map_or(rest, |close| &rest[..close])
        }
        None => text.split('<').next().unwrap_or_default(),
    };
    // A tag being written at the end is not shown half-written.
    let said = said.rfind('<').map_or(said, |at| &said[..at]);
    demote_headings(said.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_read_by_their_headings_and_the_last_unanswered_message_is_pending() {
        let desk = with_message("", "Let's build the Story Bible.\n## not a turn");
        let desk = desk
            + &reply_text(
                "# Plan\nStart with the flaw.",
                &["saved character/flaw".into()],
                &[],
            );
        let desk = with_message(&desk, "Kael's flaw is pride.");
        let turns = read(&desk);
        assert_eq!(turns.len(), 3, "{desk}");
        assert_eq!(
            turns[0].text,
            "Let's build the Story Bible.\n### not a turn"
        );
        assert_eq!(turns[1].speaker, Speaker::Foreman);
        assert!(
            turns[1]
                .text
                .starts_with("### Plan\nStart with the flaw.\n\n- Done: saved character/flaw")
        );
        assert_eq!(pending(&turns).unwrap().text, "Kael's flaw is pride.");
        assert_eq!(turn_number(&turns), 2);
        let history = history(&turns);
        assert_eq!(history.len(), 2);
        assert_eq!(
            history[0],
            Message::user("Let's build the Story Bible.\n### not a turn")
        );
    }

    #[test]
    fn a_streaming_reply_shows_its_message_so_far_and_never_its_reasoning_or_actions() {
        assert_eq!(
            partial_message("<thinking>plan</thinking><message>Draft the"),
            "Draft the"
        );
        assert_eq!(partial_message("<thinking>still thinking"), "");
        assert_eq!(
            partial_message("<message>Done.</message><action type=\"save_decision\">"),
            "Done."
        );
        assert_eq!(partial_message("Plain words <mess"), "Plain words");
        assert_eq!(
            partial_message("<message>## A heading\nand </mes"),
            "### A heading\nand"
        );
    }

    #[test]
    fn the_streaming_block_is_found_after_the_writers_text_and_not_without_its_markers() {
        let desk = format!(
            "# The Foreman\n\n## Writer\n\nHello.\n{}",
            streaming_block()
        );
        let (block, inner) = streaming_ranges(&desk).unwrap();
        assert_eq!(
            block.slice(&desk),
            format!("\n\n## Foreman\n\n{STREAMING_OPEN}\n{STREAMING_CLOSE}\n")
        );
        assert_eq!(&desk[..block.start], "# The Foreman\n\n## Writer\n\nHello.");
        assert_eq!(inner.slice(&desk), "");
        assert_eq!(streaming_ranges(&desk.replace(STREAMING_CLOSE, "")), None);
    }
}

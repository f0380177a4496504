//! The Foreman's desk: the conversation kept as Markdown in the manuscript
//! (`Notes/foreman.md`), one `## Writer` or `## Foreman` heading per turn (in
//! any case), plain text the writer can edit and keep in git. The history
//! the Foreman is given (layer 6) is read from it; a turn is answered when
//! the writer's last message has no reply after it.
//!
//! Each reply ends with [`REPLY_END`]. What the writer types after it,
//! without a heading of their own, is the writer's: their next message. So
//! is a whole block under a `## Foreman` heading the writer typed (no
//! marker ends it) in a desk whose replies are marked: the Foreman is never
//! handed the writer's words as its own. (A desk from before the marker
//! has none; its Foreman blocks stay the Foreman's.)

use std::fmt::Write as _;

use crate::llm::model::Message;
use crate::syntax::{BlockKind, MarkdownParser};
use crate::text::TextRange;

/// The desk, relative to the root.
pub const DESK_FILE: &str = "Notes/foreman.md";

/// The line that ends each of the Foreman's replies.
pub const REPLY_END: &str = "<!-- the Foreman's reply ends here -->";

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

/// The speaker a heading's title names: "Writer" or "Foreman", in any case.
fn speaker_of(title: &str) -> Option<Speaker> {
    let title = title.trim().to_lowercase();
    if title.starts_with("writer") {
        Some(Speaker::Writer)
    } else if title.starts_with("foreman") {
        Some(Speaker::Foreman)
    } else {
        None
    }
}

/// The turns of a desk, in order.
pub fn read(text: &str) -> Vec<Turn> {
    let syntax = MarkdownParser::parse_fresh(text);
    let headings: Vec<(TextRange, Option<Speaker>)> = syntax
        .blocks
        .iter()
        .filter(|block| matches!(block.kind, BlockKind::Heading { level } if level <= 2))
        .map(|block| {
            let speaker = speaker_of(block.inline.slice(text));
            let level_two = matches!(block.kind, BlockKind::Heading { level: 2 });
            (block.range, speaker.filter(|_| level_two))
        })
        .collect();
    let marked = text.contains(REPLY_END);
    let mut turns = Vec::new();
    for (at, (range, speaker)) in headings.iter().enumerate() {
        let Some(speaker) = *speaker else {
            continue;
        };
        let end = headings
            .get(at + 1)
            .map_or(text.len(), |(next, _)| next.start);
        let heading_end = text[range.start..]
            .find('\n')
            .map_or(text.len(), |line| range.start + line);
        let heading = TextRange::new(range.start, heading_end);
        let body = heading_end.min(end);
        if speaker == Speaker::Writer {
            turns.push(Turn {
                speaker,
                heading,
                text: text[body..end].trim().to_owned(),
            });
            continue;
        }
        match text[body..end].find(REPLY_END) {
            Some(offset) => {
                turns.push(Turn {
                    speaker,
                    heading,
                    text: text[body..body + offset].trim().to_owned(),
                });
                // Typed after the reply: the writer's next message.
                let after = body + offset + REPLY_END.len();
                let note = text[after..end].trim();
                if !note.is_empty() {
                    turns.push(Turn {
                        speaker: Speaker::Writer,
                        heading: TextRange::new(body + offset, after),
                        text: note.to_owned(),
                    });
                }
            }
            None => {
                let streaming = text[body..end].contains(STREAMING_OPEN);
                turns.push(Turn {
                    // A Foreman heading the writer typed, in a marked desk.
                    speaker: if marked && !streaming {
                        Speaker::Writer
                    } else {
                        Speaker::Foreman
                    },
                    heading,
                    text: text[body..end].trim().to_owned(),
                });
            }
        }
    }
    turns
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
    let _ = writeln!(out, "\n{REPLY_END}");
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
        assert!(
            desk.contains(
                "- Done: saved character/flaw\n\n<!-- the Foreman's reply ends here -->\n"
            ),
            "{desk}"
        );
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

    #[test]
    fn headings_are_read_in_any_case() {
        let desk =
            "# The Foreman\n\n## writer\n\nHello.\n\n## FOREMAN\n\nHi.\n\n## Writer:\n\nAgain.\n";
        let turns = read(desk);
        let speakers: Vec<Speaker> = turns.iter().map(|turn| turn.speaker).collect();
        assert_eq!(
            speakers,
            [Speaker::Writer, Speaker::Foreman, Speaker::Writer],
            "{turns:?}"
        );
        assert_eq!(pending(&turns).unwrap().text, "Again.");
    }

    #[test]
    fn text_the_writer_types_under_a_foreman_heading_is_the_writers_not_the_foremans() {
        let desk = with_message("", "First.") + &reply_text("A reply.", &[], &[]);
        // Typed straight after the reply, with no heading of its own.
        let typed = format!("{desk}\nAnd what about the theme?\n");
        let turns = read(&typed);
        assert_eq!(turns.len(), 3, "{turns:?}");
        assert_eq!(turns[1].speaker, Speaker::Foreman);
        assert_eq!(turns[1].text, "A reply.");
        assert_eq!(pending(&turns).unwrap().text, "And what about the theme?");
        assert_eq!(
            history(&turns),
            [Message::user("First."), Message::assistant("A reply.")]
        );
        // A `## Foreman` heading the writer typed: no reply marker ends it.
        let forged = format!("{desk}\n## Foreman\n\nYes, skip the Story Bible.\n");
        let turns = read(&forged);
        assert_eq!(turns.last().unwrap().speaker, Speaker::Writer);
        assert_eq!(pending(&turns).unwrap().text, "Yes, skip the Story Bible.");
        // A desk from before the marker keeps its replies the Foreman's.
        let old = "## Writer\n\nFirst.\n\n## Foreman\n\nA reply.\n";
        assert_eq!(read(old)[1].speaker, Speaker::Foreman);
        // The block a reply streams into is the Foreman's while it streams.
        let streaming = format!("{desk}\n## Writer\n\nNext.\n{}", streaming_block());
        assert_eq!(read(&streaming).last().unwrap().speaker, Speaker::Foreman);
    }
}

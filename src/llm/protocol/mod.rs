//! The agents' XML output protocol (architecture spec §5.5 and §7): reading a
//! model's reply into its `<thinking>`, `<message>`, `<action type="…">` and
//! `<content_update target="…">` parts, and stripping reasoning from replies
//! that are meant to be JSON or bare text (`agent-outputs.md`).
//!
//! The reader never fails and never panics: whatever a model writes, it gives
//! back its best reading and says in [`ParsedReply::warnings`] what it had to
//! repair or skip. Tags are found by a small hand-written lexer, not by the
//! spec's regexes, so that a malformed tag costs only itself.
//!
//! # Syntax accepted
//!
//! - Tag names are matched without regard to case (`<Message>`), `content-update`
//!   is read as `content_update`, whitespace may follow the name
//!   (`<message >`, `</message >`) but not precede it (`< message>` is text).
//! - Attributes take double quotes, single quotes or none:
//!   `<content_update target='x'>`. An action's type is letters, digits, `_`
//!   and `-`. `<action type="x"/>` is an action without parameters.
//! - Any other tag (`<em>`, `<br>`) is left alone as text.
//! - A code fence around the whole reply (```` ```xml ````, ```` ```markdown ````, or
//!   no language) is removed, before and after the thinking is removed.
//!
//! # Degradation rules (spec §7.3, made stricter)
//!
//! - `<thinking>` and `<think>` blocks (the latter from reasoning models such as
//!   DeepSeek R1 and Qwen) are removed everywhere, before anything else is read,
//!   so that tags inside them are never parsed; several are joined into
//!   [`ParsedReply::thinking`]. An unclosed one is dropped up to the next
//!   `<message>`, `<action` or `<content_update` opening tag, or to the end. A
//!   reply whose first tag is a stray `</think>` (some chat templates put the
//!   opening tag in the prompt) has everything before it taken as thinking.
//!   Any `<thinking…` fragment counts as an opening tag, so none survives.
//! - No `<message>` tag: the message is the reply with thinking, actions and
//!   content updates removed, trimmed. Several `<message>` blocks are joined by
//!   a blank line; text outside them is dropped (with a warning). An unclosed
//!   `<message>` runs to the next protocol opening tag or to the end.
//! - An `<action>` without a valid type, or unclosed (no `</action>` before the
//!   next `<action` or `<content_update`), is skipped and its raw text goes to
//!   the message: in place when it stands inside a `<message>` or when there
//!   are no message tags, appended after a blank line otherwise.
//! - Action parameters are the attributes other than `type` (in order), then
//!   the child elements `<key>value</key>`, trimmed and kept as text (JSON
//!   arrays included). Elements nested in a value stay in the value.
//! - A `<content_update>` without a target is kept with target `""`; an
//!   unclosed one runs to the next protocol opening tag or to the end.
//! - Actions and content updates found inside a closed `<message>` are read
//!   like any other and removed from the message text.
//! - Stray closing tags are dropped.

mod lex;
mod reader;
pub mod schema;
mod text;
mod thinking;

#[cfg(test)]
mod tests;

use std::borrow::Cow;

use lex::lex;
use reader::{Piece, Reader};
use text::{join_pieces, strip_chatter, strip_outer_fence, unwrap_fenced_prose};
use thinking::{Until, remove_thinking, scrub, unwrap_message};

/// An agent's reply read through the XML output protocol.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedReply {
    /// `<thinking>` text, kept only for the debug log; never stored in artifacts.
    pub thinking: Option<String>,
    /// `<message>` text, or (graceful degradation) the whole reply with thinking and other protocol tags removed.
    pub message: String,
    /// Whether `<message>` tags were present.
    pub has_message_tag: bool,
    pub actions: Vec<Action>,
    pub content_updates: Vec<ContentUpdate>,
    /// What was repaired or skipped, in words, for the run report and log (e.g. "an <action> without a type was skipped", "unclosed <thinking> was dropped up to <message>").
    pub warnings: Vec<String>,
}

/// One `<action type="…">`: its type, its parameters in the order written,
/// and its inner text as written (trimmed), as in spec §7.2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    pub kind: String,
    pub params: Vec<(String, String)>,
    pub raw: String,
}

/// One `<content_update target="…">`: the target as written (`""` when it was
/// missing) and the prose, trimmed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentUpdate {
    pub target: String,
    pub content: String,
}

/// Reads a reply through the output protocol; never fails (see the module
/// documentation for what is repaired and how).
pub fn parse(reply: &str) -> ParsedReply {
    let mut thinking = Vec::new();
    let mut warnings = Vec::new();
    let unfenced = strip_outer_fence(reply).unwrap_or(reply);
    let cleaned = remove_thinking(
        unfenced,
        Until::Protocol,
        true,
        &mut thinking,
        &mut warnings,
    );
    let text = strip_outer_fence(&cleaned).unwrap_or(&cleaned);

    let mut reader = Reader {
        text,
        tags: lex(text),
        has_message: false,
        messages: Vec::new(),
        actions: Vec::new(),
        content_updates: Vec::new(),
        warnings,
    };
    let pieces = reader.read(0, text.len(), false);

    let message = if reader.has_message {
        if pieces
            .iter()
            .any(|piece| matches!(piece, Piece::Text(text) if !text.trim().is_empty()))
        {
            reader
                .warnings
                .push("text outside <message> was dropped".into());
        }
        let skipped = pieces.iter().filter_map(|piece| match piece {
            Piece::Skipped(raw) => Some(raw.trim().to_owned()),
            Piece::Text(_) => None,
        });
        let parts: Vec<String> = reader
            .messages
            .drain(..)
            .chain(skipped)
            .filter(|part| !part.is_empty())
            .collect();
        parts.join("\n\n")
    } else {
        join_pieces(pieces.iter().map(Piece::as_str))
            .trim()
            .to_owned()
    };

    let Reader {
        has_message,
        actions,
        content_updates,
        mut warnings,
        ..
    } = reader;
    // Removing blocks joins the text around them, which could in theory form
    // a new thinking tag; scrub what the caller will show or store.
    let message = scrub(message, &mut thinking, &mut warnings);
    let content_updates = content_updates
        .into_iter()
        .map(|update| ContentUpdate {
            content: scrub(update.content, &mut thinking, &mut warnings),
            ..update
        })
        .collect();
    ParsedReply {
        thinking: (!thinking.is_empty()).then(|| thinking.join("\n\n")),
        message,
        has_message_tag: has_message,
        actions,
        content_updates,
        warnings,
    }
}

impl ParsedReply {
    /// The prose a prose step produces: the content updates' text (joined by a blank line, in order) if any, else the message. Never contains thinking.
    ///
    /// Content updates with empty content do not count.
    ///
    /// Prose a model put in a code fence anywhere in it (closed or not) is
    /// taken out of the fence, the text around the fence dropped; a line
    /// that only introduces the prose ("Here is the scene:") and a last
    /// paragraph that only comments on it ("I hope this captures…") are
    /// dropped too.
    pub fn prose(&self) -> Cow<'_, str> {
        let contents: Vec<&str> = self
            .content_updates
            .iter()
            .map(|update| update.content.as_str())
            .filter(|content| !content.is_empty())
            .collect();
        let joined = match contents.as_slice() {
            [] => Cow::Borrowed(self.message.as_str()),
            [only] => Cow::Borrowed(*only),
            _ => Cow::Owned(contents.join("\n\n")),
        };
        let unfenced = match unwrap_fenced_prose(&joined) {
            Some((inside, _)) if !inside.is_empty() => Cow::Owned(inside),
            _ => joined,
        };
        match unfenced {
            Cow::Borrowed(text) => Cow::Borrowed(strip_chatter(text)),
            Cow::Owned(text) => Cow::Owned(strip_chatter(&text).to_owned()),
        }
    }

    /// Every file path the reply names: content_update targets, and action params named path, file, target or canon.
    ///
    /// Content update targets come first, then action parameters, each in
    /// order; empty values are left out and each path is named once.
    pub fn paths(&self) -> Vec<&str> {
        const PATH_PARAMS: [&str; 4] = ["path", "file", "target", "canon"];
        let targets = self
            .content_updates
            .iter()
            .map(|update| update.target.as_str());
        let params = self.actions.iter().flat_map(|action| {
            action
                .params
                .iter()
                .filter(|(key, _)| {
                    PATH_PARAMS
                        .iter()
                        .any(|name| key.eq_ignore_ascii_case(name))
                })
                .map(|(_, value)| value.as_str())
        });
        let mut paths: Vec<&str> = Vec::new();
        for path in targets.chain(params) {
            if !path.is_empty() && !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }
}

/// Removes reasoning from a reply that is meant to be JSON or bare text: `<thinking>…</thinking>` and `<think>…</think>` blocks (reasoning models such as DeepSeek R1 and Qwen emit the latter), an unclosed one up to the first `{` or `[` that starts the rest, and unwraps a `<message>` wrapper if the whole reply is one. Returns the rest, trimmed.
///
/// "The first `{` or `[` that starts the rest" is the first one from which
/// the rest parses as JSON; failing that, the first line that begins with
/// `{`, `[` or a code fence; failing that, the next `<message>` tag; failing
/// that, the reasoning runs to the end and the result is empty. Text before
/// a leading stray `</think>` is reasoning too.
pub fn strip_reasoning(reply: &str) -> String {
    let cleaned = remove_thinking(reply, Until::Json, true, &mut Vec::new(), &mut Vec::new());
    let trimmed = cleaned.trim();
    unwrap_message(trimmed).unwrap_or(trimmed).trim().to_owned()
}

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

use std::borrow::Cow;

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
    pub fn prose(&self) -> Cow<'_, str> {
        let contents: Vec<&str> = self
            .content_updates
            .iter()
            .map(|update| update.content.as_str())
            .filter(|content| !content.is_empty())
            .collect();
        match contents.as_slice() {
            [] => Cow::Borrowed(&self.message),
            [only] => Cow::Borrowed(only),
            _ => Cow::Owned(contents.join("\n\n")),
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

// ---------------------------------------------------------------------------
// Lexer

/// The protocol's tag names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Name {
    Thinking,
    Think,
    Message,
    Action,
    ContentUpdate,
}

impl Name {
    fn from_word(word: &[u8]) -> Option<Self> {
        const NAMES: [(&str, Name); 6] = [
            ("thinking", Name::Thinking),
            ("think", Name::Think),
            ("message", Name::Message),
            ("action", Name::Action),
            ("content_update", Name::ContentUpdate),
            ("content-update", Name::ContentUpdate),
        ];
        NAMES
            .iter()
            .find(|(name, _)| word.eq_ignore_ascii_case(name.as_bytes()))
            .map(|&(_, name)| name)
    }

    fn as_str(self) -> &'static str {
        match self {
            Name::Thinking => "thinking",
            Name::Think => "think",
            Name::Message => "message",
            Name::Action => "action",
            Name::ContentUpdate => "content_update",
        }
    }

    fn is_thinking(self) -> bool {
        matches!(self, Name::Thinking | Name::Think)
    }

    /// The blocks that end an unclosed thinking, message or content update.
    fn is_block(self) -> bool {
        matches!(self, Name::Message | Name::Action | Name::ContentUpdate)
    }
}

/// One protocol tag: `text[start..end]`, its attributes at `text[attrs.0..attrs.1]`.
#[derive(Clone, Copy, Debug)]
struct Tag {
    start: usize,
    end: usize,
    name: Name,
    closing: bool,
    self_closing: bool,
    attrs: (usize, usize),
}

impl Tag {
    fn opens(&self, wanted: impl Fn(Name) -> bool) -> bool {
        !self.closing && wanted(self.name)
    }
}

/// Every protocol tag in `text`, in order. A tag never contains a `<` other
/// than its first byte, so every `<` of the text is looked at.
fn lex(text: &str) -> Vec<Tag> {
    let bytes = text.as_bytes();
    let mut tags = Vec::new();
    let mut from = 0;
    while let Some(offset) = bytes
        .get(from..)
        .and_then(|rest| memchr::memchr(b'<', rest))
    {
        let start = from + offset;
        match lex_tag(bytes, start) {
            Some(tag) => {
                from = tag.end;
                tags.push(tag);
            }
            None => from = start + 1,
        }
    }
    tags
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// The protocol tag starting at `bytes[start]` (a `<`), if it is one.
fn lex_tag(bytes: &[u8], start: usize) -> Option<Tag> {
    let mut p = start + 1;
    let closing = bytes.get(p) == Some(&b'/');
    if closing {
        p += 1;
    }
    let name_start = p;
    while bytes.get(p).is_some_and(|&byte| is_name_byte(byte)) {
        p += 1;
    }
    let word = bytes.get(name_start..p)?;
    // Any `<thinking…` opens a thinking block, even unterminated or run into
    // other letters, so that no fragment of one reaches the prose.
    let lenient = !closing
        && word
            .get(..8)
            .is_some_and(|head| head.eq_ignore_ascii_case(b"thinking"));
    let name = if lenient {
        Name::Thinking
    } else {
        Name::from_word(word)?
    };
    if closing {
        while bytes.get(p).is_some_and(u8::is_ascii_whitespace) {
            p += 1;
        }
        return (bytes.get(p) == Some(&b'>')).then_some(Tag {
            start,
            end: p + 1,
            name,
            closing,
            self_closing: false,
            attrs: (p, p),
        });
    }
    if !lenient
        && !bytes
            .get(p)
            .is_some_and(|&byte| byte.is_ascii_whitespace() || byte == b'/' || byte == b'>')
    {
        return None;
    }
    let rest = bytes.get(p..)?;
    let stop = rest
        .iter()
        .position(|&byte| byte == b'<' || byte == b'>')
        .map_or(bytes.len(), |offset| p + offset);
    if bytes.get(stop) == Some(&b'>') {
        let attrs = bytes.get(p..stop)?.trim_ascii_end();
        let self_closing = attrs.ends_with(b"/");
        let attrs_end = p + attrs.len() - usize::from(self_closing);
        Some(Tag {
            start,
            end: stop + 1,
            name,
            closing,
            self_closing,
            attrs: (p, attrs_end),
        })
    } else if lenient {
        Some(Tag {
            start,
            end: stop,
            name,
            closing,
            self_closing: false,
            attrs: (p, stop),
        })
    } else {
        None
    }
}

/// The attributes `name="v"`, `name='v'`, `name=v` or bare `name`, in order.
fn parse_attrs(attrs: &str) -> Vec<(&str, &str)> {
    let bytes = attrs.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_space = |mut j: usize| {
        while bytes.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        j
    };
    while i < bytes.len() {
        let name_start = i;
        while bytes.get(i).is_some_and(|&byte| {
            !byte.is_ascii_whitespace() && !matches!(byte, b'=' | b'/' | b'"' | b'\'')
        }) {
            i += 1;
        }
        if i == name_start {
            i += 1;
            continue;
        }
        let name = attrs.get(name_start..i).unwrap_or_default();
        let mut value = "";
        let j = skip_space(i);
        if bytes.get(j) == Some(&b'=') {
            let j = skip_space(j + 1);
            match bytes.get(j) {
                Some(&quote @ (b'"' | b'\'')) => {
                    let value_end = bytes
                        .get(j + 1..)
                        .and_then(|rest| rest.iter().position(|&byte| byte == quote))
                        .map_or(bytes.len(), |offset| j + 1 + offset);
                    value = attrs.get(j + 1..value_end).unwrap_or_default();
                    i = value_end + 1;
                }
                _ => {
                    let mut value_end = j;
                    while bytes
                        .get(value_end)
                        .is_some_and(|byte| !byte.is_ascii_whitespace())
                    {
                        value_end += 1;
                    }
                    value = attrs.get(j..value_end).unwrap_or_default();
                    i = value_end;
                }
            }
        }
        out.push((name, value));
    }
    out
}

fn attr<'t>(attrs: &[(&'t str, &'t str)], name: &str) -> Option<&'t str> {
    attrs
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim())
}

// ---------------------------------------------------------------------------
// Thinking

/// Where an unclosed thinking block ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    /// At the next `<message>`, `<action` or `<content_update` opening tag.
    Protocol,
    /// Where the JSON starts, or at the next protocol opening tag.
    Json,
}

/// `text` without thinking blocks, whose text goes to `thinking`. Repeats
/// until no thinking tag is left (joining the text around a removed block
/// could form a new one).
fn remove_thinking(
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
fn scrub(text: String, thinking: &mut Vec<String>, warnings: &mut Vec<String>) -> String {
    match remove_thinking_once(&text, Until::Protocol, false, thinking, warnings) {
        None => text,
        Some(once) => remove_thinking(&once, Until::Protocol, false, thinking, warnings)
            .trim()
            .to_owned(),
    }
}

/// The inside of a `<message>` wrapping the whole of `text`.
fn unwrap_message(text: &str) -> Option<&str> {
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

// ---------------------------------------------------------------------------
// Blocks

/// Text left where the reader passed: plain text, or a skipped action's raw text.
#[derive(Clone, Copy, Debug)]
enum Piece<'t> {
    Text(&'t str),
    Skipped(&'t str),
}

impl<'t> Piece<'t> {
    fn as_str(&self) -> &'t str {
        match *self {
            Piece::Text(text) | Piece::Skipped(text) => text,
        }
    }
}

/// Reads the blocks of a reply whose thinking is already gone.
struct Reader<'t> {
    text: &'t str,
    tags: Vec<Tag>,
    has_message: bool,
    messages: Vec<String>,
    actions: Vec<Action>,
    content_updates: Vec<ContentUpdate>,
    warnings: Vec<String>,
}

impl<'t> Reader<'t> {
    fn slice(&self, from: usize, to: usize) -> &'t str {
        self.text.get(from..to).unwrap_or_default()
    }

    fn index_at(&self, pos: usize) -> usize {
        self.tags.partition_point(|tag| tag.start < pos)
    }

    /// The index of the tag closing the block opened by tag `k`, if it comes
    /// before `end` and before any opening tag that `blocks` says ends it.
    fn find_close(
        &self,
        k: usize,
        end: usize,
        name: Name,
        blocks: impl Fn(Name) -> bool,
    ) -> Option<usize> {
        for (offset, tag) in self.tags.get(k + 1..)?.iter().enumerate() {
            if tag.end > end {
                break;
            }
            if tag.closing && tag.name == name {
                return Some(k + 1 + offset);
            }
            if tag.opens(&blocks) {
                return None;
            }
        }
        None
    }

    /// Where an unclosed block opened by tag `k` stops: the next protocol
    /// opening tag before `end` (its index and how to name it), else `end`.
    fn unclosed_stop(&self, k: usize, end: usize) -> (usize, usize, String) {
        let next = self
            .tags
            .iter()
            .enumerate()
            .skip(k + 1)
            .take_while(|(_, tag)| tag.end <= end)
            .find(|(_, tag)| tag.opens(Name::is_block));
        match next {
            Some((index, tag)) => (tag.start, index, format!("up to <{}>", tag.name.as_str())),
            None => (
                end,
                self.index_at(end),
                "to the end of the reply".to_owned(),
            ),
        }
    }

    /// Reads `text[pos..end]`; returns the text outside blocks. Returns with
    /// `has_message`, `messages`, `actions`, … filled in.
    fn read(&mut self, mut pos: usize, end: usize, in_message: bool) -> Vec<Piece<'t>> {
        let mut pieces = Vec::new();
        let mut k = self.index_at(pos);
        while let Some(&tag) = self.tags.get(k)
            && tag.end <= end
        {
            pieces.push(Piece::Text(self.slice(pos, tag.start)));
            (pos, k) = match tag.name {
                _ if tag.closing => {
                    self.warnings
                        .push(format!("a stray </{}> was dropped", tag.name.as_str()));
                    (tag.end, k + 1)
                }
                Name::Message if in_message => {
                    // Not reached: a closed message holds no `<message>`.
                    (tag.end, k + 1)
                }
                Name::Message => self.message(k, end),
                Name::Action => self.action(k, end, &mut pieces),
                Name::ContentUpdate => self.content_update(k, end),
                Name::Thinking | Name::Think => (tag.end, k + 1),
            };
        }
        pieces.push(Piece::Text(self.slice(pos, end)));
        pieces
    }

    fn message(&mut self, k: usize, end: usize) -> (usize, usize) {
        let open = self.tags[k];
        self.has_message = true;
        if open.self_closing {
            return (open.end, k + 1);
        }
        let (body_end, resume, next) =
            match self.find_close(k, end, Name::Message, |name| name == Name::Message) {
                Some(close) => (self.tags[close].start, self.tags[close].end, close + 1),
                None => {
                    let (stop, index, what) = self.unclosed_stop(k, end);
                    self.warnings
                        .push(format!("unclosed <message> was taken {what}"));
                    (stop, stop, index)
                }
            };
        let pieces = self.read(open.end, body_end, true);
        let body = join_pieces(pieces.iter().map(Piece::as_str))
            .trim()
            .to_owned();
        self.messages.push(body);
        (resume, next)
    }

    fn action(&mut self, k: usize, end: usize, pieces: &mut Vec<Piece<'t>>) -> (usize, usize) {
        let open = self.tags[k];
        let attrs = parse_attrs(self.slice(open.attrs.0, open.attrs.1));
        let kind = attr(&attrs, "type");
        let closed = if open.self_closing {
            Some((open.end, open.end, open.end, k + 1))
        } else {
            self.find_close(k, end, Name::Action, |name| {
                matches!(name, Name::Action | Name::ContentUpdate)
            })
            .map(|close| {
                let close_tag = self.tags[close];
                (open.end, close_tag.start, close_tag.end, close + 1)
            })
        };
        let described = match kind {
            Some(kind) => format!("<action type=\"{kind}\">"),
            None => "<action>".to_owned(),
        };
        let Some((inner_start, inner_end, element_end, next)) = closed else {
            let (stop, index, _) = self.unclosed_stop(k, end);
            self.warnings
                .push(format!("an unclosed {described} was skipped"));
            pieces.push(Piece::Skipped(self.slice(open.start, stop)));
            return (stop, index);
        };
        let raw = self.slice(open.start, element_end);
        match kind {
            None => {
                self.warnings
                    .push("an <action> without a type was skipped".to_owned());
                pieces.push(Piece::Skipped(raw));
            }
            Some(kind) if kind.is_empty() || !kind.bytes().all(is_name_byte) => {
                self.warnings.push(format!(
                    "an <action> with an invalid type \"{kind}\" was skipped"
                ));
                pieces.push(Piece::Skipped(raw));
            }
            Some(kind) => {
                let inner = self.slice(inner_start, inner_end);
                let mut params: Vec<(String, String)> = attrs
                    .iter()
                    .filter(|(key, _)| !key.eq_ignore_ascii_case("type"))
                    .map(|(key, value)| ((*key).to_owned(), value.trim().to_owned()))
                    .collect();
                parse_params(inner, &mut params, &described, &mut self.warnings);
                self.actions.push(Action {
                    kind: kind.to_owned(),
                    params,
                    raw: inner.trim().to_owned(),
                });
            }
        }
        (element_end, next)
    }

    fn content_update(&mut self, k: usize, end: usize) -> (usize, usize) {
        let open = self.tags[k];
        let attrs = parse_attrs(self.slice(open.attrs.0, open.attrs.1));
        let target = attr(&attrs, "target");
        if target.is_none() {
            self.warnings.push(
                "a <content_update> without a target was kept with an empty target".to_owned(),
            );
        }
        let target = target.unwrap_or_default().to_owned();
        let (content, resume, next) = if open.self_closing {
            ("", open.end, k + 1)
        } else if let Some(close) = self.find_close(k, end, Name::ContentUpdate, Name::is_block) {
            let close_tag = self.tags[close];
            (
                self.slice(open.end, close_tag.start),
                close_tag.end,
                close + 1,
            )
        } else {
            let (stop, index, what) = self.unclosed_stop(k, end);
            let described = if target.is_empty() {
                "<content_update>".to_owned()
            } else {
                format!("<content_update target=\"{target}\">")
            };
            self.warnings
                .push(format!("an unclosed {described} was taken {what}"));
            (self.slice(open.end, stop), stop, index)
        };
        self.content_updates.push(ContentUpdate {
            target,
            content: content.trim().to_owned(),
        });
        (resume, next)
    }
}

/// An action's child elements `<key>value</key>`, appended to `params`.
fn parse_params(
    inner: &str,
    params: &mut Vec<(String, String)>,
    action: &str,
    warnings: &mut Vec<String>,
) {
    let bytes = inner.as_bytes();
    let mut pos = 0;
    while let Some(offset) = bytes.get(pos..).and_then(|rest| memchr::memchr(b'<', rest)) {
        let lt = pos + offset;
        let name_start = lt + 1;
        let mut name_end = name_start;
        while bytes
            .get(name_end)
            .is_some_and(|&byte| is_name_byte(byte) || byte == b'.' || byte == b':')
        {
            name_end += 1;
        }
        let starts_well = bytes
            .get(name_start)
            .is_some_and(|&byte| byte.is_ascii_alphabetic() || byte == b'_');
        let tag_end = bytes
            .get(name_end..)
            .and_then(|rest| rest.iter().position(|&byte| byte == b'<' || byte == b'>'))
            .map(|offset| name_end + offset)
            .filter(|&at| bytes.get(at) == Some(&b'>'));
        let (true, Some(gt)) = (starts_well, tag_end) else {
            pos = name_end.max(lt + 1);
            continue;
        };
        let name = inner.get(name_start..name_end).unwrap_or_default();
        let attrs = inner.get(name_end..gt).unwrap_or_default();
        if !(attrs.is_empty() || attrs.starts_with(|c: char| c.is_ascii_whitespace() || c == '/')) {
            pos = name_end;
            continue;
        }
        if attrs.trim_end().ends_with('/') {
            params.push((name.to_owned(), String::new()));
            pos = gt + 1;
            continue;
        }
        match find_element_close(bytes, gt + 1, name.as_bytes()) {
            Some((close_start, close_end)) => {
                let value = inner.get(gt + 1..close_start).unwrap_or_default();
                params.push((name.to_owned(), value.trim().to_owned()));
                pos = close_end;
            }
            None => {
                warnings.push(format!("an unclosed <{name}> in {action} was ignored"));
                pos = gt + 1;
            }
        }
    }
}

/// The first `</name>` (any case, whitespace before `>`) at or after `from`.
fn find_element_close(bytes: &[u8], from: usize, name: &[u8]) -> Option<(usize, usize)> {
    let mut pos = from;
    while let Some(offset) = bytes
        .get(pos..)
        .and_then(|rest| memchr::memmem::find(rest, b"</"))
    {
        let start = pos + offset;
        let name_start = start + 2;
        let name_end = name_start + name.len();
        if bytes
            .get(name_start..name_end)
            .is_some_and(|word| word.eq_ignore_ascii_case(name))
        {
            let mut p = name_end;
            while bytes.get(p).is_some_and(u8::is_ascii_whitespace) {
                p += 1;
            }
            if bytes.get(p) == Some(&b'>') {
                return Some((start, p + 1));
            }
        }
        pos = start + 2;
    }
    None
}

// ---------------------------------------------------------------------------
// Text

/// Joins text around removed blocks: where both sides have whitespace, it
/// becomes one space, or as many line breaks (at most two) as the side with
/// more had, so that a block on its own line leaves no hole.
fn join_pieces<'p>(pieces: impl IntoIterator<Item = &'p str>) -> String {
    let mut out = String::new();
    for piece in pieces {
        if piece.is_empty() {
            continue;
        }
        let kept = out.trim_end().len();
        let left_space = &out[kept..];
        let right = piece.trim_start();
        let right_space = &piece[..piece.len() - right.len()];
        if out.is_empty() || left_space.is_empty() || right_space.is_empty() {
            out.push_str(piece);
            continue;
        }
        let breaks = left_space
            .matches('\n')
            .count()
            .max(right_space.matches('\n').count())
            .min(2);
        // Keep the indentation of the right side's first line.
        let right = match right_space.rfind('\n') {
            Some(at) => &piece[at + 1..],
            None => right,
        };
        out.truncate(kept);
        if breaks == 0 {
            out.push(' ');
        } else {
            out.extend(std::iter::repeat_n('\n', breaks));
        }
        out.push_str(right);
    }
    out
}

/// The inside of a code fence around the whole of `text` whose language is
/// none, XML, HTML, Markdown or plain text.
fn strip_outer_fence(text: &str) -> Option<&str> {
    const LANGUAGES: [&str; 8] = [
        "",
        "xml",
        "html",
        "markdown",
        "md",
        "text",
        "txt",
        "plaintext",
    ];
    let text = text.trim();
    let fence = text.chars().next().filter(|&c| c == '`' || c == '~')?;
    let (opener, rest) = text.split_once('\n')?;
    let width = opener.len() - opener.trim_start_matches(fence).len();
    let info = opener[width..].trim();
    if width < 3
        || info.contains(fence)
        || !LANGUAGES.iter().any(|lang| info.eq_ignore_ascii_case(lang))
    {
        return None;
    }
    let is_fence = |line: &str| {
        let line = line.trim();
        line.len() >= width && line.chars().all(|c| c == fence)
    };
    let (body, closer) = match rest.rfind('\n') {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => ("", rest),
    };
    (is_fence(closer) && !body.lines().any(is_fence)).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(kind: &str, params: &[(&str, &str)], raw: &str) -> Action {
        Action {
            kind: kind.to_owned(),
            params: params
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect(),
            raw: raw.to_owned(),
        }
    }

    fn update(target: &str, content: &str) -> ContentUpdate {
        ContentUpdate {
            target: target.to_owned(),
            content: content.to_owned(),
        }
    }

    /// A reply with only a message.
    fn message(text: &str, has_message_tag: bool) -> ParsedReply {
        ParsedReply {
            message: text.to_owned(),
            has_message_tag,
            ..ParsedReply::default()
        }
    }

    fn warned(mut reply: ParsedReply, warnings: &[&str]) -> ParsedReply {
        reply.warnings = warnings.iter().map(|&warning| warning.to_owned()).collect();
        reply
    }

    const SPEC_MULTIPLE_TAGS: &str = r#"<thinking>
Writer provided good detail on the midpoint. This resolves the beat_sheet gap.
Should update status and save the decision.
</thinking>

<message>
That's a strong false victory—Elena thinks she's won Marcus's trust, but it's actually a setup. This creates excellent tension for the "Bad Guys Close In" beats.

I'm updating the Beat Sheet with this midpoint.
</message>

<action type="update_status">
  <template>beat_sheet</template>
  <status>in_progress</status>
  <missing>["beat_11", "beat_12", "beat_13"]</missing>
</action>

<action type="save_decision">
  <category>structure</category>
  <key>midpoint_type</key>
  <value>false_victory</value>
</action>
"#;

    fn parse_cases() -> Vec<(&'static str, &'static str, ParsedReply)> {
        vec![
            (
                "spec §5.5 multiple tags per response",
                SPEC_MULTIPLE_TAGS,
                ParsedReply {
                    thinking: Some(
                        "Writer provided good detail on the midpoint. This resolves the beat_sheet gap.\nShould update status and save the decision."
                            .into(),
                    ),
                    message: "That's a strong false victory—Elena thinks she's won Marcus's trust, but it's actually a setup. This creates excellent tension for the \"Bad Guys Close In\" beats.\n\nI'm updating the Beat Sheet with this midpoint.".into(),
                    has_message_tag: true,
                    actions: vec![
                        action(
                            "update_status",
                            &[
                                ("template", "beat_sheet"),
                                ("status", "in_progress"),
                                ("missing", r#"["beat_11", "beat_12", "beat_13"]"#),
                            ],
                            "<template>beat_sheet</template>\n  <status>in_progress</status>\n  <missing>[\"beat_11\", \"beat_12\", \"beat_13\"]</missing>",
                        ),
                        action(
                            "save_decision",
                            &[("category", "structure"), ("key", "midpoint_type"), ("value", "false_victory")],
                            "<category>structure</category>\n  <key>midpoint_type</key>\n  <value>false_victory</value>",
                        ),
                    ],
                    content_updates: vec![],
                    warnings: vec![],
                },
            ),
            (
                "spec anti-pattern: a tag inside thinking is not parsed",
                "<thinking>I should use <action>...</thinking>\n<message>Noted.</message>",
                ParsedReply {
                    thinking: Some("I should use <action>...".into()),
                    ..message("Noted.", true)
                },
            ),
            (
                "a whole action inside thinking is not parsed",
                "<thinking>Maybe <action type=\"save_decision\"><key>k</key></action> later</thinking>Fine.",
                ParsedReply {
                    thinking: Some("Maybe <action type=\"save_decision\"><key>k</key></action> later".into()),
                    ..message("Fine.", false)
                },
            ),
            (
                "unclosed thinking before a message",
                "<thinking>Plan the reply.\n<message>Elena waits.</message>",
                ParsedReply {
                    thinking: Some("Plan the reply.".into()),
                    ..warned(message("Elena waits.", true), &["unclosed <thinking> was dropped up to <message>"])
                },
            ),
            (
                "unclosed thinking to the end",
                "Hello.\n<THINKING>and then",
                ParsedReply {
                    thinking: Some("and then".into()),
                    ..warned(message("Hello.", false), &["unclosed <thinking> was dropped to the end of the reply"])
                },
            ),
            (
                "several thinking blocks are joined",
                "<thinking>one</thinking><message>Hi</message><think>two</think>",
                ParsedReply {
                    thinking: Some("one\n\ntwo".into()),
                    ..message("Hi", true)
                },
            ),
            (
                "bare prose",
                "  Elena opened the door.\n\nMarcus was waiting.  \n",
                message("Elena opened the door.\n\nMarcus was waiting.", false),
            ),
            (
                "prose with non-protocol tags",
                "She <em>knew</em>.<br>Then < message nothing.",
                message("She <em>knew</em>.<br>Then < message nothing.", false),
            ),
            (
                "two messages",
                "<message>One.</message>\n<message>\nTwo.\n</message>",
                message("One.\n\nTwo.", true),
            ),
            (
                "case and whitespace in tags",
                "<Message >Hi</MESSAGE >",
                message("Hi", true),
            ),
            (
                "malformed action goes to the end of the message",
                "<message>Saved.</message>\n<action>\n<key>x</key>\n</action>",
                warned(
                    message("Saved.\n\n<action>\n<key>x</key>\n</action>", true),
                    &["an <action> without a type was skipped"],
                ),
            ),
            (
                "malformed action stays in place without message tags",
                "Before.\n<action kind=\"x\">oops</action>\nAfter.",
                warned(
                    message("Before.\n<action kind=\"x\">oops</action>\nAfter.", false),
                    &["an <action> without a type was skipped"],
                ),
            ),
            (
                "action with an invalid type",
                "<action type=\"save decision\"><key>k</key></action>",
                warned(
                    message("<action type=\"save decision\"><key>k</key></action>", false),
                    &["an <action> with an invalid type \"save decision\" was skipped"],
                ),
            ),
            (
                "unclosed action before a message",
                "<action type=\"save_decision\"><key>k</key>\n<message>Hi</message>",
                warned(
                    message("Hi\n\n<action type=\"save_decision\"><key>k</key>", true),
                    &["an unclosed <action type=\"save_decision\"> was skipped"],
                ),
            ),
            (
                "unclosed action before another action",
                "<action type=\"a\"><k>1</k>\n<action type=\"b\"><k>2</k></action>",
                ParsedReply {
                    actions: vec![action("b", &[("k", "2")], "<k>2</k>")],
                    ..warned(
                        message("<action type=\"a\"><k>1</k>", false),
                        &["an unclosed <action type=\"a\"> was skipped"],
                    )
                },
            ),
            (
                "action attributes, single quotes, hyphen, self-closing, case",
                "<message>Ok</message><ACTION Type='save-decision' path=\"a.md\"><Key> k </Key><note><em>x</em></note></Action><action type=advance/>",
                ParsedReply {
                    actions: vec![
                        action(
                            "save-decision",
                            &[("path", "a.md"), ("Key", "k"), ("note", "<em>x</em>")],
                            "<Key> k </Key><note><em>x</em></note>",
                        ),
                        action("advance", &[], ""),
                    ],
                    ..message("Ok", true)
                },
            ),
            (
                "unclosed parameter element",
                "<action type=\"a\"><key>k</key><value>v</action>",
                ParsedReply {
                    actions: vec![action("a", &[("key", "k")], "<key>k</key><value>v")],
                    ..warned(
                        message("", false),
                        &["an unclosed <value> in <action type=\"a\"> was ignored"],
                    )
                },
            ),
            (
                "action inside a closed message",
                "<message>I'll save it. <action type=\"save_decision\"><key>k</key></action> Done.</message>",
                ParsedReply {
                    actions: vec![action("save_decision", &[("key", "k")], "<key>k</key>")],
                    ..message("I'll save it. Done.", true)
                },
            ),
            (
                "unclosed message up to an action",
                "<message>Hi there\n<action type=\"x\"><k>v</k></action>",
                ParsedReply {
                    actions: vec![action("x", &[("k", "v")], "<k>v</k>")],
                    ..warned(message("Hi there", true), &["unclosed <message> was taken up to <action>"])
                },
            ),
            (
                "unclosed message to the end",
                "<message>Hi there",
                warned(message("Hi there", true), &["unclosed <message> was taken to the end of the reply"]),
            ),
            (
                "content update with single quotes",
                "<content_update target='Story/Scenes/SCN-1.md'>\nElena's hand trembled.\n\nShe pushed through.\n</content_update>",
                ParsedReply {
                    content_updates: vec![update(
                        "Story/Scenes/SCN-1.md",
                        "Elena's hand trembled.\n\nShe pushed through.",
                    )],
                    ..message("", false)
                },
            ),
            (
                "content update without a target",
                "Here it is.\n<content_update>\nText.\n</content_update>",
                ParsedReply {
                    content_updates: vec![update("", "Text.")],
                    ..warned(
                        message("Here it is.", false),
                        &["a <content_update> without a target was kept with an empty target"],
                    )
                },
            ),
            (
                "unclosed content update",
                "<message>Draft below.</message>\n<content_update target=\"a.md\">Elena ran.",
                ParsedReply {
                    content_updates: vec![update("a.md", "Elena ran.")],
                    ..warned(
                        message("Draft below.", true),
                        &["an unclosed <content_update target=\"a.md\"> was taken to the end of the reply"],
                    )
                },
            ),
            (
                "think block from a reasoning model",
                "<think>\nThe user wants a scene.\n</think>\n\nElena waited.",
                ParsedReply {
                    thinking: Some("The user wants a scene.".into()),
                    ..message("Elena waited.", false)
                },
            ),
            (
                "reasoning before a stray </think>",
                "The user wants a scene.\n</think>\n\nElena waited.",
                ParsedReply {
                    thinking: Some("The user wants a scene.".into()),
                    ..warned(
                        message("Elena waited.", false),
                        &["text before a stray </think> was taken as thinking"],
                    )
                },
            ),
            (
                "stray closing tags",
                "Hi</message> there</action>",
                warned(
                    message("Hi there", false),
                    &["a stray </message> was dropped", "a stray </action> was dropped"],
                ),
            ),
            (
                "text outside message",
                "Sure!\n<message>Hi</message>",
                warned(message("Hi", true), &["text outside <message> was dropped"]),
            ),
            (
                "fenced reply",
                "```xml\n<message>Hi</message>\n<action type=\"advance\"/>\n```",
                ParsedReply {
                    actions: vec![action("advance", &[], "")],
                    ..message("Hi", true)
                },
            ),
            (
                "fenced reply after thinking",
                "<think>x</think>\n```\nElena waited.\n```",
                ParsedReply {
                    thinking: Some("x".into()),
                    ..message("Elena waited.", false)
                },
            ),
            (
                "a python fence is prose",
                "```python\nprint(1)\n```",
                message("```python\nprint(1)\n```", false),
            ),
            (
                "a removed block on its own line leaves no hole",
                "Intro.\n<action type=\"a\"/>\nOutro.\n\n<content_update target=\"x\">y</content_update>\n\nEnd.",
                ParsedReply {
                    actions: vec![action("a", &[], "")],
                    content_updates: vec![update("x", "y")],
                    ..message("Intro.\nOutro.\n\nEnd.", false)
                },
            ),
            (
                "a <message> element inside an action is a parameter",
                "<action type=\"notify\"><message>hello</message></action>",
                ParsedReply {
                    actions: vec![action(
                        "notify",
                        &[("message", "hello")],
                        "<message>hello</message>",
                    )],
                    ..message("", false)
                },
            ),
            (
                "a thinking tag formed by removing a block is scrubbed",
                "<thi<action type=\"a\"/>nk>secret",
                ParsedReply {
                    thinking: Some("secret".into()),
                    actions: vec![action("a", &[], "")],
                    ..warned(
                        message("", false),
                        &["unclosed <think> was dropped to the end of the reply"],
                    )
                },
            ),
            ("empty reply", "", ParsedReply::default()),
        ]
    }

    #[test]
    fn parse_reads_each_case_exactly() {
        for (name, input, expected) in parse_cases() {
            assert_eq!(parse(input), expected, "case: {name}");
        }
    }

    #[test]
    fn prose_prefers_content_updates_and_never_thinking() {
        let cases: [(&str, &str); 5] = [
            ("<thinking>t</thinking><message>m</message>", "m"),
            (
                "<message>m</message><content_update target=\"a\">A</content_update><content_update target=\"b\">B</content_update>",
                "A\n\nB",
            ),
            (
                "<content_update target=\"a\"> </content_update>Said.",
                "Said.",
            ),
            ("<think>t</think>Scene.", "Scene."),
            (
                "<content_update target=\"a\"><thinking>t</thinking>A</content_update>",
                "A",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(parse(input).prose(), expected, "input: {input}");
        }
    }

    #[test]
    fn paths_names_targets_and_path_params() {
        let reply = parse(concat!(
            "<content_update target=\"Story/Scenes/SCN-1.md\">x</content_update>",
            "<action type=\"read\" file=\"Story/Canon/elena.md\"><canon>Story/Canon/marcus.md</canon><key>k</key></action>",
            "<action type=\"write\"><PATH>Story/Scenes/SCN-1.md</PATH><target> </target></action>",
            "<content_update>y</content_update>",
        ));
        assert_eq!(
            reply.paths(),
            [
                "Story/Scenes/SCN-1.md",
                "Story/Canon/elena.md",
                "Story/Canon/marcus.md"
            ]
        );
    }

    #[test]
    fn strip_reasoning_cases() {
        let cases: [(&str, &str); 10] = [
            (
                "<think>The scene is fine.</think>{\"pass\":true}",
                "{\"pass\":true}",
            ),
            ("<message>{\"pass\": true}</message>", "{\"pass\": true}"),
            (
                "<think>a</think>\n<message>\n{\"a\":1}\n</message>",
                "{\"a\":1}",
            ),
            (
                "<thinking>hmm [maybe] {not json\n{\"pass\": false, \"findings\": []}",
                "{\"pass\": false, \"findings\": []}",
            ),
            ("Reasoning.\n</think>\n{\"a\":1}", "{\"a\":1}"),
            ("{\"a\":1}", "{\"a\":1}"),
            ("<think>unclosed with no json", ""),
            ("<think>x</think>\n```json\n{}\n```", "```json\n{}\n```"),
            (
                "<think>so [x]\n```json\n{\"a\": [1]}\n```",
                "```json\n{\"a\": [1]}\n```",
            ),
            ("  Just text.  ", "Just text."),
        ];
        for (input, expected) in cases {
            assert_eq!(strip_reasoning(input), expected, "input: {input}");
        }
    }

    #[test]
    fn join_pieces_collapses_only_at_joins() {
        let cases: [(&[&str], &str); 5] = [
            (&["a\n", "\nb"], "a\nb"),
            (&["a\n\n", "\n\n\nb"], "a\n\nb"),
            (&["a ", " b"], "a b"),
            (&["a", " b"], "a b"),
            (&["a\n", "\n    code"], "a\n    code"),
        ];
        for (pieces, expected) in cases {
            assert_eq!(
                join_pieces(pieces.iter().copied()),
                expected,
                "pieces: {pieces:?}"
            );
        }
    }

    /// A small deterministic generator (xorshift64*), so no new crates.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % n as u64).unwrap_or(0)
        }
    }

    #[test]
    fn random_tag_soup_never_panics_or_leaks_thinking() {
        const FRAGMENTS: &[&str] = &[
            "<thinking>",
            "</thinking>",
            "<think>",
            "</think>",
            "<THINKING >",
            "<thi",
            "nking>",
            "nk>",
            "<thinking",
            "<message>",
            "</message>",
            "<message >",
            "<message/>",
            "<action type=\"a\">",
            "<action type='b-c'/>",
            "<action>",
            "</action>",
            "<action type=\"x y\">",
            "<content_update target='x'>",
            "<content_update>",
            "</content_update>",
            "<k>",
            "</k>",
            "<missing>[1]</missing>",
            "<",
            ">",
            "/",
            "=",
            "\"",
            "'",
            "text",
            " ",
            "\n",
            "\n\n",
            "é",
            "漢字",
            "```",
            "```xml\n",
            "\n```",
            "{",
            "[",
            "<em>",
            "</",
            "<br/>",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let count = rng.below(16);
            let input: String = (0..count)
                .map(|_| FRAGMENTS[rng.below(FRAGMENTS.len())])
                .collect();
            let reply = parse(&input);
            for shown in [reply.prose().to_lowercase(), reply.message.to_lowercase()] {
                assert!(
                    !shown.contains("<thinking") && !shown.contains("<think>"),
                    "input {input:?} gave {shown:?}"
                );
            }
            let _ = reply.paths();
            let stripped = strip_reasoning(&input).to_lowercase();
            assert!(
                !stripped.contains("<thinking") && !stripped.contains("<think>"),
                "input {input:?} stripped to {stripped:?}"
            );
        }
    }
}

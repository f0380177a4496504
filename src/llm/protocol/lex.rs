//! The protocol's lexer: finds the tags the output protocol knows
//! (`<thinking>`, `<think>`, `<message>`, `<action>`, `<content_update>`) and
//! reads their attributes, leaving every other `<` to the text. A malformed tag
//! is not a tag, so it costs only itself.

/// The protocol's tag names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Name {
    Thinking,
    Think,
    Message,
    Action,
    ContentUpdate,
}

impl Name {
    pub(super) fn from_word(word: &[u8]) -> Option<Self> {
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

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Name::Thinking => "thinking",
            Name::Think => "think",
            Name::Message => "message",
            Name::Action => "action",
            Name::ContentUpdate => "content_update",
        }
    }

    pub(super) fn is_thinking(self) -> bool {
        matches!(self, Name::Thinking | Name::Think)
    }

    /// The blocks that end an unclosed thinking, message or content update.
    pub(super) fn is_block(self) -> bool {
        matches!(self, Name::Message | Name::Action | Name::ContentUpdate)
    }
}

/// One protocol tag: `text[start..end]`, its attributes at `text[attrs.0..attrs.1]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tag {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) name: Name,
    pub(super) closing: bool,
    pub(super) self_closing: bool,
    pub(super) attrs: (usize, usize),
}

impl Tag {
    pub(super) fn opens(&self, wanted: impl Fn(Name) -> bool) -> bool {
        !self.closing && wanted(self.name)
    }
}

/// Every protocol tag in `text`, in order. A tag never contains a `<` other
/// than its first byte, so every `<` of the text is looked at.
pub(super) fn lex(text: &str) -> Vec<Tag> {
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

pub(super) fn is_name_byte(byte: u8) -> bool {
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
pub(super) fn parse_attrs(attrs: &str) -> Vec<(&str, &str)> {
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

pub(super) fn attr<'t>(attrs: &[(&'t str, &'t str)], name: &str) -> Option<&'t str> {
    attrs
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim())
}

//! The forgiving reader: walks the tags of a reply whose thinking is already
//! gone and collects its messages, actions and content updates, repairing or
//! skipping what is malformed and saying so in a warning (graceful
//! degradation, spec §7.3).

use super::lex::{Name, Tag, attr, is_name_byte, parse_attrs};
use super::text::join_pieces;
use super::{Action, ContentUpdate};

/// Text left where the reader passed: plain text, or a skipped action's raw text.
#[derive(Clone, Copy, Debug)]
pub(super) enum Piece<'t> {
    Text(&'t str),
    Skipped(&'t str),
}

impl<'t> Piece<'t> {
    pub(super) fn as_str(&self) -> &'t str {
        match *self {
            Piece::Text(text) | Piece::Skipped(text) => text,
        }
    }
}

/// Reads the blocks of a reply whose thinking is already gone.
pub(super) struct Reader<'t> {
    pub(super) text: &'t str,
    pub(super) tags: Vec<Tag>,
    pub(super) has_message: bool,
    pub(super) messages: Vec<String>,
    pub(super) actions: Vec<Action>,
    pub(super) content_updates: Vec<ContentUpdate>,
    pub(super) warnings: Vec<String>,
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
    pub(super) fn read(&mut self, mut pos: usize, end: usize, in_message: bool) -> Vec<Piece<'t>> {
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

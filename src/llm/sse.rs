//! Server-sent events, the way OpenAI-compatible servers, Ollama and
//! Anthropic stream a reply: lines of `field: value`, an event ended by a
//! blank line, `data` lines joined with newlines, `:` lines ignored. Bytes
//! arrive in chunks cut anywhere (inside a line, inside a UTF-8 character);
//! the decoder keeps the unfinished part for the next chunk.
//!
//! Ollama's own API streams one JSON object a line instead
//! ([`Framing::Lines`]): each non-blank line is one event's data.
//!
//! Hand-written rather than a crate's: the format is these few rules, the
//! decoder must sit inside our own idle-timeout loop over reqwest's
//! `chunk()`, and the SSE crates for reqwest bring their own client wrapper.

/// One event: its type (`event:`, if any) and its data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub event: Option<String>,
    pub data: String,
}

/// How a stream's events are framed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events.
    #[default]
    Events,
    /// One event's data a line (newline-delimited JSON).
    Lines,
}

/// Turns chunks of bytes into events.
#[derive(Debug, Default)]
pub struct Decoder {
    framing: Framing,
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    /// The event being read.
    event: Option<String>,
    data: Vec<String>,
}

/// The longest line kept: a server that never ends a line is not believed.
const MAX_LINE: usize = 4 * 1024 * 1024;

impl Decoder {
    pub fn new(framing: Framing) -> Decoder {
        Decoder {
            framing,
            ..Decoder::default()
        }
    }

    /// The events `chunk` completes; an error when a line runs past
    /// [`MAX_LINE`] bytes.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<Event>, StreamError> {
        let mut events = Vec::new();
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&byte| byte == b'\n') {
            self.partial.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            let mut line = std::mem::take(&mut self.partial);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            self.line(&String::from_utf8_lossy(&line), &mut events);
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() > MAX_LINE {
            return Err(StreamError::LineTooLong {
                mib: MAX_LINE / (1024 * 1024),
            });
        }
        Ok(events)
    }

    /// The event left when the stream ends without a last blank line.
    pub fn finish(&mut self) -> Option<Event> {
        let mut events = Vec::new();
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&String::from_utf8_lossy(&line), &mut events);
        }
        if self.framing == Framing::Events {
            self.line("", &mut events);
        }
        events.pop()
    }

    fn line(&mut self, line: &str, events: &mut Vec<Event>) {
        if self.framing == Framing::Lines {
            if !line.trim().is_empty() {
                events.push(Event {
                    event: None,
                    data: line.to_owned(),
                });
            }
            return;
        }
        if line.is_empty() {
            if !self.data.is_empty() || self.event.is_some() {
                events.push(Event {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data).join("\n"),
                });
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => self.data.push(value.to_owned()),
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
    }
}

/// What one event adds to a streamed reply, as each provider reads it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Delta {
    pub text: Option<String>,
    pub model: Option<String>,
    pub stop: Option<String>,
    /// The server's usage figures the event carries, in the layout of its
    /// unstreamed reply's `usage` (Ollama's at the reply's top level).
    pub usage: Option<serde_json::Map<String, serde_json::Value>>,
    /// The event ends the reply.
    pub done: bool,
}

/// Why a stream cannot be read, or what the server reported in it.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("a line of the stream ran past {mib} MiB")]
    LineTooLong { mib: usize },
    /// An event's data is not JSON (`what`: an event, a line, a chunk).
    #[error("{what} that is not JSON ({error})")]
    NotJson {
        what: &'static str,
        #[source]
        error: serde_json::Error,
    },
    /// The server reported a failure inside the stream, in its words.
    #[error("{said}")]
    Reported { said: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_survive_chunks_cut_anywhere() {
        let stream = "event: message_start\ndata: {\"a\":1}\n\n: keep-alive\n\ndata: caf\u{e9}\r\ndata: two\r\n\r\ndata: [DONE]\n\n";
        let whole = Decoder::default().push(stream.as_bytes()).unwrap();
        assert_eq!(
            whole,
            vec![
                Event {
                    event: Some("message_start".into()),
                    data: "{\"a\":1}".into()
                },
                Event {
                    event: None,
                    data: "caf\u{e9}\ntwo".into()
                },
                Event {
                    event: None,
                    data: "[DONE]".into()
                },
            ]
        );
        // Every cut, even inside the two bytes of é, gives the same events.
        let bytes = stream.as_bytes();
        for cut in 0..bytes.len() {
            let mut decoder = Decoder::default();
            let mut events = decoder.push(&bytes[..cut]).unwrap();
            events.extend(decoder.push(&bytes[cut..]).unwrap());
            assert_eq!(events, whole, "cut at {cut}");
        }
    }

    #[test]
    fn a_stream_without_its_last_blank_line_still_gives_its_event() {
        let mut decoder = Decoder::default();
        assert!(decoder.push(b"data: last").unwrap().is_empty());
        assert_eq!(decoder.finish().unwrap().data, "last");
        assert_eq!(decoder.finish(), None);
    }

    #[test]
    fn a_line_that_never_ends_is_refused() {
        let mut decoder = Decoder::default();
        let chunk = vec![b'x'; 1024 * 1024];
        let mut result = Ok(Vec::new());
        for _ in 0..5 {
            result = decoder.push(&chunk);
        }
        assert!(matches!(result, Err(StreamError::LineTooLong { .. })));
    }
}

//! Where an RFC 6901 JSON pointer lands in a JSON text, as byte ranges, so an
//! error found on the parsed value can be shown at its place in the file.
//!
//! The scanner assumes the text is valid JSON (callers parse it first and
//! report syntax errors with serde's line and column); on anything unexpected
//! it answers `None` rather than guessing.

use super::TextRange;

/// The ranges a pointer names: the member's key (for a pointer into an
/// object) and the value, brackets and quotes included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonSpan {
    pub key: Option<TextRange>,
    pub value: TextRange,
}

/// Locates `pointer` (`""` is the whole document, `/a/0/b` a member of an
/// element of a member) in `text`.
pub fn locate(text: &str, pointer: &str) -> Option<JsonSpan> {
    let segments: Vec<String> = if pointer.is_empty() {
        Vec::new()
    } else {
        pointer
            .strip_prefix('/')?
            .split('/')
            .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
            .collect()
    };
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        at: 0,
    };
    scanner.whitespace();
    let mut key = None;
    for segment in &segments {
        match scanner.peek()? {
            b'{' => key = Some(scanner.enter_member(segment, text)?),
            b'[' => {
                scanner.enter_element(segment.parse().ok()?)?;
                key = None;
            }
            _ => return None,
        }
    }
    let start = scanner.at;
    scanner.skip_value()?;
    Some(JsonSpan {
        key,
        value: TextRange::new(start, scanner.at),
    })
}

struct Scanner<'t> {
    bytes: &'t [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Consumes `byte` (after whitespace) or fails.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// At an object: moves to the value of member `name` and returns its
    /// key's range.
    fn enter_member(&mut self, name: &str, text: &str) -> Option<TextRange> {
        self.expect(b'{')?;
        loop {
            self.whitespace();
            let key_start = self.at;
            self.skip_string()?;
            let key = TextRange::new(key_start, self.at);
            self.expect(b':')?;
            self.whitespace();
            let decoded: String = serde_json::from_str(key.slice(text)).ok()?;
            if decoded == name {
                return Some(key);
            }
            self.skip_value()?;
            self.expect(b',')?;
        }
    }

    /// At an array: moves to element `index`.
    fn enter_element(&mut self, index: usize) -> Option<()> {
        self.expect(b'[')?;
        for _ in 0..index {
            self.whitespace();
            self.skip_value()?;
            self.expect(b',')?;
        }
        self.whitespace();
        (self.peek()? != b']').then_some(())
    }

    fn skip_string(&mut self) -> Option<()> {
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
    }

    /// Skips one value; containers are skipped by depth, without recursion.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => self.skip_string()?,
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.at += 1;
                }
                b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' if depth > 0 => self.at += 1,
                _ => {
                    // A number or a literal runs to the next delimiter.
                    let start = self.at;
                    while self.peek().is_some_and(|b| {
                        !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                    }) {
                        self.at += 1;
                    }
                    if self.at == start {
                        return None;
                    }
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{
  "recipe_id": "check_gate",
  "a/b": {"~x": 1},
  "phase_a": [
    {"step_id": "find", "tool": "file_locater", "args": {"q": "say \"hi\""}},
    {"step_id": "look", "tool": "prose_analyzer", "output_slot": null, "n": -1.5e3}
  ],
  "dod": []
}"#;

    fn value(pointer: &str) -> Option<&'static str> {
        locate(TEXT, pointer).map(|span| span.value.slice(TEXT))
    }

    fn key(pointer: &str) -> Option<&'static str> {
        locate(TEXT, pointer).and_then(|span| span.key.map(|key| key.slice(TEXT)))
    }

    #[test]
    fn pointers_land_on_their_keys_and_values() {
        assert_eq!(value(""), Some(TEXT));
        assert_eq!(value("/recipe_id"), Some("\"check_gate\""));
        assert_eq!(key("/recipe_id"), Some("\"recipe_id\""));
        assert_eq!(value("/phase_a/0/tool"), Some("\"file_locater\""));
        assert_eq!(value("/phase_a/0/args/q"), Some(r#""say \"hi\"""#));
        assert_eq!(value("/phase_a/1/output_slot"), Some("null"));
        assert_eq!(value("/phase_a/1/n"), Some("-1.5e3"));
        assert_eq!(key("/phase_a/1"), None);
        assert!(
            value("/phase_a/1")
                .unwrap()
                .starts_with("{\"step_id\": \"look\"")
        );
        assert_eq!(value("/dod"), Some("[]"));
        // Escaped segments: `~1` is `/`, `~0` is `~`.
        assert_eq!(value("/a~1b/~0x"), Some("1"));
    }

    #[test]
    fn pointers_to_nothing_find_nothing() {
        for pointer in [
            "/missing",
            "/phase_a/2",
            "/dod/0",
            "/recipe_id/0",
            "/phase_a/x",
            "no-slash",
        ] {
            assert_eq!(locate(TEXT, pointer), None, "{pointer}");
        }
        assert_eq!(locate("{\"a\": ", "/a"), None);
        assert_eq!(locate("[1, 2", "/5"), None);
    }
}

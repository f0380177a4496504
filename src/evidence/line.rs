//! Reading one `Evidence:` line: its quotes, the file it cites, the receipt
//! ids it names, whether it gives a location, and whether it claims an
//! absence ("found no …"). Offsets are bytes into the line.

use std::sync::LazyLock;

use regex::Regex;

use crate::text::TextRange;

/// The shortest text in quotes that counts as a quote.
pub const MIN_QUOTE_CHARS: usize = 6;

/// An `Evidence:` line, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvidenceLine {
    /// Where the text after the marker starts.
    pub body_start: usize,
    /// Each quote's text (without its quote marks) and its range.
    pub quotes: Vec<(TextRange, String)>,
    /// The first workspace-relative `.md` path outside the quotes.
    pub file: Option<(TextRange, String)>,
    /// Every `rcpt_…` token outside the quotes, well-formed or not.
    pub receipts: Vec<(TextRange, String)>,
    /// A line number or section ("line 12", "lines 3–5", "SCN-x.md:12", "§2").
    pub location: bool,
    /// A claim that something is absent ("found no …", "nothing", "never").
    pub negative: bool,
    /// A scope named without a file: a scene id, "the outline", "every scene"…
    pub scope: bool,
}

static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    // `Evidence:`, `**Evidence:**`, `Evidence -`, `Evidence —` (any case),
    // after indentation or blockquote marks.
    Regex::new(r"^[ \t>]*(?:\*\*|__)?(?i:evidence)(?:\s*:\s*(?:\*\*|__)?\s*|(?:\*\*|__)?\s*:(?:\*\*|__)?\s*|\s+[-–—]\s*)")
        .expect("a valid pattern")
});

static QUOTE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""([^"\n]+)"|“([^”\n]+)”"#).expect("a valid pattern"));

static PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*\.md\b").expect("a valid pattern"));

static RECEIPT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\brcpt_[A-Za-z0-9_]*").expect("a valid pattern"));

static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\blines?\s+\d+|\bL\d+\b|\.md:\d+|§\s*\d+|\bparagraph\s+\d+|\bsection\s+\S|\bchapter\s+\d+")
        .expect("a valid pattern")
});

static NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:found no|finds no|no (?:\w+ ){0,3}(?:found|appears?|occurs?|is mentioned|mentions?)|nothing|none|never (?:appears?|occurs?|mentioned)|does not (?:appear|occur)|is absent|are absent)\b")
        .expect("a valid pattern")
});

static SCOPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bSCN-[A-Za-z0-9_-]+|\b(?:the|every|all|each) (?:outline|compendium|scenes?|chapters?|cards?|manuscript)\b|\bchapter\s+\d+|\bacross the (?:manuscript|book|novel)\b")
        .expect("a valid pattern")
});

/// Where the text after an Evidence marker starts, if `line` is an Evidence line.
pub fn marker_end(line: &str) -> Option<usize> {
    MARKER.find(line).map(|found| found.end())
}

/// Reads `line` as an Evidence line; `None` if it is not one.
pub fn parse(line: &str) -> Option<EvidenceLine> {
    let body_start = marker_end(line)?;
    let body = &line[body_start..];
    let at = |start: usize, end: usize| TextRange::new(body_start + start, body_start + end);
    let mut quotes = Vec::new();
    let mut quoted: Vec<TextRange> = Vec::new();
    for found in QUOTE.captures_iter(body) {
        let whole = found.get(0).expect("the whole match");
        quoted.push(at(whole.start(), whole.end()));
        let inner = found.get(1).or(found.get(2)).expect("one side matched");
        if inner.as_str().trim().chars().count() >= MIN_QUOTE_CHARS {
            quotes.push((at(inner.start(), inner.end()), inner.as_str().to_owned()));
        }
    }
    let outside = |range: TextRange| {
        !quoted
            .iter()
            .any(|q| q.start <= range.start && range.end <= q.end)
    };
    let file = PATH
        .find_iter(body)
        .map(|found| (at(found.start(), found.end()), found.as_str()))
        .filter(|(range, path)| {
            // A match that starts inside a longer token (`/etc/x.md`) is not a path.
            let before = body[..range.start - body_start].chars().next_back();
            outside(*range)
                && is_relative(path)
                && !before.is_some_and(|c| c == '/' || c == '\\' || c.is_alphanumeric())
        })
        .map(|(range, path)| (range, path.trim_start_matches("./").to_owned()))
        .next();
    let receipts = RECEIPT
        .find_iter(body)
        .map(|found| (at(found.start(), found.end()), found.as_str().to_owned()))
        .filter(|(range, _)| outside(*range))
        .collect();
    let unquoted: String = {
        let mut text = body.to_owned();
        for range in quoted.iter().rev() {
            text.replace_range(range.start - body_start..range.end - body_start, " ");
        }
        text
    };
    Some(EvidenceLine {
        body_start,
        quotes,
        file,
        receipts,
        location: LOCATION.is_match(&unquoted),
        negative: NEGATIVE.is_match(&unquoted),
        scope: SCOPE.is_match(&unquoted),
    })
}

/// A path inside the workspace: not absolute, no `..`, no scheme.
fn is_relative(path: &str) -> bool {
    !path.starts_with('/') && !path.contains(':') && !path.split('/').any(|part| part == "..")
}

/// `text` as quotes are compared: lowercase, whitespace runs as one space,
/// curly quotes and apostrophes straight.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    let push = |out: &mut String, ch: char, space: &mut bool| {
        if ch.is_whitespace() {
            *space = true;
            return;
        }
        if *space && !out.is_empty() {
            out.push(' ');
        }
        *space = false;
        if ch.is_ascii() {
            out.push(ch.to_ascii_lowercase());
        } else {
            out.extend(ch.to_lowercase());
        }
    };
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii() {
            // Most prose is ASCII: no decoding needed.
            push(&mut out, byte as char, &mut space);
            at += 1;
            continue;
        }
        let ch = text[at..].chars().next().expect("a character starts here");
        at += ch.len_utf8();
        let ch = match ch {
            '“' | '”' | '„' | '″' => '"',
            '‘' | '’' | '‚' | '′' => '\'',
            other => other,
        };
        push(&mut out, ch, &mut space);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_marker_form_counts_and_prose_does_not() {
        for line in [
            "Evidence: x",
            "evidence: x",
            "**Evidence:** x",
            "**Evidence**: x",
            "Evidence - x",
            "Evidence — x",
            "> Evidence: x",
            "  EVIDENCE: x",
        ] {
            let end = marker_end(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(&line[end..], "x", "{line}");
        }
        for line in [
            "The evidence: x",
            "Evidenced: x",
            "Evidence x",
            "- Evidence? no",
        ] {
            assert!(marker_end(line).is_none(), "{line}");
        }
    }

    #[test]
    fn quotes_files_receipts_and_locations_are_read_outside_quotes() {
        let line = r#"Evidence: "Kael's grey eyes narrowed" in Story/Scenes/SCN-the-gate.md line 12 (receipt_id: rcpt_0123456789ab), "short""#;
        let evidence = parse(line).unwrap();
        assert_eq!(evidence.quotes.len(), 1, "{evidence:?}");
        let (range, quote) = &evidence.quotes[0];
        assert_eq!(quote, "Kael's grey eyes narrowed");
        assert_eq!(&line[range.start..range.end], quote);
        let (range, file) = evidence.file.clone().unwrap();
        assert_eq!(file, "Story/Scenes/SCN-the-gate.md");
        assert_eq!(&line[range.start..range.end], file);
        assert_eq!(evidence.receipts[0].1, "rcpt_0123456789ab");
        assert!(evidence.location);
        assert!(!evidence.negative);

        let curly = parse("Evidence: “the gate stayed shut” (Story/a.md), see “x.md”").unwrap();
        assert_eq!(curly.quotes[0].1, "the gate stayed shut");
        assert_eq!(curly.file.unwrap().1, "Story/a.md");

        let absent = parse("Evidence: found no mention of the well").unwrap();
        assert!(absent.negative && !absent.scope);
        let scoped = parse("Evidence: no duel appears in SCN-the-gate").unwrap();
        assert!(scoped.negative && scoped.scope);
        assert!(
            parse("Evidence: /etc/passwd.md and ../x.md")
                .unwrap()
                .file
                .is_none()
        );
    }

    #[test]
    fn normalising_folds_case_space_and_curly_quotes() {
        assert_eq!(
            normalise("  Kael’s  “Grey”\n eyes "),
            "kael's \"grey\" eyes"
        );
    }
}

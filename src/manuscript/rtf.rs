//! RTF made ready for pandoc's reader, and its Unicode escapes carried past
//! it.
//!
//! A backslash at a line's end is a paragraph's end in RTF (`\par`), and
//! that is how Scrivener and macOS end every paragraph; pandoc reads it as a
//! line break inside one paragraph, so [`shield`] writes `\par`.
//!
//! RTF writes a character outside its code page as `\uN` followed by a
//! fallback for old readers (`\u8217?`, or `\uc0\u8217 ` with none).
//! Pandoc's RTF reader before 2.19.2 (Debian 12's is 2.17) swallows the
//! letter after each such escape: "didn\u8217?t" became "didn’" and a
//! Scrivener project lost a letter after every curly quote. So each
//! escape and its fallback are replaced by a marker of plain letters before
//! pandoc reads the text ([`shield`]), and the markers by the characters
//! after ([`unshield`]), whatever pandoc's version.

/// What a marker starts and ends with: letters no prose holds, which
/// Markdown's writer leaves as they are.
const OPEN: &str = "QqxUniq";
const CLOSE: &str = "qxQ";

/// `rtf` with every `\uN` escape (and the fallback after it, `\ucN`
/// characters long) replaced by a marker holding N as a UTF-16 unit.
pub fn shield(rtf: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rtf.len());
    let mut skip_count: usize = 1;
    // The last thing written was a control word without the space that
    // ends one: a marker after it needs that space ("\\par" and a marker
    // would read as one longer word).
    let mut open_word = false;
    let mut at = 0;
    while at < rtf.len() {
        let byte = rtf[at];
        if byte != b'\\' {
            open_word = false;
            out.push(byte);
            at += 1;
            continue;
        }
        // A control word: a backslash, letters, an optional signed number,
        // and one space that belongs to it.
        let letters_end = rtf[at + 1..]
            .iter()
            .position(|b| !b.is_ascii_alphabetic())
            .map_or(rtf.len(), |end| at + 1 + end);
        let word = &rtf[at + 1..letters_end];
        if word.is_empty() {
            // A control symbol ("\\", "\{", "\'92"): copied as it is, but
            // for a backslash and a line's end: a paragraph's end.
            if matches!(rtf.get(at + 1), Some(b'\n' | b'\r')) {
                out.extend_from_slice(b"\\par\n");
            } else {
                out.extend_from_slice(&rtf[at..(at + 2).min(rtf.len())]);
            }
            open_word = false;
            at += 2;
            continue;
        }
        let mut number_end = letters_end;
        if rtf.get(number_end) == Some(&b'-') {
            number_end += 1;
        }
        while rtf.get(number_end).is_some_and(u8::is_ascii_digit) {
            number_end += 1;
        }
        let number = std::str::from_utf8(&rtf[letters_end..number_end])
            .ok()
            .and_then(|digits| digits.parse::<i32>().ok());
        let mut end = number_end;
        if rtf.get(end) == Some(&b' ') {
            end += 1;
        }
        match (word, number) {
            (b"u", Some(unit)) => {
                // Negative numbers write units above 32767.
                let unit = if unit < 0 { unit + 65536 } else { unit };
                if open_word {
                    out.push(b' ');
                }
                out.extend_from_slice(format!("{OPEN}{unit}{CLOSE}").as_bytes());
                open_word = false;
                end = skip_fallback(rtf, end, skip_count);
            }
            _ => {
                if word == b"uc" {
                    skip_count = number.map_or(1, |count| usize::try_from(count).unwrap_or(0));
                }
                out.extend_from_slice(&rtf[at..end]);
                open_word = rtf.get(end - 1) != Some(&b' ');
            }
        }
        at = end;
    }
    out
}

/// Where the `count` fallback characters after `at` end: each one byte,
/// or a hex escape `\'XX`.
fn skip_fallback(rtf: &[u8], mut at: usize, count: usize) -> usize {
    for _ in 0..count {
        match rtf.get(at) {
            Some(b'\\') if rtf.get(at + 1) == Some(&b'\'') => at += 4,
            Some(b'{' | b'}' | b'\\') | None => break,
            Some(_) => at += 1,
        }
    }
    at.min(rtf.len())
}

/// `text` with the markers of [`shield`] made characters again (a pair of
/// surrogate units one character).
pub fn unshield(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut units: Vec<u16> = Vec::new();
    loop {
        let Some(start) = rest.find(OPEN) else {
            flush(&mut units, &mut out);
            out.push_str(rest);
            return out;
        };
        let after = &rest[start + OPEN.len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        // A number past a UTF-16 unit (a broken file's) is no character.
        let unit = after[..digits].parse::<u16>().unwrap_or(0xfffd);
        match (digits > 0 && after[digits..].starts_with(CLOSE)).then_some(unit) {
            Some(unit) => {
                if start > 0 {
                    flush(&mut units, &mut out);
                    out.push_str(&rest[..start]);
                }
                units.push(unit);
                rest = &after[digits + CLOSE.len()..];
            }
            None => {
                flush(&mut units, &mut out);
                out.push_str(&rest[..start + OPEN.len()]);
                rest = after;
            }
        }
    }
}

fn flush(units: &mut Vec<u16>, out: &mut String) {
    out.extend(char::decode_utf16(units.drain(..)).map(|c| c.unwrap_or('\u{fffd}')));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(rtf: &str) -> String {
        unshield(&String::from_utf8(shield(rtf.as_bytes())).unwrap())
    }

    #[test]
    fn escapes_with_and_without_fallbacks_become_their_characters_and_nothing_else_is_lost() {
        assert_eq!(round_trip(r"didn\u8217?t"), "didn’t");
        // `\ucN` stays for pandoc; the escapes' fallbacks do not.
        assert_eq!(
            round_trip(r"\uc0\u8220 Go,\u8221  said"),
            r"\uc0 “Go,” said"
        );
        assert_eq!(round_trip(r"\uc2\u233\'65\'65 x"), r"\uc2 é x");
        assert_eq!(round_trip(r"{\uc1\u-3913?}"), "{\\uc1 \u{f0b7}}");
        // A surrogate pair is one character.
        assert_eq!(round_trip(r"\uc0\u55357 \u56832 !"), r"\uc0 😀!");
        // Other control words and symbols are left to pandoc.
        assert_eq!(
            round_trip(r"{\b bold}\par \'92\\\{"),
            r"{\b bold}\par \'92\\\{"
        );
        assert_eq!(round_trip(r"\ul under\ulnone"), r"\ul under\ulnone");
        // A backslash at a line's end ends a paragraph.
        assert_eq!(round_trip("One.\\\nTwo."), "One.\\par\nTwo.");
        // A control word before an escape keeps its end.
        assert_eq!(round_trip(r"\par\u8220?Hi"), "\\par “Hi");
        // A number no character has becomes the replacement character.
        assert_eq!(round_trip(r"\uc0\u99999 x"), "\\uc0 \u{fffd}x");
    }
}

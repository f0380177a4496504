//! Marking a diagnostic intentional.
//!
//! `<!-- control-room: allow name-typo -->` silences that code on the next
//! line; several codes may be listed, separated by commas or spaces. A file's
//! front matter `allow: [dead-character]` silences a code in the whole file.
//! Every diagnostic offers the edit that marks it: a comment at the end of
//! the line before (so a paragraph or a list stays whole), on a line of its
//! own when the line before is blank or the front matter's fence, and an
//! `allow:` entry for a diagnostic inside the front matter.

use super::{Diagnostic, FileEdit, Fix, FixKind};
use crate::index::SourceFile;
use crate::text::TextRange;

const MARKER: &str = "control-room:";

/// Whether the writer has marked `diagnostic` intentional in `file`.
pub fn is_allowed(file: &SourceFile, diagnostic: &Diagnostic) -> bool {
    let code = diagnostic.code.as_str();
    if file.allow.iter().any(|allowed| allowed.text == code) {
        return true;
    }
    let line = file.line_index.line_of(diagnostic.range.start);
    let Some(previous) = line
        .checked_sub(1)
        .and_then(|previous| file.line_index.line_range(previous, &file.text))
    else {
        return false;
    };
    allow_comment(previous.slice(&file.text))
        .is_some_and(|(codes, _)| codes.split([',', ' ']).any(|listed| listed == code))
}

/// The codes listed in an allow comment on `line`, and the offset in `line`
/// where the comment's `-->` starts.
fn allow_comment(line: &str) -> Option<(&str, usize)> {
    let open = line.find("<!--")?;
    // The `-->` after the opening: in `<!-->` the two overlap.
    let close = open + 4 + line[open + 4..].find("-->")?;
    let inside = line[open + 4..close].trim();
    let codes = inside
        .strip_prefix(MARKER)?
        .trim_start()
        .strip_prefix("allow")?;
    Some((codes.trim(), close))
}

/// The edit that marks `diagnostic` intentional.
pub fn allow_fix(file: &SourceFile, diagnostic: &Diagnostic) -> Option<Fix> {
    if file.load_error.is_some() {
        return None;
    }
    let code = diagnostic.code.as_str();
    let text = &*file.text;
    let edit = |range: TextRange, new_text: String| FileEdit {
        path: file.path.clone(),
        range,
        new_text,
    };
    let front = file
        .front_matter
        .as_ref()
        .filter(|front| front.range.contains_range(diagnostic.range));
    let edits = if let Some(front) = front {
        // Inside the front matter: add the code to `allow:`.
        match front.get("allow") {
            Some(entry) => {
                let mut codes: Vec<String> = file
                    .allow
                    .iter()
                    .map(|allowed| allowed.text.clone())
                    .collect();
                codes.push(code.to_owned());
                vec![edit(entry.value.range, format!("[{}]", codes.join(", ")))]
            }
            None => vec![edit(
                TextRange::empty(front.content.end),
                format!("allow: [{code}]\n"),
            )],
        }
    } else {
        let line = file.line_index.line_of(diagnostic.range.start);
        let line_start = file.line_index.line_start(line)?;
        let previous = line
            .checked_sub(1)
            .and_then(|previous| file.line_index.line_range(previous, text));
        let previous_in_front_matter = previous.is_some_and(|previous| {
            file.front_matter
                .as_ref()
                .is_some_and(|front| front.range.contains_range(previous))
        });
        match previous {
            Some(previous)
                if !previous.slice(text).trim().is_empty() && !previous_in_front_matter =>
            {
                let previous_text = previous.slice(text);
                match allow_comment(previous_text) {
                    // Add the code to the comment already there.
                    Some((_, close)) => {
                        let at = previous.start + close;
                        let before_close = previous_text[..close].trim_end().len();
                        vec![edit(
                            TextRange::new(previous.start + before_close, at),
                            format!(", {code} "),
                        )]
                    }
                    None => vec![edit(
                        TextRange::empty(previous.end),
                        format!(" <!-- {MARKER} allow {code} -->"),
                    )],
                }
            }
            _ => vec![edit(
                TextRange::empty(line_start),
                format!("<!-- {MARKER} allow {code} -->\n"),
            )],
        }
    };
    Some(Fix {
        title: format!("Mark as intentional (allow {code} here)"),
        edits,
        kind: FixKind::MarkIntentional,
    })
}

//! The shape of a conference transcript (`.control-room/issues/CONF-<id>.md`)
//! as far as evidence needs it: front matter naming the round
//! (`conference_id`), a `## Replies` section with one `### <role> …` heading
//! per reply, and each reply's own text quoted with `> ` so that nothing in
//! it can end its section.

use crate::text::TextRange;

/// The front matter key naming the round.
pub const ID_KEY: &str = "conference_id";
/// The heading of the replies section.
pub const REPLIES_HEADING: &str = "## Replies";

/// A reply's section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplySection {
    /// The role, lowercase: the heading's first word.
    pub role: String,
    /// The heading line.
    pub heading: TextRange,
    /// Everything after the heading up to the next heading.
    pub body: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transcript {
    pub conference_id: String,
    pub replies: Vec<ReplySection>,
}

/// Reads `text` as a transcript; `None` if its front matter names no round.
pub fn read(text: &str) -> Option<Transcript> {
    let conference_id = front_matter_id(text)?;
    let mut replies: Vec<ReplySection> = Vec::new();
    let mut in_replies = false;
    let mut offset = 0;
    let mut fenced = false;
    for raw in text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.starts_with("```") || line.starts_with("~~~") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        let is_h2 = line.starts_with("## ") || line == "##";
        let is_h3 = line.starts_with("### ");
        if (is_h2 || is_h3 || line.starts_with("# "))
            && let Some(last) = replies.last_mut()
            && last.body.end == usize::MAX
        {
            last.body.end = start;
        }
        if is_h2 {
            in_replies = line.trim_end() == REPLIES_HEADING;
            continue;
        }
        if in_replies && is_h3 {
            let role: String = line[4..]
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .collect::<String>()
                .to_ascii_lowercase();
            replies.push(ReplySection {
                role,
                heading: TextRange::new(start, start + line.len()),
                body: TextRange::new(offset, usize::MAX),
            });
        }
    }
    if let Some(last) = replies.last_mut()
        && last.body.end == usize::MAX
    {
        last.body.end = text.len();
    }
    Some(Transcript {
        conference_id,
        replies,
    })
}

fn front_matter_id(text: &str) -> Option<String> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    for line in rest.lines() {
        let line = line.trim_end();
        if line == "---" {
            break;
        }
        if let Some(value) = line.strip_prefix(ID_KEY).and_then(|v| v.strip_prefix(':')) {
            let value = value.trim().trim_matches(['"', '\'']);
            return (!value.is_empty()).then(|| value.to_owned());
        }
    }
    None
}

/// `text` quoted line by line with `> `.
pub fn quote(text: &str) -> String {
    let mut out = String::new();
    for line in text.trim_end().lines() {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The quoted lines of a reply's section, unquoted, with the way back to
/// the section's offsets.
pub struct Unquoted {
    pub text: String,
    /// (offset in `text`, offset in the section) of each kept line.
    segments: Vec<(usize, usize)>,
}

/// Keeps the lines of `body` that start with `>`, without the mark.
pub fn unquote(body: &str) -> Unquoted {
    let mut text = String::new();
    let mut segments = Vec::new();
    let mut offset = 0;
    for raw in body.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let Some(rest) = raw.strip_prefix('>') else {
            continue;
        };
        let (rest, skipped) = match rest.strip_prefix(' ') {
            Some(rest) => (rest, 2),
            None => (rest, 1),
        };
        segments.push((text.len(), start + skipped));
        text.push_str(rest);
        if !rest.ends_with('\n') {
            text.push('\n');
        }
    }
    Unquoted { text, segments }
}

impl Unquoted {
    /// `range` of the unquoted text as a range of the document, whose
    /// section starts at `base`.
    pub fn to_original(&self, range: TextRange, base: usize) -> TextRange {
        let map = |offset: usize| {
            let index = self
                .segments
                .partition_point(|(plain, _)| *plain <= offset)
                .saturating_sub(1);
            let (plain, original) = self.segments.get(index).copied().unwrap_or((0, 0));
            base + original + (offset - plain)
        };
        let start = map(range.start);
        let end = map(range.end.max(range.start)).max(start);
        TextRange::new(start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "---\nconference_id: conf_0123456789ab\n---\n# Conference\n\n## Question\n\nWhat?\n\n## Replies\n\n### planner — accepted\n\n> One.\n> Evidence: x\n\n### critic — abstained\n\n> ABSTAIN\n\n## Receipts\n\n- rcpt\n";

    #[test]
    fn replies_are_the_sections_under_the_replies_heading() {
        let read = read(TEXT).unwrap();
        assert_eq!(read.conference_id, "conf_0123456789ab");
        let roles: Vec<&str> = read.replies.iter().map(|r| r.role.as_str()).collect();
        assert_eq!(roles, ["planner", "critic"]);
        let body = &TEXT[read.replies[0].body.start..read.replies[0].body.end];
        assert_eq!(body, "\n> One.\n> Evidence: x\n\n");
        let plain = unquote(body);
        assert_eq!(plain.text, "One.\nEvidence: x\n");
        let at = plain.text.find("x").unwrap();
        let back = plain.to_original(TextRange::new(at, at + 1), read.replies[0].body.start);
        assert_eq!(&TEXT[back.start..back.end], "x");
        assert!(super::read("# Notes\n\n## Replies\n### planner\n").is_none());
    }

    #[test]
    fn quoting_keeps_headings_in_a_reply_from_ending_it() {
        assert_eq!(
            quote("## Not a section\n\nEvidence: y\n"),
            "> ## Not a section\n>\n> Evidence: y\n"
        );
    }
}

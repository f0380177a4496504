//! Text around removed blocks: joining what is left so that no hole or run
//! of blank lines remains, and removing a code fence around a whole reply.

/// Joins text around removed blocks: where both sides have whitespace, it
/// becomes one space, or as many line breaks (at most two) as the side with
/// more had, so that a block on its own line leaves no hole.
pub(super) fn join_pieces<'p>(pieces: impl IntoIterator<Item = &'p str>) -> String {
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

/// The languages of a fence that holds prose rather than code.
const PROSE_FENCES: [&str; 8] = [
    "",
    "xml",
    "html",
    "markdown",
    "md",
    "text",
    "txt",
    "plaintext",
];

/// The width and character of a line that opens a prose fence.
fn prose_fence(line: &str) -> Option<(usize, char)> {
    let line = line.trim();
    let fence = line.chars().next().filter(|&c| c == '`' || c == '~')?;
    let width = line.len() - line.trim_start_matches(fence).len();
    let info = line[width..].trim();
    (width >= 3
        && !info.contains(fence)
        && PROSE_FENCES
            .iter()
            .any(|lang| info.eq_ignore_ascii_case(lang)))
    .then_some((width, fence))
}

/// Prose a model wrapped in a fence somewhere in its reply, as small
/// models do ("Here is the scene:" then ```` ```markdown ```` and the
/// prose, often never closed): the inside of the first prose fence, to its
/// closing fence or to the end, and the text around it (for the message).
/// `None` when the reply has no such fence.
pub(super) fn unwrap_fenced_prose(text: &str) -> Option<(String, String)> {
    let mut lines = text.split_inclusive('\n');
    let mut before = String::new();
    let (width, fence) = loop {
        let line = lines.next()?;
        match prose_fence(line) {
            Some(found) => break found,
            None => before.push_str(line),
        }
    };
    let mut inside = String::new();
    let mut after = String::new();
    let mut closed = false;
    for line in lines {
        if closed {
            after.push_str(line);
        } else if line.trim().len() >= width && line.trim().chars().all(|c| c == fence) {
            closed = true;
        } else {
            inside.push_str(line);
        }
    }
    let around = [before.trim(), after.trim()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Some((inside.trim().to_owned(), around))
}

/// The inside of a code fence around the whole of `text` whose language is
/// none, XML, HTML, Markdown or plain text.
pub(super) fn strip_outer_fence(text: &str) -> Option<&str> {
    let text = text.trim();
    let (opener, rest) = text.split_once('\n')?;
    let (width, fence) = prose_fence(opener).filter(|_| opener.starts_with(['`', '~']))?;
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

/// Openings of the line a model puts before the prose it was asked for.
const PREAMBLES: [&str; 12] = [
    "here is",
    "here's",
    "here are",
    "sure",
    "certainly",
    "okay",
    "ok,",
    "of course",
    "absolutely",
    "below is",
    "the following is",
    "great",
];

/// Openings of the line a model puts after the prose.
const SIGN_OFFS: [&str; 7] = [
    "i hope",
    "let me know",
    "feel free",
    "would you like",
    "this scene",
    "note:",
    "(note",
];

/// `text` without a first line that introduces it ("Here is the scene:")
/// and without a last paragraph that comments on it ("I hope this…").
pub(super) fn strip_chatter(text: &str) -> &str {
    let mut text = text.trim();
    if let Some((first, rest)) = text.split_once('\n') {
        let lower = first.trim().to_lowercase();
        if lower.ends_with(':') && PREAMBLES.iter().any(|p| lower.starts_with(p)) {
            text = rest.trim_start();
        }
    }
    if let Some(at) = text.rfind("\n\n") {
        let last = text[at..].trim().to_lowercase();
        if SIGN_OFFS.iter().any(|s| last.starts_with(s)) {
            text = text[..at].trim_end();
        }
    }
    text
}

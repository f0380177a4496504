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

/// The inside of a code fence around the whole of `text` whose language is
/// none, XML, HTML, Markdown or plain text.
pub(super) fn strip_outer_fence(text: &str) -> Option<&str> {
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

//! A card's summary: its first paragraph outside lists, read from the Markdown's
//! blocks or, for the first diagnostics of a cold start, by a line scanner.
//!
//! The scanner reads only the plain shape a card takes (front matter, headings,
//! then lines of text), and answers nothing for anything else: then the card's
//! Markdown is parsed. What it answers is what the blocks give
//! (`the_plain_reading_is_the_parsed_one`), so a card read for the catalog
//! alone (see [`super::file::SourceFile::catalogued`]) knows the same gender.

use crate::syntax::{BlockKind, MarkdownSyntax};

/// The first paragraph outside lists, its lines trimmed and joined by spaces.
pub fn first_paragraph(text: &str, syntax: &MarkdownSyntax) -> Option<String> {
    let block = syntax
        .blocks
        .iter()
        .find(|block| block.kind == BlockKind::Paragraph && block.list_depth == 0)?;
    let paragraph: Vec<&str> = block.range.slice(text).lines().map(str::trim).collect();
    Some(paragraph.join(" "))
}

/// [`first_paragraph`] without parsing the Markdown, where the text has the
/// plain shape: `Some(summary)` (`Some(None)`: no paragraph at all), or `None`
/// where only a parse can tell.
pub fn plain_first_paragraph(text: &str) -> Option<Option<String>> {
    let mut lines = body_after_front_matter(text)?.split('\n');
    let first = loop {
        let Some(line) = lines.next() else {
            return Some(None);
        };
        if is_blank(line) || is_atx_heading(line) {
            continue;
        }
        if is_plain_line(line) {
            break line;
        }
        return None;
    };
    let mut paragraph = vec![first.trim()];
    for line in lines {
        if is_blank(line) {
            break;
        }
        if !is_plain_line(line) {
            return None;
        }
        paragraph.push(line.trim());
    }
    Some(Some(paragraph.join(" ")))
}

/// The text after a front matter block that both the front matter reader and
/// tree-sitter-md take for one (see [`front_matter_end`]).
fn body_after_front_matter(text: &str) -> Option<&str> {
    front_matter_end(text).map(|end| &text[end..])
}

/// Where the text after a front matter block begins, for a block that both
/// the front matter reader and tree-sitter-md take for one: a first line
/// `---`, at least one line, and a line `---` closing it, each delimiter
/// exactly so. `None` for any other start.
pub(super) fn front_matter_end(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("---\n")?;
    let mut offset = "---\n".len();
    for line in rest.split_inclusive('\n') {
        let bare = line.strip_suffix('\n')?;
        if bare == "---" {
            return (offset > "---\n".len()).then_some(offset + line.len());
        }
        // The reader closes the block on these, tree-sitter-md does not.
        if matches!(bare.trim_end(), "---" | "...") || bare.contains(['\r', '\0']) {
            return None;
        }
        offset += line.len();
    }
    None
}

/// An empty line. (A line of spaces is left to the parse: tree-sitter-md
/// makes an empty paragraph of one at the end of a text.)
fn is_blank(line: &str) -> bool {
    line.is_empty()
}

/// `#` to `######`, then a space or nothing, at the line's start.
fn is_atx_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&byte| byte == b'#').count();
    (1..=6).contains(&hashes)
        && matches!(line.as_bytes().get(hashes), None | Some(b' '))
        && !line.contains(['\t', '\r', '\0'])
}

/// A line that can only be a paragraph's: it starts with a letter, a quotation
/// mark or a parenthesis (no list, quote, fence, heading, HTML, table or
/// link definition starts so), holds no pipe (no table) and no tab, carriage
/// return or NUL.
fn is_plain_line(line: &str) -> bool {
    let starts_plain = line.chars().next().is_some_and(|first| {
        first.is_alphabetic() || matches!(first, '"' | '\'' | '“' | '‘' | '(')
    });
    starts_plain && !line.contains(['|', '\t', '\r', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::MarkdownParser;
    use proptest::prelude::*;

    fn parsed(text: &str) -> Option<String> {
        first_paragraph(text, &MarkdownParser::parse_fresh(text))
    }

    #[test]
    fn a_card_of_the_usual_shape_is_read_without_a_parse() {
        let text = "---\ntype: character\nname: Tomas Vell\n---\n\n# Tomas Vell\n\nA ferryman of fifty,\nhis hands\nscarred.\n\n## Notes\n\n- He rows.\n";
        assert_eq!(
            plain_first_paragraph(text),
            Some(Some("A ferryman of fifty, his hands scarred.".to_owned()))
        );
        assert_eq!(
            parsed(text).as_deref(),
            Some("A ferryman of fifty, his hands scarred.")
        );
    }

    #[test]
    fn a_card_with_headings_alone_has_no_summary() {
        let text = "---\nname: Iria\n---\n# Iria\n\n## Notes\n";
        assert_eq!(plain_first_paragraph(text), Some(None));
        assert_eq!(parsed(text), None);
    }

    #[test]
    fn shapes_only_a_parse_can_read_are_left_to_it() {
        for text in [
            "# No front matter\n\nText.\n",
            "---\nname: A\n...\n\nText.\n",
            "---\nname: A\n--- \n\nText.\n",
            "---\n---\n\nText.\n",
            "---\nname: A\n---\n\n- A list first.\n\nText.\n",
            "---\nname: A\n---\n\n> A quote.\n",
            "---\nname: A\n---\n\nA header | row\n--- | ---\n",
            "---\nname: A\n---\n\nA setext heading\n===\n",
            "---\nname: A\n---\n\n    code\n",
            "---\nname: A\n---\n\nText\n  indented on.\n",
            "---\nname: A\n---\n\n[a]: /link\nText.\n",
            "---\r\nname: A\r\n---\r\n\r\nText.\r\n",
        ] {
            assert_eq!(plain_first_paragraph(text), None, "{text:?}");
        }
    }

    /// Lines a card's body is made of in the property below: plain ones, and
    /// every construct that could make a plain-looking line something else.
    const LINES: &[&str] = &[
        "",
        "   ",
        "# Tomas",
        "## Notes",
        "####### seven",
        "#hashtag",
        "A plain line of text.",
        "Another, with *emphasis* and `code`.",
        "\"Quoted,\" she said.",
        "(An aside.)",
        "Éloise arrives.",
        "  indented two",
        "    indented four",
        "\ttabbed",
        "- a list item",
        "* a star item",
        "+ a plus item",
        "1. an ordered item",
        "2) another",
        "> a quote",
        "```",
        "~~~",
        "<div>",
        "<!-- a comment -->",
        "| a | b |",
        "|---|---|",
        "a | b",
        "--- | ---",
        "---",
        "===",
        "***",
        "___",
        "- - -",
        "[ref]: /url",
        "[^1]: a note",
        "**Bold** first",
        "Text ending in a backslash\\",
        "Text ending in two spaces  ",
        ":--",
        "...",
    ];

    fn card() -> impl Strategy<Value = String> {
        let front = prop::sample::select(vec![
            "---\nname: Tomas\n---\n",
            "---\ntype: character\nname: Iria\naliases: [Iri]\n---\n",
            "---\nname: A\n...\n",
            "---\n---\n",
            "",
        ]);
        let body = prop::collection::vec(prop::sample::select(LINES.to_vec()), 0..12);
        let end = prop::sample::select(vec!["", "\n"]);
        (front, body, end).prop_map(|(front, body, end)| format!("{front}{}{end}", body.join("\n")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn the_plain_reading_is_the_parsed_one(text in card()) {
            if let Some(summary) = plain_first_paragraph(&text) {
                prop_assert_eq!(summary, parsed(&text), "{:?}", text);
            }
        }
    }
}

//! The outline's headings and scene entries, read from the Markdown's blocks
//! or, for the first diagnostics of a cold start, by a line scanner.
//!
//! The scanner reads only the plain shape an outline takes (front matter,
//! ATX headings, `- ` list items nested by two spaces, empty lines) and
//! answers nothing for anything else: then the outline's Markdown is parsed.
//! It makes the blocks a parse would give the headings and the items, and
//! the outline is read from them the same way (`the_plain_reading_is_the_parsed_one`).

use crate::syntax::{Block, BlockKind, MarkdownSyntax};
use crate::text::TextRange;

use super::model::{Outline, OutlineEntry, OutlineHeading, split_scene_id};

/// Reads the outline's headings and scene entries.
pub fn read_outline(text: &str, syntax: &MarkdownSyntax) -> Outline {
    outline_of(text, &syntax.blocks)
}

/// [`read_outline`] without parsing the Markdown, where the text has the
/// plain shape; `None` where only a parse can tell.
pub fn plain_outline(text: &str) -> Option<Outline> {
    plain_blocks(text).map(|blocks| outline_of(text, &blocks))
}

/// The outline that `blocks`, in document order, make of `text`: only
/// headings and list items count.
fn outline_of(text: &str, blocks: &[Block]) -> Outline {
    let mut outline = Outline::default();
    let mut current_entry: Option<(usize, u16)> = None;
    for block in blocks {
        match block.kind {
            BlockKind::Heading { level } => {
                outline.headings.push(OutlineHeading {
                    title: block.inline.slice(text).trim().to_owned(),
                    level,
                    range: block.range,
                    section: block.range,
                });
                current_entry = None;
            }
            BlockKind::ListItem => {
                let line = block.inline.slice(text);
                if let Some((id, rest)) = split_scene_id(line) {
                    let id_start = block.inline.start + (line.len() - line.trim_start().len());
                    outline.entries.push(OutlineEntry {
                        scene_id: id.to_owned(),
                        id_range: TextRange::new(id_start, id_start + id.len()),
                        beat: rest.to_owned(),
                        sub_beats: Vec::new(),
                        range: trim_trailing_newlines(text, block.range),
                        heading: outline.headings.len().checked_sub(1),
                    });
                    current_entry = Some((outline.entries.len() - 1, block.list_depth));
                } else if let Some((entry, depth)) = current_entry
                    && block.list_depth > depth
                    && outline.entries[entry].range.start <= block.range.start
                    && block.range.start < outline.entries[entry].range.end
                {
                    outline.entries[entry]
                        .sub_beats
                        .push(line.trim().to_owned());
                }
            }
            _ => {}
        }
    }
    // A heading's section runs to the next heading of the same or a higher level.
    let end = text.len();
    for index in 0..outline.headings.len() {
        let level = outline.headings[index].level;
        let section_end = outline.headings[index + 1..]
            .iter()
            .find(|next| next.level <= level)
            .map_or(end, |next| next.range.start);
        let heading = &mut outline.headings[index];
        heading.section =
            trim_trailing_newlines(text, TextRange::new(heading.range.start, section_end));
    }
    outline
}

fn trim_trailing_newlines(text: &str, range: TextRange) -> TextRange {
    let trimmed = range.slice(text).trim_end();
    TextRange::new(range.start, range.start + trimmed.len())
}

/// The headings and list items of a text of the plain shape, as a parse
/// gives them (each item's range ends where its last line's text does,
/// which is all [`outline_of`] reads of it); `None` for any other shape.
fn plain_blocks(text: &str) -> Option<Vec<Block>> {
    let start = if text.starts_with("---") {
        super::summary::front_matter_end(text)?
    } else {
        0
    };
    let mut blocks = Vec::new();
    // The items still open, outermost first: an index into `blocks` each.
    let mut open: Vec<usize> = Vec::new();
    let mut offset = start;
    for line in text[start..].split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let bare = line.strip_suffix('\n').unwrap_or(line);
        if bare.is_empty() {
            continue;
        }
        if bare.contains(['\r', '\t', '\0']) {
            return None;
        }
        if let Some(level) = atx_heading(bare) {
            // tree-sitter-md reads no heading on a last line without its newline.
            if bare.len() == line.len() {
                return None;
            }
            open.clear();
            blocks.push(Block {
                kind: BlockKind::Heading { level },
                range: TextRange::new(line_start, offset),
                inline: TextRange::new(
                    line_start + usize::from(level) + 1,
                    line_start + bare.len(),
                ),
                list_depth: 0,
            });
            continue;
        }
        // `- ` at two spaces a level, one level at most below the last item.
        let indent = bare.len() - bare.trim_start_matches(' ').len();
        let depth = indent / 2;
        if indent % 2 != 0 || depth > open.len() {
            return None;
        }
        let item = &bare[indent..];
        if !item.strip_prefix("- ").is_some_and(is_plain_item) {
            return None;
        }
        open.truncate(depth);
        let (marker, end) = (line_start + indent, line_start + bare.len());
        for &index in &open {
            blocks[index].range.end = end;
        }
        open.push(blocks.len());
        blocks.push(Block {
            kind: BlockKind::ListItem,
            range: TextRange::new(marker, end),
            inline: TextRange::new(marker + "- ".len(), end),
            list_depth: u16::try_from(depth).ok()?,
        });
    }
    Some(blocks)
}

/// The level of an ATX heading of the plain shape: `#` to `######`, one
/// space, and a title of no `#` (no closing sequence) that neither starts
/// nor ends with a space.
fn atx_heading(line: &str) -> Option<u8> {
    let hashes = line.bytes().take_while(|&byte| byte == b'#').count();
    let title = line[hashes..].strip_prefix(' ')?;
    let plain = (1..=6).contains(&hashes)
        && !title.is_empty()
        && !title.starts_with(' ')
        && !title.ends_with(' ')
        && !title.contains('#');
    plain.then(|| u8::try_from(hashes).ok()).flatten()
}

/// An item's text that can only be a paragraph's: it starts with a letter,
/// a quotation mark or a parenthesis (no nested list, quote, fence, heading,
/// HTML or task box starts so), holds no pipe, and ends in no space or
/// backslash (a hard break).
fn is_plain_item(item: &str) -> bool {
    let starts_plain = item.chars().next().is_some_and(|first| {
        first.is_alphabetic() || matches!(first, '"' | '\'' | '“' | '‘' | '(')
    });
    starts_plain && !item.contains('|') && !item.ends_with([' ', '\\'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::MarkdownParser;
    use proptest::prelude::*;

    fn parsed(text: &str) -> Outline {
        read_outline(text, &MarkdownParser::parse_fresh(text))
    }

    #[test]
    fn an_outline_of_the_usual_shape_is_read_without_a_parse() {
        let text = "# The Salt Road\n\n## Chapter 1: The Gate\n\n- SCN-the-arrival: Kael reaches the fortress.\n  - He is refused.\n    - At nightfall.\n- SCN-the-gate: Iria lets him in.\n\n## Chapter 2\n\n- SCN-the-fall: The storm.\n";
        let plain = plain_outline(text).expect("the plain shape");
        assert_eq!(plain, parsed(text));
        assert_eq!(plain.entries.len(), 3);
        assert_eq!(
            plain.entries[0].sub_beats,
            ["He is refused.", "At nightfall."]
        );
        assert_eq!(plain.entries[2].heading, Some(2));
    }

    #[test]
    fn the_bundled_outlines_are_of_the_plain_shape() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for path in [
            "examples/salt-road/Story/SCN-outline.md",
            "tests/corpora/pride-and-prejudice/Story/SCN-outline.md",
        ] {
            let text = std::fs::read_to_string(root.join(path)).unwrap();
            assert_eq!(plain_outline(&text), Some(parsed(&text)), "{path}");
        }
    }

    #[test]
    fn shapes_only_a_parse_can_read_are_left_to_it() {
        for text in [
            "- SCN-a: one\ncontinued lazily\n",
            "- SCN-a: one\n   - three spaces\n",
            "- SCN-a: one\n    - two levels down\n",
            "  - SCN-a: indented first\n",
            "* SCN-a: another marker\n",
            "1. SCN-a: ordered\n",
            "- SCN-a: one  \n",
            "- 1. nested at once\n",
            "# Title #\n",
            "#  Two spaces\n",
            "A paragraph.\n",
            "---\ntitle: x\n...\n- SCN-a\n",
            "- SCN-a\r\n",
            "- SCN-a\tb\n",
        ] {
            assert_eq!(plain_outline(text), None, "{text:?}");
        }
    }

    /// Lines of the plain shape, for the property below.
    const PLAIN: &[&str] = &[
        "",
        "# The Book",
        "## Chapter 1",
        "### Part",
        "- SCN-one: A beat.",
        "- SCN-two — Another beat, longer.",
        "- SCN-three",
        "- A sub-beat.",
        "- \"Quoted,\" a beat.",
        "- (An aside.)",
        "- Éloise arrives.",
        "- SCN-five: [a link](x) and `code` inside.",
        "  - SCN-nested: beat",
        "  - nested sub-beat",
        "    - deeper",
        "      - deepest",
    ];

    /// Lines that could make a plain-looking outline something else.
    const OTHER: &[&str] = &[
        "   ",
        "####### seven",
        "#hashtag",
        "# Closed #",
        "#",
        "#  Two spaces",
        "- SCN-four. Trailing ",
        "- a hard break\\",
        "- [ ] a task",
        "- `code` first",
        "-",
        "- ",
        "-  two spaces",
        "   - three spaces",
        "     - five spaces",
        "        - eight spaces",
        "\t- tabbed",
        "* a star item",
        "+ a plus item",
        "1. an ordered item",
        "- 1. nested ordered",
        "- - nested at once",
        "- > a quote",
        "- # a heading",
        "> a quote",
        "A paragraph line.",
        "  continued",
        "```",
        "<div>",
        "| a | b |",
        "- a | b",
        "---",
        "===",
        "***",
        "- - -",
        "[ref]: /url",
    ];

    fn outline() -> impl Strategy<Value = String> {
        let front = prop_oneof![
            3 => Just(""),
            2 => Just("---\ntitle: The Book\n---\n"),
            1 => Just("---\ntitle: x\n...\n"),
            1 => Just("---\n---\n"),
        ];
        let line = prop_oneof![
            30 => prop::sample::select(PLAIN.to_vec()),
            1 => prop::sample::select(OTHER.to_vec()),
        ];
        let body = prop::collection::vec(line, 0..20);
        let end = prop::sample::select(vec!["", "\n"]);
        (front, body, end).prop_map(|(front, body, end)| format!("{front}{}{end}", body.join("\n")))
    }

    /// Outlines of the plain shape by construction (headings, items nested
    /// at most one level below the last, empty lines), now and then with a
    /// line of another shape in them.
    fn shaped() -> impl Strategy<Value = String> {
        let element = (
            0..30u8,
            0..4usize,
            prop::sample::select(PLAIN.to_vec()),
            prop::sample::select(OTHER.to_vec()),
        );
        let end = prop::sample::select(vec!["", "\n"]);
        (prop::collection::vec(element, 0..30), end).prop_map(|(elements, end)| {
            let mut lines = Vec::new();
            let mut open = 0;
            for (kind, depth, plain, other) in elements {
                let item = plain
                    .trim_start()
                    .strip_prefix("- ")
                    .unwrap_or("SCN-x: a beat");
                match kind {
                    0..=3 => lines.push(String::new()),
                    4..=6 => {
                        open = 0;
                        lines.push(format!("{} Chapter {depth}", "#".repeat(depth + 1)));
                    }
                    7 => lines.push(other.to_owned()),
                    _ => {
                        let depth = depth.min(open);
                        open = depth + 1;
                        lines.push(format!("{}- {item}", "  ".repeat(depth)));
                    }
                }
            }
            format!("{}{end}", lines.join("\n"))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn the_plain_reading_is_the_parsed_one(text in prop_oneof![outline(), shaped()]) {
            if let Some(outline) = plain_outline(&text) {
                prop_assert_eq!(outline, parsed(&text), "{:?}", text);
            }
        }
    }
}

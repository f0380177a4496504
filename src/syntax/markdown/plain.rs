//! Plain prose read without the block grammar.
//!
//! Most of a manuscript is front matter, headings and paragraphs of prose,
//! and tree-sitter-md's block grammar spends most of a cold index on them:
//! about 2.5 MB a second on one core, for a structure a line scan finds at
//! memory speed. [`parse`] reads a document made only of such lines and
//! gives up (`None`) at the first line that could be anything else, so
//! that the block grammar reads it instead. What it gives is exactly what
//! the grammar gives: a differential test holds the two equal on every
//! document it accepts, generated and real.
//!
//! A document is read here when it has no carriage return, NUL or byte
//! order mark, no line ends in a space or a tab, and every line is one of
//! - the front matter: `---` as its first line and the first line that
//!   begins with `---` being `---` alone, followed by a line break;
//! - blank (empty);
//! - an ATX heading: one to six `#`, one space, then text that neither
//!   begins with a space nor ends with `#`, followed by a line break;
//! - a thematic break of three or more `*`, `_` or `-` (spaces between
//!   them allowed), followed by a line break, and for `-` not under a line
//!   of a paragraph (which it would make a heading);
//! - a line of a paragraph: it begins with a letter, a byte of a
//!   character beyond ASCII, or one of `"'(.,;?!&%@/`, none of which
//!   opens a block or continues one in another way, or with digits not
//!   followed by `.` or `)` (which would make an ordered list);
//! - a list item of one line: `- ` then a line of a paragraph, followed by
//!   another such item, a heading, the end, or blank lines (which it
//!   takes).
//!
//! Inline content is read as the grammar's inline nodes are (see
//! [`super::analyse_inline`]): the inline grammar runs only on a line or
//! paragraph with a byte that can open code, a link, HTML or LaTeX.

use tree_sitter::{Parser, Point, Range};

use super::{
    Block, BlockKind, InlineKey, InlineMemo, MarkdownSyntax, analyse_inline, needs_inline_grammar,
    new_inline_parser,
};
use crate::text::TextRange;

/// The syntax of `text` if every line of it is one this reader knows.
pub(super) fn parse(text: &str) -> Option<MarkdownSyntax> {
    parse_remembering(text, None)
}

/// [`parse`] of an open document: the inline content that needs the
/// inline grammar is taken from `memo`'s first map when its text is there,
/// and each such content read is put in the second (a keystroke reads one
/// paragraph's links again, not every paragraph's).
pub(super) fn parse_remembering(
    text: &str,
    memo: Option<(&InlineMemo, &mut InlineMemo)>,
) -> Option<MarkdownSyntax> {
    let bytes = text.as_bytes();
    if memchr::memchr2(b'\r', b'\0', bytes).is_some() || text.starts_with('\u{feff}') {
        return None;
    }
    let mut reader = Reader {
        text,
        inline_parser: None,
        memo,
        syntax: MarkdownSyntax::default(),
        paragraph: None,
        item: None,
    };
    let mut lines = Lines {
        bytes,
        start: 0,
        row: 0,
    };
    if text.starts_with("---\n") {
        let end = front_matter_end(&mut lines)?;
        reader.syntax.blocks.push(Block {
            kind: BlockKind::FrontMatter,
            range: TextRange::new(0, end),
            inline: TextRange::empty(0),
            list_depth: 0,
        });
    }
    for line in lines {
        reader.line(line)?;
    }
    reader.close_paragraph();
    if let Some((item, end)) = reader.item.take() {
        reader.list_item(item, end);
    }
    let mut syntax = reader.syntax;
    syntax.prose = super::remove_bare_urls(text, syntax.prose);
    syntax.blocks.shrink_to_fit();
    syntax.prose.shrink_to_fit();
    Some(syntax)
}

/// One line: `start..end` without its line break; `next` is where the next
/// line begins (`end + 1`, or `end` for the last line without a break).
#[derive(Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
    next: usize,
    row: usize,
}

impl Line {
    fn has_break(self) -> bool {
        self.next > self.end
    }
}

struct Lines<'a> {
    bytes: &'a [u8],
    start: usize,
    row: usize,
}

impl Iterator for Lines<'_> {
    type Item = Line;

    fn next(&mut self) -> Option<Line> {
        if self.start >= self.bytes.len() {
            return None;
        }
        let start = self.start;
        let (end, next) = match memchr::memchr(b'\n', &self.bytes[start..]) {
            Some(newline) => (start + newline, start + newline + 1),
            None => (self.bytes.len(), self.bytes.len()),
        };
        let line = Line {
            start,
            end,
            next,
            row: self.row,
        };
        self.start = next;
        self.row += 1;
        Some(line)
    }
}

/// Where the front matter that opens the text ends (after its closing
/// line's break), the lines read up to there.
fn front_matter_end(lines: &mut Lines<'_>) -> Option<usize> {
    let bytes = lines.bytes;
    lines.next();
    for line in lines.by_ref() {
        let content = &bytes[line.start..line.end];
        if content.starts_with(b"---") {
            return (content == b"---" && line.has_break()).then_some(line.next);
        }
    }
    None
}

/// Whether `line` (not empty, not indented) is a line of a paragraph: it
/// begins with a byte that opens no block, or with a number that is not an
/// ordered list's (`12 men`, `15th October`, not `1.` or `2)`).
fn is_prose_line(line: &[u8]) -> bool {
    let Some(&first) = line.first() else {
        return false;
    };
    if first.is_ascii_digit() {
        let after = line.iter().find(|byte| !byte.is_ascii_digit());
        return !matches!(after, Some(b'.' | b')'));
    }
    first.is_ascii_alphabetic() || !first.is_ascii() || b"\"'(.,;?!&%@/".contains(&first)
}

/// A paragraph being read: where it starts, where its first line ends, and
/// its last line so far.
struct Paragraph {
    start: usize,
    first_line_end: usize,
    first_row: usize,
    last: Line,
}

struct Reader<'a> {
    text: &'a str,
    /// Made on the first inline content that needs the inline grammar.
    inline_parser: Option<Parser>,
    memo: Option<(&'a InlineMemo, &'a mut InlineMemo)>,
    syntax: MarkdownSyntax,
    paragraph: Option<Paragraph>,
    /// A list item read and where it ends so far: the lines after it
    /// decide.
    item: Option<(Line, usize)>,
}

impl Reader<'_> {
    /// Reads one line; `None` when it is not one this reader knows.
    fn line(&mut self, line: Line) -> Option<()> {
        let content = &self.text.as_bytes()[line.start..line.end];
        if let Some((item, end)) = self.item.take() {
            match content.first() {
                // A list item takes the blank lines after it.
                None => {
                    self.item = Some((item, line.next));
                    return Some(());
                }
                Some(b'-' | b'#') => self.list_item(item, end),
                // After a blank line, a line of prose begins a paragraph.
                Some(_) if end > item.next => self.list_item(item, end),
                // Right under the item, it would continue the item's paragraph.
                Some(_) => return None,
            }
        }
        let Some(&first) = content.first() else {
            self.close_paragraph();
            return Some(());
        };
        if matches!(content.last(), Some(b' ' | b'\t')) {
            return None;
        }
        if is_prose_line(content) {
            match &mut self.paragraph {
                Some(paragraph) => paragraph.last = line,
                None => {
                    self.paragraph = Some(Paragraph {
                        start: line.start,
                        first_line_end: line.end,
                        first_row: line.row,
                        last: line,
                    });
                }
            }
            return Some(());
        }
        if content.starts_with(b"- ") && is_prose_line(&content[2..]) {
            self.close_paragraph();
            self.item = Some((line, line.next));
            return Some(());
        }
        // Under a paragraph's line, a line of `-` underlines it: a heading.
        if first == b'-' && self.paragraph.is_some() {
            return None;
        }
        self.close_paragraph();
        match first {
            b'#' => self.heading(line, content),
            b'*' | b'_' | b'-' => self.thematic_break(line, content, first),
            _ => None,
        }
    }

    /// The list item on `line` (`- ` and a line of prose), which ends at
    /// `end`: the item, then its paragraph within.
    fn list_item(&mut self, line: Line, end: usize) {
        let inline = TextRange::new(line.start + 2, line.end);
        self.syntax.blocks.push(Block {
            kind: BlockKind::ListItem,
            range: TextRange::new(line.start, end),
            inline,
            list_depth: 0,
        });
        self.syntax.blocks.push(Block {
            kind: BlockKind::Paragraph,
            range: TextRange::new(inline.start, line.next),
            inline,
            list_depth: 1,
        });
        self.inline(
            inline,
            Point::new(line.row, 2),
            Point::new(line.row, line.end - line.start),
        );
    }

    fn heading(&mut self, line: Line, content: &[u8]) -> Option<()> {
        let level = content.iter().take_while(|&&byte| byte == b'#').count();
        let title = content.get(level + 1..)?;
        let plain = (1..=6).contains(&level)
            && content[level] == b' '
            && title.first().is_some_and(|&byte| byte != b' ')
            && title.last() != Some(&b'#')
            // The grammar reads a document of one heading without its
            // break as nothing at all.
            && line.has_break();
        if !plain {
            return None;
        }
        let inline = TextRange::new(line.start + level + 1, line.end);
        self.syntax.blocks.push(Block {
            kind: BlockKind::Heading {
                level: u8::try_from(level).ok()?,
            },
            range: TextRange::new(line.start, line.next),
            inline,
            list_depth: 0,
        });
        let start = Point::new(line.row, level + 1);
        let end = Point::new(line.row, line.end - line.start);
        self.inline(inline, start, end);
        Some(())
    }

    fn thematic_break(&mut self, line: Line, content: &[u8], mark: u8) -> Option<()> {
        let marks = content.iter().filter(|&&byte| byte == mark).count();
        let only_marks = content.iter().all(|&byte| byte == mark || byte == b' ');
        // The grammar reads a last line of marks without its break as a
        // paragraph's text.
        if marks < 3 || !only_marks || !line.has_break() {
            return None;
        }
        self.syntax.blocks.push(Block {
            kind: BlockKind::ThematicBreak,
            range: TextRange::new(line.start, line.next),
            inline: TextRange::empty(line.start),
            list_depth: 0,
        });
        Some(())
    }

    fn close_paragraph(&mut self) {
        let Some(paragraph) = self.paragraph.take() else {
            return;
        };
        self.syntax.blocks.push(Block {
            kind: BlockKind::Paragraph,
            range: TextRange::new(paragraph.start, paragraph.last.next),
            inline: TextRange::new(paragraph.start, paragraph.first_line_end),
            list_depth: 0,
        });
        let last = paragraph.last;
        self.inline(
            TextRange::new(paragraph.start, last.end),
            Point::new(paragraph.first_row, 0),
            Point::new(last.row, last.end - last.start),
        );
    }

    /// Adds the prose of the inline content at `range`, which runs from
    /// `start` to `end` in rows and columns.
    fn inline(&mut self, range: TextRange, start: Point, end: Point) {
        let ranges = [Range {
            start_byte: range.start,
            end_byte: range.end,
            start_point: start,
            end_point: end,
        }];
        let key = self
            .memo
            .as_ref()
            .filter(|_| needs_inline_grammar(self.text, &ranges))
            .map(|_| InlineKey {
                text: range.slice(self.text).into(),
                cuts: Box::new([(0, u32::try_from(range.len()).unwrap_or(u32::MAX))]),
            });
        let known = key
            .as_ref()
            .zip(self.memo.as_ref())
            .and_then(|(key, (old, _))| old.get(key).cloned());
        let prose = known.unwrap_or_else(|| {
            let inline_parser = &mut self.inline_parser;
            analyse_inline(self.text, &ranges, range.start, || {
                inline_parser.get_or_insert_with(new_inline_parser)
            })
            .into()
        });
        if let (Some(key), Some((_, new))) = (key, self.memo.as_mut()) {
            new.insert(key, prose.clone());
        }
        self.syntax
            .prose
            .extend(prose.iter().map(|prose| prose.shifted(range.start)));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::MarkdownParser;
    use super::parse;

    /// Lines of the kinds this reader knows, and lines that look like them.
    const KNOWN: &[&str] = &[
        "The lamp burned low.",
        "“Wait,” she said. “Not yet.”",
        "She read [the letter](notes.md) twice, and ![a map](map.png).",
        "A `code` span, <b>some HTML</b> and <https://example.com>.",
        "See https://example.com/path and www.example.org now.",
        "It cost $5, then $$6$$.",
        "Émile ran; (an aside); 'quoted'; ...and so on?",
        "Mr. Bennet *smiled* and __left__ & 50% @home/now.",
        "A line that ends in a backslash\\",
        "Pipes | in | prose",
        "a | b",
        "",
        "",
        "# A title",
        "## Two, with [a link](x) and `code`",
        "###### Six",
        "####### Seven",
        "#hashtag",
        "# Closed #",
        "#  Two spaces",
        "#",
        "***",
        "* * *",
        "___",
        "_ _ _",
        "---",
        "- - -",
        "-- --",
        "----",
        "1847 was a year",
        "15th October",
        "12",
        "- 12 men: a note",
        "- Viktor Ingram: old friend",
        "- Oskar [the creditor](x.md), of `code`",
        "- “Quoted” item",
    ];

    /// Lines that open, continue or end a block some other way, which the
    /// reader must leave to the grammar.
    const OTHERS: &[&str] = &[
        "**",
        "*Emphasis* first",
        "_Under_ first",
        "+ an item",
        "* an item",
        "1. an item",
        "2) an item",
        "1847. A year",
        "3.14 is pi",
        "10) ten",
        "- 1. nested",
        "    indented code",
        "  two spaces",
        "\tA tab",
        "> a quote",
        ">",
        "```",
        "~~~",
        "<div>",
        "<!-- a comment -->",
        "[ref]: /url",
        "[^1]: a note",
        "| a | b |",
        "|---|---|",
        "-|-",
        ":--",
        "===",
        "$$",
        "\\* escaped",
        "A trailing space ",
        "A trailing tab\t",
        "A trailing form feed\x0c",
        "A trailing vertical tab\x0b",
        "\x0cA form feed first",
        "A carriage return\r",
        "\u{a0}A no-break space first",
        "\u{3000}An ideographic space first",
        "—A dash first",
        "A NUL\0 inside",
    ];

    const FRONT: &[&str] = &[
        "",
        "---\ntitle: The Gate\npov: Kael\n---\n",
        "---\n---\n",
        "---\ntitle: Never closed\n",
        "---\na: b\n----\n",
        "---\na: b\n--- \n",
        "---\nlist:\n  - a\n  - b\n# not a heading\n---\n",
        "---\na: b\n---",
        "\u{feff}---\na: b\n---\n",
    ];

    fn document() -> impl Strategy<Value = String> {
        (
            prop::sample::select(FRONT),
            prop::collection::vec(
                prop_oneof![
                    12 => prop::sample::select(KNOWN),
                    4 => Just(""),
                    1 => prop::sample::select(OTHERS),
                ],
                0..14,
            ),
            any::<bool>(),
        )
            .prop_map(|(front, lines, last_break)| {
                let mut text = format!("{front}{}", lines.join("\n"));
                if last_break {
                    text.push('\n');
                }
                text
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Whatever it reads, it reads as the grammar does.
        #[test]
        fn a_document_read_plainly_is_what_the_grammar_reads(text in document()) {
            if let Some(syntax) = parse(&text) {
                prop_assert_eq!(syntax, MarkdownParser::parse_with_grammar(&text), "{:?}", text);
            }
        }
    }

    /// The shapes a manuscript is mostly written in are read plainly (else
    /// the reader is never used), and a line the grammar could read as
    /// something else is not.
    #[test]
    fn front_matter_headings_breaks_and_paragraphs_are_read_plainly_and_nothing_else() {
        let read = [
            "---\ntitle: The Gate\n---\n\n# The gate\n\nThe lamp burned low.\nShe waited [there](x).\n\n* * *\n\n“Go,” he said. See https://example.com.\n",
            "Words without a last break",
            "## Relationships\n\n- Viktor Ingram: old friend\n- Oskar: creditor\n\n\nText.\n- An item under it\n# Notes\n",
            "---\n---\n## Two\nText right after.\n___\n",
            "A scene.\n\n---\n\nAnother, after a break.\n",
            "",
        ];
        for text in read {
            assert_eq!(
                parse(text),
                Some(MarkdownParser::parse_with_grammar(text)),
                "{text:?}"
            );
        }
        let left = [
            "Text\n---\n",
            "- An item\nand its lazy line\n",
            "Text\n===\n",
            "Text\n\n    code\n",
            "Text\n> quote\n",
            "Text\n1. item\n",
            "# Closed #\n",
            "####### Seven\n",
            "Text\n***",
            "# A title",
            "---\na: b\n---",
            "Text \nmore\n",
            "Text\r\n",
            "| a | b |\n|---|---|\n",
        ];
        for text in left {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }

    /// Every file of the bundled example that is read plainly is read as
    /// the grammar reads it, and its scenes are.
    #[test]
    fn the_example_manuscript_is_read_plainly_as_the_grammar_reads_it() {
        let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road");
        let mut folders = vec![example];
        let (mut files, mut plain) = (0, 0);
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                    continue;
                }
                if path.extension().is_none_or(|extension| extension != "md") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                files += 1;
                if let Some(syntax) = parse(&text) {
                    plain += 1;
                    assert_eq!(
                        syntax,
                        MarkdownParser::parse_with_grammar(&text),
                        "{}",
                        path.display()
                    );
                }
            }
        }
        assert!(files > 10, "the example has its files");
        assert!(plain * 3 > files * 2, "{plain} of {files} read plainly");
    }
}

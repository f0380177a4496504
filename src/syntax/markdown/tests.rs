//! The parser's tests: prose ranges, blocks, and incremental parses held to fresh ones.

use super::*;

/// Applies `removed_len` bytes at `at` replaced by `inserted`, checks the
/// result against a fresh parse, and says whether a block parse was done
/// (and, when none was, that the syntax was made from the last one).
fn edit(
    parser: &mut MarkdownParser,
    text: &mut String,
    at: usize,
    removed_len: usize,
    inserted: &str,
) -> bool {
    let before = parser.block_parses;
    let spliced = parser.spliced;
    let read_plainly = parser.read_plainly;
    let edit = TextEdit {
        range: TextRange::new(at, at + removed_len),
        new_text: inserted.to_owned(),
    };
    let mut edited = text.clone();
    edited.replace_range(at..at + removed_len, inserted);
    let syntax = parser.apply_edit(text, &edit, &edited);
    assert_eq!(
        syntax,
        MarkdownParser::parse_fresh(&edited),
        "after editing into {edited:?}"
    );
    *text = edited;
    let parsed = parser.block_parses > before;
    assert!(
        parsed || parser.spliced > spliced || parser.read_plainly > read_plainly,
        "no block parse, the syntax not made from the last one, nor read plainly"
    );
    parsed
}

/// A scene with a numbered list, which the line scan leaves to the grammar
/// (see `plain`): its edits go through the tree.
const SCENE: &str = "---\ntitle: Gate\n---\n\n# The gate\n\nThe lamp burned low. She waited *there*.\nAnother line of it.\n\n1. a list item\n\nLast words.";

/// A scene the line scan reads is read by it again after each edit and
/// keeps no tree; from the edit that makes it something the scan does not
/// read, the grammar parses it whole, once, and its tree is kept.
#[test]
fn a_plain_document_is_read_plainly_after_each_edit_until_it_is_not() {
    let mut text = SCENE.replace("1. a list item", "- a list item");
    let mut parser = MarkdownParser::new();
    parser.parse(&text);
    assert_eq!((parser.read_plainly, parser.block_parses), (1, 0));
    assert!(parser.tree.is_none());
    let middle = text.find("burned").unwrap();
    assert!(
        !edit(&mut parser, &mut text, middle, 0, "slowly "),
        "a word"
    );
    let other = text.find("Another").unwrap();
    assert!(
        !edit(&mut parser, &mut text, other, 0, "\n\n"),
        "a line broken"
    );
    let other = text.find("Another").unwrap();
    assert!(
        !edit(&mut parser, &mut text, other, 0, "# "),
        "a heading begun"
    );
    let item = text.find("list item").unwrap();
    assert!(
        !edit(&mut parser, &mut text, item, 0, "[a link](x) in "),
        "a link"
    );
    assert_eq!((parser.read_plainly, parser.block_parses), (5, 0));
    assert!(parser.tree.is_none());
    assert!(
        edit(&mut parser, &mut text, other, 0, "> "),
        "a quote begun"
    );
    assert!(parser.tree.is_some());
    let end = text.len();
    assert!(
        !edit(&mut parser, &mut text, end, 0, " Then nothing."),
        "typing on"
    );
    assert_eq!((parser.read_plainly, parser.block_parses), (5, 1));
    // Past the size the scan is used for, the tree is kept from the start.
    let long = "The lamp burned low.\n\n".repeat(super::PLAIN_EDITS_UP_TO / 20);
    parser.parse(&long);
    assert!(parser.tree.is_some());
}

/// Read plainly after an edit, a paragraph with a link that the edit did
/// not touch is not read by the inline grammar again: its prose comes from
/// the memo.
#[test]
fn a_plain_documents_links_are_read_again_only_where_an_edit_changed_them() {
    let mut text =
        "One [link](a.md) here.\n\nTwo [links](b.md) there.\n\nPlain words.\n".to_owned();
    let mut parser = MarkdownParser::new();
    parser.parse(&text);
    assert_eq!(parser.inline_memo.len(), 2, "the two paragraphs with links");
    // A mark no inline grammar would give: it shows where the memo was read.
    let two = text.find("Two").unwrap();
    let marked: InlineProse = Arc::new([TextRange::new(0, 1)]);
    for (key, prose) in parser.inline_memo.iter_mut() {
        if key.text.starts_with("Two") {
            *prose = marked.clone();
        }
    }
    let plain = text.find("Plain").unwrap();
    let edited = {
        let mut edited = text.clone();
        edited.insert_str(plain, "More ");
        edited
    };
    let syntax = parser.apply_edit(
        &text,
        &TextEdit {
            range: TextRange::empty(plain),
            new_text: "More ".to_owned(),
        },
        &edited,
    );
    assert!(
        syntax.prose.contains(&TextRange::new(two, two + 1)),
        "{syntax:?}"
    );
    assert_eq!(parser.block_parses, 0);
    // An edit inside that paragraph reads it again, as a fresh parse does.
    text = edited;
    let inside = text.find("there").unwrap();
    edit(&mut parser, &mut text, inside, 0, "over ");
}

#[test]
fn typing_in_a_paragraphs_line_needs_no_block_parse() {
    let mut text = SCENE.to_owned();
    let mut parser = MarkdownParser::new();
    parser.parse(&text);
    let middle = text.find("burned").unwrap();
    assert!(
        !edit(&mut parser, &mut text, middle, 0, "slowly "),
        "a word inside a line"
    );
    let line_end = text.find("*there*.").unwrap() + "*there*.".len();
    assert!(
        !edit(&mut parser, &mut text, line_end, 0, " Rain fell"),
        "at a line's end"
    );
    let other = text.find("Another").unwrap();
    assert!(
        !edit(
            &mut parser,
            &mut text,
            other + 1,
            "nother".len(),
            "ny other"
        ),
        "a word replaced after a line's first letter"
    );
    assert!(
        edit(&mut parser, &mut text, other, 0, "  "),
        "the line's indent"
    );
    let end = text.len();
    assert!(
        !edit(&mut parser, &mut text, end, 0, " Then nothing."),
        "the file's last line"
    );
    assert!(
        !edit(&mut parser, &mut text, middle, "slowly ".len(), ""),
        "a deletion"
    );
}

/// A `#` typed at the start of a line that a carriage return alone began
/// makes a heading: that line is not the middle of a line of prose.
#[test]
fn a_heading_typed_after_a_lone_carriage_return_is_read_as_a_heading() {
    let mut text = "Kael waited by the gate.](\u{1}\r in the yard, then left.\nMore.\n".to_owned();
    let mut parser = MarkdownParser::new();
    parser.parse(&text);
    let at = text.find(" in the yard").unwrap();
    assert!(edit(&mut parser, &mut text, at, 0, "#"), "a block parse");
    assert!(
        MarkdownParser::parse_fresh(&text)
            .blocks
            .iter()
            .any(|block| matches!(block.kind, BlockKind::Heading { .. })),
        "{text:?}"
    );
}

#[test]
fn an_edit_that_can_change_the_blocks_parses_them_again() {
    let mut text = SCENE.to_owned();
    let mut parser = MarkdownParser::new();
    parser.parse(&text);
    let other = text.find("Another").unwrap();
    assert!(
        edit(&mut parser, &mut text, other, 0, "# "),
        "a heading begun"
    );
    let other = text.find("Another").unwrap();
    assert!(
        edit(&mut parser, &mut text, other - 2, 2, ""),
        "and taken back"
    );
    assert!(
        edit(&mut parser, &mut text, other - 2, 0, "\n"),
        "a line broken"
    );
    let lamp = text.find("The lamp").unwrap();
    assert!(
        edit(&mut parser, &mut text, lamp, 0, "a | b "),
        "a table's cells"
    );
    assert!(
        edit(&mut parser, &mut text, lamp, "a | b ".len(), ""),
        "a pipe removed"
    );
    let item = text.find("list item").unwrap();
    assert!(
        edit(&mut parser, &mut text, item, 0, "short "),
        "inside a list"
    );
    let blank = text.find("Last").unwrap() - 1;
    assert!(
        edit(&mut parser, &mut text, blank, 0, "joined"),
        "a blank line filled"
    );
    assert!(edit(&mut parser, &mut text, 0, 0, "x"), "the front matter");
}

#[test]
fn a_nul_typed_into_a_paragraph_is_read_as_a_fresh_parse_reads_it() {
    let mut text = "rcpt_*#> SCN-#---\nline 3#\n*".to_owned();
    let mut parser = MarkdownParser::new();
    parser.parse(&text);
    assert!(edit(&mut parser, &mut text, 1, 0, "\0"), "a NUL typed");
    assert!(edit(&mut parser, &mut text, 3, 0, "x"), "beside a NUL");
}

fn prose_text(text: &str) -> Vec<&str> {
    MarkdownParser::parse_fresh(text)
        .prose
        .iter()
        .map(|range| range.slice(text))
        .collect()
}

#[test]
fn code_links_comments_and_urls_are_not_prose() {
    let text = "---\nname: Kael\n---\n\nKael saw `Kael` and [Iria](http://x.y \"t\") at <http://a.b> <!-- Kael --> see https://k.example/Kael now.\n\n```\nKael\n```\n\n<!-- Kael -->\n";
    let prose = prose_text(text).concat();
    assert_eq!(prose.matches("Kael").count(), 1, "{prose:?}");
    assert!(prose.contains("Iria"));
    assert!(prose.contains(" now."));
}

#[test]
fn blocks_have_kinds_levels_and_first_lines() {
    let text = "# Act One\n\n## Chapter 1\n\n- SCN-a: first\n  more\n- SCN-b: second\n\nPlain.\n";
    let syntax = MarkdownParser::parse_fresh(text);
    let summary: Vec<_> = syntax
        .blocks
        .iter()
        .map(|block| (block.kind, block.inline.slice(text), block.list_depth))
        .collect();
    assert_eq!(
        summary,
        vec![
            (BlockKind::Heading { level: 1 }, "Act One", 0),
            (BlockKind::Heading { level: 2 }, "Chapter 1", 0),
            (BlockKind::ListItem, "SCN-a: first", 0),
            (BlockKind::Paragraph, "SCN-a: first", 1),
            (BlockKind::ListItem, "SCN-b: second", 0),
            (BlockKind::Paragraph, "SCN-b: second", 1),
            (BlockKind::Paragraph, "Plain.", 0),
        ]
    );
}

#[test]
fn quote_markers_are_not_prose() {
    let text = "> Kael said\n> Iria left\n";
    assert_eq!(prose_text(text).concat(), "Kael said\nIria left");
}

mod incremental {
    use super::super::*;
    use proptest::prelude::*;

    const SNIPPETS: &[&str] = &[
        "Kael",
        " said",
        ", \"Go.\"",
        "\n",
        "\n\n",
        "# ",
        "## Chapter\n",
        "- ",
        "  ",
        "`",
        "code`",
        "[",
        "](x)",
        "<!-- ",
        " -->",
        "<b>",
        "> ",
        "```\n",
        "*",
        "_",
        "https://e.x/a ",
        "---\n",
        "| a | b |\n",
        "\\",
        "’s",
        "Iria",
        "1. ",
        "$",
        "www.k ",
        "é😀",
    ];

    /// What a writer types into a line: words, punctuation, inline syntax.
    const TYPED: &[&str] = &[
        "a",
        "Kael ",
        " said",
        ".",
        ", ",
        "’s",
        "é😀",
        "`x`",
        "*",
        "_",
        "[",
        "](x)",
        "<b>",
        "https://e.x/a ",
        "www.k ",
        "$",
        "#",
        "-",
        "  ",
        "",
    ];

    /// A line of a scene: prose with some inline syntax, a heading, a blank
    /// line or a list item now and then.
    fn prose_line() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => proptest::collection::vec(proptest::sample::select(TYPED), 1..10)
                .prop_map(|parts| format!("Then {}\n", parts.concat())),
            2 => Just("\n".to_owned()),
            1 => Just("# Heading\n".to_owned()),
            1 => Just("- item\n".to_owned()),
            1 => Just("> quoted\n".to_owned()),
        ]
    }

    /// Lines of prose and edits typed into them, as the typing test draws them.
    fn typing() -> impl Strategy<Value = (Vec<String>, Vec<(usize, usize, &'static str)>)> {
        (
            proptest::collection::vec(prose_line(), 1..12),
            proptest::collection::vec(
                (any::<usize>(), 0usize..8, proptest::sample::select(TYPED)),
                1..16,
            ),
        )
    }

    /// Parses `lines` and makes each edit in turn (its start and end put on
    /// a character's boundary), handing `each` the syntax and the text
    /// after it; the parser, for its counts.
    fn type_into(
        lines: &[String],
        edits: &[(usize, usize, &str)],
        mut each: impl FnMut(&MarkdownSyntax, &str),
    ) -> MarkdownParser {
        let mut text = lines.concat();
        let mut parser = MarkdownParser::new();
        parser.parse(&text);
        for &(at, len, insert) in edits {
            let start = floor_boundary(&text, at % (text.len() + 1));
            let end = floor_boundary(&text, start + len);
            let edit = TextEdit {
                range: TextRange::new(start, end),
                new_text: insert.to_owned(),
            };
            let mut new_text = text.clone();
            new_text.replace_range(start..end, &edit.new_text);
            let syntax = parser.apply_edit(&text, &edit, &new_text);
            each(&syntax, &new_text);
            text = new_text;
        }
        parser
    }

    /// The typing test's cases mostly reach [`splice`]: of 300 drawn
    /// as it draws them, at least a third make a syntax from the last one.
    #[test]
    fn most_typing_cases_make_the_syntax_from_the_last_parse() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let spliced_cases = (0..300)
            .filter(|_| {
                let (lines, edits) = typing().new_tree(&mut runner).unwrap().current();
                type_into(&lines, &edits, |_, _| {}).spliced > 0
            })
            .count();
        assert!(
            spliced_cases >= 100,
            "only {spliced_cases} of 300 cases spliced"
        );
    }

    fn document() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(SNIPPETS), 0..40)
            .prop_map(|parts| parts.concat())
    }

    fn edits() -> impl Strategy<Value = Vec<(usize, usize, String)>> {
        proptest::collection::vec(
            (
                any::<usize>(),
                0usize..12,
                proptest::collection::vec(proptest::sample::select(SNIPPETS), 0..3),
            ),
            1..12,
        )
        .prop_map(|edits| {
            edits
                .into_iter()
                .map(|(at, len, insert)| (at, len, insert.concat()))
                .collect()
        })
    }

    fn floor_boundary(text: &str, mut offset: usize) -> usize {
        offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// After any sequence of edits, the incremental result equals a fresh parse.
        #[test]
        fn incremental_parse_equals_fresh_parse(initial in document(), edits in edits()) {
            let mut parser = MarkdownParser::new();
            let mut text = initial;
            parser.parse(&text);
            for (at, len, insert) in edits {
                let start = floor_boundary(&text, at % (text.len() + 1));
                let end = floor_boundary(&text, start + len);
                let edit = TextEdit { range: TextRange::new(start, end), new_text: insert };
                let mut new_text = text.clone();
                new_text.replace_range(start..end, &edit.new_text);
                let incremental = parser.apply_edit(&text, &edit, &new_text);
                prop_assert_eq!(&incremental, &MarkdownParser::parse_fresh(&new_text), "after editing into {:?}", new_text);
                text = new_text;
            }
        }

        /// Typing in lines of prose, where the syntax is made from the last
        /// parse's (every block and range moved, one paragraph read again),
        /// gives what a fresh parse gives, inline syntax and URLs included.
        #[test]
        fn typing_in_prose_made_from_the_last_parse_equals_fresh_parse((lines, edits) in typing()) {
            type_into(&lines, &edits, |syntax, text| {
                assert_eq!(syntax, &MarkdownParser::parse_fresh(text), "after editing into {text:?}");
            });
        }

        /// Skipping the inline grammar for text without inline syntax changes nothing.
        #[test]
        fn inline_shortcut_equals_inline_grammar(text in document()) {
            let syntax = MarkdownParser::parse_fresh(&text);
            let mut full = tree_sitter_md::MarkdownParser::default();
            let tree = full.parse(text.as_bytes(), None).unwrap();
            let mut excluded = Vec::new();
            for inline in tree.inline_trees() {
                collect_non_prose(inline.root_node(), &mut excluded);
            }
            for range in &syntax.prose {
                for cut in &excluded {
                    prop_assert!(!range.intersects(*cut), "prose {:?} overlaps non-prose {:?} in {:?}", range, cut, text);
                }
            }
        }
    }
}

#[test]
fn a_setext_heading_is_one_block_and_its_words_are_read_once() {
    let text = "The Gate\n========\n\nShe waited.\n\nLow tide\n--------\n\n> Quoted\n> ------\n";
    let syntax = MarkdownParser::parse_fresh(text);
    let kinds: Vec<BlockKind> = syntax.blocks.iter().map(|block| block.kind).collect();
    assert_eq!(
        kinds,
        [
            BlockKind::Heading { level: 1 },
            BlockKind::Paragraph,
            BlockKind::Heading { level: 2 },
            BlockKind::Quote,
            BlockKind::Heading { level: 2 },
        ],
        "{:?}",
        syntax.blocks
    );
    let prose: Vec<&str> = syntax.prose.iter().map(|range| range.slice(text)).collect();
    assert_eq!(prose, ["The Gate", "She waited.", "Low tide", "Quoted"]);
}

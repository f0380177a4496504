//! A scene's mentions and near names after an edit of its prose, found
//! again only around the edit: typing a sentence reads the paragraph it is
//! in, not the whole scene.
//!
//! The edit is what the old and new texts do not share at their start and
//! end. Around it, [`mentions::CONTEXT`] bytes on either side and out to
//! the blocks and prose ranges that reach into them, is the window read again; what
//! lies wholly before it is kept, and what lies wholly after it is kept,
//! moved by the edit. That holds only where the Markdown outside the
//! window is what it was (a fence typed in a paragraph makes the rest of a
//! scene code): the blocks and prose ranges outside it are compared, and
//! where they differ the scene is read whole again.
//! `rescan_equals_a_fresh_reading` holds it to [`super::workspace`]'s
//! reading of the whole scene.

use super::catalog::Catalog;
use super::file::SourceFile;
use super::mentions::{self, Mention};
use super::variants::{self, NearName};
use crate::syntax::{BlockKind, MarkdownSyntax};
use crate::text::TextRange;

/// `new`'s mentions and near names, from `old`'s (`mentions`, `near`) kept
/// outside the edit between them, and found again in its window. `None`
/// when the Markdown outside the window changed: read the whole scene.
pub(super) fn names_after_edit(
    catalog: &Catalog,
    old: &SourceFile,
    new: &SourceFile,
    mentions: &[Mention],
    near: &[NearName],
) -> Option<(Vec<Mention>, Vec<NearName>)> {
    let window = Window::of(&old.text, &new.text)?;
    window
        .same_outside(&old.syntax, &new.syntax)
        .then_some(())?;
    let (start, end) = window.widened(&new.syntax);
    let prose = &new.syntax.prose;
    let first = prose.partition_point(|range| range.end <= start);
    let last = prose.partition_point(|range| range.start < end);
    let after_in_old = |range: TextRange| window.in_new(range.start) >= end;

    let mut found: Vec<Mention> = mentions
        .iter()
        .filter(|mention| mention.range.end <= start)
        .cloned()
        .collect();
    found.extend(
        catalog
            .matcher()
            .find_in_prose(&new.text, &prose[first..last]),
    );
    found.extend(
        mentions
            .iter()
            .filter(|mention| after_in_old(mention.range))
            .map(|mention| mention.moved_to(window.moved(mention.range))),
    );

    let is_scene = matches!(new.content, super::FileContent::Scene(_));
    let near = if is_scene {
        let before = near.iter().flat_map(|name| {
            name.ranges
                .iter()
                .filter(|range| range.end <= start)
                .map(|range| (&*name.word, *range))
        });
        let within = variants::near_words(
            &new.text,
            catalog.name_words(),
            variants::prose_ranges(&new.syntax)
                .filter(|range| range.end > start && range.start < end),
        );
        let after = near.iter().flat_map(|name| {
            name.ranges
                .iter()
                .filter(|range| after_in_old(**range))
                .map(|range| (&*name.word, window.moved(*range)))
        });
        variants::group(before.chain(within).chain(after))
    } else {
        Vec::new()
    };
    Some((found, near))
}

/// A syntax's blocks as the window compares them: kind and range.
fn blocks(syntax: &MarkdownSyntax) -> impl Iterator<Item = (BlockKind, TextRange)> + '_ {
    syntax.blocks.iter().map(|block| (block.kind, block.range))
}

/// Where an edit is: bytes `start..end` of the new text (the edit with
/// [`mentions::CONTEXT`] bytes either side), and how far it moved what
/// follows it.
struct Window {
    start: usize,
    end: usize,
    /// The new text's length less the old's.
    shift: isize,
}

impl Window {
    /// The window of the edit from `old` to `new`; `None` when they are the
    /// same (nothing to find again).
    fn of(old: &str, new: &str) -> Option<Window> {
        if old == new {
            return None;
        }
        let mut prefix = old
            .bytes()
            .zip(new.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        while !new.is_char_boundary(prefix) {
            prefix -= 1;
        }
        let most = old.len().min(new.len()) - prefix;
        let mut suffix = old
            .bytes()
            .rev()
            .zip(new.bytes().rev())
            .take(most)
            .take_while(|(a, b)| a == b)
            .count();
        while !new.is_char_boundary(new.len() - suffix) {
            suffix -= 1;
        }
        let mut start = prefix.saturating_sub(mentions::CONTEXT);
        while !new.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (new.len() - suffix + mentions::CONTEXT).min(new.len());
        while !new.is_char_boundary(end) {
            end += 1;
        }
        Some(Window {
            start,
            end,
            shift: new.len() as isize - old.len() as isize,
        })
    }

    /// The window out to the blocks that reach into it (but for lists and
    /// quotes, which hold others) and to the prose ranges that do: a word
    /// is read again whole, and with the kind of block it is in.
    fn widened(&self, new: &MarkdownSyntax) -> (usize, usize) {
        let (mut start, mut end) = (self.start, self.end);
        let reaching = |range: &TextRange| range.end > self.start && range.start < self.end;
        for block in &new.blocks {
            if reaching(&block.range)
                && !matches!(block.kind, BlockKind::ListItem | BlockKind::Quote)
            {
                start = start.min(block.range.start);
                end = end.max(block.range.end);
            }
        }
        for range in &new.prose {
            if range.end > start && range.start < end {
                start = start.min(range.start);
                end = end.max(range.end);
            }
        }
        (start, end)
    }

    /// Where an offset of the old text after the edit is in the new one.
    fn in_new(&self, offset: usize) -> usize {
        offset.saturating_add_signed(self.shift)
    }

    fn moved(&self, range: TextRange) -> TextRange {
        TextRange::new(self.in_new(range.start), self.in_new(range.end))
    }

    /// Whether the blocks (their kinds and ranges) and the prose ranges
    /// wholly before the window, and wholly after it (moved), are the same
    /// in both.
    fn same_outside(&self, old: &MarkdownSyntax, new: &MarkdownSyntax) -> bool {
        let old_end = self.end as isize - self.shift;
        let before = |range: &TextRange| range.end <= self.start;
        let after_old = |range: &TextRange| range.start as isize >= old_end;
        let after_new = |range: &TextRange| range.start >= self.end;
        let same_blocks_before = blocks(old)
            .filter(|(_, range)| before(range))
            .eq(blocks(new).filter(|(_, range)| before(range)));
        let same_blocks_after = blocks(old)
            .filter(|(_, range)| after_old(range))
            .map(|(kind, range)| (kind, self.moved(range)))
            .eq(blocks(new).filter(|(_, range)| after_new(range)));
        let same_prose_before = old
            .prose
            .iter()
            .filter(|range| before(range))
            .eq(new.prose.iter().filter(|range| before(range)));
        let same_prose_after = old
            .prose
            .iter()
            .filter(|range| after_old(range))
            .map(|range| self.moved(*range))
            .eq(new.prose.iter().copied().filter(|range| after_new(range)));
        same_blocks_before && same_blocks_after && same_prose_before && same_prose_after
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::test_support::example_root;
    use crate::index::{FilePath, Workspace};

    /// What a fresh reading of the whole of `file` finds.
    fn fresh(catalog: &Catalog, file: &SourceFile) -> (Vec<Mention>, Vec<NearName>) {
        (
            catalog.matcher().find(&file.text, &file.syntax),
            variants::near_names(file, catalog.name_words()),
        )
    }

    /// A small deterministic generator, so a failure names its step.
    struct Steps(u64);

    impl Steps {
        fn below(&mut self, bound: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) % bound as u64) as usize
        }
    }

    /// Text typed into the scene: names and near names, titles,
    /// possessives, wide characters, and Markdown that changes the blocks
    /// after it (fences, headings, lists, quotes, blank lines).
    const TYPED: &[&str] = &[
        "Iria",
        "Kael",
        " Iria Vell ",
        "Mr. ",
        "Lady ",
        "’s",
        "'s",
        "Irria",
        "Kaell",
        "Iris",
        " the tide",
        ". ",
        "\n\n",
        "\n```\n",
        "\n# ",
        "\n- ",
        "> ",
        "*",
        "`",
        "—",
        "é",
        "𝄞",
        "Professor\u{a0}",
        "\nSaltmaster Oren spoke. ",
    ];

    #[test]
    fn rescan_equals_a_fresh_reading() {
        let workspace = Workspace::load(&example_root());
        let catalog = workspace.catalog();
        let paths = &workspace.config().paths;
        let path = FilePath::from("Story/Scenes/SCN-the-fall.md");
        let scene = workspace.file(&path).expect("the example's scene");
        let mut old = SourceFile::parse(path.clone(), scene.text.clone(), paths);
        let (mut mentions, mut near) = fresh(catalog, &old);
        let body = old.text.find("\n---\n").expect("front matter") + 5;
        let mut steps = Steps(7);
        let mut rescanned = 0;
        for step in 0..400 {
            let text = &old.text;
            let mut at = body + steps.below(text.len() - body + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut to = (at + steps.below(12)).min(text.len());
            while !text.is_char_boundary(to) {
                to -= 1;
            }
            let typed = if steps.below(3) == 0 {
                ""
            } else {
                TYPED[steps.below(TYPED.len())]
            };
            let edited = format!("{}{typed}{}", &text[..at], &text[to..]);
            let new = SourceFile::parse(path.clone(), edited.into(), paths);
            let wanted = fresh(catalog, &new);
            if let Some(found) = names_after_edit(catalog, &old, &new, &mentions, &near) {
                rescanned += 1;
                assert_eq!(
                    found,
                    wanted,
                    "step {step}: {typed:?} over {at}..{to} of {:?}",
                    &text[at.saturating_sub(40)..(to + 40).min(text.len())]
                );
            }
            (mentions, near) = wanted;
            old = new;
        }
        // Most edits are found again around them; only those that change
        // the Markdown after them read the scene whole.
        assert!(rescanned > 200, "only {rescanned} of 400 edits rescanned");
    }

    #[test]
    fn a_workspace_keeps_the_mentions_of_a_scene_typed_in_as_a_fresh_reading_finds_them() {
        let mut workspace = Workspace::load(&example_root());
        let path = FilePath::from("Story/Scenes/SCN-the-fall.md");
        let text = workspace.file(&path).expect("the scene").text.to_string();
        let at = text.rfind("\n\n").expect("a paragraph break");
        for typed in ["Iria’s ", "Kaell ", "Lady Iria "] {
            let text = workspace.file(&path).expect("the scene").text.to_string();
            let edited = format!("{}\n\n{typed}{}", &text[..at], &text[at..]);
            let paths = workspace.config().paths.clone();
            workspace.insert_file(SourceFile::parse(path.clone(), edited.into(), &paths));
            let file = workspace.file(&path).expect("the scene").clone();
            let (mentions, _) = fresh(workspace.catalog(), &file);
            assert_eq!(workspace.mentions(&path), &mentions[..], "{typed:?}");
        }
    }
}

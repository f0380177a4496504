//! What a check read of each line of the scene being typed in, kept from
//! its last reading: the next reading reads again only the lines that
//! changed. Only the last reading's lines are kept, and only of one file,
//! so the memo holds one scene's lines however long the writer types.
//!
//! A reading meets the lines in the text's order, and the last reading's
//! are kept in that order: a line is looked for where the last reading
//! went on from (the lines before an edit, then those after it, moved),
//! by comparing texts, so typing hashes no line. Only where lines were cut
//! or moved far is the last reading indexed by the lines' hashes.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use rustc_hash::{FxBuildHasher, FxHashMap};

/// How many of the last reading's lines, from where it went on, a line is
/// looked for among before it counts as new (lines cut within this many
/// are passed over).
const LOOK_AHEAD: usize = 8;

/// After this many new lines in a row (a paste, or lines cut beyond
/// [`LOOK_AHEAD`]), the rest of the last reading is indexed by hash.
const NEW_BEFORE_INDEX: usize = 4;

/// One line's reading: its text, the key of what else it depends on, and
/// what was read.
struct Line<T> {
    text: Box<str>,
    key: u64,
    read: Arc<T>,
}

/// Each line's reading of one file, in the text's order, by the line's
/// text and a key of what else the reading depends on.
pub struct LineMemo<T> {
    kept: Mutex<Option<Kept<T>>>,
}

struct Kept<T> {
    path: Box<str>,
    lines: Vec<Line<T>>,
}

impl<T> LineMemo<T> {
    pub const fn new() -> LineMemo<T> {
        LineMemo {
            kept: Mutex::new(None),
        }
    }

    /// A reading of the file at `path`: what it reads of each line is
    /// kept once it ends (dropped), in place of what was kept before.
    pub fn reading(&self, path: &str) -> Reading<'_, T> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).take();
        let old: Vec<Option<Line<T>>> = match kept {
            Some(kept) if *kept.path == *path => kept.lines.into_iter().map(Some).collect(),
            _ => Vec::new(),
        };
        Reading {
            memo: self,
            path: path.into(),
            // Sized as the last reading: it mostly meets the same lines again.
            new: Vec::with_capacity(old.len()),
            old,
            next: 0,
            new_in_a_row: 0,
            index: None,
        }
    }
}

impl<T> Default for LineMemo<T> {
    fn default() -> Self {
        LineMemo::new()
    }
}

/// One reading of a file ([`LineMemo::reading`]).
pub struct Reading<'m, T> {
    memo: &'m LineMemo<T>,
    path: Box<str>,
    /// The last reading's lines, each taken when met.
    old: Vec<Option<Line<T>>>,
    new: Vec<Line<T>>,
    /// Where in `old` the last line met was, plus one.
    next: usize,
    /// How many lines in a row were not found.
    new_in_a_row: usize,
    /// The positions in `old` of each text's hash, once needed.
    index: Option<FxHashMap<u64, Vec<usize>>>,
}

impl<T> Reading<'_, T> {
    /// The reading of `line` (with `key`, what else it depends on), kept
    /// from the last reading or made by `read`. Lines are met in the
    /// text's order.
    pub fn line(&mut self, line: &str, key: u64, read: impl FnOnce() -> T) -> Arc<T> {
        // A kept line moves to this reading with its text: no copy of it.
        let (text, read) = match self.find(line).and_then(|at| self.old[at].take()) {
            Some(kept) if kept.key == key => (kept.text, kept.read),
            Some(kept) => (kept.text, Arc::new(read())),
            None => (Box::from(line), Arc::new(read())),
        };
        self.new.push(Line {
            text,
            key,
            read: read.clone(),
        });
        read
    }

    /// Where in the last reading `line` is, not yet met: from where it went
    /// on, else by the index, made once lines in a row were not found.
    fn find(&mut self, line: &str) -> Option<usize> {
        let is_line =
            |kept: &Option<Line<T>>| kept.as_ref().is_some_and(|kept| *kept.text == *line);
        let ahead = (self.next + LOOK_AHEAD).min(self.old.len());
        let mut found = (self.next..ahead).find(|&at| is_line(&self.old[at]));
        let far = self.index.is_some() || self.new_in_a_row >= NEW_BEFORE_INDEX;
        // (A first reading has nothing to index.)
        if found.is_none() && far && !self.old.is_empty() {
            let old = &self.old;
            let index = self.index.get_or_insert_with(|| {
                let mut index: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
                for (at, kept) in old.iter().enumerate() {
                    if let Some(kept) = kept {
                        index.entry(hash(&kept.text)).or_default().push(at);
                    }
                }
                index
            });
            found = index
                .get(&hash(line))
                .and_then(|places| places.iter().copied().find(|&at| is_line(&old[at])));
        }
        match found {
            Some(at) => {
                self.next = at + 1;
                self.new_in_a_row = 0;
            }
            None => self.new_in_a_row += 1,
        }
        found
    }
}

fn hash(text: &str) -> u64 {
    FxBuildHasher.hash_one(text)
}

impl<T> Drop for Reading<'_, T> {
    fn drop(&mut self) {
        *self.memo.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(Kept {
            path: std::mem::take(&mut self.path),
            lines: std::mem::take(&mut self.new),
        });
    }
}

/// `items` (in the text's order, each on one line, as `range_of` places
/// it) grouped by the line of `text` they are on: each line's range (from
/// its start to its line break) with its items.
pub fn by_line<'i, T>(
    text: &str,
    items: &'i [T],
    range_of: impl Fn(&T) -> std::ops::Range<usize>,
) -> impl Iterator<Item = (std::ops::Range<usize>, &'i [T])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let first = range_of(items.get(at)?);
        let bytes = text.as_bytes();
        let start = memchr::memrchr(b'\n', &bytes[..first.start]).map_or(0, |newline| newline + 1);
        let end = memchr::memchr(b'\n', &bytes[first.end..])
            .map_or(text.len(), |newline| first.end + newline);
        let count = items[at..]
            .iter()
            .take_while(|item| range_of(item).end <= end)
            .count();
        let line = &items[at..at + count];
        at += count;
        Some((start..end, line))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_grouped_by_the_line_they_are_on() {
        let text = "one two\nthree\n\nfour five";
        let words: Vec<std::ops::Range<usize>> = [0..3, 4..7, 8..13, 15..19, 20..24].into();
        let lines: Vec<(&str, usize)> = by_line(text, &words, |word| word.clone())
            .map(|(line, items)| (&text[line], items.len()))
            .collect();
        assert_eq!(lines, [("one two", 2), ("three", 1), ("four five", 2)]);
    }

    /// Reads `lines` of `path` through `memo`, counting in `count` the
    /// lines read afresh; what each line read (its text's length).
    fn read_lines(memo: &LineMemo<usize>, path: &str, lines: &[&str], count: &mut usize) {
        let mut reading = memo.reading(path);
        for line in lines {
            let read = reading.line(line, 0, || {
                *count += 1;
                line.len()
            });
            assert_eq!(*read, line.len());
        }
    }

    #[test]
    fn a_reading_keeps_only_its_own_lines_of_one_file() {
        let memo: LineMemo<usize> = LineMemo::new();
        let mut reads = 0;
        read_lines(&memo, "a.md", &["one", "two", "two"], &mut reads);
        assert_eq!(reads, 3);
        read_lines(&memo, "a.md", &["one", "two!", "two"], &mut reads);
        assert_eq!(reads, 4, "only the changed line is read again");
        read_lines(&memo, "a.md", &["three"], &mut reads);
        read_lines(&memo, "a.md", &["one"], &mut reads);
        assert_eq!(reads, 6, "what the last reading did not meet is gone");
        read_lines(&memo, "b.md", &["one"], &mut reads);
        assert_eq!(reads, 7, "another file starts afresh");
        let kept = memo.kept.lock().unwrap();
        let kept = kept.as_ref().unwrap();
        assert_eq!((&*kept.path, kept.lines.len()), ("b.md", 1));
    }

    #[test]
    fn lines_cut_pasted_or_moved_far_are_found_again() {
        let memo: LineMemo<usize> = LineMemo::new();
        let text: Vec<String> = (0..60).map(|at| format!("line {at}")).collect();
        let lines = |range: std::ops::Range<usize>| -> Vec<&str> {
            text[range].iter().map(String::as_str).collect()
        };
        let mut reads = 0;
        read_lines(&memo, "a.md", &lines(0..60), &mut reads);
        assert_eq!(reads, 60);
        // Lines 10 to 29 cut: further than the look-ahead.
        let cut = [lines(0..10), lines(30..60)].concat();
        read_lines(&memo, "a.md", &cut, &mut reads);
        assert!(
            reads <= 60 + NEW_BEFORE_INDEX,
            "cut lines cost a few readings at most: {reads}"
        );
        let reads_before_paste = reads;
        // Twenty new lines pasted in the middle.
        let pasted: Vec<String> = (0..20).map(|at| format!("pasted {at}")).collect();
        let pasted: Vec<&str> = pasted.iter().map(String::as_str).collect();
        let with_paste = [lines(0..10), pasted, lines(30..60)].concat();
        read_lines(&memo, "a.md", &with_paste, &mut reads);
        assert_eq!(
            reads,
            reads_before_paste + 20,
            "only the pasted lines are read"
        );
        let reads_before_move = reads;
        // The first twenty lines moved to the end: found by the index once
        // a few in a row were not where the reading went on.
        let moved = [with_paste[20..].to_vec(), with_paste[..20].to_vec()].concat();
        read_lines(&memo, "a.md", &moved, &mut reads);
        assert!(
            reads <= reads_before_move + NEW_BEFORE_INDEX,
            "moved lines cost a few readings at most: {reads}"
        );
        // Duplicated lines, each found at its own place.
        let twice = [moved.clone(), moved].concat();
        read_lines(&memo, "a.md", &twice, &mut reads);
        let before = reads;
        read_lines(&memo, "a.md", &twice, &mut reads);
        assert_eq!(reads, before, "a reading of the same lines reads none");
    }

    #[test]
    fn a_line_whose_key_changed_is_read_again() {
        let memo: LineMemo<u64> = LineMemo::new();
        let reads = std::cell::Cell::new(0);
        let read = |lines: &[(&str, u64)]| -> Vec<u64> {
            let mut reading = memo.reading("a.md");
            lines
                .iter()
                .map(|&(line, key)| {
                    *reading.line(line, key, || {
                        reads.set(reads.get() + 1);
                        key
                    })
                })
                .collect()
        };
        assert_eq!(read(&[("one", 1), ("two", 1)]), [1, 1]);
        assert_eq!(read(&[("one", 1), ("two", 2)]), [1, 2]);
        assert_eq!(
            reads.get(),
            3,
            "only the line whose key changed is read again"
        );
        // One line twice with two keys: each reading is its key's.
        assert_eq!(read(&[("one", 1), ("one", 3)]), [1, 3]);
        assert_eq!(read(&[("one", 1), ("one", 3)])[1], 3);
    }
}

//! What a check read of each line of the scene being typed in, kept from
//! its last reading: the next reading reads again only the lines that
//! changed. Only the last reading's lines are kept, and only of one file,
//! so the memo holds one scene's lines however long the writer types.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

/// Each line's reading, by the line's text, with the key of what else it
/// depends on (of two equal lines with different keys, one is kept).
type Lines<T> = FxHashMap<Box<str>, (u64, Arc<T>)>;

/// Each line's reading of one file, by the line's text and a key of what
/// else the reading depends on.
pub struct LineMemo<T> {
    kept: Mutex<Option<Kept<T>>>,
}

struct Kept<T> {
    path: Box<str>,
    lines: Lines<T>,
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
        let old = match kept {
            Some(kept) if *kept.path == *path => kept.lines,
            _ => FxHashMap::default(),
        };
        // Sized as the last reading: it mostly meets the same lines again.
        let new = FxHashMap::with_capacity_and_hasher(old.len(), Default::default());
        Reading {
            memo: self,
            path: path.into(),
            old,
            new,
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
    old: Lines<T>,
    new: Lines<T>,
}

impl<T> Reading<'_, T> {
    /// The reading of `line` (with `key`, what else it depends on), kept
    /// from the last reading or made by `read`.
    pub fn line(&mut self, line: &str, key: u64, read: impl FnOnce() -> T) -> Arc<T> {
        // The same line twice in this reading.
        if let Some((kept, found)) = self.new.get(line)
            && *kept == key
        {
            return found.clone();
        }
        // A kept line moves to this reading with its text: no copy of it.
        let (text, found) = match self.old.remove_entry(line) {
            Some((text, (kept, found))) if kept == key => (text, found),
            Some((text, _)) => (text, Arc::new(read())),
            None => (Box::from(line), Arc::new(read())),
        };
        self.new.insert(text, (key, found.clone()));
        found
    }
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

    #[test]
    fn a_reading_keeps_only_its_own_lines_of_one_file() {
        let memo: LineMemo<usize> = LineMemo::new();
        let count = std::cell::Cell::new(0);
        let read = |memo: &LineMemo<usize>, path: &str, lines: &[&str]| {
            let mut reading = memo.reading(path);
            for line in lines {
                reading.line(line, 0, || {
                    count.set(count.get() + 1);
                    line.len()
                });
            }
            count.get()
        };
        let reads = read(&memo, "a.md", &["one", "two", "two"]);
        assert_eq!(reads, 2, "a line met twice is read once");
        let reads = read(&memo, "a.md", &["one", "two!"]);
        assert_eq!(reads, 3, "only the changed line is read again");
        let reads = read(&memo, "a.md", &["two"]);
        assert_eq!(reads, 4, "what the last reading did not meet is gone");
        let reads = read(&memo, "b.md", &["two!"]);
        assert_eq!(reads, 5, "another file starts afresh");
        let kept = memo.kept.lock().unwrap();
        let kept = kept.as_ref().unwrap();
        assert_eq!((&*kept.path, kept.lines.len()), ("b.md", 1));
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

//! Words written per day, from the manuscript's git history.
//!
//! A day's words are the scenes' words at its end less the words at its
//! start: the manuscript as the last commit before each local midnight left
//! it, and today's end is the manuscript as it is now (saved or not). Each
//! file is counted as the editor counts it (prose only), not by lines as
//! `git log --numstat` would: a revised sentence is not a day's work twice.
//! Trees are read with `git ls-tree`, blobs with one `git cat-file --batch`,
//! and a blob's count is remembered, so a long history costs only its
//! changed files. A folder that is not in a git repository, or a machine
//! without git, has no history: the caller says so.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{LazyLock, Mutex};

use serde::Serialize;

use crate::index::file::MAX_FILE_BYTES;
use crate::index::{SourceFile, Workspace};

/// The words written on one day (negative when more were cut).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DayWords {
    /// `2026-11-25`.
    pub date: String,
    pub words: i64,
}

/// Word counts of scene blobs already read, by (blob id, path).
static COUNTS: LazyLock<Mutex<HashMap<(String, String), usize>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// How many blob counts are kept before the memory starts again.
const MAX_REMEMBERED: usize = 200_000;

/// Why there is no history of words per day.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("not a git repository")]
    NotARepository,
    #[error("git is not installed")]
    NoGit,
    #[error("git cannot run: {0}")]
    CannotRun(#[source] std::io::Error),
    /// git ran and failed: the command's arguments and what it said.
    #[error("git {command}: {said}")]
    Failed { command: String, said: String },
    #[error("cannot read git cat-file: {0}")]
    Unreadable(#[source] std::io::Error),
    /// The calendar has no start for a day (a time zone's gap).
    #[error("no start of the day {days_back} days back: {error}")]
    NoDay {
        days_back: usize,
        #[source]
        error: jiff::Error,
    },
}

/// The words of each of the last `days` days, today first, or why there
/// is no history.
pub fn words_by_day(
    workspace: &Workspace,
    days: usize,
    now: &jiff::Zoned,
) -> Result<Vec<DayWords>, HistoryError> {
    let root = workspace.root();
    let inside = git(root, &["rev-parse", "--is-inside-work-tree"])?;
    if inside.trim() != "true" {
        return Err(HistoryError::NotARepository);
    }
    // No commit yet is an empty history, not an error.
    let log = git(root, &["log", "--first-parent", "--format=%H %ct", "HEAD"]).unwrap_or_default();
    let commits: Vec<(&str, i64)> = log
        .lines()
        .filter_map(|line| {
            let (oid, time) = line.split_once(' ')?;
            Some((oid, time.trim().parse().ok()?))
        })
        .collect();
    let today = now.start_of_day().map_err(|error| HistoryError::NoDay {
        days_back: 0,
        error,
    })?;
    let mut totals_at_start = Vec::with_capacity(days);
    let mut dates = Vec::with_capacity(days);
    for back in 0..days.max(1) {
        let start = today
            .checked_sub(jiff::Span::new().days(back as i64))
            .and_then(|day| day.start_of_day())
            .map_err(|error| HistoryError::NoDay {
                days_back: back,
                error,
            })?;
        let before = start.timestamp().as_second();
        let total = match commits.iter().find(|(_, time)| *time < before) {
            Some((oid, _)) => committed_words(workspace, oid)?,
            None => 0,
        };
        totals_at_start.push(total as i64);
        dates.push(start.date().to_string());
    }
    let mut end = super::scene_words(workspace) as i64;
    let mut result = Vec::with_capacity(dates.len());
    for (date, start) in dates.into_iter().zip(totals_at_start) {
        result.push(DayWords {
            date,
            words: end - start,
        });
        end = start;
    }
    Ok(result)
}

/// Runs git in `root`; its standard output, or why it failed.
fn git(root: &Path, args: &[&str]) -> Result<String, HistoryError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => HistoryError::NoGit,
            _ => HistoryError::CannotRun(error),
        })?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        let message = String::from_utf8_lossy(&output.stderr);
        if message.contains("not a git repository") {
            Err(HistoryError::NotARepository)
        } else {
            Err(HistoryError::Failed {
                command: args.join(" "),
                said: message.trim().to_owned(),
            })
        }
    }
}

/// The words of the scenes in the tree of commit `oid` (the part of it
/// under the manuscript's root).
fn committed_words(workspace: &Workspace, oid: &str) -> Result<usize, HistoryError> {
    let root = workspace.root();
    let listing = git(root, &["ls-tree", "-r", "-z", "--long", oid])?;
    let mut files: Vec<(String, String)> = Vec::new();
    for entry in listing.split('\0').filter(|entry| !entry.is_empty()) {
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        let fields: Vec<&str> = meta.split_whitespace().collect();
        let [_, "blob", blob, size] = fields[..] else {
            continue;
        };
        let markdown = path.ends_with(".md") || path.ends_with(".markdown");
        let hidden = path
            .split('/')
            .any(|part| part.starts_with('.') || part == "node_modules" || part == "target");
        let small = size.parse::<u64>().is_ok_and(|size| size <= MAX_FILE_BYTES);
        if markdown && !hidden && small {
            files.push((blob.to_owned(), path.to_owned()));
        }
    }
    let mut counts = COUNTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let unseen: Vec<&(String, String)> = files
        .iter()
        .filter(|key| !counts.contains_key(*key))
        .collect();
    if !unseen.is_empty() {
        if counts.len() + unseen.len() > MAX_REMEMBERED {
            counts.clear();
        }
        let texts = read_blobs(root, unseen.iter().map(|(blob, _)| blob.as_str()))?;
        let paths = &workspace.config().paths;
        for ((blob, path), text) in unseen.into_iter().zip(texts) {
            let words = SourceFile::parse(path.as_str().into(), text.into(), paths)
                .scene()
                .map_or(0, |scene| scene.word_count);
            counts.insert((blob.clone(), path.clone()), words);
        }
    }
    Ok(files.iter().filter_map(|key| counts.get(key)).sum())
}

/// The texts of `blobs`, in order, through one `git cat-file --batch`
/// (a blob that is not UTF-8 reads as empty).
fn read_blobs<'a>(
    root: &Path,
    blobs: impl Iterator<Item = &'a str>,
) -> Result<Vec<String>, HistoryError> {
    let request: String = blobs.map(|blob| format!("{blob}\n")).collect();
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(HistoryError::CannotRun)?;
    let mut stdin = child.stdin.take().expect("git's input is piped");
    // Written from a thread: git answers while it reads, and a full pipe
    // either way would stop both.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(request.as_bytes());
    });
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .expect("git's output is piped")
        .read_to_end(&mut output)
        .map_err(HistoryError::Unreadable)?;
    let _ = writer.join();
    let _ = child.wait();
    let mut texts = Vec::new();
    let mut rest = &output[..];
    while !rest.is_empty() {
        let Some(line_end) = rest.iter().position(|byte| *byte == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&rest[..line_end]).into_owned();
        rest = &rest[line_end + 1..];
        let size = header
            .split_whitespace()
            .nth(2)
            .and_then(|size| size.parse::<usize>().ok());
        match size {
            Some(size) if size <= rest.len() => {
                texts.push(String::from_utf8(rest[..size].to_vec()).unwrap_or_default());
                rest = &rest[(size + 1).min(rest.len())..];
            }
            // "<oid> missing": nothing follows.
            _ => texts.push(String::new()),
        }
    }
    Ok(texts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(root: &Path, args: &[&str], date: &str) {
        let status = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_AUTHOR_NAME", "Writer")
            .env("GIT_AUTHOR_EMAIL", "writer@example.com")
            .env("GIT_COMMITTER_NAME", "Writer")
            .env("GIT_COMMITTER_EMAIL", "writer@example.com")
            .stdout(Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    fn scene(root: &Path, name: &str, words: usize) {
        let body = vec!["word"; words].join(" ");
        std::fs::create_dir_all(root.join("Story/Scenes")).unwrap();
        std::fs::write(
            root.join(format!("Story/Scenes/{name}.md")),
            format!("---\ntitle: {name}\n---\n# {name}\n\n{body}\n"),
        )
        .unwrap();
    }

    #[test]
    fn a_days_words_are_the_scenes_words_at_its_end_less_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("book");
        std::fs::create_dir(&root).unwrap();
        let now = jiff::Zoned::now();
        let at = |days_back: i64, hour: i8| {
            let day = now
                .start_of_day()
                .unwrap()
                .checked_sub(jiff::Span::new().days(days_back))
                .unwrap();
            let time = day.with().hour(hour).build().unwrap();
            format!("@{} {}", time.timestamp().as_second(), "+0000")
        };
        run(&root, &["init", "-q"], &at(3, 10));
        scene(&root, "SCN-a", 100);
        run(&root, &["add", "-A"], &at(3, 10));
        run(&root, &["commit", "-q", "-m", "one"], &at(3, 10));
        scene(&root, "SCN-a", 150);
        scene(&root, "SCN-b", 30);
        run(&root, &["add", "-A"], &at(1, 12));
        run(&root, &["commit", "-q", "-m", "two"], &at(1, 12));
        // Today, not committed: 20 words cut from SCN-a, a third scene.
        scene(&root, "SCN-a", 130);
        scene(&root, "SCN-c", 45);
        let workspace = Workspace::load(&root);
        let days = words_by_day(&workspace, 4, &now).expect("a history");
        let words: Vec<i64> = days.iter().map(|day| day.words).collect();
        assert_eq!(words, [25, 80, 0, 100], "{days:?}");
        assert_eq!(days[0].date, now.date().to_string());
    }

    #[test]
    fn a_folder_outside_git_has_no_history() {
        let dir = tempfile::tempdir().unwrap();
        scene(dir.path(), "SCN-a", 10);
        let workspace = Workspace::load(dir.path());
        let error = words_by_day(&workspace, 7, &jiff::Zoned::now()).unwrap_err();
        assert!(matches!(error, HistoryError::NotARepository), "{error}");
    }
}

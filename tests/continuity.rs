//! A data-driven quality suite for the continuity checks: recall and precision
//! against manuscripts with planted errors and traps.
//!
//! Every folder under `tests/continuity/` is a case: a small manuscript
//! (`Story/SCN-outline.md`, `Story/Scenes/`, `Compendium/…`) and an
//! `expect.txt` that lists every diagnostic the case must produce. The case is
//! copied to a temporary folder, loaded with [`Workspace::load`] and checked
//! with [`check_workspace`] (the checks' and the story's health's, as
//! `control-room check` does).
//!
//! # `expect.txt`
//!
//! - A line starting with `#` describes the case (planted errors, traps); the
//!   description heads the case's snapshot. Blank lines are ignored.
//! - Every other line is one expectation:
//!
//!   ```text
//!   Story/Scenes/SCN-the-vigil.md:5 dead-character | characters: [Kael, Iria, Tomas]
//!   Story/Scenes/SCN-the-gate.md:4 front-matter,dead-character | characters: Tomas
//!   ```
//!
//!   the path relative to the case folder (with `/`), the 1-based line where
//!   the diagnostic starts, one or more contract codes separated by commas,
//!   and after ` | ` a piece of text that must appear on that line, so that an
//!   edit that shifts the lines cannot silently move an expectation. Front
//!   matter lines are addressed like any other line.
//! - Traps are simply lines with no expectation: any diagnostic there is a
//!   false alarm.
//!
//! Only the codes of the manuscript format's contract count (`front-matter`,
//! `unknown-reference`, `duplicate-id`, `dead-character`,
//! `attribute-mismatch`, `name-typo`, `missing-scene`, `orphan-scene`,
//! `timeline-order`, `anti-pattern`). Expected and found diagnostics are
//! compared as sets of `(path, line, code)`: a found one that is not expected
//! is a false alarm, an expected one that is not found is a miss.
//! [`recall_and_precision_are_perfect`] prints a table per case and overall
//! (expected, found, true positives, recall, precision; see it with
//! `cargo test --test integration continuity:: -- --nocapture`) and fails, listing every
//! miss and false alarm with its message and line, unless both are 1.0.
//!
//! # Snapshots
//!
//! Each case's diagnostics (`path:line:column-line:column severity[code]:
//! message`, columns in UTF-16 code units plus one, with related information
//! and fix titles, and each marked `expected` or `FALSE ALARM`, then the
//! misses) are compared with `tests/snapshots/integration__continuity__<case>.snap`, so
//! that messages are reviewed. Write them with
//! `INSTA_UPDATE=always cargo test --test integration continuity::`, then read each one. A
//! case without a snapshot fails, also under `INSTA_FORCE_PASS`, and a
//! snapshot without a case fails too.

use crate::support;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use control_room::checks::Diagnostic;
use control_room::health::check_workspace;
use control_room::index::Workspace;
use control_room::text::{LineIndex, PositionEncoding, TextRange};

const EXPECT_FILE: &str = "expect.txt";

/// A diagnostic's identity for scoring: path, 1-based line, code.
type Key = (String, u32, String);

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("continuity")
}

/// The name of every case folder, sorted.
fn case_names() -> Vec<String> {
    support::folder_names(&cases_dir())
}

/// One expectation of `expect.txt`.
struct Expectation {
    path: String,
    line: u32,
    codes: Vec<String>,
}

/// A case's `expect.txt`: its description and its expectations.
struct Expectations {
    description: String,
    items: Vec<Expectation>,
}

impl Expectations {
    fn keys(&self) -> BTreeSet<Key> {
        self.items
            .iter()
            .flat_map(|item| {
                item.codes
                    .iter()
                    .map(|code| (item.path.clone(), item.line, code.clone()))
            })
            .collect()
    }
}

/// Reads and validates `tests/continuity/<case>/expect.txt`.
fn read_expectations(case: &str) -> Expectations {
    let folder = cases_dir().join(case);
    let path = folder.join(EXPECT_FILE);
    let text = fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "{} must list the case's diagnostics: {error}",
            path.display()
        )
    });
    let mut description = Vec::new();
    let mut items = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), number + 1);
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            description.push(comment.strip_prefix(' ').unwrap_or(comment).to_owned());
            continue;
        }
        let (head, fragment) = line
            .split_once(" | ")
            .unwrap_or_else(|| panic!("{at}: write `path:line code[,code] | text on the line`"));
        let (place, codes) = head
            .trim()
            .split_once(' ')
            .unwrap_or_else(|| panic!("{at}: no code after `{head}`"));
        let (file, line_number) = place
            .rsplit_once(':')
            .unwrap_or_else(|| panic!("{at}: `{place}` is not `path:line`"));
        let line_number: u32 = line_number
            .parse()
            .ok()
            .filter(|&line| line > 0)
            .unwrap_or_else(|| panic!("{at}: `{line_number}` is not a 1-based line"));
        let codes: Vec<String> = codes
            .split(',')
            .map(|code| code.trim().to_owned())
            .collect();
        for code in &codes {
            assert!(
                support::CONTRACT_CODES.contains(&code.as_str()),
                "{at}: `{code}` is not a contract code ({:?})",
                support::CONTRACT_CODES
            );
        }
        let file_text = fs::read_to_string(folder.join(file))
            .unwrap_or_else(|error| panic!("{at}: cannot read {file}: {error}"));
        let written = file_text
            .lines()
            .nth(line_number as usize - 1)
            .unwrap_or_else(|| panic!("{at}: {file} has no line {line_number}"));
        let fragment = fragment.trim();
        assert!(
            written.contains(fragment),
            "{at}: line {line_number} of {file} does not contain `{fragment}`; it reads `{written}`"
        );
        items.push(Expectation {
            path: file.to_owned(),
            line: line_number,
            codes,
        });
    }
    Expectations {
        description: description.join("\n"),
        items,
    }
}

/// A temporary copy of the case, so that no `.gitignore` around the
/// repository plays a part.
fn materialise(case: &str) -> tempfile::TempDir {
    let copy = tempfile::Builder::new()
        .prefix(&format!("control-room-continuity-{case}-"))
        .tempdir()
        .expect("a temporary folder can be created");
    support::copy_tree(&cases_dir().join(case), copy.path());
    copy
}

/// The text a path's ranges refer to: the indexed text, or the file on disk.
fn file_text(workspace: &Workspace, path: &str) -> String {
    match workspace.file(path) {
        Some(file) => file.text.to_string(),
        None => fs::read_to_string(workspace.absolute_path(path)).unwrap_or_default(),
    }
}

/// 1-based line and UTF-16 column of `offset` in `path`.
fn position(workspace: &Workspace, path: &str, offset: usize) -> (u32, u32) {
    let text = file_text(workspace, path);
    let position = LineIndex::new(&text).position(&text, offset, PositionEncoding::Utf16);
    (position.line + 1, position.col + 1)
}

fn span(workspace: &Workspace, path: &str, range: TextRange) -> String {
    let (start_line, start_col) = position(workspace, path, range.start);
    let (end_line, end_col) = position(workspace, path, range.end);
    format!("{path}:{start_line}:{start_col}-{end_line}:{end_col}")
}

/// The 1-based line `line` of `path`, trimmed.
fn line_text(workspace: &Workspace, path: &str, line: u32) -> String {
    file_text(workspace, path)
        .lines()
        .nth(line as usize - 1)
        .unwrap_or("")
        .trim()
        .to_owned()
}

fn key(workspace: &Workspace, diagnostic: &Diagnostic) -> Key {
    let line = match workspace.file(&diagnostic.path) {
        Some(file) => file.line_index.line_of(diagnostic.range.start) + 1,
        None => position(workspace, &diagnostic.path, diagnostic.range.start).0,
    };
    (
        diagnostic.path.to_string(),
        line,
        diagnostic.code.as_str().to_owned(),
    )
}

fn is_contract_code(diagnostic: &Diagnostic) -> bool {
    support::CONTRACT_CODES.contains(&diagnostic.code.as_str())
}

/// What a case produced, scored against its expectations.
struct Outcome {
    case: String,
    expected: BTreeSet<Key>,
    found: BTreeSet<Key>,
    /// One line per miss: where, what, and the line's text.
    misses: Vec<String>,
    /// One line per false alarm: where, what, the message and the line's text.
    false_alarms: Vec<String>,
    /// The snapshot text.
    rendered: String,
    description: String,
}

impl Outcome {
    fn true_positives(&self) -> usize {
        self.expected.intersection(&self.found).count()
    }
}

fn run_case(case: &str) -> Outcome {
    let expectations = read_expectations(case);
    let expected = expectations.keys();
    let copy = materialise(case);
    let workspace = Workspace::load(copy.path());
    let diagnostics = check_workspace(&workspace);

    let mut found = BTreeSet::new();
    let mut false_alarms = Vec::new();
    let mut rendered = String::new();
    writeln!(rendered, "diagnostics ({}):", diagnostics.len()).unwrap();
    for diagnostic in &diagnostics {
        let verdict = if !is_contract_code(diagnostic) {
            "not scored"
        } else {
            let key = key(&workspace, diagnostic);
            let verdict = if expected.contains(&key) {
                "expected"
            } else {
                false_alarms.push(format!(
                    "{} {}: {}\n      the line: {}",
                    span(&workspace, &diagnostic.path, diagnostic.range),
                    diagnostic.code,
                    diagnostic.message,
                    line_text(&workspace, &key.0, key.1)
                ));
                "FALSE ALARM"
            };
            found.insert(key);
            verdict
        };
        writeln!(
            rendered,
            "  {} {}[{}]: {}  ({verdict})",
            span(&workspace, &diagnostic.path, diagnostic.range),
            diagnostic.severity.as_str(),
            diagnostic.code,
            diagnostic.message,
        )
        .unwrap();
        for related in &diagnostic.related {
            writeln!(
                rendered,
                "    related {}: {}",
                span(&workspace, &related.path, related.range),
                related.message
            )
            .unwrap();
        }
        for fix in &diagnostic.fixes {
            writeln!(rendered, "    fix: {}", fix.title).unwrap();
        }
    }
    let misses: Vec<String> = expected
        .difference(&found)
        .map(|(path, line, code)| {
            format!(
                "{path}:{line} {code}\n      the line: {}",
                line_text(&workspace, path, *line)
            )
        })
        .collect();
    writeln!(rendered, "missed ({}):", misses.len()).unwrap();
    for miss in &misses {
        let (place, _) = miss.split_once('\n').unwrap_or((miss, ""));
        writeln!(rendered, "  {place}").unwrap();
    }
    Outcome {
        case: case.to_owned(),
        expected,
        found,
        misses,
        false_alarms,
        rendered,
        description: expectations.description,
    }
}

fn ratio(numerator: usize, denominator: usize) -> f64 {
    if denominator == 0 {
        1.0
    } else {
        numerator as f64 / denominator as f64
    }
}

fn table(outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let row = |out: &mut String, name: &str, expected: usize, found: usize, hits: usize| {
        writeln!(
            out,
            "{name:<20} {expected:>8} {found:>6} {hits:>6} {:>7.3} {:>9.3}",
            ratio(hits, expected),
            ratio(hits, found)
        )
        .unwrap();
    };
    writeln!(
        out,
        "{:<20} {:>8} {:>6} {:>6} {:>7} {:>9}",
        "case", "expected", "found", "tp", "recall", "precision"
    )
    .unwrap();
    let (mut expected, mut found, mut hits) = (0, 0, 0);
    for outcome in outcomes {
        let tp = outcome.true_positives();
        row(
            &mut out,
            &outcome.case,
            outcome.expected.len(),
            outcome.found.len(),
            tp,
        );
        expected += outcome.expected.len();
        found += outcome.found.len();
        hits += tp;
    }
    row(&mut out, "overall", expected, found, hits);
    out
}

#[test]
fn recall_and_precision_are_perfect() {
    let cases = case_names();
    assert!(
        cases.len() >= 8,
        "expected the continuity cases, found {cases:?}"
    );
    let outcomes: Vec<Outcome> = cases.iter().map(|case| run_case(case)).collect();
    let table = table(&outcomes);
    println!("{table}");
    let mut report = String::new();
    for outcome in &outcomes {
        for miss in &outcome.misses {
            writeln!(report, "  MISS        [{}] {miss}", outcome.case).unwrap();
        }
        for alarm in &outcome.false_alarms {
            writeln!(report, "  FALSE ALARM [{}] {alarm}", outcome.case).unwrap();
        }
    }
    assert!(
        report.is_empty(),
        "recall and precision must both be 1.0\n\n{table}\n{report}"
    );
}

#[test]
fn every_case_matches_its_snapshot() {
    let cases = case_names();
    let mut failed = Vec::new();
    for case in &cases {
        if std::panic::catch_unwind(|| check_snapshot(case)).is_err() {
            failed.push(case.as_str());
        }
    }
    assert!(
        failed.is_empty(),
        "continuity cases whose snapshot failed (see above): {failed:?}"
    );
}

fn check_snapshot(case: &str) {
    let snapshot = support::snapshot_file("continuity", case);
    // insta already fails on a missing snapshot unless told to write it; this
    // also holds under INSTA_FORCE_PASS, so a new case is never silently green.
    let writing = matches!(
        std::env::var("INSTA_UPDATE").as_deref(),
        Ok("always" | "1" | "force")
    );
    assert!(
        writing || snapshot.exists(),
        "continuity case `{case}` has no snapshot {}: run `INSTA_UPDATE=always cargo test --test integration continuity::`, then review it",
        snapshot.display()
    );
    let outcome = run_case(case);
    insta::with_settings!({
        description => outcome.description,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(case, outcome.rendered);
    });
}

/// Snapshots must not outlive their case.
#[test]
fn every_snapshot_has_a_case() {
    support::assert_every_snapshot_has_a_case("continuity", &case_names());
}

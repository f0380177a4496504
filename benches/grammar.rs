//! Grammar on by default, as a writer meets it in `control-room check`:
//! Pride and Prejudice (61 chapters, 121,905 words, the copy in
//! `tests/corpora`), fresh processes of the release binary, timed from
//! outside. It prints one table of medians:
//!
//! | measure | what is timed | target |
//! |---|---|---|
//! | `check, grammar off` | `check --format json` with `[language] grammar = "off"` | (reference) |
//! | `check, grammar, first run` | the same with grammar on (the default), no memo saved: harper loaded, every paragraph linted | (reference) |
//! | `check, grammar, memo saved` | the same again, the memo of the run before read back: harper not loaded | within 1.5 s and +40 MB of `grammar off` |
//! | `check, grammar, one chapter edited` | a sentence added to one chapter after the memo was saved: harper loaded for its paragraph | (reference) |
//!
//! Each row gives the median wall time and the median peak resident memory
//! (`ru_maxrss` of the child). Run with `cargo bench --bench grammar`;
//! `CONTROL_ROOM_BENCH_RUNS` sets the runs of each (default 5).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MEMO: &str = ".control-room/index/grammar.bin";

fn main() {
    // `cargo bench` passes `--bench`; nothing here takes a filter.
    let runs: usize = std::env::var("CONTROL_ROOM_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(5);
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let on = dir.path().join("on");
    let off = dir.path().join("off");
    copy_tree(&corpus, &on);
    copy_tree(&corpus, &off);
    std::fs::write(
        off.join("control-room.toml"),
        "[language]\ngrammar = \"off\"\n",
    )
    .expect("the configuration is written");

    println!("| measure | median wall | median peak memory |");
    println!("|---|---|---|");
    let baseline = measure("check, grammar off", runs, || {}, &off);
    let _ = measure(
        "check, grammar, first run",
        runs,
        || {
            let _ = std::fs::remove_file(on.join(MEMO));
        },
        &on,
    );
    let saved = measure("check, grammar, memo saved", runs, || {}, &on);
    let chapter = on.join("Story/Scenes/SCN-chapter-30.md");
    let text = std::fs::read_to_string(&chapter).expect("chapter 30");
    let mut edits = 0;
    let _ = measure(
        "check, grammar, one chapter edited",
        runs,
        || {
            edits += 1;
            let edited = format!("{text}\nShe walked to the gate for the {edits}th time.\n");
            std::fs::write(&chapter, edited).expect("the chapter is written");
        },
        &on,
    );
    println!(
        "\nmemo saved against grammar off: {:+.0} ms, {:+.1} MB",
        (saved.0.as_secs_f64() - baseline.0.as_secs_f64()) * 1000.0,
        (saved.1 as f64 - baseline.1 as f64) / 1024.0
    );
}

/// Runs `check` on `root` `runs` times, `before` each, and prints the
/// medians: (wall time, peak resident KiB).
fn measure(label: &str, runs: usize, mut before: impl FnMut(), root: &Path) -> (Duration, u64) {
    let mut times = Vec::with_capacity(runs);
    let mut peaks = Vec::with_capacity(runs);
    for _ in 0..runs {
        before();
        let (time, peak) = check(root);
        times.push(time);
        peaks.push(peak);
    }
    times.sort();
    peaks.sort_unstable();
    let median = (times[runs / 2], peaks[runs / 2]);
    println!(
        "| {label} | {:.2} s | {:.1} MB |",
        median.0.as_secs_f64(),
        median.1 as f64 / 1024.0
    );
    median
}

/// One `check --format json` of `root`: its wall time and its peak
/// resident memory in KiB, read from the kernel's accounting of the child.
fn check(root: &Path) -> (Duration, u64) {
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", "--format", "json"])
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("control-room runs");
    let (succeeded, peak) = wait_with_peak(child);
    let elapsed = started.elapsed();
    // `check` exits 1 when it finds errors, 2 when it cannot run.
    assert!(succeeded, "check failed on {}", root.display());
    (elapsed, peak)
}

/// Waits for `child`: whether it ran (exit 0 or 1), and its peak resident
/// memory in KiB from the kernel's accounting (0 where there is none).
#[cfg(target_os = "linux")]
fn wait_with_peak(child: std::process::Child) -> (bool, u64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is a plain C struct the kernel fills in; `pid` is
    // this process's child, waited for once, here (the `Child` is dropped
    // without being waited on).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let ran = waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) < 2;
    (ran, u64::try_from(usage.ru_maxrss).unwrap_or_default())
}

#[cfg(not(target_os = "linux"))]
fn wait_with_peak(mut child: std::process::Child) -> (bool, u64) {
    let status = child.wait().expect("the check is waited for");
    (status.code().is_some_and(|code| code < 2), 0)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("a folder to copy") {
        let entry = entry.expect("an entry");
        let target: PathBuf = to.join(entry.file_name());
        if entry.file_name() == ".control-room" {
            continue;
        }
        if entry.file_type().expect("a file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("a copy");
        }
    }
}

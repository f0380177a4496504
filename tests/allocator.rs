//! The server's allocator settings (`lsp::memory`), in a process of their
//! own: arenas are handed out as threads first allocate, so this test must
//! not share its process with others.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

#[path = "malloc_support/mod.rs"]
mod malloc_support;

use control_room::lsp::memory;
use malloc_support::{allocate_at_once, arenas, malloc_info};

fn resident_anonymous_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .expect("/proc/self/status")
        .lines()
        .find_map(|line| line.strip_prefix("RssAnon:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("RssAnon in /proc/self/status")
}

#[test]
fn threads_share_one_arena_per_core_and_freed_pages_are_given_back() {
    memory::limit_arenas();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // Four threads a core, all allocating at once: without the cap glibc
    // gives most of them an arena of their own (up to eight a core).
    let threads = 4 * cores.max(2);
    allocate_at_once(threads, 2_000);
    // The writer's own setting wins over the cap (glibc reads it at start).
    let cap = std::env::var("MALLOC_ARENA_MAX")
        .ok()
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(cores);
    let arenas = arenas();
    assert!(
        arenas <= cap.max(1),
        "{arenas} arenas for {cores} cores:\n{}",
        malloc_info()
    );

    // Freed pages below a live allocation stay with malloc until given back.
    let many: Vec<Vec<u8>> = (0..40_000).map(|_| vec![7; 1_000]).collect();
    let last = vec![9u8; 1_000];
    let before_free = resident_anonymous_kb();
    drop(many);
    let freed = resident_anonymous_kb();
    memory::give_back();
    let given_back = resident_anonymous_kb();
    assert_eq!(last[999], 9);
    assert!(
        freed + 10_000 > before_free,
        "malloc kept the freed pages before: {before_free} kB, {freed} kB after free"
    );
    assert!(
        given_back + 20_000 < freed,
        "the freed pages are given back: {freed} kB, {given_back} kB after"
    );
}

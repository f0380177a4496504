//! A writer's `MALLOC_ARENA_MAX` wins over the server's cap on malloc's
//! arenas (`lsp::memory::limit_arenas`). glibc reads the variable as the
//! process starts and fixes its arenas' limit once a second thread first
//! allocates, so this test has a `main` of its own (no test harness, whose
//! threads would allocate first) and runs again in a process of its own
//! with the variable set, where it calls the cap before any thread starts.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[path = "malloc_support/mod.rs"]
mod malloc_support;

use std::process::{Command, ExitCode};

/// Set in the process started again: its arenas are counted there.
const CHILD: &str = "CONTROL_ROOM_TEST_ARENAS_CHILD";

fn main() -> ExitCode {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        println!("allocator_setting: glibc's arenas only (skipped)");
        return ExitCode::SUCCESS;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // More than the cap allows, fewer than the threads ask for.
    let wanted = cores + 2;
    if std::env::var_os(CHILD).is_some() {
        return match arenas_with_the_cap(cores, wanted) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("{message}");
                ExitCode::FAILURE
            }
        };
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(exe)
        .env(CHILD, "1")
        .env("MALLOC_ARENA_MAX", wanted.to_string())
        .output()
        .expect("the test binary starts again");
    let printed = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        println!("test a_writers_malloc_arena_max_wins_over_the_cap_of_one_arena_a_core ... ok");
        ExitCode::SUCCESS
    } else {
        println!(
            "test a_writers_malloc_arena_max_wins_over_the_cap_of_one_arena_a_core ... FAILED\n{printed}"
        );
        ExitCode::FAILURE
    }
}

/// The cap applied as the server applies it (before any thread), then
/// four threads a core allocating at once: each takes an arena of its own
/// while there are fewer than the limit.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn arenas_with_the_cap(cores: usize, wanted: usize) -> Result<(), String> {
    control_room::lsp::memory::limit_arenas();
    malloc_support::allocate_at_once(4 * wanted, 500);
    let arenas = malloc_support::arenas();
    if arenas > cores && arenas <= wanted {
        Ok(())
    } else {
        Err(format!(
            "MALLOC_ARENA_MAX={wanted} on {cores} cores: {arenas} arenas \
             (the server's cap would allow {cores})"
        ))
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn arenas_with_the_cap(_: usize, _: usize) -> Result<(), String> {
    Ok(())
}

//! The allocator's settings for a server that lives as long as the editor.
//!
//! glibc's malloc gives each thread that allocates an arena of its own, up
//! to eight per core. The server runs about fifteen threads (the two pools,
//! the async runtime's workers, its blocking threads), and memory freed in
//! one arena is never reused by another: the index built across them left
//! each holding its share of freed pages. Measured with the LSP bench
//! (1M words, 20 scenes open, three runs each on two cores, set through
//! `MALLOC_ARENA_MAX`): the peak was 43.7–44.1 MB with the default arenas,
//! 40.5–41.3 MB with two a core and 39.4–39.7 MB with one a core, the index
//! and the first diagnostics no slower within the machine's noise. One
//! arena for the whole process made the index slower (threads waited on
//! its lock).
//!
//! Elsewhere than glibc these do nothing.

/// Caps malloc's arenas at one per core, unless `MALLOC_ARENA_MAX` says
/// otherwise. Called before the server starts any thread: arenas are
/// handed out as threads first allocate.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // The writer's own setting wins.
        if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
            return;
        }
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let cores = i32::try_from(cores).unwrap_or(i32::MAX);
        // SAFETY: mallopt reads no memory of ours; a refused value leaves
        // malloc as it was.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, cores);
        }
    }
}

/// Hands the pages malloc holds free back to the system: after the initial
/// index, whose parses freed far more than the index keeps.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks malloc's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

//! How the server's process keeps its memory: glibc's allocator, told not
//! to hold on to what the server has freed.
//!
//! A server lives for hours and frees most of what it allocates: a pass
//! over the whole manuscript makes every file's diagnostics, a file's text
//! is read, parsed and replaced. glibc's `malloc` serves a block of more
//! than [`MAPPED_FROM`] bytes with a mapping of its own, given back to the
//! system when freed; but by default the first such block freed raises
//! that threshold to its size (up to 32 MiB), so every later file text,
//! list of diagnostics or answer is carved from the heaps, whose freed
//! space stays resident. Each thread that allocates also gets a heap of its
//! own (up to eight a core). On the LSP bench's 1M-word manuscript, once
//! the pass over it is done and twenty scenes are open, the server held
//! 68 MB (46 MB of it anonymous) against a live heap that peaks near
//! 25 MB (heaptrack); holding the threshold and keeping two heaps brings
//! that to 63 MB (42 MB). Fewer heaps, or a lower threshold, gave no more.

/// Blocks at least this large are mapped on their own and given back when
/// freed (glibc's default starting point, held there).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAPPED_FROM: i32 = 128 * 1024;

/// Heaps the allocator may keep: one for each of the two threads that do
/// most of the work at once on a small machine; more threads share them.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HEAPS: i32 = 2;

/// Sets the allocator up for a long-lived process. Call it before any
/// thread is started. Elsewhere than glibc nothing is done.
pub(crate) fn keep_little() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; a value it
    // refuses is ignored (it returns 0), which leaves the defaults.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MAPPED_FROM);
        libc::mallopt(libc::M_ARENA_MAX, HEAPS);
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// Bytes the allocator holds in blocks mapped on their own.
    fn mapped() -> usize {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        unsafe { libc::mallinfo2() }.hblkhd
    }

    // Each in a process of its own: the allocator's parameters and heaps
    // are the process's, and the test harness's other tests would leave
    // free space in the heaps that serves a block before any mapping.
    rusty_fork::rusty_fork_test! {
        #![rusty_fork(timeout_ms = 60_000)]

        /// The defect: once a large block was freed, glibc raised its
        /// threshold past it, so the next large block grew a heap, whose
        /// space stayed resident after it was freed.
        #[test]
        fn a_large_block_is_still_mapped_on_its_own_after_a_larger_one_was_freed() {
            keep_little();
            let first = std::hint::black_box(vec![1u8; 16 * MAPPED_FROM as usize]);
            drop(first);
            let size = 8 * MAPPED_FROM as usize;
            let before = mapped();
            let block = std::hint::black_box(vec![2u8; size]);
            assert!(
                mapped() >= before + size,
                "a block of {size} bytes grew a heap after a larger one was freed"
            );
            drop(block);
        }
    }
}

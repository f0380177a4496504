//! glibc's malloc as the allocator tests see it (Linux with glibc only).

use std::sync::{Arc, Barrier};

/// What glibc's `malloc_info` reports: its XML.
pub fn malloc_info() -> String {
    let mut buffer: *mut libc::c_char = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: the stream writes to a buffer it allocates; it is read once
    // the stream is closed and freed after.
    unsafe {
        let stream = libc::open_memstream(&mut buffer, &mut size);
        assert!(!stream.is_null(), "a memory stream");
        assert_eq!(libc::malloc_info(0, stream), 0, "malloc_info");
        libc::fclose(stream);
        let bytes = std::slice::from_raw_parts(buffer.cast::<u8>(), size).to_vec();
        libc::free(buffer.cast());
        String::from_utf8(bytes).expect("malloc_info writes ASCII")
    }
}

/// How many arenas malloc has made (an arena outlives its thread: it
/// waits on a free list for the next).
pub fn arenas() -> usize {
    malloc_info().matches("<heap nr=").count()
}

/// `threads` threads, each allocating `each` blocks at once (held until
/// all have allocated): each takes an arena of its own while malloc's
/// limit allows.
pub fn allocate_at_once(threads: usize, each: usize) {
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let kept: Vec<Vec<u8>> = (0..each).map(|size| vec![1; 64 + size]).collect();
                barrier.wait();
                kept.len()
            })
        })
        .collect();
    for handle in handles {
        assert_eq!(handle.join().unwrap(), each);
    }
}

//! The threads the server's work runs on, by how soon the writer waits for
//! it. The open documents' checks have a pool of their own, never queued
//! behind a pass over the whole manuscript; that pass, the story's health
//! and the initial index run on a pool whose threads yield the cores to
//! everything else (on Linux, a nice of [`BACKGROUND_NICE`]), so that the
//! diagnostics of a keystroke are neither computed nor written out after
//! the manuscript's.

use std::sync::OnceLock;

/// How much lower the background threads ask the scheduler to rank them:
/// under Linux's fair scheduler a thread of nice 10 gets about a tenth of
/// a core that a thread of nice 0 wants.
const BACKGROUND_NICE: i32 = 10;

/// The open documents' pool (not rayon's global one, where a job waits
/// for whatever another pass put there first).
pub(crate) fn foreground() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|index| format!("open-documents-{index}"))
            .build()
            .expect("a thread pool for the open documents")
    })
}

/// The whole manuscript's pool: work nobody is looking at yet.
pub(crate) fn background() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|index| format!("manuscript-{index}"))
            .start_handler(|_| yield_to_others())
            .build()
            .expect("a thread pool for the whole manuscript")
    })
}

/// Runs `work` on `pool` and waits for it without holding a thread: the
/// pool's thread answers the waiting task itself (through a blocking
/// thread that waits on the pool, the answer would cross two threads
/// more, a tenth of a millisecond of every keystroke's diagnostics).
/// `None` when `work` panicked (the panic is reported as any other).
pub(crate) async fn run<T: Send + 'static>(
    pool: &'static rayon::ThreadPool,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    pool.spawn(move || {
        // A panic in a pool's spawned job would end the process.
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
        let _ = answer.send(done.ok());
    });
    answered.await.ok().flatten()
}

/// Lowers the calling thread's priority. On Linux, `setpriority` with
/// `PRIO_PROCESS` and 0 names the calling thread alone (its nice is
/// per thread); elsewhere it would lower the whole process, so nothing is
/// done there. A refusal leaves the thread as it was.
fn yield_to_others() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority reads no memory of ours; 0 is the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICE);
    }
}

/// The calling thread's nice (Linux), for the tests.
#[cfg(all(test, target_os = "linux"))]
fn nice() -> i32 {
    // SAFETY: as above; getpriority only answers.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn work_run_on_a_pool_answers_and_a_panic_in_it_answers_none() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let name = run(foreground(), || {
                std::thread::current().name().map(str::to_owned)
            });
            assert!(name.await.flatten().unwrap().starts_with("open-documents-"));
            let panicked: Option<()> = run(background(), || panic!("a check's defect")).await;
            assert_eq!(panicked, None);
            assert_eq!(run(background(), || 7).await, Some(7), "the pool lives on");
        });
    }

    #[test]
    fn the_manuscripts_threads_yield_and_the_open_documents_threads_do_not() {
        let before = nice();
        assert_eq!(foreground().install(nice), before);
        assert_eq!(
            background().install(nice),
            (before + BACKGROUND_NICE).min(19)
        );
        // The caller is untouched.
        assert_eq!(nice(), before);
    }
}

//! How far the published diagnostics run ahead of the output. The framework
//! queues every notification it is given (each send has a slot of its own),
//! so a pass over the whole manuscript would hold every file's diagnostics
//! at once, as JSON values, until the output wrote them. The publisher waits
//! for room before each send; the output pump counts each publication it
//! writes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// How many publications may wait for the output at once.
const AHEAD: u64 = 4;

/// How long a publication waits for room before it goes all the same: one
/// the framework dropped (sent before the client was initialised) is never
/// written, and must not hold up every later one.
const ROOM_WAIT: Duration = Duration::from_secs(1);

/// Publications sent and written, and a wake-up when one is written.
#[derive(Debug, Default)]
pub struct Backlog {
    sent: AtomicU64,
    written: AtomicU64,
    drained: Notify,
}

impl Backlog {
    /// Waits until fewer than [`AHEAD`] publications wait for the output,
    /// then counts one more as sent.
    pub async fn send(&self) {
        let waited = tokio::time::timeout(ROOM_WAIT, async {
            loop {
                // Made before the count is read, so a write between the two
                // still wakes it.
                let drained = self.drained.notified();
                if self.waiting() < AHEAD {
                    return;
                }
                drained.await;
            }
        })
        .await;
        if waited.is_err() {
            // Those still counted will never be written: forget them.
            self.written
                .store(self.sent.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        self.sent.fetch_add(1, Ordering::SeqCst);
    }

    /// The output wrote `frame`: a publication is counted as written.
    pub fn written(&self, frame: &[u8]) {
        let head = &frame[..frame.len().min(128)];
        if memchr::memmem::find(head, b"\"textDocument/publishDiagnostics\"").is_some() {
            self.written.fetch_add(1, Ordering::SeqCst);
            self.drained.notify_waiters();
        }
    }

    fn waiting(&self) -> u64 {
        self.sent
            .load(Ordering::SeqCst)
            .saturating_sub(self.written.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUBLISHED: &[u8] =
        br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{}}"#;

    #[test]
    fn a_publication_waits_for_room_and_one_written_makes_it() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let backlog = std::sync::Arc::new(Backlog::default());
            for _ in 0..AHEAD {
                backlog.send().await;
            }
            let waiting = tokio::spawn({
                let backlog = backlog.clone();
                async move { backlog.send().await }
            });
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!waiting.is_finished(), "no room while {AHEAD} wait");
            backlog.written(br#"{"jsonrpc":"2.0","method":"window/logMessage","params":{}}"#);
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!waiting.is_finished(), "another message makes no room");
            backlog.written(PUBLISHED);
            tokio::time::timeout(Duration::from_millis(500), waiting)
                .await
                .expect("a publication written makes room")
                .unwrap();
        });
    }

    #[test]
    fn publications_never_written_hold_up_the_next_one_second_at_most() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let backlog = Backlog::default();
            for _ in 0..AHEAD {
                backlog.send().await;
            }
            let began = std::time::Instant::now();
            backlog.send().await;
            let waited = began.elapsed();
            assert!(
                waited >= ROOM_WAIT && waited < ROOM_WAIT * 3,
                "waited {waited:?}"
            );
            // The lost ones are forgotten: the next goes at once.
            let began = std::time::Instant::now();
            backlog.send().await;
            assert!(began.elapsed() < ROOM_WAIT / 4, "{:?}", began.elapsed());
        });
    }
}

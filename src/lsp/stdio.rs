//! The process's standard input, read by a thread of its own.

use std::io::Read;

use tokio::io::AsyncRead;
use tokio::sync::mpsc;

/// The process's standard input, read by a thread of its own in blocking
/// reads and handed over as it comes: tokio's stdin wakes a blocking thread
/// for each read and hands its bytes over from there, a hop more for every
/// message the client sends.
pub fn stdin() -> std::io::Result<Chunks> {
    chunks_of(std::io::stdin())
}

/// What `input` gives, read by a thread of its own (see [`stdin`]).
fn chunks_of(mut input: impl Read + Send + 'static) -> std::io::Result<Chunks> {
    let (chunks, received) = mpsc::channel(CHUNKS_AHEAD);
    std::thread::Builder::new()
        .name("lsp-input".to_owned())
        .spawn(move || {
            let mut buffer = vec![0; CHUNK];
            loop {
                let read = match input.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(read) => Ok(buffer[..read].to_vec()),
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(error) => Err(error),
                };
                let failed = read.is_err();
                if chunks.blocking_send(read).is_err() || failed {
                    break;
                }
            }
        })?;
    Ok(Chunks {
        received,
        chunk: Vec::new(),
        at: 0,
    })
}

/// The most a read of the input takes at once, and how many such chunks
/// wait for the frames' reader.
const CHUNK: usize = 64 * 1024;
const CHUNKS_AHEAD: usize = 4;

/// The bytes [`stdin`]'s thread read, in order; they end where its input ends.
pub struct Chunks {
    received: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
}

impl AsyncRead for Chunks {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
        buffer: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        while this.at == this.chunk.len() {
            match std::task::ready!(this.received.poll_recv(context)) {
                Some(Ok(chunk)) => {
                    this.chunk = chunk;
                    this.at = 0;
                }
                Some(Err(error)) => return std::task::Poll::Ready(Err(error)),
                None => return std::task::Poll::Ready(Ok(())),
            }
        }
        let taken = buffer.remaining().min(this.chunk.len() - this.at);
        buffer.put_slice(&this.chunk[this.at..this.at + taken]);
        this.at += taken;
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    /// A reader that gives a few bytes a read, then fails or ends.
    struct Trickle {
        left: Vec<u8>,
        then: Option<std::io::ErrorKind>,
    }

    impl Read for Trickle {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            if self.left.is_empty() {
                return match self.then {
                    Some(kind) => Err(kind.into()),
                    None => Ok(0),
                };
            }
            let taken = buffer.len().min(self.left.len()).min(7);
            buffer[..taken].copy_from_slice(&self.left[..taken]);
            self.left.drain(..taken);
            Ok(taken)
        }
    }

    /// The input read by a thread of its own comes out as it went in, to
    /// its end, and a failed read reaches the frames' reader as an error.
    #[test]
    fn the_input_read_on_its_own_thread_comes_out_whole_and_in_order() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let sent: Vec<u8> = (0..200_000u32).map(|n| (n % 251) as u8).collect();
        let whole = Trickle {
            left: sent.clone(),
            then: None,
        };
        let broken = Trickle {
            left: b"Content-Length: 2".to_vec(),
            then: Some(std::io::ErrorKind::BrokenPipe),
        };
        runtime.block_on(async {
            let mut read = Vec::new();
            chunks_of(whole)
                .unwrap()
                .read_to_end(&mut read)
                .await
                .unwrap();
            assert!(
                read == sent,
                "{} bytes of {} came out as sent",
                read.len(),
                sent.len()
            );
            let mut read = Vec::new();
            let failed = chunks_of(broken).unwrap().read_to_end(&mut read).await;
            assert_eq!(failed.unwrap_err().kind(), std::io::ErrorKind::BrokenPipe);
            assert_eq!(read, b"Content-Length: 2");
        });
    }
}

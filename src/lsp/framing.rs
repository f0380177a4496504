//! The wire under the LSP framework. tower-lsp-server reads frames through
//! tokio-util's `FramedRead`, whose stream ends at the first frame it cannot
//! decode: one body that is not JSON, with a correct `Content-Length`, used
//! to leave the server deaf or gone. So the server reads the frames itself:
//!
//! - a frame whose body is a JSON-RPC message is handed to the framework as
//!   it came (re-framed with its length alone);
//! - a frame with a usable length whose body is not a message is answered
//!   with a Parse error (or Invalid Request for JSON that is no message), and
//!   the server goes on with the next frame;
//! - a frame whose length is missing or unusable leaves no way to find the
//!   next one: the connection is closed with a message on stderr, and the
//!   process exits non-zero ([`Closed::Garbled`]).
//!
//! The framework's own output is copied to stdout frame by frame, with the
//! error replies put between frames, never inside one. Once `shutdown` is answered, nothing but answers goes out:
//! an editor that has asked the server to shut down reads any message that
//! follows as a server that has not (Eglot kills it).

use std::io::{IoSlice, Write};
use std::sync::{Arc, Mutex};

use serde_json::json;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::jsonrpc::{Id, Request, Response};

/// The longest header block and the largest body a frame may have. A client
/// sends documents as JSON text; 256 MiB is far beyond any manuscript.
const MAX_HEADER: usize = 8 * 1024;
const MAX_BODY: usize = 256 * 1024 * 1024;

/// The most a frame's body is given before its bytes arrive: a frame up to
/// this size is read into a buffer of its own size (not twice it, as a
/// growing one ends), and a length that lies costs at most this much.
const PREALLOCATE: usize = 1024 * 1024;

/// The framework's frames read ahead of the output: past this many, the
/// framework waits, rather than its diagnostics piling up as copies here.
const OUTPUT_AHEAD: usize = 4;

/// How the client's side of the connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Closed {
    /// The client closed its output (or the framework stopped reading).
    Ended,
    /// The client sent `exit`: the server stops now, whatever its handlers
    /// still wait for.
    Exit,
    /// A frame could not be delimited: why.
    Garbled(String),
}

/// One frame read from the client.
enum Frame {
    Body(Vec<u8>),
    End,
    Garbled(String),
}

/// Reads one frame: headers up to the empty line, then `Content-Length`
/// bytes.
async fn read_frame<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> std::io::Result<Frame> {
    let mut length: Option<Result<usize, String>> = None;
    let mut header_bytes = 0;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        let read = input.read_until(b'\n', &mut line).await?;
        if read == 0 {
            return Ok(if saw_header {
                Frame::Garbled("the input ended inside a frame's headers".to_owned())
            } else {
                Frame::End
            });
        }
        header_bytes += read;
        if header_bytes > MAX_HEADER {
            return Ok(Frame::Garbled(format!(
                "a frame's headers run past {MAX_HEADER} bytes"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !saw_header {
                continue; // Blank lines between frames are harmless.
            }
            break;
        }
        saw_header = true;
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("the Content-Length `{}` is not a length", value.trim())),
            );
        }
    }
    let length = match length {
        None => return Ok(Frame::Garbled("a frame has no Content-Length".to_owned())),
        Some(Err(why)) => return Ok(Frame::Garbled(why)),
        Some(Ok(length)) if length > MAX_BODY => {
            return Ok(Frame::Garbled(format!(
                "a frame of {length} bytes is over the limit of {MAX_BODY}"
            )));
        }
        Some(Ok(length)) => length,
    };
    // Read as the bytes come, room made for at most PREALLOCATE of them
    // first, so a length that lies costs little more than what is sent;
    // one byte more than the body, so the read that finds its end needs no
    // room of its own.
    let mut body = Vec::with_capacity(length.min(PREALLOCATE) + 1);
    (&mut *input)
        .take(length as u64)
        .read_to_end(&mut body)
        .await?;
    if body.len() < length {
        return Ok(Frame::Garbled(format!(
            "the input ended inside a frame of {length} bytes"
        )));
    }
    Ok(Frame::Body(body))
}

/// What a frame's body from the client is.
#[derive(Debug, PartialEq, Eq)]
enum Incoming {
    /// A message for the framework.
    Message,
    /// The `exit` notification.
    Exit,
    /// The `shutdown` request, with its id.
    Shutdown(Id),
    /// Not a JSON-RPC message, or a `$/` request (the spec has them refused
    /// with MethodNotFound, which the framework does not do: it never
    /// answered them): the error reply.
    Refused(Vec<u8>),
}

fn incoming(body: &[u8]) -> Incoming {
    // The framework reads a body as UTF-8 first, and its reader ends at one
    // that is not; serde alone lets bad bytes pass in a field it ignores.
    if std::str::from_utf8(body).is_err() {
        return Incoming::Refused(parse_error("Parse error: the frame's body is not UTF-8"));
    }
    if let Ok(request) = serde_json::from_slice::<Request>(body) {
        let Some(id) = request.id() else {
            return match request.method() {
                "exit" => Incoming::Exit,
                _ => Incoming::Message,
            };
        };
        if request.method() == "shutdown" {
            return Incoming::Shutdown(id.clone());
        }
        if !request.method().starts_with("$/") {
            return Incoming::Message;
        }
        let reply = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32601,
            "message": format!("Method not found: {}", request.method()),
        }});
        return Incoming::Refused(reply.to_string().into_bytes());
    }
    if serde_json::from_slice::<Response>(body).is_ok() {
        return Incoming::Message;
    }
    Incoming::Refused(match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(_) => error_reply(
            -32600,
            "Invalid request: the frame's JSON is not a JSON-RPC message",
        ),
        Err(_) => parse_error("Parse error: the frame's body is not JSON"),
    })
}

fn parse_error(message: &str) -> Vec<u8> {
    error_reply(-32700, message)
}

fn error_reply(code: i64, message: &str) -> Vec<u8> {
    let reply = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    reply.to_string().into_bytes()
}

fn framed(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

/// The id of the client's `shutdown` request, once it has come, and whether
/// it has been answered: shared by the two pumps.
#[derive(Clone, Debug, Default)]
pub struct Shutdown(Arc<Mutex<ShutdownState>>);

#[derive(Debug, Default)]
struct ShutdownState {
    asked: Option<Id>,
    answered: bool,
}

impl Shutdown {
    fn state(&self) -> std::sync::MutexGuard<'_, ShutdownState> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn asked(&self, id: Id) {
        self.state().asked = Some(id);
    }

    /// Whether the framework's frame `body` goes out: everything until the
    /// answer to `shutdown` (that answer too), then answers alone.
    fn lets_out(&self, body: &[u8]) -> bool {
        let mut state = self.state();
        if state.asked.is_none() {
            return true;
        }
        let Ok(response) = serde_json::from_slice::<Response>(body) else {
            return !state.answered; // A notification or a request of the server's.
        };
        if Some(response.id()) == state.asked.as_ref() {
            state.answered = true;
        }
        true
    }
}

/// Copies the client's frames to the framework (`to_server`), answering
/// the ones that are not messages through `refusals`, until the input ends
/// or the client sends `exit` (handed on, then [`Closed::Exit`]).
///
/// `to_server` is handed back with the reason the input ended, so the
/// framework's input ends only when whoever waits for this has the reason:
/// were it dropped here, the framework could finish before the reason
/// arrives, and a garbled frame would read as a clean end.
pub async fn pump_input<R, W>(
    input: R,
    mut to_server: W,
    refusals: mpsc::UnboundedSender<Vec<u8>>,
    shutdown: Shutdown,
) -> (Closed, W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    let closed = loop {
        match read_frame(&mut input).await {
            Ok(Frame::Body(body)) => match incoming(&body) {
                Incoming::Refused(reply) => {
                    eprintln!(
                        "control-room: a frame from the client is not a JSON-RPC message; answered with an error"
                    );
                    let _ = refusals.send(reply);
                }
                message => {
                    if let Incoming::Shutdown(id) = &message {
                        shutdown.asked(id.clone());
                    }
                    let written = to_server.write_all(&framed(&body)).await;
                    if written.and(to_server.flush().await).is_err() {
                        break Closed::Ended; // The framework stopped reading (exit).
                    }
                    if message == Incoming::Exit {
                        break Closed::Exit;
                    }
                }
            },
            Ok(Frame::End) => break Closed::Ended,
            Ok(Frame::Garbled(why)) => break Closed::Garbled(why),
            Err(error) => break Closed::Garbled(format!("the input cannot be read: {error}")),
        }
    };
    (closed, to_server)
}

/// Copies the framework's frames to `output`, with the refusals put between frames,
/// and only answers once `shutdown` is answered; ends when the framework's
/// output ends, once what it wrote is out. The frames are read in a task of
/// their own, so waiting for either never cuts a read short, and written
/// from a thread of their own (see [`spawn_writer`]).
pub async fn pump_output<R, W>(
    from_server: R,
    output: W,
    mut refusals: mpsc::UnboundedReceiver<Vec<u8>>,
    shutdown: Shutdown,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: Write + Send + 'static,
{
    let (to_writer, written) = spawn_writer(output)?;
    let (frames, mut server_frames) = mpsc::channel(OUTPUT_AHEAD);
    let reader = tokio::spawn(async move {
        let mut from_server = BufReader::new(from_server);
        while let Ok(Frame::Body(body)) = read_frame(&mut from_server).await {
            if !shutdown.lets_out(&body) {
                continue;
            }
            if frames.send(body).await.is_err() {
                break;
            }
        }
    });
    let mut refusals_open = true;
    let writing = loop {
        let outgoing = tokio::select! {
            frame = server_frames.recv() => match frame {
                Some(body) => body,
                None => break true,
            },
            refusal = refusals.recv(), if refusals_open => match refusal {
                Some(reply) => reply,
                None => {
                    refusals_open = false;
                    continue;
                }
            },
        };
        if to_writer.send(outgoing).await.is_err() {
            break false; // The writer stopped: its error is below.
        }
    };
    reader.abort();
    // Refusals sent while the last frames went out.
    while writing && let Ok(reply) = refusals.try_recv() {
        if to_writer.send(reply).await.is_err() {
            break;
        }
    }
    drop(to_writer);
    written
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("the output's thread ended")))
}

/// The output frames are written to: the process's standard output, as a
/// file of its own where it can be (unbuffered: a frame is one `writev`,
/// not the line buffer's several writes).
pub fn stdout() -> std::io::Result<Box<dyn Write + Send>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = std::io::stdout().as_fd().try_clone_to_owned()?;
        Ok(Box::new(std::fs::File::from(fd)))
    }
    #[cfg(not(unix))]
    {
        Ok(Box::new(std::io::stdout()))
    }
}

/// Writes each frame sent on the answer to `output` from a thread of its
/// own, in blocking writes. One frame waits in the
/// channel while another is written, so the framework still waits for a
/// client that reads slowly. The receiver answers once every frame sent is
/// written, or with the error that stopped the writes.
fn spawn_writer<W: Write + Send + 'static>(
    mut output: W,
) -> std::io::Result<(mpsc::Sender<Vec<u8>>, AllWritten)> {
    let (frames, mut to_write) = mpsc::channel::<Vec<u8>>(1);
    let (done, written) = oneshot::channel();
    std::thread::Builder::new()
        .name("lsp-output".to_owned())
        .spawn(move || {
            let mut result = Ok(());
            while let Some(frame) = to_write.blocking_recv() {
                result = write_frame(&mut output, &frame);
                if result.is_err() {
                    break;
                }
            }
            let _ = done.send(result);
        })?;
    Ok((frames, written))
}

/// Answers once every frame sent to the writer is written, or with the
/// error that stopped the writes.
type AllWritten = oneshot::Receiver<std::io::Result<()>>;

/// Writes the message `body` with its header, in one vectored write where
/// the output takes it.
fn write_frame(output: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    let mut slices = [IoSlice::new(header.as_bytes()), IoSlice::new(body)];
    let mut left = &mut slices[..];
    while !left.is_empty() {
        match output.write_vectored(left) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => IoSlice::advance_slices(&mut left, written),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The defect: the pump dropped the framework's input as it returned, so
    /// the framework could end (and the server exit 0) before the garbled
    /// frame's reason reached the server's loop.
    #[test]
    fn a_garbled_frame_is_known_before_the_framework_sees_its_input_end() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (to_server, mut server_side) = tokio::io::duplex(1 << 10);
            let (refusals, _refused) = mpsc::unbounded_channel();
            let garbled = &b"Content-Length: many\r\n\r\n{}"[..];
            let (closed, to_server) =
                pump_input(garbled, to_server, refusals, Shutdown::default()).await;
            assert!(matches!(closed, Closed::Garbled(_)), "{closed:?}");
            let mut byte = [0u8; 1];
            let early =
                tokio::time::timeout(Duration::from_millis(50), server_side.read(&mut byte)).await;
            assert!(
                early.is_err(),
                "the framework's input ended before the reason was handed over"
            );
            drop(to_server);
            assert_eq!(server_side.read(&mut byte).await.unwrap(), 0);
        });
    }

    /// What a test's output holds.
    #[derive(Clone, Default)]
    struct Written(Arc<Mutex<Vec<u8>>>);

    impl Write for Written {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The bodies of the frames in `output`, each as long as its header says.
    fn frames_in(mut output: &[u8]) -> Vec<serde_json::Value> {
        let mut frames = Vec::new();
        while !output.is_empty() {
            let end = memchr::memmem::find(output, b"\r\n\r\n").expect("a header's end");
            let header = std::str::from_utf8(&output[..end]).unwrap();
            let length: usize = header
                .strip_prefix("Content-Length: ")
                .expect("a length")
                .parse()
                .unwrap();
            let body = &output[end + 4..end + 4 + length];
            frames.push(serde_json::from_slice(body).expect("a frame's body is its message"));
            output = &output[end + 4 + length..];
        }
        frames
    }

    /// The framework's frames and a refusal go out whole, each with the
    /// length of its body in bytes (a non-ASCII one among them).
    #[test]
    fn frames_go_out_whole_with_their_lengths_in_bytes() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let before = json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": "é’"}});
        let response = json!({"jsonrpc": "2.0", "result": [{"uri": "file:///a.md", "range": {
            "start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 6}}}], "id": 7});
        let refusal =
            json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "ü"}, "id": null});
        let output = Written::default();
        runtime.block_on(async {
            let (mut framework, from_server) = tokio::io::duplex(1 << 16);
            for message in [&before, &response] {
                framework
                    .write_all(&framed(&serde_json::to_vec(message).unwrap()))
                    .await
                    .unwrap();
            }
            drop(framework);
            let (refusals, refused) = mpsc::unbounded_channel();
            refusals
                .send(serde_json::to_vec(&refusal).unwrap())
                .unwrap();
            drop(refusals);
            pump_output(from_server, output.clone(), refused, Shutdown::default())
                .await
                .unwrap();
        });
        let written = output.0.lock().unwrap().clone();
        let mut frames = frames_in(&written);
        assert_eq!(frames.len(), 3);
        let at = frames
            .iter()
            .position(|frame| *frame == refusal)
            .expect("the refusal went out");
        frames.remove(at);
        assert_eq!(frames, vec![before, response]);
    }

    #[test]
    fn once_shutdown_is_answered_only_answers_go_out() {
        let shutdown = Shutdown::default();
        let notification =
            br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{}}"#;
        let request = br#"{"jsonrpc":"2.0","method":"workspace/semanticTokens/refresh","id":3}"#;
        let answer = |id: u32| format!(r#"{{"jsonrpc":"2.0","result":null,"id":{id}}}"#);
        assert!(shutdown.lets_out(notification), "nothing asked yet");
        assert_eq!(
            incoming(br#"{"jsonrpc":"2.0","method":"shutdown","id":7}"#),
            Incoming::Shutdown(Id::Number(7))
        );
        shutdown.asked(Id::Number(7));
        assert!(shutdown.lets_out(notification), "asked, not yet answered");
        assert!(shutdown.lets_out(answer(6).as_bytes()));
        assert!(shutdown.lets_out(answer(7).as_bytes()), "the answer itself");
        assert!(!shutdown.lets_out(notification));
        assert!(!shutdown.lets_out(request));
        assert!(
            shutdown.lets_out(answer(8).as_bytes()),
            "answers still go out"
        );
    }

    /// `exit` is handed to the framework, and the pump stops there: the
    /// server ends without waiting for its handlers (see `run_stdio`).
    #[test]
    fn the_input_ends_at_exit_after_handing_it_on() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let exit = br#"{"jsonrpc":"2.0","method":"exit"}"#;
            let after = br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
            let mut input = framed(exit);
            input.extend(framed(after));
            let (to_server, mut server_side) = tokio::io::duplex(1 << 10);
            let (refusals, _refused) = mpsc::unbounded_channel();
            let (closed, to_server) =
                pump_input(&input[..], to_server, refusals, Shutdown::default()).await;
            assert_eq!(closed, Closed::Exit);
            drop(to_server);
            let mut handed = Vec::new();
            server_side.read_to_end(&mut handed).await.unwrap();
            assert_eq!(handed, framed(exit));
        });
        // A request named `exit` is no exit notification.
        assert_eq!(
            incoming(br#"{"jsonrpc":"2.0","id":1,"method":"exit"}"#),
            Incoming::Message
        );
    }
}

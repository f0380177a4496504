//! A minimal LSP client for end-to-end tests: spawns the real binary and
//! speaks JSON-RPC over its stdio.

#![allow(dead_code)]

pub mod editor;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// How long the client waits for a message: [`TIMEOUT`], or
/// `CONTROL_ROOM_CLIENT_TIMEOUT_S` seconds for a server run slowly on
/// purpose (under valgrind).
pub fn timeout() -> Duration {
    std::env::var("CONTROL_ROOM_CLIENT_TIMEOUT_S")
        .ok()
        .and_then(|seconds| seconds.parse().ok())
        .map_or(TIMEOUT, Duration::from_secs)
}

/// Answers a request from the server; `None` answers `null`.
pub type Responder = Box<dyn FnMut(&Value) -> Option<Value> + Send>;

pub struct Client {
    child: Child,
    /// The server's input; `None` once closed.
    stdin: Option<ChildStdin>,
    /// Each message with when its last byte was read, before it was
    /// parsed, and when it was parsed (on the thread that reads).
    incoming: Receiver<(Value, Instant, Instant)>,
    /// When the last message [`Client::wait_for`] returned was all read: a
    /// server's answer without this client's parse of it.
    pub received: Option<Instant>,
    /// When that message was parsed, before it was handed to the thread
    /// that waits for it (an editor's cost of it, without this client's
    /// own bookkeeping: the hand-over, the copy kept in `seen`).
    pub parsed: Option<Instant>,
    next_id: i64,
    /// Notifications and server requests seen so far, in order.
    pub seen: Vec<Value>,
    /// How server requests are answered (by default, `null`).
    pub responder: Option<Responder>,
    /// Notifications a responder wants sent after its answer (the
    /// `didChange` an editor sends once it applied an edit to a buffer).
    pub outbox: Arc<Mutex<Vec<Value>>>,
    /// What the server wrote to its stderr so far (also passed on to ours).
    stderr: Arc<Mutex<String>>,
}

impl Client {
    pub fn spawn(envs: &[(&str, &str)]) -> Client {
        Client::launch(&["lsp"], envs)
    }

    /// The binary started with `args` (as an editor's configuration gives
    /// them) and `envs`.
    pub fn launch(args: &[&str], envs: &[(&str, &str)]) -> Client {
        Client::command(Path::new(env!("CARGO_BIN_EXE_control-room")), args, envs)
    }

    /// Any language server: `program` started with `args` and `envs` (the
    /// benchmarks measure other servers with the same client).
    pub fn command(program: &Path, args: &[&str], envs: &[(&str, &str)]) -> Client {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in envs {
            command.env(key, value);
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|error| panic!("{} does not start: {error}", program.display()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut error_output = child.stderr.take().unwrap();
        let written = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buffer = [0; 4096];
            while let Ok(read) = error_output.read(&mut buffer) {
                if read == 0 {
                    return;
                }
                let text = String::from_utf8_lossy(&buffer[..read]).into_owned();
                eprint!("{text}");
                written.lock().unwrap().push_str(&text);
            }
        });
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length: ") {
                        length = value.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("every message has a Content-Length")];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let received = Instant::now();
                let message: Value = serde_json::from_slice(&body).expect("the server sends JSON");
                if sender.send((message, received, Instant::now())).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin: Some(stdin),
            incoming,
            received: None,
            parsed: None,
            next_id: 1,
            seen: Vec::new(),
            responder: None,
            outbox: Arc::default(),
            stderr,
        }
    }

    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        let stdin = self.stdin.as_mut().expect("the server's input is open");
        let sent = write!(stdin, "Content-Length: {}\r\n\r\n", body.len())
            .and_then(|()| stdin.write_all(&body))
            .and_then(|()| stdin.flush());
        if let Err(error) = sent {
            panic!(
                "cannot write to the server ({error}); {}",
                self.exit_report()
            );
        }
    }

    /// Writes `bytes` to the server as they are, frame or not.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the server's input is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the server's input, as an editor that goes away does.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Waits for the server to exit on its own; its status and stderr.
    pub fn wait_exit(&mut self) -> (std::process::ExitStatus, String) {
        let deadline = Instant::now() + timeout();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(50));
                return (status, self.stderr.lock().unwrap().clone());
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// How the server ended, and what it said on stderr.
    pub fn exit_report(&mut self) -> String {
        let status = self.child.wait().ok();
        std::thread::sleep(Duration::from_millis(50));
        format!(
            "it exited with {status:?}, saying: {}",
            self.stderr.lock().unwrap().trim()
        )
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    pub fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(|message| {
            message.get("id") == Some(&json!(id)) && message.get("method").is_none()
        })
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.request_raw(method, params);
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// Receives messages until one matches, answering server requests on the way.
    pub fn wait_for(&mut self, wanted: impl FnMut(&Value) -> bool) -> Value {
        self.wait_for_within(timeout(), wanted)
    }

    /// [`Client::wait_for`], for up to `limit`.
    pub fn wait_for_within(
        &mut self,
        limit: Duration,
        mut wanted: impl FnMut(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (message, received, parsed) = match self.incoming.recv_timeout(left) {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("timed out after {limit:?}; seen: {:#?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let report = self.exit_report();
                    panic!(
                        "the server closed its output; {report}; seen: {:#?}",
                        self.seen
                    )
                }
            };
            if message.get("method").is_some() && message.get("id").is_some() {
                // A request from the server: answer it.
                let result = self
                    .responder
                    .as_mut()
                    .and_then(|respond| respond(&message))
                    .unwrap_or(Value::Null);
                let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                self.send(&reply);
                let after: Vec<Value> = std::mem::take(&mut *self.outbox.lock().unwrap());
                for notification in after {
                    self.send(&notification);
                }
            }
            let matched = wanted(&message);
            if message.get("method").is_some() {
                self.seen.push(message.clone());
            }
            if matched {
                self.received = Some(received);
                self.parsed = Some(parsed);
                return message;
            }
        }
    }

    /// Receives messages until one matches, leaving the server's requests
    /// unanswered, as an editor that has stopped listening does.
    pub fn wait_for_unanswered(&mut self, mut wanted: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let message = match self.incoming.recv_timeout(timeout()) {
                Ok((message, ..)) => message,
                Err(error) => panic!("no message ({error:?}); seen: {:#?}", self.seen),
            };
            if message.get("method").is_some() {
                self.seen.push(message.clone());
            }
            if wanted(&message) {
                return message;
            }
        }
    }

    /// Every message that arrives within `limit`, the server's requests
    /// unanswered.
    pub fn messages_within(&mut self, limit: Duration) -> Vec<Value> {
        let deadline = Instant::now() + limit;
        let mut messages = Vec::new();
        while let Ok(message) = self
            .incoming
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            messages.push(message.0);
        }
        messages
    }

    /// Waits until the initial index has ended (its progress `end`), whether
    /// or not that was already received.
    pub fn wait_for_index(&mut self) {
        let is_end = |message: &Value| {
            message["method"] == "$/progress" && message["params"]["value"]["kind"] == "end"
        };
        if !self.seen.iter().any(is_end) {
            self.wait_for(is_end);
        }
    }

    /// Waits for `publishDiagnostics` for `uri` that satisfies `wanted`.
    pub fn diagnostics_for(&mut self, uri: &str, wanted: impl FnMut(&[Value]) -> bool) -> Value {
        let now = self.seen.len();
        self.diagnostics_since(now, uri, wanted)
    }

    /// Like [`Client::diagnostics_for`], but also takes a publication seen
    /// since `mark` (a length of `seen`), for one that may have arrived
    /// while a request was waiting for its answer.
    pub fn diagnostics_since(
        &mut self,
        mark: usize,
        uri: &str,
        mut wanted: impl FnMut(&[Value]) -> bool,
    ) -> Value {
        let mut matches = |message: &Value| {
            message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && wanted(
                    message["params"]["diagnostics"]
                        .as_array()
                        .map_or(&[], Vec::as_slice),
                )
        };
        if let Some(found) = self.seen[mark.min(self.seen.len())..]
            .iter()
            .find(|message| matches(message))
        {
            return found["params"].clone();
        }
        self.wait_for(matches)["params"].clone()
    }

    pub fn initialize(&mut self, root: &Path, capabilities: Value) -> Value {
        let result = self.request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": capabilities}),
        );
        self.notify("initialized", json!({}));
        result
    }

    pub fn open(&mut self, path: &Path, version: i32) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": "markdown", "version": version, "text": text}}),
        );
        text
    }

    /// The quick fixes the server offers at `at` (an LSP position) of `uri`.
    pub fn quick_fixes(&mut self, uri: &str, at: &Value) -> Vec<Value> {
        let actions = self.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": at, "end": at},
                   "context": {"diagnostics": []}}),
        );
        actions
            .as_array()
            .expect("a list of actions")
            .iter()
            .filter(|action| action["kind"] == "quickfix")
            .cloned()
            .collect()
    }

    /// Shuts down and exits, asserting a clean exit.
    pub fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + timeout();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "server exited with {status}");
                return;
            }
            assert!(Instant::now() < deadline, "server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's peak memory so far (`VmHWM`), in bytes.
    pub fn peak_memory(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status
            .lines()
            .find(|line| line.starts_with("VmHWM:"))
            .expect("the kernel reports the peak resident set");
        let kilobytes: u64 = line
            .trim_start_matches("VmHWM:")
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .unwrap();
        kilobytes * 1024
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

pub fn uri(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    format!("file://{}", path.display()).replace(' ', "%20")
}

/// A copy of the bundled example in a temporary folder.
pub fn example_copy() -> (tempfile::TempDir, PathBuf) {
    copy_of("examples/salt-road")
}

/// A copy of a manuscript of the repository (`examples/…`, `tests/…`) in a
/// temporary folder, under the folder's own name, as a clean clone has it:
/// without the `.control-room/` that tests reading it in place leave.
pub fn copy_of(relative: &str) -> (tempfile::TempDir, PathBuf) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(source.file_name().unwrap());
    copy_dir(&source, &root);
    let _ = std::fs::remove_dir_all(root.join(".control-room"));
    let root = root.canonicalize().unwrap();
    (dir, root)
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The LSP position (UTF-16) of the `nth` occurrence of `needle` in `text`.
pub fn position_of(text: &str, needle: &str, nth: usize) -> Value {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} #{nth} not found"))
        .0;
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let character: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    json!({"line": line, "character": character})
}

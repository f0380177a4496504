//! Compiling the manuscript into one file a reader, an agent or a printer
//! takes: DOCX in standard manuscript format, EPUB, PDF (all three through
//! pandoc) or Markdown (no pandoc needed).
//!
//! `assemble` makes the Markdown (scenes in outline order under the
//! outline's chapter headings, only prose); `pandoc` finds and runs pandoc
//! and the PDF engines; `reference` makes the DOCX reference document. The
//! output file is written whole or not at all (a temporary file renamed),
//! and never where it would replace or join the manuscript.

pub mod assemble;
pub mod pandoc;
pub mod reference;

use std::path::{Path, PathBuf};

use crate::index::Workspace;
use crate::storage::Disk;

pub use assemble::{Assembled, Flavour, assemble};

/// What to compile to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Docx,
    Epub,
    Pdf,
    Md,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Docx, Format::Epub, Format::Pdf, Format::Md];

    pub fn extension(self) -> &'static str {
        match self {
            Format::Docx => "docx",
            Format::Epub => "epub",
            Format::Pdf => "pdf",
            Format::Md => "md",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|format| format.extension().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether compiling to it needs pandoc.
    pub fn needs_pandoc(self) -> bool {
        self != Format::Md
    }
}

/// Why a compile did not write its file.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(
        "compiling to DOCX, EPUB or PDF needs pandoc, and there is no `pandoc` on the PATH. \
         Install it: `apt install pandoc` (Debian, Ubuntu), `brew install pandoc` (macOS), \
         `winget install JohnMacFarlane.Pandoc` (Windows), or the installer from \
         https://pandoc.org/installing.html; then compile again. (`--to md` needs no pandoc.)"
    )]
    PandocMissing,
    #[error(
        "compiling to PDF needs a PDF engine that pandoc drives, and none is on the PATH \
         (looked for {}). Install one: `apt install texlive-xetex` (LaTeX) or \
         `apt install weasyprint`; or compile to DOCX and save it as PDF from your word processor.",
        pandoc::PDF_ENGINES.join(", ")
    )]
    PdfEngineMissing,
    #[error(transparent)]
    OutputRefused(#[from] OutputRefused),
    #[error("{program} cannot run: {error}")]
    PandocCannotRun {
        program: String,
        #[source]
        error: std::io::Error,
    },
    /// pandoc ran and failed: what was asked of it and what it said.
    #[error("pandoc {asked} failed: {said}")]
    PandocFailed { asked: String, said: String },
    /// pandoc could not convert the manuscript: its exit status and what it said.
    #[error("pandoc failed ({status}): {said}")]
    ConvertFailed { status: String, said: String },
    #[error(transparent)]
    Reference(#[from] reference::ReferenceError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why an output path is refused: a compile writes only its own file.
#[derive(Debug, thiserror::Error)]
pub enum OutputRefused {
    #[error("{} names no file", .0.display())]
    NoFile(PathBuf),
    #[error("cannot write {}: its folder {} cannot be used ({error})", .output.display(), .folder.display())]
    Folder {
        output: PathBuf,
        folder: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error("{} is a folder", .0.display())]
    IsAFolder(PathBuf),
    #[error(
        "{0} is a file of the manuscript; compile never writes over the writer's text: name another output with -o"
    )]
    ManuscriptFile(String),
    #[error(
        "{relative} is inside the manuscript's {folder} folder, where it would be read as part of the book: name an output elsewhere with -o"
    )]
    InsideManuscript {
        relative: String,
        folder: &'static str,
    },
}

/// What a compile wrote.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub format: Format,
    pub output: PathBuf,
    pub title: String,
    pub scenes: usize,
    pub words: usize,
    /// Scenes the outline lists that have no file, left out.
    pub missing: Vec<String>,
    /// Scene files the outline does not list, left out.
    pub unlisted: Vec<String>,
    /// The pandoc and PDF engine used, when one was.
    pub converter: Option<String>,
}

/// Where a compile writes when it is not told: beside the manuscript's
/// folders as `<title>.<format>`, except Markdown, which would be read as
/// part of the manuscript there and goes to `.control-room/compiled/`.
pub fn default_output(workspace: &Workspace, format: Format) -> PathBuf {
    let title = crate::index::Book::of(workspace).title(workspace);
    let slug = slug(&title);
    let name = format!("{slug}.{}", format.extension());
    match format {
        Format::Md => workspace.root().join(".control-room/compiled").join(name),
        _ => workspace.root().join(name),
    }
}

/// `The Salt Road` → `the-salt-road`.
fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "manuscript".to_owned()
    } else {
        slug.to_owned()
    }
}

/// Refuses an output that is a file of the manuscript or lies where the
/// manuscript's scenes or cards live: a compile writes only its own file.
pub fn check_output(workspace: &Workspace, output: &Path) -> Result<PathBuf, ExportError> {
    let name = output
        .file_name()
        .filter(|name| !name.is_empty())
        .ok_or_else(|| OutputRefused::NoFile(output.to_path_buf()))?;
    let parent = match output.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = parent
        .canonicalize()
        .map_err(|error| OutputRefused::Folder {
            output: output.to_path_buf(),
            folder: parent.clone(),
            error,
        })?;
    let mut target = parent.join(name);
    if let Ok(metadata) = std::fs::symlink_metadata(&target) {
        if metadata.is_dir() {
            return Err(OutputRefused::IsAFolder(target).into());
        }
        if let Ok(resolved) = target.canonicalize() {
            target = resolved;
        }
    }
    let root = workspace
        .root()
        .canonicalize()
        .unwrap_or_else(|_| workspace.root().to_path_buf());
    if let Ok(relative) = target.strip_prefix(&root) {
        let relative = relative.to_string_lossy().replace('\\', "/");
        let paths = &workspace.config().paths;
        let inside = |folder: &str| {
            let folder = folder.trim_end_matches('/');
            relative == folder || relative.starts_with(&format!("{folder}/"))
        };
        if workspace.file(&relative).is_some() || relative == paths.outline {
            return Err(OutputRefused::ManuscriptFile(relative).into());
        }
        if inside(&paths.scenes) || inside(&paths.compendium) {
            let folder = if inside(&paths.scenes) {
                "scenes"
            } else {
                "compendium"
            };
            return Err(OutputRefused::InsideManuscript { relative, folder }.into());
        }
    }
    Ok(target)
}

/// Compiles the workspace's manuscript to `format` at `output` (default:
/// [`default_output`]).
pub fn compile(
    workspace: &Workspace,
    format: Format,
    output: Option<&Path>,
) -> Result<Compiled, ExportError> {
    let output = match output {
        Some(output) => output.to_path_buf(),
        None => {
            let output = default_output(workspace, format);
            if let Some(parent) = output.parent() {
                std::fs::create_dir_all(parent).map_err(|source| ExportError::Write {
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
            output
        }
    };
    let target = check_output(workspace, &output)?;
    let flavour = match format {
        Format::Md => Flavour::Plain,
        _ => Flavour::Pandoc,
    };
    let assembled = assemble(workspace, flavour);
    let (bytes, converter) = match format {
        Format::Md => (assembled.markdown.clone().into_bytes(), None),
        _ => convert(workspace, &assembled, format)?,
    };
    Disk::default()
        .write_atomic(&target, &bytes)
        .map_err(|source| ExportError::Write {
            path: target.clone(),
            source,
        })?;
    Ok(Compiled {
        format,
        output: target,
        title: assembled.title,
        scenes: assembled.scenes,
        words: assembled.words,
        missing: assembled.missing,
        unlisted: assembled.unlisted,
        converter,
    })
}

/// Runs pandoc (and a PDF engine) in a private temporary folder; the
/// output's bytes and the converter's name.
fn convert(
    workspace: &Workspace,
    assembled: &Assembled,
    format: Format,
) -> Result<(Vec<u8>, Option<String>), ExportError> {
    let pandoc = pandoc::find()?;
    let engine = match format {
        Format::Pdf => Some(pandoc::find_pdf_engine()?),
        _ => None,
    };
    let scratch = tempfile::Builder::new()
        .prefix("control-room-compile-")
        .tempdir()
        .map_err(|source| ExportError::Write {
            path: std::env::temp_dir(),
            source,
        })?;
    let write = |name: &str, bytes: &[u8]| {
        let path = scratch.path().join(name);
        std::fs::write(&path, bytes)
            .map(|()| path.to_string_lossy().into_owned())
            .map_err(|source| ExportError::Write {
                path: path.clone(),
                source,
            })
    };
    let out = scratch
        .path()
        .join(format!("compiled.{}", format.extension()));
    let mut args: Vec<String> = vec!["-o".into(), out.to_string_lossy().into_owned()];
    match format {
        Format::Docx => {
            let font = workspace
                .config()
                .manuscript
                .font
                .as_deref()
                .unwrap_or(reference::DEFAULT_FONT);
            let header = reference::running_header(&assembled.title, assembled.author.as_deref());
            let reference = reference::manuscript_reference(
                &pandoc.default_data_file("reference.docx")?,
                font,
                &header,
            )?;
            args.push(format!(
                "--reference-doc={}",
                write("manuscript-reference.docx", &reference)?
            ));
        }
        Format::Epub => {
            args.push("--to=epub3".into());
            args.push(format!(
                "--css={}",
                write("manuscript.css", pandoc::STYLESHEET.as_bytes())?
            ));
        }
        Format::Pdf => {
            let engine = engine.as_deref().unwrap_or_default();
            args.push(format!("--pdf-engine={engine}"));
            if pandoc::is_html_engine(engine) {
                let css = format!("{}{}", pandoc::STYLESHEET, pandoc::PRINT_STYLESHEET);
                args.push(format!(
                    "--css={}",
                    write("manuscript.css", css.as_bytes())?
                ));
            } else {
                for variable in [
                    "geometry:margin=1in",
                    "fontsize=12pt",
                    "linestretch=2",
                    "indent=true",
                    "documentclass=report",
                ] {
                    args.push("-V".into());
                    args.push(variable.into());
                }
                args.push("--top-level-division=chapter".into());
            }
        }
        Format::Md => {}
    }
    pandoc.convert(&assembled.markdown, &args)?;
    let bytes = std::fs::read(&out).map_err(|source| ExportError::Write {
        path: out.clone(),
        source,
    })?;
    let converter = match engine {
        Some(engine) => format!("{} with {engine}", pandoc.version),
        None => pandoc.version.clone(),
    };
    Ok((bytes, Some(converter)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_titles_become_file_names() {
        assert_eq!(Format::parse("DOCX"), Some(Format::Docx));
        assert_eq!(Format::parse("odt"), None);
        assert!(!Format::Md.needs_pandoc());
        assert_eq!(slug("The Salt Road"), "the-salt-road");
        assert_eq!(slug("  Éclair: a Novel! "), "éclair-a-novel");
        assert_eq!(slug("???"), "manuscript");
    }
}

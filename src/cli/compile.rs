//! `control-room compile`: the manuscript as one DOCX, EPUB, PDF or Markdown
//! file (see `export`); `-o -` prints the Markdown.

use std::io::Write;
use std::path::Path;

use crate::export::{self, Compiled, Flavour, Format};
use crate::index::Workspace;

/// Compiles the manuscript at or above `dir`; 0 when the file was written.
pub fn compile(dir: &Path, format: Format, output: Option<&Path>) -> anyhow::Result<i32> {
    let root = super::workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    if output.is_some_and(|output| output == Path::new("-")) {
        anyhow::ensure!(
            format == Format::Md,
            "-o - prints Markdown only; name a file for {}",
            format.extension()
        );
        let assembled = export::assemble(&workspace, Flavour::Plain);
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(assembled.markdown.as_bytes())?;
        stdout.flush()?;
        report_left_out(&assembled.missing, &assembled.unlisted);
        return Ok(0);
    }
    let compiled = export::compile(&workspace, format, output)?;
    eprintln!("{}", summary(&compiled));
    report_left_out(&compiled.missing, &compiled.unlisted);
    Ok(0)
}

/// One line: what was compiled, where, with what.
pub fn summary(compiled: &Compiled) -> String {
    let mut line = format!(
        "compiled “{}”: {} scene{}, {} words, to {}",
        compiled.title,
        compiled.scenes,
        if compiled.scenes == 1 { "" } else { "s" },
        compiled.words,
        compiled.output.display()
    );
    if let Some(converter) = &compiled.converter {
        line.push_str(&format!(" ({converter})"));
    }
    line
}

fn report_left_out(missing: &[String], unlisted: &[String]) {
    if !missing.is_empty() {
        eprintln!(
            "left out, listed in the outline with no file yet: {}",
            missing.join(", ")
        );
    }
    if !unlisted.is_empty() {
        eprintln!(
            "left out, scene files the outline does not list: {}",
            unlisted.join(", ")
        );
    }
}

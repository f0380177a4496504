//! The report's lines about a run's edits of the manuscript: the result
//! line, and the section listing the edits made and those not made.

use super::{Delivery, EditLine, Lines, link, one_line};

/// The summary's result line for a run's edits.
pub(super) fn result_line(changed: &[EditLine], refused: &[EditLine]) -> String {
    let mut files: Vec<&str> = changed.iter().filter_map(|e| e.path.as_deref()).collect();
    files.dedup();
    let mut line = match changed.len() {
        0 => "- Result: no edit made".to_owned(),
        n => format!(
            "- Result: {n} edit{} made in {}",
            if n == 1 { "" } else { "s" },
            files
                .iter()
                .copied()
                .map(link)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if !refused.is_empty() {
        line.push_str(&format!("; {} not made (see Edits)", refused.len()));
    }
    line
}

/// The edits a run made and those it did not, each with its note.
pub(super) fn section(out: &mut Lines, delivery: &Delivery) {
    let Delivery::Edits { changed, refused } = delivery else {
        return;
    };
    let list = |out: &mut Lines, lines: &[EditLine]| {
        for line in lines {
            let path = line.path.as_deref().map_or("(no file)".to_owned(), link);
            let note = line
                .note
                .as_deref()
                .map(|note| format!(" (*{}*)", one_line(note)))
                .unwrap_or_default();
            out.push(format!("- {path}: {}{note}", one_line(&line.summary)));
        }
    };
    out.push(String::new());
    out.push("## Edits".to_owned());
    out.push(String::new());
    if changed.is_empty() {
        out.push("No edit was made.".to_owned());
    } else {
        out.push("Made (undo takes them back in the editor; each changed file's earlier text is in the run's `before/` folder):".to_owned());
        out.push(String::new());
        list(out, changed);
    }
    if !refused.is_empty() {
        out.push(String::new());
        out.push("Not made, and why:".to_owned());
        out.push(String::new());
        list(out, refused);
    }
}

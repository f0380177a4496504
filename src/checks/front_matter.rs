//! `front-matter`: the front matter is not valid YAML, or a known key has a
//! value of the wrong kind (`words: many`, `status: sleeping`, a card with no
//! `name`), or a date the manuscript's calendar does not have (`date:
//! 1203-02-30`, `born:`, `died:`). Reported at the offending value or line;
//! the rest of the file is still indexed.

use super::{Code, Diagnostic, Severity};
use crate::index::model::Spanned;
use crate::index::{FileContent, SourceFile, Workspace};

pub(super) fn check(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    let calendar = workspace.clock().calendar();
    let dates: Vec<(&str, &Spanned, _)> = match &file.content {
        FileContent::Scene(scene) => scene
            .date
            .iter()
            .zip(scene.story_date)
            .map(|(written, date)| ("date", written, date))
            .collect(),
        FileContent::Card(card) => [("born", &card.born), ("died", &card.died)]
            .into_iter()
            .filter_map(|(key, field)| Some((key, &field.as_ref()?.written, field.as_ref()?.date)))
            .collect(),
        _ => Vec::new(),
    };
    for (key, written, date) in dates {
        if let Some(problem) = calendar.problem(&date) {
            diagnostics.push(Diagnostic::new(
                file,
                written.range,
                Severity::Error,
                Code::FrontMatter,
                format!("`{key}: {}` is not a date: {problem}", written.text),
            ));
        }
    }
    for problem in &file.problems {
        diagnostics.push(Diagnostic::new(
            file,
            problem.range,
            Severity::Error,
            Code::FrontMatter,
            problem.message.clone(),
        ));
    }
}

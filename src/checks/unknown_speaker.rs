//! `unknown-speaker`: a line of dialogue attributed to a name that is on no
//! card and is no known word (`"…," Wren said`): someone the canon does not
//! know yet. Once per name and scene, with a quick fix that creates the card
//! (`Compendium/Characters/CHAR-<name>.md`, `type: character`). A near miss
//! of a known name is a `name-typo` instead.

use super::speakers::Speaker;
use super::{Code, Diagnostic, FileEdit, Fix, FixKind, LazyProse, Severity};
use crate::index::{SourceFile, Workspace};
use crate::text::TextRange;

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    lazy: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut said: Vec<&str> = Vec::new();
    for line in lazy.speakers(workspace) {
        let Speaker::Unknown(range) = line.speaker else {
            continue;
        };
        let name = range.slice(&file.text);
        if said.contains(&name) {
            continue;
        }
        said.push(name);
        let slug: String = name
            .chars()
            .flat_map(char::to_lowercase)
            .filter(|c| c.is_alphanumeric())
            .collect();
        let folder = &workspace.config().paths.characters;
        let path = format!("{}/CHAR-{slug}.md", folder.trim_end_matches('/'));
        let mut diagnostic = Diagnostic::new(
            file,
            range,
            Severity::Information,
            Code::UnknownSpeaker,
            format!("{name} speaks here but is on no card"),
        );
        if workspace.file(&path).is_none() {
            diagnostic = diagnostic.with_fix(Fix {
                title: format!("Create card {path}"),
                edits: vec![FileEdit {
                    path: path.as_str().into(),
                    range: TextRange::new(0, 0),
                    new_text: format!(
                        "---\ntype: character\nname: {name}\nstatus: alive\n---\n\n# {name}\n"
                    ),
                }],
                kind: FixKind::Correction,
            });
        }
        diagnostics.push(diagnostic);
    }
}

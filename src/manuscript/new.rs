//! `control-room new [DIR]`: a manuscript to start from. A `control-room.toml`
//! with every setting shown and commented out, an outline of two chapters,
//! one scene with its front matter, a character card and a place card, and
//! the four Story Bible templates with a heading for each part they need.
//! `check` of it says only what the Story Bible still misses.

use std::path::Path;

use crate::index::bible::{BibleKind, PartSpec};
use crate::index::config::PathsConfig;

use super::MakeError;

const SETTINGS: &str = include_str!("starter/control-room.toml");
const OUTLINE: &str = include_str!("starter/SCN-outline.md");
const SCENE: &str = include_str!("starter/SCN-the-first-scene.md");
const CHARACTER: &str = include_str!("starter/CHAR-ada-quill.md");
const PLACE: &str = include_str!("starter/LOC-the-lighthouse.md");

/// What a new manuscript holds: each file's path, relative to its root,
/// and its text. `title` heads the outline.
pub fn files(title: &str) -> Vec<(String, String)> {
    let paths = PathsConfig::default();
    let mut files = vec![
        (
            crate::index::config::CONFIG_FILE.to_owned(),
            SETTINGS.to_owned(),
        ),
        (paths.outline.clone(), OUTLINE.replace("{title}", title)),
        (
            format!("{}/SCN-the-first-scene.md", paths.scenes),
            SCENE.to_owned(),
        ),
        (
            format!("{}/CHAR-ada-quill.md", paths.characters),
            CHARACTER.to_owned(),
        ),
        (
            format!("{}/LOC-the-lighthouse.md", paths.locations),
            PLACE.to_owned(),
        ),
    ];
    for kind in BibleKind::ALL {
        files.push((
            format!("{}/{}", paths.bible, kind.file_name()),
            template(kind),
        ));
    }
    files
}

/// Makes the manuscript in `dir`, which must be new or an empty folder; its
/// folder name is the book's working title. Returns the files made.
pub fn new(dir: &Path) -> Result<Vec<String>, MakeError> {
    let title = dir
        .canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .map_or_else(
            || "My Novel".to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
    let files = files(&title);
    super::write_whole(dir, &files)?;
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

/// A Story Bible template: its `type:` and `status: not_started`, then a
/// heading for each part it needs with a placeholder under it.
fn template(kind: BibleKind) -> String {
    let mut text = format!(
        "---\ntype: {}\nstatus: not_started\n---\n\n# {}\n",
        kind.id(),
        kind.title()
    );
    for (number, part) in kind.parts().iter().enumerate() {
        text.push_str(&format!(
            "\n## {}\n\n{}\n",
            heading(kind, number, part),
            placeholder(part)
        ));
    }
    text
}

fn heading(kind: BibleKind, number: usize, part: &PartSpec) -> String {
    match (kind, part.share) {
        (BibleKind::BeatSheet, Some((from, to))) if from == to => {
            format!("{}. {} ({from}%)", number + 1, part.title)
        }
        (BibleKind::BeatSheet, Some((from, to))) => {
            format!("{}. {} ({from}–{to}%)", number + 1, part.title)
        }
        _ => part.title.to_owned(),
    }
}

/// "TBD", as a list when the part is one.
fn placeholder(part: &PartSpec) -> String {
    if part.min_items > 0 {
        vec!["- TBD"; part.min_items].join("\n")
    } else {
        "TBD".to_owned()
    }
}

//! Scrivener 3 projects: a `.scriv` folder whose binder (`<name>.scrivx`,
//! XML) gives the book's order, folders and titles, and whose documents'
//! text is RTF under `Files/Data/<UUID>/content.rtf`, each with its synopsis
//! in `synopsis.txt` beside it.
//!
//! Only the Draft folder is the book: Research, Trash and any other folder
//! of the binder are left out, and named in the report. In the Draft a
//! folder of documents is a chapter and each document a scene (cut again at
//! its own scene breaks); a folder of folders is a part, whose folders are
//! the chapters; a document on its own is a chapter of one scene. A
//! document with no text yet is a scene the outline plans (its synopsis or
//! title the outline's line), not a file.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use roxmltree::{Document, Node};

use super::book::{Chapter, Scene, scenes_of};
use super::source::{ImportError, rtf_to_markdown};

/// A Scrivener project, read.
pub struct Project {
    pub title: String,
    pub chapters: Vec<Chapter>,
    /// The binder's top folders other than the Draft, by title.
    pub left_out: Vec<String>,
}

/// Whether `source` is a Scrivener project: a `.scriv` folder, or the
/// `.scrivx` binder inside one.
pub fn is_project(source: &Path) -> bool {
    let extension = source
        .extension()
        .map(|extension| extension.to_string_lossy().to_lowercase());
    match extension.as_deref() {
        Some("scriv") => source.is_dir(),
        Some("scrivx") => source.is_file(),
        _ => false,
    }
}

/// Reads the project at `source` (its `.scriv` folder or its `.scrivx`).
pub fn read(source: &Path) -> Result<Project, ImportError> {
    let (folder, binder) = binder_path(source)?;
    let xml = std::fs::read_to_string(&binder).map_err(|error| ImportError::Unreadable {
        path: binder.clone(),
        source: error,
    })?;
    let document = Document::parse(&xml).map_err(|error| ImportError::Binder {
        path: binder.clone(),
        line: error.pos().row,
        column: error.pos().col,
        said: error.to_string(),
    })?;
    let root = document.root_element();
    let top: Vec<Node> = root
        .children()
        .find(|node| node.has_tag_name("Binder"))
        .map(|binder| items(binder).collect())
        .unwrap_or_default();
    let draft = top
        .iter()
        .find(|item| item.attribute("Type") == Some("DraftFolder"))
        .ok_or_else(|| ImportError::NoDraft(binder.clone()))?;
    let left_out = top
        .iter()
        .filter(|item| item.id() != draft.id())
        .map(|item| title_of(*item))
        .collect();
    let data = folder.join("Files").join("Data");
    let mut chapters = Vec::new();
    for outline in chapter_outlines(*draft) {
        let scenes: Vec<Vec<Scene>> = outline
            .documents
            .par_iter()
            .map(|(node, title)| document_scenes(&data, *node, title))
            .collect::<Result<_, _>>()?;
        chapters.push(Chapter {
            title: outline.title,
            scenes: scenes.into_iter().flatten().collect(),
        });
    }
    let title = folder.file_stem().map_or_else(
        || "Imported".to_owned(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    Ok(Project {
        title,
        chapters,
        left_out,
    })
}

/// The project's folder and its binder file.
fn binder_path(source: &Path) -> Result<(PathBuf, PathBuf), ImportError> {
    if source.is_file() {
        let folder = source
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        return Ok((folder, source.to_path_buf()));
    }
    let entries = std::fs::read_dir(source).map_err(|error| ImportError::Unreadable {
        path: source.to_path_buf(),
        source: error,
    })?;
    let mut binders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension.eq_ignore_ascii_case("scrivx"))
        })
        .collect();
    binders.sort();
    // Scrivener names the binder after the project.
    let named = source
        .file_stem()
        .map(|stem| source.join(stem).with_extension("scrivx"));
    let binder = match named.filter(|named| binders.contains(named)) {
        Some(named) => named,
        None => binders
            .into_iter()
            .next()
            .ok_or_else(|| ImportError::NoBinder(source.to_path_buf()))?,
    };
    Ok((source.to_path_buf(), binder))
}

/// The binder items directly under `node` (inside its `Children`, or the
/// `Binder` itself).
fn items<'a, 'input>(node: Node<'a, 'input>) -> impl Iterator<Item = Node<'a, 'input>> {
    let list = if node.has_tag_name("Binder") {
        Some(node)
    } else {
        node.children().find(|child| child.has_tag_name("Children"))
    };
    list.into_iter()
        .flat_map(|list| list.children())
        .filter(|child| child.has_tag_name("BinderItem"))
}

fn title_of(item: Node) -> String {
    item.children()
        .find(|child| child.has_tag_name("Title"))
        .and_then(|title| title.text())
        .map(str::trim)
        .filter(|title| !title.is_empty())
        .unwrap_or("Untitled")
        .to_owned()
}

/// A folder (or a document with documents under it).
fn has_items(item: Node) -> bool {
    item.attribute("Type") == Some("Folder") || items(item).next().is_some()
}

/// A chapter before its documents are read: its title, and its documents
/// in order with the titles their scenes take.
struct ChapterOutline<'a, 'input> {
    title: String,
    documents: Vec<(Node<'a, 'input>, String)>,
}

/// The Draft's chapters: a folder of documents is one; a folder of folders
/// is a part, whose folders are (its own text a chapter before them); a
/// document on its own is a chapter of one scene.
fn chapter_outlines<'a, 'input>(draft: Node<'a, 'input>) -> Vec<ChapterOutline<'a, 'input>> {
    let mut chapters = Vec::new();
    for item in items(draft) {
        let title = title_of(item);
        if items(item).any(has_items) {
            chapters.push(ChapterOutline {
                title: title.clone(),
                documents: vec![(item, title)],
            });
            chapters.extend(chapter_outlines(item));
            continue;
        }
        let mut documents = vec![(item, title.clone())];
        documents.extend(descendants(item));
        chapters.push(ChapterOutline { title, documents });
    }
    chapters
}

/// Every document under `item`, depth first, with its title.
fn descendants<'a, 'input>(item: Node<'a, 'input>) -> Vec<(Node<'a, 'input>, String)> {
    items(item)
        .flat_map(|child| {
            let mut found = vec![(child, title_of(child))];
            found.extend(descendants(child));
            found
        })
        .collect()
}

/// The scenes of one binder item: its text cut at its scene breaks, each
/// titled by the item; a document with no text yet is one planned scene; a
/// folder with no text of its own is none.
fn document_scenes(data: &Path, item: Node, title: &str) -> Result<Vec<Scene>, ImportError> {
    let Some(id) = item.attribute("UUID").or_else(|| item.attribute("ID")) else {
        return Ok(Vec::new());
    };
    // An id from the binder names a folder under Files/Data and nothing
    // else: one that would climb out of it is no document of the project.
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Ok(Vec::new());
    }
    let folder = data.join(id);
    let content = folder.join("content.rtf");
    let text = match std::fs::read(&content) {
        Ok(bytes) => rtf_to_markdown(&content, &bytes)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => {
            return Err(ImportError::Unreadable {
                path: content,
                source: error,
            });
        }
    };
    let synopsis = match std::fs::read_to_string(folder.join("synopsis.txt")) {
        Ok(synopsis) => Some(synopsis.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|synopsis| !synopsis.is_empty()),
        Err(_) => None,
    };
    let parts = scenes_of(&text);
    if parts.is_empty() {
        let planned = item.attribute("Type") != Some("Folder")
            && item.attribute("Type") != Some("DraftFolder");
        return Ok(if planned {
            vec![Scene {
                title: Some(title.to_owned()),
                synopsis,
                text: String::new(),
            }]
        } else {
            Vec::new()
        });
    }
    let count = parts.len();
    Ok(parts
        .into_iter()
        .enumerate()
        .map(|(at, text)| Scene {
            title: Some(if count == 1 {
                title.to_owned()
            } else {
                format!("{title} ({})", at + 1)
            }),
            synopsis: if at == 0 { synopsis.clone() } else { None },
            text,
        })
        .collect())
}

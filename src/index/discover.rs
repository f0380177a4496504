//! Finding the manuscript's Markdown files.

use std::path::Path;

use super::file::FilePath;

/// Folders that never hold manuscript files, whatever `.gitignore` says.
const SKIPPED_DIRS: &[&str] = &[".control-room", ".git", "node_modules", "target"];

/// Markdown files under `root` (`.md`, `.markdown`), relative, sorted.
pub fn markdown_files(root: &Path) -> Vec<FilePath> {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .filter_entry(|entry| {
            let name = entry.file_name().to_string_lossy();
            !(entry.file_type().is_some_and(|kind| kind.is_dir())
                && SKIPPED_DIRS.contains(&name.as_ref()))
        })
        .build();
    let mut files: Vec<FilePath> = walker
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter(|entry| {
            entry
                .path()
                .extension()
                .and_then(|extension| extension.to_str())
                .is_some_and(|extension| {
                    extension.eq_ignore_ascii_case("md")
                        || extension.eq_ignore_ascii_case("markdown")
                })
        })
        .filter_map(|entry| super::file::relative_path(root, entry.path()))
        .collect();
    files.sort();
    files
}

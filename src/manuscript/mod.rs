//! Making a manuscript: a new one to start from ([`new`]), or one from a
//! book the writer has ([`import`]).
//!
//! Whatever is made is made whole or not at all: the files are written into
//! a fresh folder beside the target, which takes the target's place only
//! once every file is written, and a target that already holds anything is
//! refused. Nothing the writer wrote is ever overwritten.

pub mod book;
pub mod cast;
pub mod import;
pub mod new;
mod rtf;
pub mod scrivener;
pub mod source;

use std::path::{Path, PathBuf};

/// Why a manuscript could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MakeError {
    #[error(
        "{} is not empty: a manuscript is made only in a new or empty folder, so nothing there is overwritten",
        .0.display()
    )]
    NotEmpty(PathBuf),
    #[error("{} is a file, not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("cannot write {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl MakeError {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MakeError + '_ {
        move |source| MakeError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Writes `files` (paths relative to the manuscript's root, and their
/// text) as the folder `target`. A new folder is written beside it first
/// and renamed to `target` once whole; an empty folder that is there is
/// filled in place (the writer's shell may stand in it), each file created
/// new. `target` may exist only as an empty folder. On any error nothing
/// made is left behind.
pub fn write_whole(target: &Path, files: &[(String, String)]) -> Result<(), MakeError> {
    refuse_unless_empty(target)?;
    if target.is_dir() {
        return fill_empty(target, files);
    }
    let parent = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(MakeError::io(&parent))?;
    let name = target.file_name().map_or_else(
        || "manuscript".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.making-"))
        .tempdir_in(&parent)
        .map_err(MakeError::io(&parent))?;
    for (relative, text) in files {
        let path = staging.path().join(relative);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(MakeError::io(folder))?;
        }
        std::fs::write(&path, text).map_err(MakeError::io(&target.join(relative)))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, target).map_err(|source| {
        let _ = std::fs::remove_dir_all(&staged);
        // Someone made the folder meanwhile: it is theirs, left as it is.
        match refuse_unless_empty(target) {
            Err(refused) => refused,
            Ok(()) => MakeError::Io {
                path: target.to_path_buf(),
                source,
            },
        }
    })
}

/// Fills the empty folder `target`, creating each file new (never over one
/// that appeared meanwhile); on an error, removes what it made.
fn fill_empty(target: &Path, files: &[(String, String)]) -> Result<(), MakeError> {
    let mut made: Vec<PathBuf> = Vec::new();
    let result = files.iter().try_for_each(|(relative, text)| {
        let path = target.join(relative);
        let mut missing = Vec::new();
        let mut folder = path.parent();
        while let Some(dir) = folder.filter(|dir| !dir.exists()) {
            missing.push(dir.to_path_buf());
            folder = dir.parent();
        }
        for dir in missing.into_iter().rev() {
            std::fs::create_dir(&dir).map_err(MakeError::io(&dir))?;
            made.push(dir);
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(MakeError::io(&path))?;
        made.push(path.clone());
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(MakeError::io(&path))
    });
    if result.is_err() {
        for path in made.iter().rev() {
            let _ = if path.is_dir() {
                std::fs::remove_dir(path)
            } else {
                std::fs::remove_file(path)
            };
        }
    }
    result
}

/// A target that exists must be an empty folder.
pub fn refuse_unless_empty(target: &Path) -> Result<(), MakeError> {
    match std::fs::metadata(target) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(MakeError::Io {
            path: target.to_path_buf(),
            source,
        }),
        Ok(metadata) if !metadata.is_dir() => Err(MakeError::NotAFolder(target.to_path_buf())),
        Ok(_) => {
            let mut entries = std::fs::read_dir(target).map_err(MakeError::io(target))?;
            match entries.next() {
                None => Ok(()),
                Some(_) => Err(MakeError::NotEmpty(target.to_path_buf())),
            }
        }
    }
}

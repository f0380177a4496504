//! The workspace index: files, the writer's model of them, and cross-file lookups.
//!
//! Architecture invariant: nothing here knows about LSP. Positions are byte
//! offsets ([`crate::text::TextRange`]); paths are relative to the root.

pub mod bible;
pub mod book;
pub mod cache;
pub mod calendar;
pub mod catalog;
pub mod clock;
pub mod config;
pub mod discover;
pub mod file;
pub mod gender;
pub mod lexicon;
pub mod mentions;
pub mod model;
pub mod motifs;
pub mod names;
pub mod outline;
mod rescan;
pub mod summary;
pub mod tracking;
pub mod tracks;
pub mod variants;
pub mod voice;
pub mod workspace;

pub use bible::{Bible, BibleKind, BibleStatus};
pub use book::{Book, BookScene};
pub use cache::IndexCache;
pub use catalog::Catalog;
pub use config::Config;
pub use file::{FileContent, FileKind, FilePath, SourceFile};
pub use lexicon::Lexicon;
pub use mentions::Mention;
pub use model::{Card, CardKind, LifeStatus, Outline, OutlineEntry, Scene};
pub use voice::VoiceGold;
pub use workspace::{Workspace, find_root};

/// The bundled example for the library's own tests.
#[cfg(test)]
pub(crate) mod test_support {
    use std::path::Path;

    /// The bundled example's folder, read in place.
    pub(crate) fn example_root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road")
    }

    /// A copy of the bundled example in a temporary folder, loaded.
    pub(crate) fn example_copy() -> (tempfile::TempDir, super::Workspace) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        copy(&example_root(), dir.path());
        let workspace = super::Workspace::load(dir.path());
        (dir, workspace)
    }

    /// A copy of the bundled example whose theme lists `motifs` (the items
    /// of a "Motifs" section, one a line), loaded.
    pub(crate) fn example_with_motifs(motifs: &str) -> (tempfile::TempDir, super::Workspace) {
        let (dir, _) = example_copy();
        let theme = dir.path().join("Story/Bible/theme.md");
        let text = std::fs::read_to_string(&theme).expect("the example's theme");
        std::fs::write(&theme, format!("{text}\n## Motifs\n\n{motifs}"))
            .expect("the theme written");
        let workspace = super::Workspace::load(dir.path());
        (dir, workspace)
    }

    /// Holds every thread of rayon's global pool until the answer is
    /// dropped: work sent there meanwhile waits, as it would behind a
    /// pass over the whole manuscript.
    pub(crate) fn hold_rayons_pool() -> impl Drop {
        use std::sync::{Arc, Barrier, Condvar, Mutex};
        struct Release(Arc<(Mutex<bool>, Condvar)>);
        impl Drop for Release {
            fn drop(&mut self) {
                let (lock, freed) = &*self.0;
                *lock.lock().unwrap() = true;
                freed.notify_all();
            }
        }
        let threads = rayon::current_num_threads();
        let all_held = Arc::new(Barrier::new(threads + 1));
        let released = Arc::new((Mutex::new(false), Condvar::new()));
        for _ in 0..threads {
            let (all_held, released) = (all_held.clone(), released.clone());
            rayon::spawn(move || {
                all_held.wait();
                let (lock, freed) = &*released;
                let mut free = lock.lock().unwrap();
                while !*free {
                    free = freed.wait(free).unwrap();
                }
            });
        }
        all_held.wait();
        Release(released)
    }

    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("a folder");
        for entry in std::fs::read_dir(from).expect("a folder").flatten() {
            let target = to.join(entry.file_name());
            if entry.file_type().expect("a file type").is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).expect("a copy");
            }
        }
    }
}

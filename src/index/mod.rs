//! The workspace index: files, the writer's model of them, and cross-file lookups.
//!
//! Architecture invariant: nothing here knows about LSP. Positions are byte
//! offsets ([`crate::text::TextRange`]); paths are relative to the root.
//!
//! ## Parts
//!
//! `SourceFile` (one file understood alone), `Catalog` (what files know of each other; a scene
//! whose prose alone changed keeps it, its `Arc` swapped where the catalog, the clock and the
//! tracking keep it; its maps are shared `Arc`s), mentions (one Aho-Corasick automaton, one
//! spelling a name, the text's no-break spaces and line breaks read as spaces; `rescan` finds a
//! typed-in scene's mentions and near names again only around the edit, and the whole scene
//! where the Markdown outside it changed, held to a fresh reading by
//! `rescan_equals_a_fresh_reading`), `Workspace` (all of it in `Arc`s and its maps by file
//! persistent maps (imbl), which a clone shares: a clone is a snapshot for a few reference
//! counts), `find_root`; `cache` each file's syntax on disk by the hash of its text
//! (`.control-room/index/syntax.bin`, this build's only, its ranges checked against the text;
//! read when a file first needs it (`LazyCache`), never for a start's first diagnostics: the
//! cards and outline are read for the catalog alone, the few files only a parse reads are
//! parsed and counted as read through it once it is read; its folder is made at `initialize`,
//! before an editor watches the manuscript's folders), so a restart on an unchanged manuscript
//! parses nothing; `book` the book's structure from the outline (title heading, scenes in story
//! order, the chapter each stands under), which compiling, targets and statistics share.
//! `summary` a card's first paragraph and `outline` the outline's headings and entries, each
//! from the blocks or, for a cold start's first diagnostics, by a line scanner that answers
//! only for the plain shape (`SourceFile::catalogued`: a card or the outline read for the
//! catalog alone, parsed after). Reading never fails: bad input is a problem on the file.
//! `variants` the manuscript's consistent spellings of names that differ from their cards
//! (found per scene with its mentions, summed once per snapshot); `tracks` what a scene's
//! `tracks:` says happens to objects and wounds, and `tracking` the tracked scenes, the
//! carriers and the scenes by day and time, found once per change; `gender` a character's
//! grammatical gender (card, titles, summary), found once per card; `lexicon` the manuscript's
//! own words (cards' names and aliases, the dictionary file, `[language] words`), found once
//! per change; `calendar` the story's dates (`StoryDate`), the calendar they are counted in
//! (Gregorian, or `[calendar] months`), ages, times of day as windows of minutes and travel
//! times; `clock` the story clock, found once per change: when each dated scene happens, the
//! roads between places (location cards' `travel:`, a petgraph graph whose shortest way is the
//! fastest) and each character's itinerary. `bible` the Story Bible's four templates
//! (protagonist, beat sheet, theme, world rules): their status, their required parts found by
//! heading, what each misses, the beats' scene ids and the world rules' names; `motifs` the
//! theme's Motifs list and one automaton for their words. `voice` the voice bundle's gold
//! standard (its lock, summary, passage and measured traits). A file over 1 MiB, read or open
//! in the editor, is kept as text with its front matter, its body not analysed (`too-large`): a
//! Markdown tree costs about fifty times its text.

pub mod bible;
pub mod book;
pub mod cache;
pub mod calendar;
pub mod catalog;
pub mod clock;
pub mod config;
pub mod discover;
pub mod fields;
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

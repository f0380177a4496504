//! The workspace index: files, the writer's model of them, and cross-file lookups.
//!
//! Architecture invariant: nothing here knows about LSP. Positions are byte
//! offsets ([`crate::text::TextRange`]); paths are relative to the root.

pub mod bible;
pub mod book;
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
pub mod names;
pub mod tracking;
pub mod tracks;
pub mod variants;
pub mod voice;
pub mod workspace;

pub use bible::{Bible, BibleKind, BibleStatus};
pub use book::{Book, BookScene};
pub use catalog::Catalog;
pub use config::Config;
pub use file::{FileContent, FileKind, FilePath, SourceFile};
pub use lexicon::Lexicon;
pub use mentions::Mention;
pub use model::{Card, CardKind, LifeStatus, Outline, OutlineEntry, Scene};
pub use voice::VoiceGold;
pub use workspace::{Workspace, find_root};

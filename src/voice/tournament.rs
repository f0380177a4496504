//! A voice tournament (§12.3) as asked for and as it came out: the test
//! passage, the contestants, each one's version or why none, and where its
//! file goes (`tournaments/T-….md` in the voice folder). Playing it is
//! `play`; its file is `file`.

use super::VoiceError;
use super::contestant::{Contestant, TestPassage};
use crate::index::{FilePath, Workspace};
use crate::prose::voice::VoiceTraits;

/// The most contestants in one tournament.
pub const MAX_CONTESTANTS: usize = 8;
/// The test passage's length when neither the writer nor a selection says.
pub const DEFAULT_WORDS: u32 = 400;
/// The tournament files' folder, in the voice folder.
pub const TOURNAMENTS_FOLDER: &str = "tournaments";

/// A tournament as asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tournament {
    pub id: String,
    /// 1, or 2 and more for a cross of an earlier round's versions.
    pub round: u32,
    /// The tournament whose versions a later round crosses.
    pub parent: Option<String>,
    pub passage: TestPassage,
    pub contestants: Vec<Contestant>,
    /// About how many words each version runs to.
    pub words: u32,
}

/// What one contestant wrote, or why nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub contestant: Contestant,
    pub outcome: Result<Version, super::Unusable>,
}

/// A contestant's usable version.
#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    pub text: String,
    /// `provider/model` as the server named it.
    pub served_by: String,
    pub traits: VoiceTraits,
    /// How many times the model was asked.
    pub attempts: usize,
    pub elapsed_ms: u128,
}

impl Tournament {
    /// A round-one tournament of `contestants` (one to eight, each once).
    pub fn new(
        passage: TestPassage,
        contestants: Vec<Contestant>,
        words: Option<u32>,
    ) -> Result<Tournament, VoiceError> {
        if contestants.is_empty() || contestants.len() > MAX_CONTESTANTS {
            return Err(VoiceError::Contestants {
                given: contestants.len(),
                max: MAX_CONTESTANTS,
            });
        }
        for (at, contestant) in contestants.iter().enumerate() {
            if contestants[..at]
                .iter()
                .any(|other| other.label.eq_ignore_ascii_case(&contestant.label))
            {
                return Err(VoiceError::ContestantTwice(contestant.label.clone()));
            }
        }
        let words = match (words, &passage) {
            (Some(words), _) => words,
            (None, TestPassage::Selection { text, .. }) => {
                (text.split_whitespace().count() as u32).clamp(100, 1500)
            }
            (None, _) => DEFAULT_WORDS,
        };
        if !(50..=3000).contains(&words) {
            return Err(VoiceError::PassageLength(words));
        }
        Ok(Tournament {
            id: crate::storage::new_id(&format!(
                "T-{}-",
                jiff::Timestamp::now().strftime("%Y%m%d")
            )),
            round: 1,
            parent: None,
            passage,
            contestants,
            words,
        })
    }

    /// Where its file goes: `tournaments/<id>.md` in the voice folder.
    pub fn path(&self, workspace: &Workspace) -> FilePath {
        tournament_path(workspace, &self.id)
    }
}

/// The file of tournament `id`.
pub fn tournament_path(workspace: &Workspace, id: &str) -> FilePath {
    workspace
        .config()
        .paths
        .voice_file(&format!("{TOURNAMENTS_FOLDER}/{id}.md"))
        .into()
}

/// The traits of a version's prose.
pub fn measure(text: &str) -> VoiceTraits {
    let syntax = crate::syntax::MarkdownParser::parse_fresh(text);
    VoiceTraits::measure(text, &crate::prose::Prose::analyse(text, &syntax), None)
}

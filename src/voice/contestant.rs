//! Who competes in a voice tournament: a voice strategy (the spec's
//! sentence rhythm, metaphor density and interiority styles, and its
//! ACTION, CHARACTER, DIALOGUE and BALANCED), another model on the same
//! server, or both; and the passage they all write.

/// The strategies a contestant may name, with what its prompt asks for.
pub const STRATEGIES: &[(&str, &str)] = &[
    (
        "sparse",
        "Sparse: short declarative sentences, most under twelve words. Plain words and \
         almost no figures of speech. Show by action and concrete detail; no commentary \
         on feelings.",
    ),
    (
        "lyrical",
        "Lyrical: long, flowing sentences with rhythm and subordinate clauses. Rich in \
         imagery: a simile or metaphor in most paragraphs. Let the senses and the \
         landscape carry the feeling.",
    ),
    (
        "close",
        "Close: deep third person. The narration thinks in the point-of-view character's \
         own words: what they notice, remember, fear and want. Sentences follow thought, \
         some long, some fragments.",
    ),
    (
        "distant",
        "Distant: an outside, camera-eye narrator. Only what can be seen and heard, no \
         thoughts; measured sentences of middling length; feeling left to the reader.",
    ),
    (
        "action",
        "Action: fast pacing and physical detail. Short paragraphs, strong verbs, \
         movement in every sentence.",
    ),
    (
        "character",
        "Character: the internal landscape and psychological truth. Motive, memory and \
         feeling beneath the action.",
    ),
    (
        "dialogue",
        "Dialogue: the passage is carried by talk. Most of it in dialogue, each voice \
         distinct, little narration between the lines.",
    ),
    (
        "balanced",
        "Balanced: action, dialogue and interiority in proportion; sentences varied in \
         length; figures where they earn their place.",
    ),
];

/// One contestant: what it is called in the tournament file, the voice its
/// prompt asks for, and the model it asks when it names one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contestant {
    /// As the writer (or the Foreman) wrote it: `sparse`, `lyrical@qwen2.5:7b`.
    pub label: String,
    /// The strategy's name, or the writer's own words for the voice.
    pub strategy: String,
    /// What the prompt asks for.
    pub instructions: String,
    /// A model on the configured server, instead of the writer agent's.
    pub model: Option<String>,
}

/// The longest a contestant's label may be, in characters.
const MAX_LABEL_CHARS: usize = 200;

/// Why a contestant cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContestantError {
    #[error("a contestant is empty: name a strategy or a model")]
    Empty,
    #[error("a contestant is {0} characters long; {MAX_LABEL_CHARS} at most")]
    TooLong(usize),
    #[error("`{0}` names no model after `@`")]
    NoModel(String),
}

impl Contestant {
    /// Reads `spec`: a strategy (`sparse`), a model (`@qwen2.5:7b`, or
    /// `model:qwen2.5:7b`), both (`sparse@qwen2.5:7b`), or the writer's own
    /// words for a voice ("terse noir, present tense"), asked for as written.
    pub fn parse(spec: &str) -> Result<Contestant, ContestantError> {
        let label = spec.split_whitespace().collect::<Vec<_>>().join(" ");
        if label.is_empty() {
            return Err(ContestantError::Empty);
        }
        if label.chars().count() > MAX_LABEL_CHARS {
            return Err(ContestantError::TooLong(label.chars().count()));
        }
        let (strategy, model) = match label.strip_prefix("model:") {
            Some(model) => ("", Some(model)),
            None => match label.rsplit_once('@') {
                Some((strategy, model)) if !model.contains(' ') => (strategy, Some(model)),
                _ => (label.as_str(), None),
            },
        };
        if model.is_some_and(str::is_empty) {
            return Err(ContestantError::NoModel(label));
        }
        let strategy = if strategy.trim().is_empty() {
            "balanced"
        } else {
            strategy.trim()
        };
        let instructions = match STRATEGIES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(strategy))
        {
            Some((_, instructions)) => (*instructions).to_owned(),
            None => format!("In the writer's words: {strategy}."),
        };
        Ok(Contestant {
            strategy: strategy.to_lowercase(),
            instructions,
            model: model.map(str::to_owned),
            label,
        })
    }

    /// A contestant of round two: `lead`'s voice with something of `other`'s,
    /// in the share `lead_percent`.
    pub fn crossed(
        lead: (&str, &str),
        other: (&str, &str),
        lead_percent: u8,
        model: Option<String>,
    ) -> Contestant {
        let (lead_label, lead_text) = lead;
        let (other_label, other_text) = other;
        Contestant {
            label: format!("{lead_percent}% {lead_label} × {other_label}"),
            strategy: "crossed".to_owned(),
            instructions: format!(
                "A cross of two voices the writer liked: about {lead_percent}% the voice of \
                 version “{lead_label}” and {}% that of version “{other_label}”. Take the \
                 first's rhythm and distance, and borrow what the second does best.\n\n\
                 Version “{lead_label}”:\n{lead_text}\n\nVersion “{other_label}”:\n{other_text}",
                100 - lead_percent
            ),
            model,
        }
    }
}

/// The passage every contestant writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestPassage {
    /// A scene of the outline: its beat, told in each voice.
    Scene { id: String },
    /// A passage of the manuscript, re-voiced.
    Selection {
        path: String,
        start_line: usize,
        end_line: usize,
        text: String,
    },
    /// The writer's description of a passage ("Mickey confronts his brother
    /// about money").
    Description(String),
}

impl TestPassage {
    /// A scene id alone is the scene; anything else is a description.
    pub fn from_words(words: &str) -> TestPassage {
        let words = words.trim();
        if words.starts_with("SCN-") && !words.contains(char::is_whitespace) {
            TestPassage::Scene {
                id: words.to_owned(),
            }
        } else {
            TestPassage::Description(words.to_owned())
        }
    }

    /// One line for the tournament file's front matter and messages.
    pub fn label(&self) -> String {
        match self {
            TestPassage::Scene { id } => id.clone(),
            TestPassage::Selection {
                path,
                start_line,
                end_line,
                ..
            } => format!("{path}:{start_line}-{end_line}"),
            TestPassage::Description(text) => crate::text::clip(text, 120).to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contestant_is_a_strategy_a_model_both_or_the_writers_words() {
        let sparse = Contestant::parse("Sparse").unwrap();
        assert_eq!(sparse.strategy, "sparse");
        assert!(sparse.instructions.starts_with("Sparse: short"));
        assert_eq!(sparse.model, None);

        let both = Contestant::parse("lyrical@qwen2.5:7b").unwrap();
        assert_eq!(
            (both.strategy.as_str(), both.model.as_deref()),
            ("lyrical", Some("qwen2.5:7b"))
        );
        let model = Contestant::parse("model:llama3").unwrap();
        assert_eq!(
            (model.strategy.as_str(), model.model.as_deref()),
            ("balanced", Some("llama3"))
        );
        let own = Contestant::parse("terse noir, present  tense").unwrap();
        assert_eq!(own.label, "terse noir, present tense");
        assert_eq!(
            own.instructions,
            "In the writer's words: terse noir, present tense."
        );
        assert!(Contestant::parse("  ").is_err());
        assert!(Contestant::parse("sparse@").is_err());
    }

    #[test]
    fn a_scene_id_is_a_scene_and_anything_else_a_description() {
        assert_eq!(
            TestPassage::from_words(" SCN-the-gate "),
            TestPassage::Scene {
                id: "SCN-the-gate".into()
            }
        );
        assert_eq!(
            TestPassage::from_words("SCN-the-gate at night"),
            TestPassage::Description("SCN-the-gate at night".into())
        );
    }
}

//! `pov-leak`: in a scene told from one character's point of view, the
//! narration gives another character's thoughts or feelings directly: "he
//! felt a stab of fear", "Tomas wondered", "his heart sank", when the scene
//! is Iria's. What the point-of-view character perceives or infers is not a
//! leak: "she knew he was afraid", "he seemed to think", "he must have felt".
//!
//! A leak is another character (by name, or a pronoun `referents` resolves
//! to them) as the subject of a verb of inner life in any of its forms
//! (think, wonder, fear, hate: "thought", "hates", "dreading"; felt + a
//! feeling), of a state of mind ("was afraid", "was inwardly furious"), or
//! their heart, stomach or mind doing what only its owner can feel (sank,
//! lurched, raced). In the first person, "I" and "my" are the point of
//! view's character ("I knew Kael was afraid" is no leak). Not
//! leaks: dialogue, questions, a sentence where the point-of-view character
//! comes first ("She knew he was afraid"), inference and appearance
//! ("seemed", "must", "as if", "perhaps"), hypotheticals and modals ("if",
//! "would", "might") before the verb, and the past perfect of memory
//! ("Tomas had feared").
//! Information by default: a writer may mean to slip.

use super::referents::Referents;
use super::{Code, Diagnostic, LazyProse, Severity};
use crate::index::{CardKind, FilePath, SourceFile, Workspace};
use crate::prose::verbs::Verbs;
use crate::prose::{self, Prose, Sentence};
use crate::text::TextRange;

/// Verbs whose subject is the one who thinks or feels them, by lemma (any
/// form: "wondered", "hates", "dreading").
const INNER_VERBS: &[&str] = &[
    "think", "wonder", "realise", "realize", "fear", "hope", "wish", "long", "worry", "suspect",
    "believe", "doubt", "regret", "resent", "dread", "decide", "yearn", "ponder", "muse",
    "reflect", "despair", "hate", "loathe", "detest", "envy", "fret", "crave", "mourn", "pity",
];

fn is_inner_verb(word: &str) -> bool {
    static VERBS: std::sync::LazyLock<Verbs> = std::sync::LazyLock::new(|| Verbs::of(INNER_VERBS));
    // "long" and "pity" as words of their own are an adjective and a noun.
    !matches!(
        word,
        "long" | "pity" | "hope" | "fear" | "doubt" | "envy" | "dread"
    ) && VERBS.contains(word)
}

/// States of mind that "was" gives its subject ("Kael was afraid", "he was
/// inwardly furious"): felt, not seen.
const STATES: &[&str] = &[
    "afraid",
    "frightened",
    "terrified",
    "scared",
    "angry",
    "furious",
    "ashamed",
    "nervous",
    "anxious",
    "jealous",
    "guilty",
    "relieved",
    "glad",
    "sorry",
    "miserable",
    "desperate",
    "uneasy",
    "lonely",
    "certain",
    "sure",
    "proud",
    "bitter",
    "homesick",
    "heartbroken",
    "envious",
    "resentful",
    "worried",
    "determined",
];

/// What "felt" must be followed by to be a feeling, not a touch.
const FEELINGS: &[&str] = &[
    "afraid",
    "angry",
    "ashamed",
    "sad",
    "happy",
    "guilty",
    "fear",
    "anger",
    "relief",
    "shame",
    "dread",
    "joy",
    "grief",
    "hope",
    "despair",
    "nervous",
    "anxious",
    "lonely",
    "sick",
    "foolish",
    "proud",
    "jealous",
    "betrayed",
    "uneasy",
    "sorry",
    "stab",
    "pang",
    "surge",
    "wave",
    "rush",
    "flicker",
    "twinge",
    "jolt",
    "knot",
    "flood",
    "prickle",
    "glow",
    "thrill",
    "shiver",
    "chill",
    "hot",
    "cold",
    "trapped",
    "small",
    "alone",
    "certain",
    "sure",
    "tired",
    "weary",
    "hollow",
    "empty",
    "calm",
    "panic",
    "rage",
    "love",
    "hatred",
    "envy",
    "pity",
    "contempt",
    "triumph",
    "warmth",
    "tenderness",
    "disgust",
    "horror",
];

/// Parts whose inner motions only their owner feels.
const INNER_PARTS: &[&str] = &[
    "heart", "stomach", "gut", "mind", "pulse", "chest", "throat",
];
const INNER_MOTIONS: &[&str] = &[
    "sank",
    "lurched",
    "clenched",
    "tightened",
    "twisted",
    "pounded",
    "raced",
    "ached",
    "leapt",
    "fluttered",
    "churned",
    "swelled",
    "soared",
    "reeled",
    "hammered",
    "dropped",
    "constricted",
    "whirled",
    "skipped",
];

/// Words that make the sentence an inference, an appearance, a hypothesis or a memory.
const FRAMES: &[&str] = &[
    "seemed",
    "seems",
    "appeared",
    "appears",
    "must",
    "perhaps",
    "probably",
    "maybe",
    "clearly",
    "obviously",
    "surely",
    "if",
    "would",
    "might",
    "could",
    "may",
    "as if",
    "though",
    "had",
    "likely",
    "doubtless",
    "evidently",
    "apparently",
    "unless",
];

/// Adverbs that may stand between a subject and its verb.
fn is_adverb(word: &str) -> bool {
    (word.ends_with("ly") && word.len() > 4)
        || matches!(
            word,
            "then" | "still" | "also" | "only" | "now" | "again" | "suddenly"
        )
}

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    lazy: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(scene) = file.scene() else {
        return;
    };
    let Some(pov_field) = &scene.pov else {
        return;
    };
    let catalog = workspace.catalog();
    let Some(pov) = catalog
        .resolve_card(&pov_field.text, &[CardKind::Character])
        .map(|card| card.path.clone())
    else {
        return;
    };
    let prose = lazy.get();
    let referents = lazy.referents(workspace);
    let reader = Reader {
        text: &file.text,
        prose,
        referents,
        mentions: workspace.mentions(&file.path),
        pov: &pov,
    };
    // One buffer for every sentence's words.
    let mut words = Vec::new();
    for sentence in prose.sentences.iter().filter(|sentence| !sentence.heading) {
        let Some((who, range)) = reader.leak(sentence, &mut words) else {
            continue;
        };
        let Some(card) = catalog.card(&who).and_then(|file| file.card()) else {
            continue;
        };
        let pov_name = catalog
            .card(&pov)
            .and_then(|file| file.card())
            .map_or(pov_field.text.as_str(), |card| card.display_name());
        diagnostics.push(
            Diagnostic::new(
                file,
                range,
                Severity::Information,
                Code::PovLeak,
                format!(
                    "The scene is told from {pov_name}'s point of view, but “{}” gives {}'s inner life directly",
                    range.slice(&file.text),
                    card.display_name()
                ),
            )
            .with_related(
                &file.path,
                pov_field.range,
                format!("pov: {}", pov_field.text),
            ),
        );
    }
}

struct Reader<'a> {
    text: &'a str,
    prose: &'a Prose,
    referents: &'a Referents,
    mentions: &'a [crate::index::Mention],
    pov: &'a FilePath,
}

impl Reader<'_> {
    fn lower(&self, index: usize) -> std::borrow::Cow<'_, str> {
        crate::prose::lowercase(self.prose.tokens[index].text(self.text))
    }

    /// The character a word at `index` names or means, and whether possessive.
    fn person_at(&self, index: usize) -> Option<(FilePath, bool, usize)> {
        let token = &self.prose.tokens[index];
        let word = token.text(self.text);
        let lower = crate::prose::lowercase(word);
        // The first person is the narrator, the point of view's character.
        if super::referents::pronoun_gender(&lower).is_some() || matches!(&*lower, "i" | "my") {
            let possessive = matches!(&*lower, "his" | "her" | "my");
            return self
                .referents
                .of_pronoun(index)
                .map(|card| (card.clone(), possessive, token.range.start));
        }
        if !word.starts_with(char::is_uppercase) {
            return None;
        }
        let end = prose::without_possessive(self.text, token.range).end;
        // A name of several words ("Mr. Bennet") ends at this token: the
        // mention starting last at or before it, found by halving.
        let at = self
            .mentions
            .partition_point(|mention| mention.range.start <= token.range.start);
        self.mentions[..at]
            .last()
            .filter(|mention| mention.range.end == end)
            .map(|mention| {
                let start = mention
                    .title()
                    .map_or(mention.range.start, |title| title.start);
                (mention.card.clone(), mention.possessive, start)
            })
    }

    /// The first leak of a sentence: who, and the words that leak (`words`
    /// is a buffer for the sentence's words outside quotes).
    fn leak(&self, sentence: &Sentence, words: &mut Vec<usize>) -> Option<(FilePath, TextRange)> {
        let tokens = sentence.tokens.clone();
        let last = self.prose.tokens[tokens.end - 1];
        if last.is_punct(self.text, '?') || last.quoted {
            return None;
        }
        words.clear();
        words.extend(tokens.clone().filter(|&index| {
            let token = &self.prose.tokens[index];
            token.is_word() && !token.quoted
        }));
        let words = &*words;
        for (at, &index) in words.iter().enumerate() {
            let Some((who, possessive, start)) = self.person_at(index) else {
                continue;
            };
            if &who == self.pov {
                // "She knew he was afraid": the point of view frames the rest.
                return None;
            }
            let mut next = at + 1;
            while words
                .get(next)
                .is_some_and(|&word| is_adverb(&self.lower(word)))
            {
                next += 1;
            }
            let verb = *words.get(next)?;
            // An inference or a hypothesis frames what follows it; what the
            // thought itself holds ("wondered whether … would") does not count.
            if words[..next]
                .iter()
                .any(|&word| FRAMES.contains(&&*self.lower(word)))
            {
                return None;
            }
            // Only adjacent words: "Tomas, who felt …" is a clause of its own.
            if verb != index + 1 + (next - at - 1) {
                continue;
            }
            let verb_word = self.lower(verb);
            let end = if possessive {
                let part = &*verb_word;
                let motion = words.get(next + 1).map(|&word| self.lower(word));
                (INNER_PARTS.contains(&part)
                    && motion.is_some_and(|motion| INNER_MOTIONS.contains(&&*motion)))
                .then(|| words[next + 1])
            } else if is_inner_verb(&verb_word) {
                Some(verb)
            } else if verb_word == "felt" {
                // "felt a stab of fear": up to the last word of the feeling.
                words[next + 1..]
                    .iter()
                    .take(4)
                    .rev()
                    .find(|&&word| FEELINGS.contains(&&*self.lower(word)))
                    .copied()
            } else if matches!(&*verb_word, "was" | "were" | "is") {
                // "was afraid", "was inwardly furious": past its adverbs.
                let mut state = next + 1;
                while words
                    .get(state)
                    .is_some_and(|&word| is_adverb(&self.lower(word)))
                {
                    state += 1;
                }
                words
                    .get(state)
                    .filter(|&&word| STATES.contains(&&*self.lower(word)))
                    .copied()
            } else {
                None
            };
            if let Some(end) = end {
                let range = TextRange::new(start, self.prose.tokens[end].range.end);
                return Some((who, range));
            }
        }
        None
    }
}

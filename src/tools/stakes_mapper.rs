//! `stakes_mapper`: who is on stage in each scene, how much is said to be at
//! stake, and what questions the scene leaves hanging. A word count, not a
//! reading: it measures the vocabulary of stakes, nothing more.
//!
//! Arguments: `scene_path` or `scene_id` (optional: map only that scene,
//! which must have a file; it need not be in the outline).
//!
//! Without a scene argument, walks the scenes the outline lists, in story
//! order (each once); scenes without a file are listed in `without_file`.
//! For each scene, over the body's prose (headings left out, dialogue
//! included):
//! - `characters`: the character cards whose name or alias the prose
//!   mentions, [{name, mentions}] in order of first mention.
//! - `stake_words`: each word of [`STAKES_WORDS`] used, [{word, count}],
//!   most used first (ties alphabetical). Words are compared in lower case
//!   with possessives stripped; only the exact forms listed count.
//! - `stake_word_count` and `stakes_per_1000_words` (one decimal).
//! - `questions`: the number of sentences, dialogue included, whose last
//!   mark (closing quotation marks aside) is `?`.
//! - `open_threads`: the first five of those questions, [{line (1-based),
//!   text (as written, at most 200 characters)}].
//!
//! Output: `scenes` ([{id, position (1-based, null outside the outline),
//! path, words, characters, stake_words, stake_word_count,
//! stakes_per_1000_words, questions, open_threads}]), `without_file`, and
//! `totals` ({scenes, words, stake_words, stakes_per_1000_words, questions,
//! top_stake_words: the ten most used, highest: {id,
//! stakes_per_1000_words} or null}).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    CharacterMention, FileRef, ProseFigures, Summary, ToolArgs, ToolContext, ToolError, ToolOutput,
    body_sentences, characters_mentioned, excerpt, line_number, normalised_word, one_line,
    per_thousand, scene_target, story_scenes,
};
use crate::index::{SourceFile, Workspace};
use crate::prose::{Prose, TokenKind};

/// The stakes lexicon: words that put something at risk, in every form
/// that counts. Shared with `reader_experience_simulator`.
pub(super) const STAKES_WORDS: &[&str] = &[
    "afraid",
    "betray",
    "betrayed",
    "bleed",
    "bleeding",
    "blood",
    "danger",
    "dangerous",
    "dead",
    "death",
    "deaths",
    "die",
    "died",
    "dies",
    "drown",
    "drowned",
    "drowning",
    "dying",
    "escape",
    "escaped",
    "fail",
    "failed",
    "failing",
    "fails",
    "failure",
    "fear",
    "feared",
    "kill",
    "killed",
    "killing",
    "kills",
    "lie",
    "lied",
    "lies",
    "lose",
    "loses",
    "losing",
    "loss",
    "lost",
    "must",
    "never",
    "promise",
    "promised",
    "risk",
    "risked",
    "ruin",
    "ruined",
    "save",
    "saved",
    "secret",
    "secrets",
    "threat",
    "threaten",
    "threatened",
    "trap",
    "trapped",
    "war",
    "warn",
    "warned",
    "warning",
];

const OPEN_THREADS: usize = 5;
const TOP: usize = 10;

/// How often each word of [`STAKES_WORDS`] occurs in the body's prose.
pub(super) fn stake_counts(text: &str, prose: &Prose) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for sentence in body_sentences(prose) {
        for token in prose.sentence_tokens(sentence) {
            if !token.is_word() {
                continue;
            }
            let word = normalised_word(token.text(text));
            if let Some(stake) = STAKES_WORDS.iter().find(|stake| **stake == word) {
                *counts.entry(*stake).or_default() += 1;
            }
        }
    }
    counts
}

/// The body's questions: (1-based line, text as written).
pub(super) fn questions(file: &SourceFile, prose: &Prose) -> Vec<(u32, String)> {
    let text = &*file.text;
    body_sentences(prose)
        .filter(|sentence| {
            prose
                .sentence_tokens(sentence)
                .iter()
                .rev()
                .find(|token| token.kind != TokenKind::CloseQuote)
                .is_some_and(|token| token.is_punct(text, '?'))
        })
        .map(|sentence| {
            let written = text
                .get(sentence.range.start..sentence.range.end)
                .unwrap_or("");
            (line_number(file, sentence.range.start), excerpt(written))
        })
        .collect()
}

/// One scene's stakes.
struct SceneStakes {
    id: String,
    position: Option<usize>,
    path: String,
    words: usize,
    characters: Vec<CharacterMention>,
    /// Most used first.
    stake_words: Vec<(&'static str, usize)>,
    stake_word_count: usize,
    questions: Vec<(u32, String)>,
}

impl SceneStakes {
    fn of(workspace: &Workspace, id: &str, position: Option<usize>, file: &SourceFile) -> Self {
        let prose = file.analyse_prose();
        let mut stake_words: Vec<(&'static str, usize)> =
            stake_counts(&file.text, &prose).into_iter().collect();
        stake_words.sort_by_key(|stake| std::cmp::Reverse(stake.1));
        SceneStakes {
            id: id.to_owned(),
            position,
            path: file.path.to_string(),
            words: ProseFigures::of(&prose).words,
            characters: characters_mentioned(workspace, file),
            stake_word_count: stake_words.iter().map(|(_, count)| count).sum(),
            stake_words,
            questions: questions(file, &prose),
        }
    }

    fn density(&self) -> f64 {
        per_thousand(self.stake_word_count, self.words)
    }

    fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "position": self.position,
            "path": self.path,
            "words": self.words,
            "characters": self
                .characters
                .iter()
                .map(|c| json!({"name": c.name, "mentions": c.count}))
                .collect::<Vec<_>>(),
            "stake_words": self
                .stake_words
                .iter()
                .map(|(word, count)| json!({"word": word, "count": count}))
                .collect::<Vec<_>>(),
            "stake_word_count": self.stake_word_count,
            "stakes_per_1000_words": self.density(),
            "questions": self.questions.len(),
            "open_threads": self
                .questions
                .iter()
                .take(OPEN_THREADS)
                .map(|(line, text)| json!({"line": line, "text": text}))
                .collect::<Vec<_>>(),
        })
    }
}

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    let mut scenes = Vec::new();
    let mut without_file = Vec::new();
    let mut file_refs = Vec::new();
    match scene_target(context, args)? {
        Some(target) => {
            let file = target.require_file()?;
            file_refs.push(FileRef::whole(file));
            let position = target.entry.map(|(position, _)| position);
            scenes.push(SceneStakes::of(workspace, &target.id, position, file));
        }
        None => {
            for story_scene in story_scenes(workspace) {
                let id = &story_scene.entry.scene_id;
                match story_scene.file {
                    Some(file) => {
                        file_refs.push(FileRef::whole(file));
                        scenes.push(SceneStakes::of(
                            workspace,
                            id,
                            Some(story_scene.position),
                            file,
                        ));
                    }
                    None => without_file.push(id.clone()),
                }
            }
        }
    }

    let words: usize = scenes.iter().map(|scene| scene.words).sum();
    let stake_total: usize = scenes.iter().map(|scene| scene.stake_word_count).sum();
    let mut by_word: BTreeMap<&str, usize> = BTreeMap::new();
    for scene in &scenes {
        for (word, count) in &scene.stake_words {
            *by_word.entry(word).or_default() += count;
        }
    }
    let mut top: Vec<(&str, usize)> = by_word.into_iter().collect();
    top.sort_by_key(|stake| std::cmp::Reverse(stake.1));
    top.truncate(TOP);
    // The first scene with the highest density wins a tie.
    let highest = scenes
        .iter()
        .fold(None::<&SceneStakes>, |best, scene| match best {
            Some(best) if best.density() >= scene.density() => Some(best),
            _ => Some(scene),
        })
        .filter(|scene| scene.stake_word_count > 0);
    let totals = json!({
        "scenes": scenes.len(),
        "words": words,
        "stake_words": stake_total,
        "stakes_per_1000_words": per_thousand(stake_total, words),
        "questions": scenes.iter().map(|scene| scene.questions.len()).sum::<usize>(),
        "top_stake_words": top
            .iter()
            .map(|(word, count)| json!({"word": word, "count": count}))
            .collect::<Vec<_>>(),
        "highest": highest.map(|scene| json!({
            "id": scene.id,
            "stakes_per_1000_words": scene.density(),
        })),
    });

    let summary = describe(&scenes, &without_file, &totals);
    Ok(ToolOutput {
        data: json!({
            "scenes": scenes.iter().map(SceneStakes::to_json).collect::<Vec<_>>(),
            "without_file": without_file,
            "totals": totals,
        }),
        summary,
        file_refs,
    })
}

fn describe(scenes: &[SceneStakes], without_file: &[String], totals: &Value) -> String {
    let mut summary = Summary::new();
    if scenes.is_empty() {
        summary.line("No written scenes to map: the outline lists none with a file.");
    }
    let top: Vec<String> = totals["top_stake_words"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|word| format!("{} ×{}", word["word"].as_str().unwrap_or(""), word["count"]))
        .collect();
    if !scenes.is_empty() {
        summary.line(format!(
            "Stakes across {} scenes ({} words): {} stakes words, {} per 1,000 words; {} questions asked.{}",
            totals["scenes"],
            totals["words"],
            totals["stake_words"],
            totals["stakes_per_1000_words"],
            totals["questions"],
            if top.is_empty() { String::new() } else { format!(" Most used: {}.", top.join(", ")) }
        ));
    }
    if let Some(highest) = totals["highest"].as_object() {
        summary.line(format!(
            "Highest stakes: {} ({} per 1,000 words).",
            highest.get("id").and_then(Value::as_str).unwrap_or(""),
            highest.get("stakes_per_1000_words").unwrap_or(&Value::Null)
        ));
    }
    if !without_file.is_empty() {
        summary.line(format!("Not written yet: {}.", without_file.join(", ")));
    }
    for scene in scenes {
        let place = scene
            .position
            .map_or_else(String::new, |position| format!("{position}. "));
        let words: Vec<&str> = scene.stake_words.iter().map(|(word, _)| *word).collect();
        let stakes = if words.is_empty() {
            "no stakes words".to_owned()
        } else {
            format!(
                "{:.1} stakes per 1,000 ({})",
                scene.density(),
                words.join(", ")
            )
        };
        let characters: Vec<String> = scene
            .characters
            .iter()
            .map(|c| format!("{} ×{}", c.name, c.count))
            .collect();
        let cast = if characters.is_empty() {
            "no character named".to_owned()
        } else {
            format!("characters {}", characters.join(", "))
        };
        let questions = match scene.questions.len() {
            1 => "1 question".to_owned(),
            n => format!("{n} questions"),
        };
        summary.line(format!(
            "{place}{} ({} words): {stakes}; {questions}; {cast}.",
            scene.id, scene.words
        ));
        for (line, text) in scene.questions.iter().take(OPEN_THREADS) {
            let text: String = one_line(text).chars().take(140).collect();
            summary.line(format!("   ? line {line}: {text}"));
        }
    }
    summary.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{
        file_ref, output, rejected, salt_road, salt_road_output, scene, scene_id, workspace,
    };
    use super::STAKES_WORDS;

    #[test]
    fn the_lexicon_is_lower_case_sorted_and_without_repeats() {
        assert!(STAKES_WORDS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(
            STAKES_WORDS
                .iter()
                .all(|word| word.chars().all(|c| c.is_ascii_lowercase()))
        );
    }

    #[test]
    fn each_scene_in_story_order_with_its_stakes() {
        let (dir, out) = salt_road_output("stakes_mapper", json!({}));
        let data = &out.data;
        let scenes = data["scenes"].as_array().expect("scenes");
        assert_eq!(scenes.len(), 5);
        let arrival = &scenes[0];
        assert_eq!(arrival["id"], "SCN-the-arrival");
        assert_eq!(arrival["position"], 1);
        assert_eq!(arrival["words"], 61);
        assert_eq!(
            arrival["stake_words"],
            json!([{"word": "die", "count": 1}, {"word": "fail", "count": 1}, {"word": "lost", "count": 1}])
        );
        assert_eq!(arrival["stake_word_count"], 3);
        assert_eq!(arrival["stakes_per_1000_words"], 49.2);
        assert_eq!(arrival["questions"], 1);
        assert_eq!(
            arrival["open_threads"],
            json!([{"line": 14, "text": "\"Who's asking?\""}])
        );
        assert_eq!(
            arrival["characters"],
            json!([{"name": "Kael Maren", "mentions": 2}, {"name": "Iria Vell", "mentions": 1}])
        );
        assert_eq!(
            scenes[1]["stake_words"],
            json!([{"word": "must", "count": 1}])
        );
        assert_eq!(scenes[3]["id"], "SCN-the-fall");
        assert_eq!(scenes[3]["stakes_per_1000_words"], 40.0);
        assert_eq!(data["without_file"], json!(["SCN-the-reckoning"]));
        let totals = &data["totals"];
        assert_eq!(totals["scenes"], 5);
        assert_eq!(totals["words"], 255);
        assert_eq!(totals["stake_words"], 6);
        assert_eq!(totals["questions"], 3);
        assert_eq!(
            totals["top_stake_words"][0],
            json!({"word": "fail", "count": 2})
        );
        assert_eq!(
            totals["highest"],
            json!({"id": "SCN-the-arrival", "stakes_per_1000_words": 49.2})
        );
        assert!(out.summary.contains("1. SCN-the-arrival (61 words): 49.2 stakes per 1,000 (die, fail, lost); 1 question; characters Kael Maren ×2, Iria Vell ×1."), "{}", out.summary);
        assert!(out.summary.contains("   ? line 14: \"Who's asking?\""));
        assert_eq!(out.file_refs.len(), 5);
        file_ref(&out, dir.path(), "Story/Scenes/SCN-the-vigil.md");
    }

    #[test]
    fn one_scene_even_outside_the_outline() {
        let (_dir, ws) = workspace(&[
            ("Story/SCN-outline.md", "- SCN-a: First.\n"),
            (
                "Story/Scenes/SCN-orphan.md",
                "They must not lose the war. Would they? “Never,” she said, “but why?”\n",
            ),
        ]);
        let out = output(&ws, "stakes_mapper", scene("Story/Scenes/SCN-orphan.md"));
        let scene = &out.data["scenes"][0];
        assert_eq!(scene["position"], json!(null));
        assert_eq!(scene["stake_word_count"], 4);
        assert_eq!(scene["questions"], 2);
        assert_eq!(
            scene["open_threads"][1]["text"],
            "“Never,” she said, “but why?”"
        );
        assert_eq!(out.data["totals"]["scenes"], 1);
    }

    #[test]
    fn bad_arguments_are_named() {
        let (_dir, ws) = salt_road();
        let (name, message) = rejected(&ws, "stakes_mapper", scene_id("SCN-the-reckoning"));
        assert_eq!(name, "scene_id");
        assert!(message.contains("no scene file yet"), "{message}");
        let (name, _) = rejected(&ws, "stakes_mapper", scene("Story/Scenes/SCN-x.md"));
        assert_eq!(name, "scene_path");
    }

    #[test]
    fn an_empty_workspace_maps_nothing() {
        let (_dir, ws) = workspace(&[]);
        let out = output(&ws, "stakes_mapper", json!({}));
        assert_eq!(out.data["scenes"], json!([]));
        assert_eq!(out.data["totals"]["highest"], json!(null));
        assert_eq!(out.data["totals"]["stakes_per_1000_words"], 0.0);
        assert!(out.summary.contains("No written scenes"));
    }
}

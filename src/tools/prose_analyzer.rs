//! `prose_analyzer`: the figures of a scene's prose, in a writer's terms.
//!
//! Arguments: `scene_path` (required; a manuscript file the index holds and
//! could read, usually a scene).
//!
//! Reads the body's prose as `SourceFile::analyse_prose` tokenizes it
//! (paragraphs only: headings, code, comments and link targets are left
//! out). A word is a word token: letters and digits with inner apostrophes
//! and hyphens ("didn't", "sea-wall" are one word each).
//!
//! - `words`, `sentences`, `mean_sentence_words` (words / sentences, one
//!   decimal), `dialogue_ratio` (words between quotation marks / all words,
//!   three decimals).
//! - `longest_sentences`: the five sentences with the most words, longest
//!   first (ties in text order): {line (1-based, where it starts), words,
//!   excerpt (its first 200 characters as written)}.
//! - `adverbs`: words of four letters or more ending in "ly" (compared in
//!   lower case, possessives stripped), except the common non-adverbs in
//!   [`NOT_ADVERBS`] ("family", "early", "lonely"…) and capitalised words
//!   inside a clause (names such as "Emily"): {count, per_1000_words, top:
//!   the ten most used, [{word, count}]}.
//! - `anti_patterns`: the file's `anti-pattern` diagnostics (phrases from
//!   the anti-pattern sheet): [{line, phrase (as written), severity,
//!   message, quote}].
//! - `repeated_words`: content words (four letters or more, not in
//!   [`STOP_WORDS`], not a word of any card's name or alias) of which an
//!   occurrence has another occurrence fewer than 50 words away; `count` is
//!   the number of such occurrences and `lines` their 1-based lines: the
//!   ten with the highest count (ties alphabetical), [{word, count, lines}].

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Value, json};

use super::{
    FileRef, Finding, ProseFigures, Summary, ToolArgs, ToolContext, ToolError, ToolOutput,
    body_sentences, excerpt, indexed_file, line_number, normalised_word, one_line, per_thousand,
    push_ref, related_refs, require_readable,
};
use crate::checks::{Code, check_file};
use crate::index::{SourceFile, Workspace};
use crate::prose::{Prose, Token, is_capitalised};

/// Words ending in "ly" that are not adverbs (or hardly ever are).
pub(super) const NOT_ADVERBS: &[&str] = &[
    "ally",
    "anomaly",
    "apply",
    "assembly",
    "beastly",
    "belly",
    "brotherly",
    "bully",
    "burly",
    "butterfly",
    "chilly",
    "comely",
    "comply",
    "costly",
    "courtly",
    "cowardly",
    "curly",
    "daily",
    "deadly",
    "dolly",
    "dragonfly",
    "early",
    "earthly",
    "elderly",
    "family",
    "fatherly",
    "firefly",
    "folly",
    "friendly",
    "frilly",
    "ghastly",
    "ghostly",
    "godly",
    "gully",
    "heavenly",
    "holly",
    "holy",
    "homely",
    "homily",
    "hourly",
    "imply",
    "italy",
    "jelly",
    "jolly",
    "july",
    "likely",
    "lily",
    "lively",
    "lonely",
    "lovely",
    "manly",
    "melancholy",
    "monopoly",
    "monthly",
    "motherly",
    "multiply",
    "nightly",
    "oily",
    "orderly",
    "prickly",
    "rally",
    "rely",
    "reply",
    "scholarly",
    "seemly",
    "sickly",
    "silly",
    "sisterly",
    "smelly",
    "stately",
    "sully",
    "supply",
    "surly",
    "tally",
    "timely",
    "ugly",
    "unholy",
    "unlikely",
    "unruly",
    "unseemly",
    "weekly",
    "wily",
    "woolly",
    "worldly",
    "yearly",
];

/// Common words of four letters or more that repeat without anyone noticing.
pub(super) const STOP_WORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "also",
    "asked",
    "back",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "came",
    "can't",
    "come",
    "could",
    "couldn't",
    "didn't",
    "does",
    "doesn't",
    "doing",
    "done",
    "don't",
    "down",
    "during",
    "each",
    "even",
    "ever",
    "every",
    "from",
    "further",
    "going",
    "hadn't",
    "hasn't",
    "have",
    "haven't",
    "having",
    "he'd",
    "he's",
    "hers",
    "herself",
    "himself",
    "into",
    "it's",
    "itself",
    "just",
    "know",
    "like",
    "made",
    "make",
    "many",
    "more",
    "most",
    "much",
    "must",
    "myself",
    "never",
    "once",
    "only",
    "other",
    "ours",
    "ourselves",
    "over",
    "said",
    "same",
    "says",
    "shall",
    "she'd",
    "she's",
    "should",
    "some",
    "still",
    "such",
    "than",
    "that",
    "that's",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "there's",
    "these",
    "they",
    "they'd",
    "they're",
    "this",
    "those",
    "through",
    "told",
    "took",
    "under",
    "until",
    "upon",
    "very",
    "wasn't",
    "well",
    "went",
    "were",
    "weren't",
    "what",
    "when",
    "where",
    "which",
    "while",
    "whom",
    "whose",
    "will",
    "with",
    "without",
    "won't",
    "would",
    "wouldn't",
    "your",
    "yours",
    "yourself",
];

/// Words closer than this count as repeated.
const REPEAT_WINDOW: usize = 50;
const LONGEST: usize = 5;
const TOP: usize = 10;

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    let path = args.required_path("scene_path")?;
    let file = indexed_file(context, "scene_path", path)?;
    require_readable(file)?;
    let text = &*file.text;
    let prose = file.analyse_prose();
    let figures = ProseFigures::of(&prose);
    let words = body_words(&prose);

    let longest = longest_sentences(file, &prose);
    let adverbs = adverbs(text, &words);
    let adverb_count: usize = adverbs.iter().map(|(_, count)| count).sum();
    let repeated = repeated_words(workspace, file, &words);

    let mut file_refs = vec![FileRef::whole(file)];
    let mut anti_patterns = Vec::new();
    for diagnostic in check_file(workspace, &file.path) {
        if diagnostic.code != Code::AntiPattern {
            continue;
        }
        for related in related_refs(workspace, &diagnostic) {
            push_ref(&mut file_refs, related);
        }
        anti_patterns.push(Finding::new(workspace, file, &diagnostic));
    }

    let data = json!({
        "path": path,
        "id": file.scene().map(|scene| &scene.id),
        "words": figures.words,
        "sentences": figures.sentences,
        "mean_sentence_words": figures.mean_sentence_words(),
        "dialogue_ratio": figures.dialogue_ratio(),
        "longest_sentences": longest
            .iter()
            .map(|(line, words, excerpt)| json!({"line": line, "words": words, "excerpt": excerpt}))
            .collect::<Vec<_>>(),
        "adverbs": {
            "count": adverb_count,
            "per_1000_words": per_thousand(adverb_count, figures.words),
            "top": adverbs
                .iter()
                .take(TOP)
                .map(|(word, count)| json!({"word": word, "count": count}))
                .collect::<Vec<_>>(),
        },
        "anti_patterns": anti_patterns
            .iter()
            .map(|finding| json!({
                "line": finding.line,
                "phrase": one_line(&finding.quote),
                "severity": finding.severity,
                "message": finding.message,
                "quote": finding.quote,
            }))
            .collect::<Vec<_>>(),
        "repeated_words": repeated
            .iter()
            .map(|(word, count, lines)| json!({"word": word, "count": count, "lines": lines}))
            .collect::<Vec<_>>(),
    });
    let summary = describe(file, &data);
    Ok(ToolOutput {
        data,
        summary,
        file_refs,
    })
}

/// The body's word tokens, in order.
fn body_words(prose: &Prose) -> Vec<&Token> {
    body_sentences(prose)
        .flat_map(|sentence| prose.sentence_tokens(sentence))
        .filter(|token| token.is_word())
        .collect()
}

/// (line, words, excerpt) of the longest sentences, longest first.
fn longest_sentences(file: &SourceFile, prose: &Prose) -> Vec<(u32, usize, String)> {
    let mut sentences: Vec<(u32, usize, String)> = body_sentences(prose)
        .map(|sentence| {
            let words = prose
                .sentence_tokens(sentence)
                .iter()
                .filter(|token| token.is_word())
                .count();
            let written = file
                .text
                .get(sentence.range.start..sentence.range.end)
                .unwrap_or("");
            (
                line_number(file, sentence.range.start),
                words,
                excerpt(written),
            )
        })
        .collect();
    // A stable sort keeps text order among sentences of the same length.
    sentences.sort_by_key(|sentence| std::cmp::Reverse(sentence.1));
    sentences.truncate(LONGEST);
    sentences
}

/// Each adverb and how often it is used, most used first (ties alphabetical).
fn adverbs(text: &str, words: &[&Token]) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for token in words {
        let written = token.text(text);
        if is_capitalised(written) && !token.clause_start {
            continue;
        }
        let word = normalised_word(written);
        if word.chars().filter(|c| c.is_alphabetic()).count() >= 4
            && word.ends_with("ly")
            && !NOT_ADVERBS.contains(&word.as_str())
        {
            *counts.entry(word).or_default() += 1;
        }
    }
    let mut adverbs: Vec<(String, usize)> = counts.into_iter().collect();
    adverbs.sort_by_key(|adverb| std::cmp::Reverse(adverb.1));
    adverbs
}

/// The words of every card's names and aliases, in lower case.
fn name_words(workspace: &Workspace) -> HashSet<String> {
    workspace
        .catalog()
        .cards()
        .flat_map(|(_, card)| card.names())
        .flat_map(|name| {
            name.text
                .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-'))
                .filter(|word| !word.is_empty())
                .map(normalised_word)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// (word, occurrences near another, their lines), as the module doc says.
fn repeated_words(
    workspace: &Workspace,
    file: &SourceFile,
    words: &[&Token],
) -> Vec<(String, usize, Vec<u32>)> {
    let names = name_words(workspace);
    let mut positions: HashMap<String, Vec<usize>> = HashMap::new();
    for (position, token) in words.iter().enumerate() {
        let word = normalised_word(token.text(&file.text));
        if word.chars().count() >= 4
            && word.chars().any(char::is_alphabetic)
            && !STOP_WORDS.contains(&word.as_str())
            && !names.contains(&word)
        {
            positions.entry(word).or_default().push(position);
        }
    }
    let mut repeated: Vec<(String, usize, Vec<u32>)> = positions
        .into_iter()
        .filter_map(|(word, at)| {
            let near: Vec<usize> = at
                .iter()
                .enumerate()
                .filter(|(index, position)| {
                    let before = index
                        .checked_sub(1)
                        .is_some_and(|previous| **position - at[previous] < REPEAT_WINDOW);
                    let after = at
                        .get(index + 1)
                        .is_some_and(|next| next - **position < REPEAT_WINDOW);
                    before || after
                })
                .map(|(_, position)| *position)
                .collect();
            if near.is_empty() {
                return None;
            }
            let mut lines: Vec<u32> = near
                .iter()
                .map(|position| line_number(file, words[*position].range.start))
                .collect();
            lines.dedup();
            Some((word, near.len(), lines))
        })
        .collect();
    repeated.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    repeated.truncate(TOP);
    repeated
}

fn describe(file: &SourceFile, data: &Value) -> String {
    let mut summary = Summary::new();
    let name = match data["id"].as_str() {
        Some(id) => format!("{id} ({})", file.path),
        None => file.path.to_string(),
    };
    let ratio = data["dialogue_ratio"].as_f64().unwrap_or(0.0);
    summary.line(format!(
        "{name}: {} words in {} sentences, {} words a sentence on average; {:.0}% of the words are dialogue.",
        data["words"], data["sentences"], data["mean_sentence_words"], ratio * 100.0
    ));
    let list = |key: &str| data[key].as_array().map_or(&[][..], Vec::as_slice);
    if !list("longest_sentences").is_empty() {
        summary.line("Longest sentences:");
        for sentence in list("longest_sentences") {
            let text: String = one_line(sentence["excerpt"].as_str().unwrap_or(""))
                .chars()
                .take(140)
                .collect();
            summary.line(format!(
                "- line {}, {} words: “{text}”",
                sentence["line"], sentence["words"]
            ));
        }
    }
    let adverbs = &data["adverbs"];
    let top: Vec<String> = adverbs["top"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|adverb| {
            format!(
                "{} ×{}",
                adverb["word"].as_str().unwrap_or(""),
                adverb["count"]
            )
        })
        .collect();
    summary.line(format!(
        "Adverbs ending in -ly: {} ({} per 1,000 words){}",
        adverbs["count"],
        adverbs["per_1000_words"],
        if top.is_empty() {
            ".".to_owned()
        } else {
            format!(": {}.", top.join(", "))
        }
    ));
    if list("anti_patterns").is_empty() {
        summary.line("Anti-pattern phrases: none.");
    } else {
        summary.line(format!(
            "Anti-pattern phrases ({}):",
            list("anti_patterns").len()
        ));
        for found in list("anti_patterns") {
            summary.line(format!(
                "- line {}, {}: {}",
                found["line"],
                found["severity"].as_str().unwrap_or(""),
                found["message"].as_str().unwrap_or("")
            ));
        }
    }
    let repeated: Vec<String> = list("repeated_words")
        .iter()
        .map(|word| {
            let lines: Vec<String> = word["lines"]
                .as_array()
                .into_iter()
                .flatten()
                .map(Value::to_string)
                .collect();
            let label = if lines.len() == 1 { "line" } else { "lines" };
            format!(
                "{} ×{} ({label} {})",
                word["word"].as_str().unwrap_or(""),
                word["count"],
                lines.join(", ")
            )
        })
        .collect();
    if repeated.is_empty() {
        summary.line("No word repeats within 50 words of itself.");
    } else {
        summary.line(format!(
            "Words repeated close together: {}.",
            repeated.join("; ")
        ));
    }
    summary.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{
        file_ref, output, rejected, run, salt_road_output, scene, workspace,
    };

    #[test]
    fn figures_of_a_scene() {
        let (dir, out) = salt_road_output("prose_analyzer", scene("Story/Scenes/SCN-the-gate.md"));
        let data = &out.data;
        assert_eq!(data["words"], 70);
        assert_eq!(data["sentences"], 7);
        assert_eq!(data["mean_sentence_words"], 10.0);
        assert_eq!(data["dialogue_ratio"], 0.086);
        let longest = &data["longest_sentences"];
        assert_eq!(longest.as_array().map(Vec::len), Some(5));
        assert_eq!(longest[0]["line"], 12);
        assert_eq!(longest[0]["words"], 40);
        assert!(
            longest[0]["excerpt"]
                .as_str()
                .is_some_and(|e| e.starts_with("Iria put her shoulder"))
        );
        assert_eq!(longest[1]["words"], 10);
        assert_eq!(data["adverbs"]["count"], 1);
        assert_eq!(
            data["adverbs"]["top"],
            json!([{"word": "quickly", "count": 1}])
        );
        assert_eq!(data["adverbs"]["per_1000_words"], 14.3);
        assert_eq!(
            data["repeated_words"],
            json!([
                {"word": "gate", "count": 3, "lines": [14]},
                {"word": "shoulder", "count": 2, "lines": [12]},
            ])
        );
        assert_eq!(data["anti_patterns"], json!([]));
        assert!(
            out.summary
                .contains("70 words in 7 sentences, 10.0 words a sentence"),
            "{}",
            out.summary
        );
        assert!(out.summary.contains("9% of the words are dialogue"));
        assert!(out.summary.contains("gate ×3 (line 14)"));
        let whole = file_ref(&out, dir.path(), "Story/Scenes/SCN-the-gate.md");
        assert_eq!((whole.start_line, whole.end_line), (1, 16));
    }

    #[test]
    fn anti_patterns_and_dialogue() {
        let (dir, out) =
            salt_road_output("prose_analyzer", scene("Story/Scenes/SCN-the-arrival.md"));
        let data = &out.data;
        assert_eq!(data["words"], 61);
        assert_eq!(data["sentences"], 8);
        assert_eq!(data["dialogue_ratio"], 0.41);
        assert_eq!(
            data["anti_patterns"],
            json!([{
                "line": 18,
                "phrase": "Suddenly",
                "severity": "warning",
                "message": "“Suddenly” is on the anti-pattern sheet (zero tolerance): say it in your own words",
                "quote": "Suddenly",
            }])
        );
        // "Suddenly" opens the sentence, so it counts as an adverb too.
        assert_eq!(
            data["adverbs"]["top"],
            json!([{"word": "suddenly", "count": 1}])
        );
        // "Kael" repeats but is a name; "fortress" is a word of a location's alias.
        let repeated = data["repeated_words"].as_array().expect("repeated");
        assert!(
            repeated
                .iter()
                .all(|w| w["word"] != "kael" && w["word"] != "fortress")
        );
        assert!(
            out.summary
                .contains("- line 18, warning: “Suddenly” is on the anti-pattern sheet")
        );
        let sheet = file_ref(&out, dir.path(), "Compendium/Voice/anti-patterns.md");
        assert_eq!((sheet.start_line, sheet.end_line), (5, 5));
    }

    #[test]
    fn non_adverbs_names_and_far_apart_words_do_not_count() {
        let far = "word ".repeat(60);
        let text = format!(
            "The family came early, and Emily smiled kindly and slowly. Lantern {far} lantern.\n"
        );
        let (_dir, ws) = workspace(&[("Story/Scenes/SCN-a.md", &text)]);
        let out = output(&ws, "prose_analyzer", scene("Story/Scenes/SCN-a.md"));
        assert_eq!(
            out.data["adverbs"]["top"],
            json!([{"word": "kindly", "count": 1}, {"word": "slowly", "count": 1}])
        );
        // "lantern" twice, 61 words apart: not repeated; "word" is.
        assert_eq!(out.data["repeated_words"][0]["word"], "word");
        assert_eq!(out.data["repeated_words"][0]["count"], 60);
        assert_eq!(out.data["repeated_words"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn an_empty_scene_has_zero_figures() {
        let (_dir, ws) = workspace(&[("Story/Scenes/SCN-a.md", "---\ntitle: A\n---\n\n# A\n")]);
        let out = output(&ws, "prose_analyzer", scene("Story/Scenes/SCN-a.md"));
        assert_eq!(out.data["words"], 0);
        assert_eq!(out.data["mean_sentence_words"], 0.0);
        assert_eq!(out.data["dialogue_ratio"], 0.0);
        assert_eq!(out.data["longest_sentences"], json!([]));
    }

    #[test]
    fn bad_arguments_and_unreadable_files() {
        let (_dir, ws) = workspace(&[("Story/Scenes/SCN-bad.md", "\u{0}binary")]);
        let (name, _) = rejected(&ws, "prose_analyzer", json!({}));
        assert_eq!(name, "scene_path");
        let (name, _) = rejected(&ws, "prose_analyzer", scene("Story/Scenes/SCN-x.md"));
        assert_eq!(name, "scene_path");
        let error =
            run(&ws, "prose_analyzer", scene("Story/Scenes/SCN-bad.md")).expect_err("unreadable");
        assert!(
            error.to_string().contains("SCN-bad.md` could not be read"),
            "{error}"
        );
    }
}

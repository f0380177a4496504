//! False alarms on a real novel.
//!
//! `tests/corpora/pride-and-prejudice/` is Jane Austen's novel (Standard
//! Ebooks text, CC0), one scene per chapter, with canon cards for 28
//! characters and 13 places. Nobody dies and nothing contradicts the cards,
//! so nearly everything `control-room check` reports there is a false alarm.
//! The budget is 12 diagnostics of the contract's codes over the whole book;
//! the test prints every one, so a regression shows what it brought. Austen
//! repeats herself less than most: the `echo` hints (not a contract code, so
//! counted apart) have a budget of 130 over the book's 121,905 words, about
//! one every 940 words. The
//! review loop's point-of-view gate, judging each chapter as a draft told
//! from Elizabeth's point of view, refuses none.

use crate::support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Most diagnostics of the contract's codes the whole novel may raise.
const BUDGET: usize = 12;

/// Most `echo` hints the whole novel may raise (112 when it was set).
const ECHO_BUDGET: usize = 130;

/// Most `spelling` diagnostics the whole novel may raise (30 when it was
/// set, from 97 before regular derivations were words: Austen's spellings and
/// words modern dictionaries lack, "developement", "suspence", "curricle";
/// never a name of a card).
const SPELLING_BUDGET: usize = 36;

/// Most `grammar` diagnostics the whole novel may raise (2 when it was set,
/// both read by hand as right: "an union" twice, where modern English says
/// "a union"; 10 before the licences of `language::licence`, 8 of them
/// wrong).
const GRAMMAR_BUDGET: usize = 3;

/// `control-room check --format json` of `root`, with `extra` arguments,
/// grammar off unless `extra` asks for it: the budgets of the other codes
/// do not wait for harper (grammar's own are measured with `--grammar`).
fn check_report(root: &Path, extra: &[&str]) -> Value {
    if !root.join("control-room.toml").exists() {
        support::grammar_off(root);
    }
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .arg("check")
        .args(extra)
        .args(["--format", "json"])
        .arg(root)
        .output()
        .expect("control-room runs");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "check printed no JSON ({error}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn pride_and_prejudice_stays_within_the_false_alarm_budget() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("pride-and-prejudice");
    support::copy_tree(&corpus, &root);
    let report = check_report(&root, &[]);
    // The whole novel was read: 61 chapters, the outline, 41 cards.
    assert_eq!(report["files_indexed"], 103);
    let diagnostics = report["diagnostics"]
        .as_array()
        .expect("a list of diagnostics");
    let alarms: Vec<&Value> = diagnostics
        .iter()
        .filter(|diagnostic| {
            support::CONTRACT_CODES.contains(&diagnostic["code"].as_str().unwrap_or_default())
        })
        .collect();
    for alarm in &alarms {
        println!(
            "{}:{} {} {}",
            alarm["path"].as_str().unwrap_or_default(),
            alarm["range"]["start"]["line"].as_u64().unwrap_or_default() + 1,
            alarm["code"].as_str().unwrap_or_default(),
            alarm["message"].as_str().unwrap_or_default()
        );
    }
    println!("{} diagnostics of the contract's codes", alarms.len());
    assert!(
        alarms.len() <= BUDGET,
        "{} diagnostics on Pride and Prejudice, above the budget of {BUDGET} (listed above)",
        alarms.len()
    );
    // No check may be silenced wholesale to meet the budget: a planted
    // misspelling in a copy of a chapter is still found.
    let chapter = root.join("Story/Scenes/SCN-chapter-01.md");
    let text = std::fs::read_to_string(&chapter).expect("chapter 1 is readable");
    let planted = text.replacen("\u{a0}Bennet replied", "\u{a0}Bennett replied", 1);
    assert_ne!(planted, text, "chapter 1 still has the line to plant in");
    std::fs::write(&chapter, planted).expect("the copy is writable");
    let report = check_report(&root, &[]);
    let found = report["diagnostics"]
        .as_array()
        .expect("a list")
        .iter()
        .any(|diagnostic| {
            diagnostic["code"] == "name-typo"
                && diagnostic["path"] == "Story/Scenes/SCN-chapter-01.md"
                && diagnostic["message"]
                    .as_str()
                    .is_some_and(|message| message.contains("Bennett"))
        });
    assert!(found, "the planted “Bennett” was not reported");
}

/// The echo check stays within its budget on the novel, and still hears an
/// echo planted in a copy of a chapter.
#[test]
fn pride_and_prejudice_stays_within_the_echo_budget() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("pride-and-prejudice");
    support::copy_tree(&corpus, &root);
    let echoes = |root: &Path| -> Vec<Value> {
        let report = check_report(root, &[]);
        report["diagnostics"]
            .as_array()
            .expect("a list of diagnostics")
            .iter()
            .filter(|diagnostic| diagnostic["code"] == "echo")
            .cloned()
            .collect()
    };
    let found = echoes(&root);
    for echo in &found {
        assert_eq!(echo["severity"], "hint", "{echo}");
        println!(
            "{}:{} {}",
            echo["path"].as_str().unwrap_or_default(),
            echo["range"]["start"]["line"].as_u64().unwrap_or_default() + 1,
            echo["message"].as_str().unwrap_or_default()
        );
    }
    println!("{} echoes", found.len());
    assert!(
        found.len() <= ECHO_BUDGET,
        "{} echoes on Pride and Prejudice, above the budget of {ECHO_BUDGET} (listed above)",
        found.len()
    );
    // Not silenced to meet the budget: a word planted twice is heard.
    let chapter = root.join("Story/Scenes/SCN-chapter-01.md");
    let text = std::fs::read_to_string(&chapter).expect("chapter 1 is readable");
    let planted = text.replacen(
        "It is a truth universally acknowledged",
        "A marmalade sky. It is a truth universally acknowledged, in marmalade",
        1,
    );
    assert_ne!(planted, text, "chapter 1 still opens as it did");
    std::fs::write(&chapter, planted).expect("the copy is writable");
    assert!(
        echoes(&root).iter().any(|echo| {
            echo["path"] == "Story/Scenes/SCN-chapter-01.md"
                && echo["message"]
                    .as_str()
                    .is_some_and(|message| message.starts_with("“marmalade” again"))
        }),
        "the planted “marmalade” was not heard"
    );
}

/// The words of every card's names and aliases, as written.
fn name_words(root: &Path) -> Vec<String> {
    let mut words = Vec::new();
    for folder in ["Compendium/Characters", "Compendium/Locations"] {
        for entry in std::fs::read_dir(root.join(folder)).expect("the cards") {
            let text = std::fs::read_to_string(entry.expect("a card").path()).expect("a card");
            for line in text.lines().filter(|line| {
                line.starts_with("name:")
                    || line.starts_with("aliases:")
                    || line.starts_with("  - ")
            }) {
                let value = line.split_once(':').map_or(line, |(_, value)| value);
                words.extend(
                    value
                        .split(|c: char| !c.is_alphabetic())
                        .filter(|word| word.len() > 1)
                        .map(str::to_owned),
                );
            }
        }
    }
    words
}

fn language_diagnostics(root: &Path) -> Vec<Value> {
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", "--grammar", "--format", "json"])
        .arg(root)
        .output()
        .expect("control-room runs");
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    report["diagnostics"]
        .as_array()
        .expect("a list of diagnostics")
        .iter()
        .filter(|d| d["code"] == "spelling" || d["code"] == "grammar")
        .cloned()
        .collect()
}

/// The text a diagnostic points at.
fn flagged(root: &Path, diagnostic: &Value) -> String {
    let text =
        std::fs::read_to_string(root.join(diagnostic["path"].as_str().unwrap())).expect("the file");
    let line = diagnostic["range"]["start"]["line"].as_u64().unwrap() as usize;
    let start = diagnostic["range"]["start"]["character"].as_u64().unwrap() as usize;
    let end = diagnostic["range"]["end"]["character"].as_u64().unwrap() as usize;
    let on = text.lines().nth(line).unwrap_or_default();
    on.chars()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect()
}

/// Spelling and grammar stay within their budgets on the novel and flag no
/// name of a character or a place.
#[test]
fn pride_and_prejudice_stays_within_the_spelling_and_grammar_budgets_and_no_name_is_flagged() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("pride-and-prejudice");
    support::copy_tree(&corpus, &root);
    let found = language_diagnostics(&root);
    let names = name_words(&root);
    assert!(names.iter().any(|name| name == "Darcy"), "{names:?}");
    let mut counts = [0usize; 2];
    for diagnostic in &found {
        let said = flagged(&root, diagnostic);
        println!(
            "{}:{} {} “{said}” {}",
            diagnostic["path"].as_str().unwrap_or_default(),
            diagnostic["range"]["start"]["line"]
                .as_u64()
                .unwrap_or_default()
                + 1,
            diagnostic["code"].as_str().unwrap_or_default(),
            diagnostic["message"].as_str().unwrap_or_default()
        );
        assert!(
            !said.split_whitespace().any(|word| {
                names
                    .iter()
                    .any(|name| word.trim_matches(|c: char| !c.is_alphabetic()) == name)
            }),
            "a name is flagged: {diagnostic}"
        );
        counts[usize::from(diagnostic["code"] == "grammar")] += 1;
    }
    let [spelling, grammar] = counts;
    println!(
        "{spelling} spelling, {grammar} grammar ({:.1} per 10,000 words) over 121,905 words",
        grammar as f64 / 12.1905
    );
    assert!(
        spelling <= SPELLING_BUDGET,
        "{spelling} spelling diagnostics"
    );
    assert!(grammar <= GRAMMAR_BUDGET, "{grammar} grammar diagnostics");
    // Read by hand: each finding the budget was set with is right.
    let unions = found
        .iter()
        .filter(|diagnostic| diagnostic["code"] == "grammar")
        .filter(|diagnostic| flagged(&root, diagnostic).eq_ignore_ascii_case("an"))
        .count();
    assert_eq!(unions, 2, "the two “an union”s are found");
}

/// Misspellings (two letters swapped, in lower case and at a sentence's
/// start) and doubled words planted in the novel are found: recall is
/// printed (1.00, 0.80 and, at a sentence's start, 1.00 when this was
/// written), and must be at least 0.9 for misspellings and 0.75 for doubled
/// words: a
/// line with no quotation mark may still continue a speech opened on the
/// line before, where a doubled word is a stammer and not reported.
#[test]
fn misspellings_and_doubled_words_planted_in_the_novel_are_found() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("pride-and-prejudice");
    support::copy_tree(&corpus, &root);
    // In each of chapters 2 to 31: swap two inner letters of the first word
    // of seven or more lower-case letters of the chapter's fifth line, and
    // double the first "the " of the first line of narration from its
    // eighth on; and swap two letters of the first capitalised word of six
    // or more letters that starts a sentence inside a line from the seventh
    // on and is written in lower case elsewhere in the chapter (a word, not
    // a name).
    let mut planted: Vec<(String, usize, &str)> = Vec::new();
    for chapter in 2..=31 {
        let path = format!("Story/Scenes/SCN-chapter-{chapter:02}.md");
        let text = std::fs::read_to_string(root.join(&path)).expect("a chapter");
        let body_start = text
            .match_indices("---\n")
            .nth(1)
            .map_or(0, |(at, _)| at + 4);
        let mut lines: Vec<String> = text[body_start..].lines().map(str::to_owned).collect();
        let head_lines = text[..body_start].lines().count();
        let prose: Vec<usize> = (0..lines.len())
            .filter(|&i| !lines[i].trim().is_empty() && !lines[i].starts_with('#'))
            .collect();
        if let Some(&i) = prose.get(5)
            && let Some(word) = lines[i]
                .split(|c: char| !c.is_alphabetic())
                .find(|word| word.len() >= 7 && word.chars().all(|c| c.is_ascii_lowercase()))
                .map(str::to_owned)
        {
            let mut letters: Vec<char> = word.chars().collect();
            letters.swap(2, 3);
            let typo: String = letters.iter().collect();
            if typo != word {
                lines[i] = lines[i].replacen(&word, &typo, 1);
                planted.push((path.clone(), head_lines + i + 1, "spelling"));
            }
        }
        let lower_words: std::collections::HashSet<&str> = text
            .split(|c: char| !c.is_alphabetic())
            .filter(|word| word.chars().all(|c| c.is_ascii_lowercase()))
            .collect();
        let starting = prose.iter().skip(6).find_map(|&i| {
            lines[i].match_indices(". ").find_map(|(at, _)| {
                let word: String = lines[i][at + 2..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                let capitalised = word.chars().next().is_some_and(|c| c.is_ascii_uppercase());
                (capitalised
                    && word.len() >= 6
                    && lower_words.contains(word.to_lowercase().as_str()))
                .then(|| (i, at + 2, word))
            })
        });
        if let Some((i, at, word)) = starting {
            let mut letters: Vec<char> = word.chars().collect();
            letters.swap(2, 3);
            let typo: String = letters.iter().collect();
            if typo != word {
                lines[i].replace_range(at..at + word.len(), &typo);
                planted.push((
                    path.clone(),
                    head_lines + i + 1,
                    "spelling at a sentence's start",
                ));
            }
        }
        // Outside dialogue, where a doubled word may be a stammer.
        let narration = prose
            .iter()
            .skip(7)
            .copied()
            .find(|&i| lines[i].contains(" the ") && !lines[i].contains(['“', '”', '"']));
        if let Some(i) = narration {
            lines[i] = lines[i].replacen(" the ", " the the ", 1);
            planted.push((path.clone(), head_lines + i + 1, "grammar"));
        }
        let planted_text = format!("{}{}\n", &text[..body_start], lines.join("\n"));
        std::fs::write(root.join(&path), planted_text).expect("the copy is writable");
    }
    let found = language_diagnostics(&root);
    let hit = |(path, line, code): &(String, usize, &str)| {
        let code = if code.starts_with("spelling") {
            "spelling"
        } else {
            code
        };
        found.iter().any(|d| {
            d["path"] == path.as_str()
                && d["code"] == code
                && d["range"]["start"]["line"].as_u64() == Some(*line as u64 - 1)
        })
    };
    let mut recall = [(0, 0); 3];
    for plant in &planted {
        let kind = match plant.2 {
            "spelling" => 0,
            "grammar" => 1,
            _ => 2,
        };
        recall[kind].1 += 1;
        if hit(plant) {
            recall[kind].0 += 1;
        } else {
            println!("missed: {}:{} {}", plant.0, plant.1, plant.2);
        }
    }
    // (kind, least recall, fewest planted)
    let kinds = [
        ("misspellings", 0.9, 20),
        ("doubled words", 0.75, 20),
        ("misspellings at a sentence's start", 0.9, 12),
    ];
    for ((name, least, fewest), (hits, total)) in kinds.into_iter().zip(recall) {
        let found = hits as f64 / total as f64;
        println!("{name}: {hits} of {total} found, recall {found:.2}");
        assert!(total >= fewest, "only {total} {name} planted");
        assert!(found >= least, "{name}: recall {hits}/{total}");
    }
}

/// The review loop's point-of-view gate refuses none of the novel's chapters
/// judged as drafts told from Elizabeth Bennet's point of view (the book's:
/// third person, close on her). Mr. Collins's letter in chapter 13 (first
/// person, unquoted) once was refused; the gate judges the person by
/// paragraphs now.
#[test]
fn the_point_of_view_gate_passes_the_novels_own_chapters() {
    use control_room::index::Workspace;
    use control_room::runs::recipe::GateSettings;
    use control_room::runs::review::gates::{self, DraftScene};

    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("pride-and-prejudice");
    support::copy_tree(&corpus, &root);
    // Every chapter told from Elizabeth's point of view.
    let scenes = root.join("Story/Scenes");
    for entry in std::fs::read_dir(&scenes).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let text = text.replacen("---\n", "---\npov: Elizabeth Bennet\n", 1);
        std::fs::write(entry.path(), text).unwrap();
    }
    let workspace = Workspace::load(&root);
    let settings = GateSettings {
        continuity: false,
        anti_patterns: false,
        word_count: false,
        ..GateSettings::default()
    };
    let args = serde_json::Map::new();
    let mut refused = Vec::new();
    let mut judged = 0;
    for (file, _) in workspace.catalog().scenes() {
        let body = file.text[file.front_matter.as_ref().map_or(0, |f| f.range.end)..].to_owned();
        let report = gates::run(
            &workspace,
            &settings,
            &DraftScene {
                scene_path: Some(&file.path),
                scene_id: None,
                brief: None,
                args: &args,
            },
            &body,
        );
        judged += 1;
        if !report.passed {
            println!("{}: {}", file.path, report.feedback().trim());
            refused.push(file.path.to_string());
        }
    }
    assert_eq!(judged, 61);
    println!(
        "{} of {judged} chapters refused by the pov gate",
        refused.len()
    );
    assert!(refused.is_empty(), "chapters refused: {refused:?}");
}

/// The book writes "Philips" 33 times and its card "Phillips": that is said
/// once, on the card, and none of the 33 is a typo (one of them, a speaker,
/// once was).
#[test]
fn a_consistent_spelling_against_its_card_is_said_once_on_the_card() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("pride-and-prejudice");
    support::copy_tree(&corpus, &root);
    let report = check_report(&root, &[]);
    let diagnostics = report["diagnostics"].as_array().expect("a list");
    let about_philips: Vec<&Value> = diagnostics
        .iter()
        .filter(|diagnostic| {
            diagnostic["message"]
                .as_str()
                .is_some_and(|message| message.contains("Philips"))
        })
        .collect();
    assert_eq!(about_philips.len(), 1, "{about_philips:#?}");
    let one = about_philips[0];
    assert_eq!(one["code"], "card-spelling");
    assert_eq!(one["path"], "Compendium/Characters/CHAR-mrs-phillips.md");
    let message = one["message"].as_str().unwrap();
    assert!(
        message.contains("33 times") && message.contains("Phillips"),
        "{message}"
    );
}

/// Most chapters that may drift from a gold standard taken from the novel
/// itself: with the opening of chapter 43 (its first 94 lines, about 960
/// words) as the gold standard, 1 when it was set (chapter 30, whose
/// narrated summary runs 39.6 words a sentence against 20.3).
const VOICE_DRIFT_BUDGET: usize = 1;

/// The average number of chapters flagged, whichever chapter is the gold
/// standard (1.67 of 61 when it was set; 21 for chapter 1 alone, whose
/// dialogue-heavy opening is no fair sample of the voice).
const VOICE_DRIFT_MEAN_BUDGET: f64 = 2.0;

/// One author, one voice: the voice-drift check stays within its budget on
/// the novel with a gold standard from it, whichever chapter it comes from
/// on average, and still flags a chapter rewritten in another voice.
#[test]
fn pride_and_prejudice_stays_within_the_voice_drift_budget() {
    use control_room::prose::{Prose, voice::VoiceTraits};
    use control_room::syntax::MarkdownParser;

    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("pride-and-prejudice");
    support::copy_tree(&corpus, &root);
    let chapter = std::fs::read_to_string(root.join("Story/Scenes/SCN-chapter-43.md"))
        .expect("chapter 43 is readable");
    let opening: Vec<&str> = chapter.lines().skip(6).take(94).collect();
    let voice = root.join("Compendium/Voice");
    std::fs::create_dir_all(&voice).expect("the voice folder");
    std::fs::write(
        voice.join("gold-standard.md"),
        format!(
            "---\nlocked: true\n---\n\n# Voice gold standard\n\n## Passage\n\n{}\n",
            opening.join("\n")
        ),
    )
    .expect("the gold standard is written");
    let drifting = |root: &Path| -> Vec<String> {
        let report = check_report(root, &[]);
        report["diagnostics"]
            .as_array()
            .expect("a list")
            .iter()
            .filter(|diagnostic| diagnostic["code"] == "voice-drift")
            .map(|diagnostic| {
                format!(
                    "{} {}",
                    diagnostic["path"].as_str().unwrap_or_default(),
                    diagnostic["message"].as_str().unwrap_or_default()
                )
            })
            .collect()
    };
    let flagged = drifting(&root);
    for line in &flagged {
        println!("{line}");
    }
    assert!(
        flagged.len() <= VOICE_DRIFT_BUDGET,
        "{} chapters drift from a gold standard of the novel's own voice, above the budget of {VOICE_DRIFT_BUDGET} (listed above)",
        flagged.len()
    );

    // Whichever chapter is the gold standard, few others drift from it.
    let scenes = root.join("Story/Scenes");
    let mut files: Vec<_> = std::fs::read_dir(&scenes)
        .expect("the scenes")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    files.sort();
    let traits: Vec<VoiceTraits> = files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("a chapter");
            let syntax = MarkdownParser::parse_fresh(&text);
            VoiceTraits::measure(&text, &Prose::analyse(&text, &syntax), None)
        })
        .collect();
    let flagged: usize = traits
        .iter()
        .map(|gold| {
            traits
                .iter()
                .filter(|scene| scene.drift_from(gold).score > 1.0)
                .count()
        })
        .sum();
    let mean = flagged as f64 / traits.len() as f64;
    println!("{mean:.2} chapters of {} drift on average", traits.len());
    assert!(
        mean <= VOICE_DRIFT_MEAN_BUDGET,
        "{mean:.2} chapters drift on average, above {VOICE_DRIFT_MEAN_BUDGET}"
    );

    // Not silenced: chapter 12 with a page in another voice appended drifts.
    let path = scenes.join("SCN-chapter-12.md");
    let text = std::fs::read_to_string(&path).expect("chapter 12");
    let terse = "Jane coughed. Elizabeth looked up. The fire was low. Nobody spoke. \
                 The clock ticked. Rain hit the glass. She turned a page. Then another. ";
    std::fs::write(&path, format!("{text}\n{}\n", terse.repeat(8))).expect("writable");
    let flagged = drifting(&root);
    assert!(
        flagged
            .iter()
            .any(|line| line.starts_with("Story/Scenes/SCN-chapter-12.md")
                && line.contains("words a sentence in the narration")),
        "chapter 12 in another voice was not flagged: {flagged:?}"
    );
}

/// Chapter 1's dialogue is carried by Mr. and Mrs. Bennet ("said his lady",
/// "cried his wife", "replied his wife"): once given to nobody, so the
/// presence chart showed Mrs. Bennet absent from it.
#[test]
fn chapter_one_mrs_bennet_speaks_as_his_lady_and_his_wife() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("pride-and-prejudice");
    support::copy_tree(&corpus, &root);
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["speakers", "--format", "json"])
        .arg(&root)
        .output()
        .expect("control-room runs");
    assert!(output.status.success(), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    let hers: Vec<&Value> = report["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter(|line| {
            line["path"] == "Story/Scenes/SCN-chapter-01.md" && line["speaker"] == "Mrs. Bennet"
        })
        .collect();
    assert!(hers.len() >= 3, "{hers:#?}");
    assert!(
        hers.iter()
            .all(|line| line["how"] == "attributed" || line["how"] == "pronoun"),
        "{hers:#?}"
    );
}

//! The reviewer's verdict (ADR-003's reviewer output schema) and the checks
//! that keep a reviewer from rubber-stamping a draft:
//!
//! 1. every rule that applies to the draft has an entry in `sop_review`
//!    (`not_applicable` is no answer for one that does);
//! 2. every entry has evidence, and a `passed` or `violated` entry quotes
//!    the draft (at least four words in a row of it);
//! 3. a `violated` entry lists its violations, and forces `rejected`;
//! 4. a rejection says what kind it is, and `too_big` lists the subtasks.
//!
//! A verdict that breaks one is not accepted: the runner asks the reviewer
//! again with the reasons, like any reply that breaks its contract. A valid
//! verdict less confident than the recipe's threshold is not acted on: it
//! goes to the writer (the person) to judge.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::index::{CardKind, Workspace};
use crate::runs::recipe::ReviewRule;

/// Words in a row of the draft that evidence must quote.
const QUOTE_WORDS: usize = 4;

pub const REJECTION_TYPES: &[&str] = &["fixable", "misscoped", "architectural", "too_big"];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub verdict: String,
    #[serde(default)]
    pub rejection_type: Option<String>,
    #[serde(default)]
    pub sop_review: Vec<RuleReview>,
    pub confidence: f64,
    pub feedback: String,
    /// For `too_big`: the tasks the reviewer would split this one into.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subtasks: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleReview {
    pub sop_id: String,
    pub status: String,
    #[serde(default)]
    pub evidence: String,
    #[serde(default)]
    pub violations: Vec<String>,
}

/// What the loop does with an accepted verdict.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// On to the recipe's next step.
    Approved,
    /// The writer step again, with this feedback.
    Revise(String),
    /// The task goes back to the writer to scope, for this reason.
    Rescope { kind: String, reason: String },
    /// The task is split into these.
    Split {
        subtasks: Vec<String>,
        reason: String,
    },
    /// Not confident enough to act on: the writer (the person) judges.
    Escalate(String),
}

impl Verdict {
    pub fn approved(&self) -> bool {
        self.verdict == "approved"
    }

    /// Where an accepted verdict sends the draft.
    pub fn route(&self, threshold: f64) -> Route {
        if self.confidence < threshold {
            return Route::Escalate(format!(
                "the reviewer's confidence ({:.2}) is below {threshold:.2}; it {} the draft: {}",
                self.confidence,
                if self.approved() {
                    "approved"
                } else {
                    "rejected"
                },
                self.feedback.trim()
            ));
        }
        if self.approved() {
            return Route::Approved;
        }
        match self.rejection_type.as_deref() {
            Some("too_big") => Route::Split {
                subtasks: self.subtasks.clone(),
                reason: self.feedback.trim().to_owned(),
            },
            Some(kind @ ("misscoped" | "architectural")) => Route::Rescope {
                kind: kind.to_owned(),
                reason: self.feedback.trim().to_owned(),
            },
            _ => Route::Revise(self.revision_notes()),
        }
    }

    /// The feedback and each violation, for the writer agent.
    pub fn revision_notes(&self) -> String {
        let mut out = format!("{}\n", self.feedback.trim());
        for entry in self.sop_review.iter().filter(|e| e.status == "violated") {
            for violation in &entry.violations {
                out.push_str(&format!("- {}: {}\n", entry.sop_id, violation.trim()));
            }
        }
        out
    }
}

/// The rules that apply to `draft`.
pub fn applicable<'r>(
    rules: &'r [ReviewRule],
    workspace: &Workspace,
    draft: &str,
) -> Vec<&'r ReviewRule> {
    let lowered = draft.to_lowercase();
    rules
        .iter()
        .filter(|rule| match rule.applies_when.as_deref().map(str::trim) {
            None | Some("always") => true,
            Some("dialogue") => has_dialogue(draft),
            Some(name) => {
                let names: Vec<String> = workspace
                    .catalog()
                    .resolve_card(name, &[CardKind::Character, CardKind::Location])
                    .and_then(|file| file.card())
                    .map(|card| card.names().map(|n| n.text.to_lowercase()).collect())
                    .unwrap_or_else(|| vec![name.to_lowercase()]);
                names.iter().any(|n| lowered.contains(n.as_str()))
            }
        })
        .collect()
}

fn has_dialogue(text: &str) -> bool {
    text.contains('“') || text.matches('"').count() >= 2
}

/// The rules as the reviewer's prompt lists them.
pub fn rules_text(rules: &[&ReviewRule]) -> String {
    rules
        .iter()
        .map(|rule| format!("- `{}`: {}\n", rule.id, rule.rule.trim()))
        .collect()
}

/// Reads and checks a verdict; every reason it is not acceptable otherwise.
pub fn validate(
    value: &Value,
    applicable: &[&ReviewRule],
    all: &[ReviewRule],
    draft: &str,
) -> Result<Verdict, Vec<String>> {
    let verdict: Verdict = serde_json::from_value(value.clone()).map_err(|error| {
        vec![format!(
            "the verdict does not have the expected shape: {error}"
        )]
    })?;
    let mut errors = Vec::new();
    match verdict.verdict.as_str() {
        "approved" | "rejected" => {}
        other => errors.push(format!(
            "`verdict` is `{other}`; it must be `approved` or `rejected`"
        )),
    }
    if !(0.0..=1.0).contains(&verdict.confidence) {
        errors.push(format!(
            "`confidence` is {}; it must be from 0 to 1",
            verdict.confidence
        ));
    }
    if verdict.feedback.trim().is_empty() {
        errors.push("`feedback` is empty; say what is good and what must change".to_owned());
    }
    match (verdict.verdict.as_str(), verdict.rejection_type.as_deref()) {
        ("rejected", None) => errors.push(format!(
            "a rejection needs a `rejection_type`: one of {}",
            REJECTION_TYPES.join(", ")
        )),
        ("rejected", Some(kind)) if !REJECTION_TYPES.contains(&kind) => errors.push(format!(
            "`rejection_type` is `{kind}`; it must be one of {}",
            REJECTION_TYPES.join(", ")
        )),
        ("rejected", Some("too_big")) if verdict.subtasks.len() < 2 => errors.push(
            "a `too_big` rejection lists at least two `subtasks`, each a task description"
                .to_owned(),
        ),
        _ => {}
    }
    let quotes = Quotes::new(draft);
    let mut seen: Vec<&str> = Vec::new();
    for (index, entry) in verdict.sop_review.iter().enumerate() {
        let at = format!("sop_review[{index}] (`{}`)", entry.sop_id);
        let Some(rule) = all.iter().find(|rule| rule.id == entry.sop_id) else {
            let ids: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
            errors.push(format!(
                "{at}: there is no such rule; the rules are {}",
                ids.join(", ")
            ));
            continue;
        };
        if seen.contains(&rule.id.as_str()) {
            errors.push(format!("{at}: the rule is reviewed twice"));
        }
        seen.push(&rule.id);
        let applies = applicable.iter().any(|r| r.id == rule.id);
        match entry.status.as_str() {
            "passed" | "violated" => {
                if entry.evidence.trim().is_empty() {
                    errors.push(format!("{at}: `evidence` is empty"));
                } else if !quotes.quoted_in(&entry.evidence) {
                    errors.push(format!(
                        "{at}: the evidence quotes nothing of the draft; quote at least {QUOTE_WORDS} words of it exactly"
                    ));
                }
            }
            "not_applicable" if applies => errors.push(format!(
                "{at}: the rule applies to this draft; judge it `passed` or `violated`"
            )),
            "not_applicable" => {
                if entry.evidence.trim().is_empty() {
                    errors.push(format!(
                        "{at}: `evidence` is empty; say why it does not apply"
                    ));
                }
            }
            other => errors.push(format!(
                "{at}: `status` is `{other}`; it must be passed, violated or not_applicable"
            )),
        }
        if entry.status == "violated" {
            if entry.violations.iter().all(|v| v.trim().is_empty()) {
                errors.push(format!("{at}: a violated rule lists its `violations`"));
            }
            if verdict.approved() {
                errors.push(format!(
                    "{at}: the rule is violated, so the verdict cannot be `approved`"
                ));
            }
        }
    }
    for rule in applicable {
        if !seen.contains(&rule.id.as_str()) {
            errors.push(format!(
                "rule `{}` applies to this draft and is not reviewed",
                rule.id
            ));
        }
    }
    if errors.is_empty() {
        Ok(verdict)
    } else {
        Err(errors)
    }
}

/// The draft's runs of words, to tell a quotation from a paraphrase.
struct Quotes {
    words: Vec<String>,
    runs: std::collections::HashSet<Vec<String>>,
}

impl Quotes {
    fn new(draft: &str) -> Quotes {
        let words = normal_words(draft);
        let runs = words.windows(QUOTE_WORDS).map(<[String]>::to_vec).collect();
        Quotes { words, runs }
    }

    fn quoted_in(&self, evidence: &str) -> bool {
        let words = normal_words(evidence);
        if self.words.len() < QUOTE_WORDS {
            // A draft this short is quoted whole or not at all.
            return !self.words.is_empty()
                && words
                    .windows(self.words.len())
                    .any(|w| w == self.words.as_slice());
        }
        words
            .windows(QUOTE_WORDS)
            .any(|window| self.runs.contains(window))
    }
}

/// Lowercase words, apostrophes folded, punctuation dropped.
fn normal_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|word| {
            word.trim_matches(['\'', '’'])
                .replace('’', "'")
                .to_lowercase()
        })
        .filter(|word| !word.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const DRAFT: &str = "Mara Vell waited at the harbour wall. “Come home,” she said to the sea, and the sea said nothing back.";

    fn rules() -> Vec<ReviewRule> {
        let rule = |id: &str, when: Option<&str>| ReviewRule {
            id: id.into(),
            rule: format!("the {id} rule"),
            applies_when: when.map(str::to_owned),
        };
        vec![
            rule("beats", None),
            rule("voices", Some("dialogue")),
            rule("kael", Some("Kael Maren")),
        ]
    }

    fn check(value: Value) -> Result<Verdict, Vec<String>> {
        let workspace = Workspace::new(std::path::Path::new("/nonexistent"));
        let all = rules();
        let applicable = applicable(&all, &workspace, DRAFT);
        validate(&value, &applicable, &all, DRAFT)
    }

    fn entry(id: &str, status: &str, evidence: &str) -> Value {
        json!({"sop_id": id, "status": status, "evidence": evidence, "violations": if status == "violated" { json!(["a violation"]) } else { json!([]) }})
    }

    fn verdict(verdict: &str, kind: Option<&str>, entries: Vec<Value>) -> Value {
        json!({"verdict": verdict, "rejection_type": kind, "sop_review": entries, "confidence": 0.9, "feedback": "Tighten the ending."})
    }

    #[test]
    fn applicability_follows_the_draft() {
        let workspace = Workspace::new(std::path::Path::new("/nonexistent"));
        let all = rules();
        let ids = |draft: &str| {
            applicable(&all, &workspace, draft)
                .iter()
                .map(|r| r.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(DRAFT), ["beats", "voices"]);
        assert_eq!(ids("Kael Maren left."), ["beats", "kael"]);
    }

    #[test]
    fn a_well_grounded_verdict_is_accepted_and_routed() {
        let accepted = check(verdict(
            "approved",
            None,
            vec![
                entry(
                    "beats",
                    "passed",
                    "She waits: \"waited at the harbour wall\".",
                ),
                entry("voices", "passed", "“Come home,” she said to the sea"),
            ],
        ))
        .unwrap();
        assert_eq!(accepted.route(0.7), Route::Approved);
        assert!(matches!(accepted.route(0.95), Route::Escalate(reason) if reason.contains("0.90")));
    }

    #[test]
    fn rubber_stamps_are_refused() {
        // Approved with a violation, a rule missing, evidence that quotes nothing.
        let errors = check(verdict(
            "approved",
            None,
            vec![entry("beats", "violated", "the sea said nothing back")],
        ))
        .unwrap_err();
        assert!(
            errors.iter().any(|e| e.contains("cannot be `approved`")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("`voices` applies to this draft and is not reviewed")),
            "{errors:?}"
        );
        let errors = check(verdict(
            "rejected",
            Some("fixable"),
            vec![
                entry("beats", "passed", "The beats are all there."),
                entry("voices", "not_applicable", "No dialogue."),
                entry("nonsense", "passed", "x"),
            ],
        ))
        .unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| e.contains("(`beats`): the evidence quotes nothing")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("(`voices`): the rule applies")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("(`nonsense`): there is no such rule")),
            "{errors:?}"
        );
    }

    #[test]
    fn rejections_route_by_kind() {
        let entries = || {
            vec![
                entry("beats", "violated", "waited at the harbour wall"),
                entry("voices", "passed", "she said to the sea"),
            ]
        };
        let fixable = check(verdict("rejected", Some("fixable"), entries())).unwrap();
        assert!(
            matches!(fixable.route(0.7), Route::Revise(notes) if notes.contains("Tighten the ending.") && notes.contains("- beats: a violation"))
        );
        let scope = check(verdict("rejected", Some("misscoped"), entries())).unwrap();
        assert!(matches!(scope.route(0.7), Route::Rescope { kind, .. } if kind == "misscoped"));
        let errors = check(verdict("rejected", Some("too_big"), entries())).unwrap_err();
        assert!(errors[0].contains("at least two `subtasks`"), "{errors:?}");
        let mut big = verdict("rejected", Some("too_big"), entries());
        big["subtasks"] = json!(["Draft the quarrel", "Draft the parting"]);
        let big = check(big).unwrap();
        assert!(matches!(big.route(0.7), Route::Split { subtasks, .. } if subtasks.len() == 2));
        assert!(
            check(verdict("rejected", None, entries())).unwrap_err()[0]
                .contains("needs a `rejection_type`")
        );
    }
}

//! The recipe file as read: the serde types a validated recipe deserialises
//! into, with the defaults of the `review` block, and the steps of both
//! phases as the runner walks them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::runs::prompts::PromptStep;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    pub recipe_id: String,
    pub label: String,
    #[serde(default)]
    pub task_patterns: Vec<String>,
    #[serde(default)]
    pub phase_a: Vec<ToolStep>,
    #[serde(default)]
    pub phase_b: Vec<AgentStep>,
    #[serde(default)]
    pub dod: Vec<DodCheck>,
    /// The writer → gates → reviewer loop after one agent step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
}

/// A recipe's `review` block (the adversarial roles of ADR-003, for prose):
/// after the `after` step (the writer), deterministic gates judge its draft;
/// only a draft that passes them goes to the reviewer, whose verdict sends it
/// on, back to the writer with feedback, or out of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// The phase B step whose output is reviewed (the writer).
    pub after: String,
    #[serde(default = "default_review_id")]
    pub step_id: String,
    #[serde(default = "default_reviewer")]
    pub agent_archetype: String,
    #[serde(default = "default_review_prompt")]
    pub prompt_type: String,
    /// Slots the reviewer reads besides the draft (the brief, the canon).
    #[serde(default)]
    pub input_slots: Vec<String>,
    /// Where the accepted verdict goes (each iteration's in `{slot}#N`).
    #[serde(default = "default_review_id")]
    pub output_slot: String,
    #[serde(default)]
    pub gates: GateSettings,
    pub rules: Vec<ReviewRule>,
    /// Drafts the writer may make, the first included.
    #[serde(default = "default_iterations")]
    pub max_iterations: u32,
    /// A verdict less confident than this goes to the writer (the person).
    #[serde(default = "default_confidence")]
    pub confidence_threshold: f64,
}

/// The deterministic gates, each on unless turned off.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GateSettings {
    /// No `dead-character`, `attribute-mismatch`, `name-typo` or
    /// `unknown-reference` in the draft.
    pub continuity: bool,
    /// No phrase of the anti-pattern sheets.
    pub anti_patterns: bool,
    /// Within `word_tolerance` of the scene's `words:` target, when it has one.
    pub word_count: bool,
    pub word_tolerance: f64,
    /// With no target, the fewest words a draft may have: less is not a
    /// scene (a model's chatter, an echo of its task).
    pub min_words: u32,
    /// Told in the same person as the point-of-view character's other
    /// scenes, and naming that character when told in the third.
    pub pov: bool,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            continuity: true,
            anti_patterns: true,
            word_count: true,
            word_tolerance: 0.2,
            min_words: 100,
            pov: true,
        }
    }
}

/// One rule the reviewer must judge (an SOP of the ADR, for prose).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewRule {
    pub id: String,
    pub rule: String,
    /// When the rule applies: `always` (the default), `dialogue` (the draft
    /// has dialogue), or a card's name (the draft names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies_when: Option<String>,
}

pub(super) fn default_review_id() -> String {
    "review".to_owned()
}

fn default_reviewer() -> String {
    "reviewer".to_owned()
}

pub(super) fn default_review_prompt() -> String {
    "review_draft".to_owned()
}

fn default_iterations() -> u32 {
    3
}

fn default_confidence() -> f64 {
    0.7
}

/// The id of the gates step of a review loop, and its slot.
pub const GATES_STEP: &str = "gates";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolStep {
    pub step_id: String,
    pub tool: String,
    #[serde(default)]
    pub args: Map<String, Value>,
    pub output_slot: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentStep {
    pub step_id: String,
    pub agent_archetype: String,
    #[serde(default)]
    pub input_slots: Vec<String>,
    pub output_slot: String,
    pub prompt_type: String,
}

impl AgentStep {
    /// The step as its prompt is built for it.
    pub fn prompt_step(&self) -> PromptStep<'_> {
        PromptStep {
            step_id: &self.step_id,
            agent_archetype: &self.agent_archetype,
            prompt_type: &self.prompt_type,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DodCheck {
    pub check: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Value>,
}

/// One step of either phase, as the runner walks them.
#[derive(Clone, Copy, Debug)]
pub enum Step<'a> {
    Tool(&'a ToolStep),
    Agent(&'a AgentStep),
}

impl<'a> Step<'a> {
    pub fn id(&self) -> &'a str {
        match self {
            Step::Tool(step) => &step.step_id,
            Step::Agent(step) => &step.step_id,
        }
    }

    pub fn output_slot(&self) -> &'a str {
        match self {
            Step::Tool(step) => &step.output_slot,
            Step::Agent(step) => &step.output_slot,
        }
    }

    /// `"a"` or `"b"`, as run.json and steps.jsonl write it.
    pub fn phase(&self) -> &'static str {
        match self {
            Step::Tool(_) => "a",
            Step::Agent(_) => "b",
        }
    }
}

impl Recipe {
    /// Phase A then phase B, in order.
    pub fn steps(&self) -> impl Iterator<Item = Step<'_>> {
        self.phase_a
            .iter()
            .map(Step::Tool)
            .chain(self.phase_b.iter().map(Step::Agent))
    }

    pub fn step_count(&self) -> usize {
        self.phase_a.len() + self.phase_b.len()
    }

    pub fn step(&self, index: usize) -> Option<Step<'_>> {
        self.steps().nth(index)
    }
}

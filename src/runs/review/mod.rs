//! The writer → gates → reviewer loop (ADR-003's adversarial roles, for
//! prose), as a recipe's `review` block declares it.
//!
//! After the reviewed step (the writer) come two more: `gates`, the
//! deterministic checks of [`gates`], and the reviewer, whose JSON verdict
//! [`verdict`] validates. What follows depends on what they said:
//!
//! ```text
//! writer#k ─▶ gates#k ──failed──▶ writer#k+1 (with the failures)
//!                │passed
//!                ▼
//!            review#k ──fixable──▶ writer#k+1 (with the feedback)
//!                │ approved        misscoped/architectural ─▶ the task needs scoping
//!                ▼                 too_big ─▶ the task is split
//!         the recipe's next step   confidence below the threshold ─▶ the writer judges
//! ```
//!
//! At most `max_iterations` drafts are made; the last one still refused
//! goes to the writer too. [`Schedule`] is that machine, a pure function of
//! the steps' outputs, so a resumed run replays `steps.jsonl` through it to
//! find where it stopped. Each iteration's outputs have their own slots
//! (`draft#1`, `gates#2`, `review#2`); the plain name (`draft`) is the
//! latest, which later steps, the Definition of Done and delivery read.

pub mod gates;
pub mod verdict;

pub use crate::runs::store::{Outcome, ReviewState};
use serde_json::Value;

use crate::runs::recipe::{AgentStep, GATES_STEP, Recipe, Review, Step, ToolStep};

/// The tool name a gates step's receipt carries.
pub const GATES_TOOL: &str = "review_gates";

/// Where a run stands: a recipe step outside the loop, or a stage of one
/// iteration of it (from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Recipe(usize),
    Writer(u32),
    Gates(u32),
    Review(u32),
}

/// What comes after a stage.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    Stage(Stage),
    /// Every step is done: the Definition of Done is next.
    End,
    /// The loop ends the run without a draft to go on with.
    Stop(Stop),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stop {
    pub outcome: Outcome,
    pub reason: String,
    pub subtasks: Vec<String>,
}

/// Follows the loop in run.json's `review`: `stage` finished and `next`
/// comes.
pub trait FollowLoop {
    fn note(&mut self, stage: Stage, next: &Next);
}

impl FollowLoop for ReviewState {
    fn note(&mut self, stage: Stage, next: &Next) {
        match (stage, next) {
            (_, Next::Stop(stop)) => {
                self.outcome = stop.outcome;
                self.reason = Some(stop.reason.clone());
                self.subtasks.clone_from(&stop.subtasks);
            }
            (Stage::Writer(k), _) => {
                self.iterations = k;
                self.outcome = Outcome::Reviewing;
            }
            (Stage::Review(_), Next::Stage(Stage::Recipe(_)) | Next::End) => {
                self.outcome = Outcome::Approved;
            }
            _ => {}
        }
    }
}

/// One step as the runner runs it.
#[derive(Clone, Debug)]
pub enum Planned<'r> {
    Tool(&'r ToolStep),
    /// A recipe agent, or the loop's writer or reviewer renamed for its iteration.
    Agent(AgentStep),
    Gates {
        step_id: String,
        slot: String,
    },
}

impl Planned<'_> {
    pub fn id(&self) -> &str {
        match self {
            Planned::Tool(step) => &step.step_id,
            Planned::Agent(step) => &step.step_id,
            Planned::Gates { step_id, .. } => step_id,
        }
    }

    pub fn slot(&self) -> &str {
        match self {
            Planned::Tool(step) => &step.output_slot,
            Planned::Agent(step) => &step.output_slot,
            Planned::Gates { slot, .. } => slot,
        }
    }

    /// `"a"` or `"b"`, as run.json and steps.jsonl write it (the gates run
    /// in phase B, between agents).
    pub fn phase(&self) -> &'static str {
        match self {
            Planned::Tool(_) => "a",
            Planned::Agent(_) | Planned::Gates { .. } => "b",
        }
    }

    /// Who runs it: the tool or the agent archetype.
    pub fn actor(&self) -> &str {
        match self {
            Planned::Tool(step) => &step.tool,
            Planned::Agent(step) => &step.agent_archetype,
            Planned::Gates { .. } => GATES_TOOL,
        }
    }
}

/// The order a recipe's steps run in, its review loop included.
#[derive(Clone, Copy, Debug)]
pub struct Schedule<'r> {
    recipe: &'r Recipe,
    /// The review block, the index (in [`Recipe::steps`]) of its writer, and
    /// the writer.
    review: Option<(&'r Review, usize, &'r AgentStep)>,
}

/// `name` for the first iteration, `name#k` after.
fn iteration_id(name: &str, k: u32) -> String {
    if k <= 1 {
        name.to_owned()
    } else {
        format!("{name}#{k}")
    }
}

/// An iteration's own slot: `name#k`.
pub fn iteration_slot(name: &str, k: u32) -> String {
    format!("{name}#{k}")
}

impl<'r> Schedule<'r> {
    pub fn new(recipe: &'r Recipe) -> Schedule<'r> {
        let review = recipe.review.as_ref().and_then(|review| {
            recipe
                .steps()
                .enumerate()
                .find_map(|(index, step)| match step {
                    Step::Agent(writer) if writer.step_id == review.after => {
                        Some((review, index, writer))
                    }
                    _ => None,
                })
        });
        Schedule { recipe, review }
    }

    /// The recipe's review block and the writer step it reviews.
    pub fn review(&self) -> Option<(&'r Review, &'r AgentStep)> {
        self.review.map(|(review, _, writer)| (review, writer))
    }

    pub fn first(&self) -> Option<Stage> {
        self.at(0)
    }

    fn at(&self, index: usize) -> Option<Stage> {
        if index >= self.recipe.step_count() {
            None
        } else if self.review.is_some_and(|(_, writer, _)| writer == index) {
            Some(Stage::Writer(1))
        } else {
            Some(Stage::Recipe(index))
        }
    }

    fn writer(&self) -> (&'r Review, &'r AgentStep, usize) {
        let (review, index, writer) = self.review.expect("a loop stage needs a review block");
        (review, writer, index)
    }

    /// The step a stage runs.
    pub fn planned(&self, stage: Stage) -> Planned<'r> {
        match stage {
            Stage::Recipe(index) => match self.recipe.step(index).expect("a stage in range") {
                Step::Tool(tool) => Planned::Tool(tool),
                Step::Agent(agent) => Planned::Agent(agent.clone()),
            },
            Stage::Writer(k) => {
                let (_, writer, _) = self.writer();
                Planned::Agent(AgentStep {
                    step_id: iteration_id(&writer.step_id, k),
                    output_slot: iteration_slot(&writer.output_slot, k),
                    ..writer.clone()
                })
            }
            Stage::Gates(k) => Planned::Gates {
                step_id: iteration_id(GATES_STEP, k),
                slot: iteration_slot(GATES_STEP, k),
            },
            Stage::Review(k) => {
                let (review, _, _) = self.writer();
                Planned::Agent(AgentStep {
                    step_id: iteration_id(&review.step_id, k),
                    agent_archetype: review.agent_archetype.clone(),
                    input_slots: review.input_slots.clone(),
                    output_slot: iteration_slot(&review.output_slot, k),
                    prompt_type: review.prompt_type.clone(),
                })
            }
        }
    }

    /// The plain slot a loop stage's output also goes to (the latest
    /// iteration's), `None` outside the loop.
    pub fn alias(&self, stage: Stage) -> Option<String> {
        match stage {
            Stage::Recipe(_) => None,
            Stage::Writer(_) => Some(self.writer().1.output_slot.clone()),
            Stage::Gates(_) => Some(GATES_STEP.to_owned()),
            Stage::Review(_) => Some(self.writer().0.output_slot.clone()),
        }
    }

    /// The steps of a run whose loop is at iteration `k` (at least the first).
    pub fn total(&self, k: u32) -> usize {
        self.recipe.step_count()
            + if self.review.is_some() {
                2 * k.max(1) as usize
            } else {
                0
            }
    }

    /// What follows `stage`, given its output `value`.
    pub fn after(&self, stage: Stage, value: &Value) -> Next {
        let next = |index: usize| self.at(index).map_or(Next::End, Next::Stage);
        match stage {
            Stage::Recipe(index) => next(index + 1),
            Stage::Writer(k) => Next::Stage(Stage::Gates(k)),
            Stage::Gates(k) => {
                let report: Option<gates::GateReport> = serde_json::from_value(value.clone()).ok();
                match report {
                    Some(report) if report.passed => Next::Stage(Stage::Review(k)),
                    report => self.again(
                        k,
                        format!(
                            "draft {k} still fails the gates:\n{}",
                            report.map_or_else(
                                || "(the gates' report is unreadable)".to_owned(),
                                |r| r.feedback()
                            )
                        ),
                    ),
                }
            }
            Stage::Review(k) => {
                let (review, _, writer) = self.writer();
                let Ok(verdict) = serde_json::from_value::<verdict::Verdict>(value.clone()) else {
                    return Next::Stop(Stop {
                        outcome: Outcome::Escalated,
                        reason: "the reviewer's verdict is unreadable".to_owned(),
                        subtasks: Vec::new(),
                    });
                };
                match verdict.route(review.confidence_threshold) {
                    verdict::Route::Approved => next(writer + 1),
                    verdict::Route::Revise(notes) => self.again(
                        k,
                        format!("the reviewer still rejects draft {k}: {}", notes.trim()),
                    ),
                    verdict::Route::Rescope { kind, reason } => Next::Stop(Stop {
                        outcome: Outcome::NeedsScoping,
                        reason: format!("the reviewer judged the task {kind}: {reason}"),
                        subtasks: Vec::new(),
                    }),
                    verdict::Route::Split { subtasks, reason } => Next::Stop(Stop {
                        outcome: Outcome::Split,
                        reason: format!("the reviewer judged the task too big: {reason}"),
                        subtasks,
                    }),
                    verdict::Route::Escalate(reason) => Next::Stop(Stop {
                        outcome: Outcome::Escalated,
                        reason,
                        subtasks: Vec::new(),
                    }),
                }
            }
        }
    }

    /// The writer again, unless it has had its drafts.
    fn again(&self, k: u32, reason: String) -> Next {
        let (review, _, _) = self.writer();
        if k < review.max_iterations {
            Next::Stage(Stage::Writer(k + 1))
        } else {
            Next::Stop(Stop {
                outcome: Outcome::Escalated,
                reason: format!(
                    "after {k} draft{} the loop gives up, as the recipe allows no more; {reason}",
                    if k == 1 { "" } else { "s" }
                ),
                subtasks: Vec::new(),
            })
        }
    }
}

/// What the writer is told when it drafts again after iteration `k`: its
/// draft and why it went back (the gates' failures, else the reviewer's
/// feedback). `None` when the outputs are missing.
pub fn revision_request(
    values: &std::collections::HashMap<String, Value>,
    writer_slot: &str,
    review_slot: &str,
    k: u32,
) -> Option<(String, String)> {
    let draft = values.get(&iteration_slot(writer_slot, k))?;
    let draft = draft
        .as_str()
        .map_or_else(|| draft.to_string(), str::to_owned);
    let gates: gates::GateReport =
        serde_json::from_value(values.get(&iteration_slot(GATES_STEP, k))?.clone()).ok()?;
    let why = if gates.passed {
        let verdict: verdict::Verdict =
            serde_json::from_value(values.get(&iteration_slot(review_slot, k))?.clone()).ok()?;
        format!(
            "A reviewer read your draft and sent it back. Revise it to answer this feedback, and keep what it does not mention:\n\n{}",
            verdict.revision_notes().trim()
        )
    } else {
        format!(
            "Your draft failed these checks of the manuscript, so no reviewer has read it yet. Revise it so that it passes them:\n\n{}",
            gates.feedback().trim()
        )
    };
    Some((draft, why))
}

#[cfg(test)]
mod tests;

//! The run machinery (Mode B of the execution-modes spec): recipes as data,
//! the task router, `$ref` resolution, the step runner that persists every
//! run under `.control-room/runs/`, prompts, contracts, review, reports, and
//! what an output does to the manuscript (drafts, edits, delivery). The
//! phase A tools it runs are `crate::tools`.
//!
//! Nothing here knows LSP; the CLI and the server drive it and listen to its
//! events through [`events::RunSink`].
//!
//! ## Parts
//!
//! `recipe/` the file as read, the rules (`RecipeRule`), the validator, the registry, task
//! patterns; `router` picks a recipe for a task (above `recipe/`, which is above `prompts/`: a
//! prompt is built for a `PromptStep`, not a recipe's step); `refs` resolves `$ref`; `tools/`
//! the phase A tools (`health_reader` what a model needs to read a scene's health).
//!
//! `story_health` what the runs of `analytical_story_health` read of each scene, with the
//! writer's overrides, for the health report's A3, B1 and C2.
//!
//! `launch` resolves a recipe id or a task into a run, creates it with the mark of the scene it
//! will write, and executes it in a task of its own: a `RunHandle` with events.
//!
//! `runner/` the step loop (`mod.rs`), `record` what a finished step leaves on disk (its
//! receipt, then its line with its slot, through the run's committer), `cited` the files of the
//! tool receipts the run wrote, which an agent step may name, the agent step (its packet built
//! first and sent closing the prompt, then the model asked until a reply keeps its contract,
//! through `model::Metered`, which sums what every call cost into the step's `tokens` in
//! steps.jsonl), `receipt` the agent receipt (drafted, finished, completed with the agent's own
//! part when its reply is its receipt), `micro` a t1 model's finding step as triage, findings
//! and evidence (each a small JSON reply with a child packet, assembled into the step's reply),
//! the tool step, the review loop, reuse, resume, the Definition of Done; `prompts/` the
//! context sandwich by tier (with a conversation's history as layer 6, a sliding window whose
//! oldest turns are trimmed first); `work_order` the Story Bible's state in the session state
//! by mode; `protocol/` the forgiving reader of replies; `contract/` holds a reply to its
//! contract (`prose`: cut off, talk, echo; `receipt`: a receipt step's reply, the agent's part
//! of a receipt v0.1). Packets and receipts themselves are the crate's `receipts`.
//!
//! `store/` a run's folder (`run.json`, `steps.jsonl`, `cache.json`) as domain types; the
//! journal (`steps.jsonl`, each line with its step's slot) is the truth while a run goes:
//! `run.json` is rewritten when the phase, the review loop or the count of steps changes and
//! `cache.json` when the run ends, and readers of a running run take the slots and the progress
//! from the lines; `store/wire` the only types serde reads and writes for those files, with the
//! format's version (a newer one is refused, never guessed at). A steps.jsonl line is a bare
//! record of what happened, so its wire type (`StepLine`) is the one type.
//!
//! `output/` what an output does to the manuscript: a run's draft, its edits, the delivery
//! that decides between them, and the Foreman's and the voice's changes.

pub mod contract;
pub mod events;
pub mod findings;
pub mod launch;
pub mod output;
pub mod prompts;
pub mod recipe;
pub mod refs;
pub mod report;
pub mod review;
pub mod router;
pub mod runner;
pub mod store;
pub mod story_health;

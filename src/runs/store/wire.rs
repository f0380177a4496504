//! The wire format of a run's folder: the only types serde reads and writes
//! for `run.json`, the lines of `steps.jsonl` and `cache.json`, kept apart
//! from the domain types of [`super`] so that a change to those never
//! changes a file by accident.
//!
//! `run.json` carries the folder's format version. A file without one is
//! version 1 (written before the field existed); a file with a version this
//! build does not know is refused before the rest of it is read, never
//! guessed at. `steps.jsonl` and `cache.json` are read under the version of
//! their run's `run.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Cache, CacheSlot, Outcome, ReviewState, RunManifest, RunStatus, RunTask, SceneMark};

/// The version of the run folder's format this build writes, and the newest
/// it reads. A `run.json` without a version is version 1.
pub const RUN_FORMAT_VERSION: u32 = 1;

fn version_1() -> u32 {
    1
}

/// `run.json` as it is on disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunJson {
    #[serde(default = "version_1")]
    pub version: u32,
    pub run_id: String,
    pub recipe_id: String,
    pub session_id: String,
    pub status: StatusJson,
    pub created_at: String,
    pub updated_at: String,
    pub completed_at: Option<String>,
    pub task: TaskJson,
    pub current_step_index: usize,
    pub total_steps: usize,
    pub phase: Option<String>,
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<SceneMarkJson>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
}

/// `status` in run.json.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusJson {
    Pending,
    Running,
    Done,
    Failed,
    Cancelled,
}

/// `task` in run.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskJson {
    pub description: String,
    pub session_plan_task_id: Option<u64>,
    pub initial_args: Map<String, Value>,
}

/// `review` in run.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReviewJson {
    pub iterations: u32,
    pub outcome: OutcomeJson,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subtasks: Vec<String>,
}

/// `review.outcome` in run.json.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeJson {
    Reviewing,
    Approved,
    Escalated,
    NeedsScoping,
    Split,
}

/// `scene` in run.json.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SceneMarkJson {
    pub sha256: Option<String>,
}

/// One line of steps.jsonl.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepLine {
    pub step_index: usize,
    pub step_id: String,
    pub phase: String,
    pub tool: Option<String>,
    pub agent_archetype: Option<String>,
    pub agent_id: Option<String>,
    pub status: String,
    pub output_slot: String,
    pub receipt_id: Option<String>,
    pub input_slot_refs: Vec<String>,
    pub output_hash: String,
    pub output_preview: String,
    pub started_at: String,
    pub completed_at: String,
    pub error: Option<String>,
    /// What the step's model calls cost (an agent step that asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<crate::llm::model::Usage>,
    /// The step's output as cache.json keeps it. The line carries it so
    /// that a step is recorded by one append: cache.json is written when
    /// the run ends (and on resume), and a reader of a run that
    /// has not ended takes each slot from its line. Absent in lines written
    /// before the field existed, whose cache.json has every slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<SlotJson>,
    /// The plain slot a review loop's stage also fills (the latest
    /// iteration's), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_alias: Option<String>,
}

impl StepLine {
    /// A line that says only which step finished and into which slot,
    /// for tests to fill in.
    #[cfg(test)]
    pub(crate) fn for_tests(step_index: usize, step_id: &str, output_slot: &str) -> StepLine {
        StepLine {
            step_index,
            step_id: step_id.into(),
            phase: "b".into(),
            tool: None,
            agent_archetype: None,
            agent_id: None,
            status: "done".into(),
            output_slot: output_slot.into(),
            receipt_id: None,
            input_slot_refs: Vec::new(),
            output_hash: String::new(),
            output_preview: String::new(),
            started_at: String::new(),
            completed_at: String::new(),
            error: None,
            tokens: None,
            slot: None,
            slot_alias: None,
        }
    }

    /// The slots this line fills, by name: its own and its alias.
    pub fn slots(&self) -> impl Iterator<Item = (String, CacheSlot)> + '_ {
        self.slot.iter().flat_map(|slot| {
            let slot = CacheSlot::from(slot.clone());
            std::iter::once(self.output_slot.clone())
                .chain(self.slot_alias.clone())
                .map(move |name| (name, slot.clone()))
        })
    }
}

/// One slot of cache.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum SlotJson {
    Pointer {
        receipt_id: String,
        sha256: String,
        summary: String,
    },
    Artifact {
        agent_id: String,
        text: String,
        sha256: String,
        summary: String,
    },
}

/// cache.json as it is on disk.
pub type CacheJson = BTreeMap<String, SlotJson>;

/// Why a run.json could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// Not JSON, or not the shape of its version.
    Damaged(serde_json::Error),
    /// A version this build does not read.
    Version(u32),
}

/// Only the version of a run.json, read before the rest so that a newer
/// shape is never read as this build's.
#[derive(Deserialize)]
struct VersionOnly {
    #[serde(default = "version_1")]
    version: u32,
}

/// Reads the text of a run.json into the domain's manifest.
pub fn read_manifest(text: &str) -> Result<RunManifest, ReadError> {
    let VersionOnly { version } = serde_json::from_str(text).map_err(ReadError::Damaged)?;
    if version == 0 || version > RUN_FORMAT_VERSION {
        return Err(ReadError::Version(version));
    }
    let wire: RunJson = serde_json::from_str(text).map_err(ReadError::Damaged)?;
    Ok(wire.into())
}

impl From<&RunManifest> for RunJson {
    fn from(manifest: &RunManifest) -> RunJson {
        RunJson {
            version: RUN_FORMAT_VERSION,
            run_id: manifest.run_id.clone(),
            recipe_id: manifest.recipe_id.clone(),
            session_id: manifest.session_id.clone(),
            status: manifest.status.into(),
            created_at: manifest.created_at.clone(),
            updated_at: manifest.updated_at.clone(),
            completed_at: manifest.completed_at.clone(),
            task: TaskJson {
                description: manifest.task.description.clone(),
                session_plan_task_id: manifest.task.session_plan_task_id,
                initial_args: manifest.task.initial_args.clone(),
            },
            current_step_index: manifest.current_step_index,
            total_steps: manifest.total_steps,
            phase: manifest.phase.clone(),
            error: manifest.error.clone(),
            review: manifest.review.as_ref().map(|review| ReviewJson {
                iterations: review.iterations,
                outcome: review.outcome.into(),
                reason: review.reason.clone(),
                subtasks: review.subtasks.clone(),
            }),
            scene: manifest.scene.as_ref().map(|scene| SceneMarkJson {
                sha256: scene.sha256.clone(),
            }),
            fresh: manifest.fresh,
        }
    }
}

impl From<RunJson> for RunManifest {
    fn from(wire: RunJson) -> RunManifest {
        RunManifest {
            run_id: wire.run_id,
            recipe_id: wire.recipe_id,
            session_id: wire.session_id,
            status: wire.status.into(),
            created_at: wire.created_at,
            updated_at: wire.updated_at,
            completed_at: wire.completed_at,
            task: RunTask {
                description: wire.task.description,
                session_plan_task_id: wire.task.session_plan_task_id,
                initial_args: wire.task.initial_args,
            },
            current_step_index: wire.current_step_index,
            total_steps: wire.total_steps,
            phase: wire.phase,
            error: wire.error,
            review: wire.review.map(|review| ReviewState {
                iterations: review.iterations,
                outcome: review.outcome.into(),
                reason: review.reason,
                subtasks: review.subtasks,
            }),
            scene: wire.scene.map(|scene| SceneMark {
                sha256: scene.sha256,
            }),
            fresh: wire.fresh,
        }
    }
}

impl From<RunStatus> for StatusJson {
    fn from(status: RunStatus) -> StatusJson {
        match status {
            RunStatus::Pending => StatusJson::Pending,
            RunStatus::Running => StatusJson::Running,
            RunStatus::Done => StatusJson::Done,
            RunStatus::Failed => StatusJson::Failed,
            RunStatus::Cancelled => StatusJson::Cancelled,
        }
    }
}

impl From<StatusJson> for RunStatus {
    fn from(status: StatusJson) -> RunStatus {
        match status {
            StatusJson::Pending => RunStatus::Pending,
            StatusJson::Running => RunStatus::Running,
            StatusJson::Done => RunStatus::Done,
            StatusJson::Failed => RunStatus::Failed,
            StatusJson::Cancelled => RunStatus::Cancelled,
        }
    }
}

impl From<Outcome> for OutcomeJson {
    fn from(outcome: Outcome) -> OutcomeJson {
        match outcome {
            Outcome::Reviewing => OutcomeJson::Reviewing,
            Outcome::Approved => OutcomeJson::Approved,
            Outcome::Escalated => OutcomeJson::Escalated,
            Outcome::NeedsScoping => OutcomeJson::NeedsScoping,
            Outcome::Split => OutcomeJson::Split,
        }
    }
}

impl From<OutcomeJson> for Outcome {
    fn from(outcome: OutcomeJson) -> Outcome {
        match outcome {
            OutcomeJson::Reviewing => Outcome::Reviewing,
            OutcomeJson::Approved => Outcome::Approved,
            OutcomeJson::Escalated => Outcome::Escalated,
            OutcomeJson::NeedsScoping => Outcome::NeedsScoping,
            OutcomeJson::Split => Outcome::Split,
        }
    }
}

impl From<&CacheSlot> for SlotJson {
    fn from(slot: &CacheSlot) -> SlotJson {
        match slot.clone() {
            CacheSlot::Pointer {
                receipt_id,
                sha256,
                summary,
            } => SlotJson::Pointer {
                receipt_id,
                sha256,
                summary,
            },
            CacheSlot::Artifact {
                agent_id,
                text,
                sha256,
                summary,
            } => SlotJson::Artifact {
                agent_id,
                text,
                sha256,
                summary,
            },
        }
    }
}

impl From<SlotJson> for CacheSlot {
    fn from(slot: SlotJson) -> CacheSlot {
        match slot {
            SlotJson::Pointer {
                receipt_id,
                sha256,
                summary,
            } => CacheSlot::Pointer {
                receipt_id,
                sha256,
                summary,
            },
            SlotJson::Artifact {
                agent_id,
                text,
                sha256,
                summary,
            } => CacheSlot::Artifact {
                agent_id,
                text,
                sha256,
                summary,
            },
        }
    }
}

/// cache.json as written for `cache`.
pub fn cache_json(cache: &Cache) -> CacheJson {
    cache
        .iter()
        .map(|(name, slot)| (name.clone(), slot.into()))
        .collect()
}

/// The domain's cache of a cache.json.
pub fn cache_of(wire: CacheJson) -> Cache {
    wire.into_iter()
        .map(|(name, slot)| (name, slot.into()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> RunManifest {
        RunManifest {
            run_id: "run_aaaaaaaaaaaa".into(),
            recipe_id: "creative_draft_scene".into(),
            session_id: "sess_aaaaaaaaaaaa".into(),
            status: RunStatus::Failed,
            created_at: "t0".into(),
            updated_at: "t1".into(),
            completed_at: None,
            task: RunTask {
                description: "draft".into(),
                session_plan_task_id: Some(3),
                initial_args: serde_json::json!({"scene_id": "SCN-a"})
                    .as_object()
                    .unwrap()
                    .clone(),
            },
            current_step_index: 2,
            total_steps: 5,
            phase: Some("b".into()),
            error: Some("boom".into()),
            review: Some(ReviewState {
                iterations: 2,
                outcome: Outcome::NeedsScoping,
                reason: Some("too big".into()),
                subtasks: vec!["one".into()],
            }),
            scene: Some(SceneMark {
                sha256: Some("ab".into()),
            }),
            fresh: true,
        }
    }

    #[test]
    fn a_manifest_is_written_field_for_field_as_run_json_always_was() {
        let text = serde_json::to_string_pretty(&RunJson::from(&manifest())).unwrap();
        assert_eq!(
            text,
            r#"{
  "version": 1,
  "run_id": "run_aaaaaaaaaaaa",
  "recipe_id": "creative_draft_scene",
  "session_id": "sess_aaaaaaaaaaaa",
  "status": "failed",
  "created_at": "t0",
  "updated_at": "t1",
  "completed_at": null,
  "task": {
    "description": "draft",
    "session_plan_task_id": 3,
    "initial_args": {
      "scene_id": "SCN-a"
    }
  },
  "current_step_index": 2,
  "total_steps": 5,
  "phase": "b",
  "error": "boom",
  "review": {
    "iterations": 2,
    "outcome": "needs_scoping",
    "reason": "too big",
    "subtasks": [
      "one"
    ]
  },
  "scene": {
    "sha256": "ab"
  },
  "fresh": true
}"#
        );
        assert_eq!(read_manifest(&text).unwrap(), manifest());
    }

    #[test]
    fn a_run_json_from_before_the_version_field_reads_as_version_1_and_is_written_with_it() {
        let old = r#"{
            "run_id": "run_aaaaaaaaaaaa", "recipe_id": "r", "session_id": "sess_aaaaaaaaaaaa",
            "status": "done", "created_at": "t0", "updated_at": "t1", "completed_at": "t1",
            "task": {"description": "x", "session_plan_task_id": null, "initial_args": {}},
            "current_step_index": 1, "total_steps": 1, "phase": null, "error": null
        }"#;
        let manifest = read_manifest(old).unwrap();
        assert_eq!(manifest.status, RunStatus::Done);
        assert_eq!(
            (manifest.scene.as_ref(), manifest.review.as_ref()),
            (None, None)
        );
        let written = serde_json::to_value(RunJson::from(&manifest)).unwrap();
        assert_eq!(written["version"], RUN_FORMAT_VERSION);
        assert!(written.get("scene").is_none(), "{written}");
        assert!(written.get("fresh").is_none(), "{written}");
    }

    #[test]
    fn a_run_json_of_a_newer_version_is_refused_before_its_fields_are_read() {
        // A shape this build could not read: the version alone decides.
        let newer = format!(
            r#"{{"version": {}, "manifest": {{}}}}"#,
            RUN_FORMAT_VERSION + 1
        );
        assert!(matches!(
            read_manifest(&newer),
            Err(ReadError::Version(found)) if found == RUN_FORMAT_VERSION + 1
        ));
        // A version that is not a number is damage, not a version.
        assert!(matches!(
            read_manifest(r#"{"version": "2"}"#),
            Err(ReadError::Damaged(_))
        ));
    }

    #[test]
    fn step_lines_and_cache_slots_are_written_as_steps_jsonl_and_cache_json_always_were() {
        let step = StepLine {
            step_index: 0,
            step_id: "discover".into(),
            phase: "a".into(),
            tool: Some("file_locator".into()),
            agent_archetype: None,
            agent_id: None,
            status: "done".into(),
            output_slot: "files".into(),
            receipt_id: Some("rcpt_0123456789ab".into()),
            input_slot_refs: vec![],
            output_hash: "sha256:00".into(),
            output_preview: "1 file".into(),
            started_at: "t0".into(),
            completed_at: "t1".into(),
            error: None,
            tokens: None,
            slot: None,
            slot_alias: None,
        };
        let line = serde_json::to_string(&step).unwrap();
        assert_eq!(
            line,
            r#"{"step_index":0,"step_id":"discover","phase":"a","tool":"file_locator","agent_archetype":null,"agent_id":null,"status":"done","output_slot":"files","receipt_id":"rcpt_0123456789ab","input_slot_refs":[],"output_hash":"sha256:00","output_preview":"1 file","started_at":"t0","completed_at":"t1","error":null}"#
        );
        assert_eq!(serde_json::from_str::<StepLine>(&line).unwrap(), step);
        let cache: Cache = [
            (
                "files".to_owned(),
                CacheSlot::Pointer {
                    receipt_id: "rcpt_0123456789ab".into(),
                    sha256: "00".into(),
                    summary: "1 file".into(),
                },
            ),
            (
                "draft".to_owned(),
                CacheSlot::Artifact {
                    agent_id: "writer".into(),
                    text: "Rain.".into(),
                    sha256: "01".into(),
                    summary: "Rain.".into(),
                },
            ),
        ]
        .into();
        let text = serde_json::to_string(&cache_json(&cache)).unwrap();
        assert_eq!(
            text,
            r#"{"draft":{"type":"artifact","agent_id":"writer","text":"Rain.","sha256":"01","summary":"Rain."},"files":{"type":"pointer","receipt_id":"rcpt_0123456789ab","sha256":"00","summary":"1 file"}}"#
        );
        assert_eq!(cache_of(serde_json::from_str(&text).unwrap()), cache);
    }
}

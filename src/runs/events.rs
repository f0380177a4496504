//! What a run tells the outside world while it goes. The runner emits events
//! to every sink: the terminal progress bar, plain log lines, a test recorder,
//! and the server's `$/progress` (`lsp::runs`). Persistence is not a sink: it is
//! part of the step and must succeed before the next one starts.

use std::sync::Mutex;

use crate::llm::model::Written;
use crate::runs::store::RunManifest;

#[derive(Clone, Debug, PartialEq)]
pub enum RunEvent {
    /// The run starts or resumes at `from_step`.
    Started {
        manifest: RunManifest,
        from_step: usize,
    },
    StepStarted {
        run_id: String,
        index: usize,
        total: usize,
        step_id: String,
        /// `"a"` or `"b"`.
        phase: &'static str,
        /// The tool or the agent archetype.
        actor: String,
    },
    /// An agent's reply as the model writes it (where the model streams):
    /// how many words so far, and the last of them.
    Writing {
        run_id: String,
        index: usize,
        step_id: String,
        words: usize,
        /// The end of the text so far, on one line.
        tail: String,
    },
    StepFinished {
        run_id: String,
        index: usize,
        total: usize,
        step_id: String,
        preview: String,
    },
    /// The Definition of Done is being checked.
    Checking {
        run_id: String,
    },
    Finished {
        manifest: RunManifest,
    },
}

impl RunEvent {
    /// The event for an agent's reply so far.
    pub fn writing(run_id: &str, index: usize, step_id: &str, written: Written<'_>) -> RunEvent {
        RunEvent::Writing {
            run_id: run_id.to_owned(),
            index,
            step_id: step_id.to_owned(),
            words: written.words,
            tail: written.tail.to_owned(),
        }
    }
}

pub trait RunSink: Send + Sync {
    fn event(&self, event: &RunEvent);
}

/// Keeps every event, for tests and for callers that want the log.
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<RunEvent>>,
}

impl Recorder {
    pub fn events(&self) -> Vec<RunEvent> {
        self.events
            .lock()
            .map(|events| events.clone())
            .unwrap_or_default()
    }
}

impl RunSink for Recorder {
    fn event(&self, event: &RunEvent) {
        if let Ok(mut events) = self.events.lock() {
            events.push(event.clone());
        }
    }
}

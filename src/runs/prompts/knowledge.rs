//! `<knowledge_context>` for a scene's step: the scene's part of the
//! story's graph (`kb::graph`: its point of view, place, the beats that
//! happen in it, its cast by how often each is in it (who speaks first),
//! its motifs, the scenes on either side), then the decisions the graph
//! relates to that part (those saved on the scene, or naming one of its
//! entities), promoted ones first, and the writer's constraints, which
//! always reach the prompt (with the decisions about characters, for a
//! scene not yet written, whose cast the graph does not know). A decision
//! about a scene or a character the scene does not hold stays out: the flat
//! list of the most recent decisions it replaces sent the model whatever
//! was saved last.

use std::fmt::Write as _;

use super::escape;
use super::registry::Variant;
use crate::index::Workspace;
use crate::kb::Decision;
use crate::kb::graph::{EntityKind, GraphCache, RelationKind, SceneMemo, StoryGraph, decision_key};

/// Categories that reach every prompt, whatever the scene.
const EVERYWHERE: &[&str] = &["constraint"];

/// One entity near the scene.
struct Near {
    kind: EntityKind,
    relation: RelationKind,
    label: String,
}

/// The scene's part of the graph.
pub(super) struct SceneSubgraph {
    scene: String,
    near: Vec<Near>,
    /// The graph's keys of the decisions about the scene or what is near it.
    concerned: std::collections::HashSet<String>,
}

impl SceneSubgraph {
    /// The entities around scene `id`, strongest first within each kind of
    /// relation: all of them at t5, twelve at t3, six at t1; and which of
    /// `decisions` the graph relates to them.
    pub(super) fn of(
        workspace: &Workspace,
        id: &str,
        variant: Variant,
        decisions: &[Decision],
        graph: Option<&GraphCache>,
    ) -> SceneSubgraph {
        let story = match graph {
            Some(graph) => graph.story(workspace, decisions),
            None => std::sync::Arc::new(StoryGraph::build_from(
                workspace,
                &mut SceneMemo::default(),
                decisions,
            )),
        };
        let most = match variant {
            Variant::T1 => 6,
            Variant::T3 => 12,
            Variant::T5 => usize::MAX,
        };
        // One line an entity, under its strongest relation: the point of
        // view, the place, the beats, then the cast (who speaks first) by
        // how often each is in the scene, then the scenes on either side.
        // Decisions are the knowledge's entries, not entities.
        let strength = |relation: RelationKind| match relation {
            RelationKind::PovOf => 0,
            RelationKind::LocatedAt => 1,
            RelationKind::HappensIn => 2,
            RelationKind::SpeaksIn => 3,
            RelationKind::AppearsIn => 4,
            RelationKind::Knows => 5,
            RelationKind::HappensBefore => 6,
            RelationKind::RelatedTo => 7,
        };
        let mut around = story.around_scene(id);
        around.sort_by_key(|(_, relation, _)| strength(*relation));
        let mut near: Vec<Near> = Vec::new();
        let mut keys: Vec<&str> = vec![id];
        for (entity, relation, _) in around {
            if entity.kind == EntityKind::Decision
                || near.iter().any(|known| known.label == entity.label)
            {
                continue;
            }
            if near.len() < most {
                keys.push(&entity.key);
            }
            near.push(Near {
                kind: entity.kind,
                relation,
                label: entity.label.clone(),
            });
        }
        near.truncate(most);
        let concerned = keys
            .iter()
            .flat_map(|key| story.decisions_about(key))
            .map(|decision| decision.key.clone())
            .collect();
        SceneSubgraph {
            scene: id.to_owned(),
            near,
            concerned,
        }
    }

    /// Whether `decision` is about the scene or what is in it, as the
    /// graph relates them.
    fn concerns(&self, decision: &Decision) -> bool {
        decision.scene.as_deref() == Some(self.scene.as_str())
            || self.concerned.contains(&decision_key(decision))
    }

    /// The decisions for the prompt: (knowledge context, agent memory).
    /// The knowledge: the constraints, then at most `limit` of those about
    /// the scene: promoted facts, then those saved on it, then those naming
    /// what is in it, the most recent of each.
    pub(super) fn select<'a>(
        &self,
        decisions: &'a [Decision],
        limit: usize,
    ) -> (Vec<&'a Decision>, Vec<&'a Decision>) {
        let mut knowledge = Vec::new();
        let mut promoted = Vec::new();
        let mut on_scene = Vec::new();
        let mut naming = Vec::new();
        let mut memory = Vec::new();
        // A scene nobody has written yet has no cast in the graph: every
        // decision about a character may matter to its draft.
        let cast_known = self.near.iter().any(|near| {
            matches!(
                near.kind,
                EntityKind::Character | EntityKind::Place | EntityKind::Canon
            )
        });
        for decision in decisions {
            let category = decision.category.as_str();
            if EVERYWHERE.contains(&category) || (!cast_known && ALWAYS.contains(&category)) {
                knowledge.push(decision);
            } else if MEMORY.contains(&category) {
                memory.push(decision);
            } else if self.concerns(decision) {
                if decision.promoted {
                    promoted.push(decision);
                } else if decision.scene.as_deref() == Some(self.scene.as_str()) {
                    on_scene.push(decision);
                } else {
                    naming.push(decision);
                }
            }
        }
        // The promoted facts first, then what was decided on the scene, then
        // what names its entities, each the most recent, up to `limit`.
        let mut picked: Vec<&Decision> = Vec::new();
        for group in [promoted, on_scene, naming] {
            let room = limit.saturating_sub(picked.len());
            picked.extend(most_recent(group, room));
        }
        knowledge.extend(picked);
        (knowledge, most_recent(memory, limit))
    }

    /// Writes `<knowledge_context scene="…">`: the entities, then the
    /// decisions; nothing when both are empty.
    pub(super) fn write(&self, out: &mut String, knowledge: &[&Decision]) {
        if self.near.is_empty() && knowledge.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "  <knowledge_context scene=\"{}\">",
            escape(&self.scene)
        );
        for near in &self.near {
            let _ = writeln!(
                out,
                "    <entity kind=\"{}\" relation=\"{}\">{}</entity>",
                near.kind.as_str(),
                near.relation.as_str(),
                escape(&near.label)
            );
        }
        for decision in knowledge {
            knowledge_entry(out, decision);
        }
        out.push_str("  </knowledge_context>\n");
    }
}

/// Categories that always reach the prompt.
pub(super) const ALWAYS: &[&str] = &["character", "constraint"];
/// Categories that are the agents' memory of the writer.
pub(super) const MEMORY: &[&str] = &["preference", "correction", "continuity"];

/// The decisions for a prompt: (knowledge context, agent memory), oldest first.
pub fn select_decisions(decisions: &[Decision], limit: usize) -> (Vec<&Decision>, Vec<&Decision>) {
    let mut knowledge = Vec::new();
    let mut others = Vec::new();
    let mut memory = Vec::new();
    for decision in decisions {
        let category = decision.category.as_str();
        if ALWAYS.contains(&category) {
            knowledge.push(decision);
        } else if MEMORY.contains(&category) {
            memory.push(decision);
        } else {
            others.push(decision);
        }
    }
    knowledge.extend(most_recent(others, limit));
    (knowledge, most_recent(memory, limit))
}

pub(super) fn most_recent(list: Vec<&Decision>, limit: usize) -> Vec<&Decision> {
    let skip = list.len().saturating_sub(limit);
    list.into_iter().skip(skip).collect()
}

/// Writes `<knowledge_context>` with one entry per decision to `out`,
/// unless there are none.
pub(super) fn knowledge_context(out: &mut String, knowledge: &[&Decision]) {
    if knowledge.is_empty() {
        return;
    }
    out.push_str("  <knowledge_context>\n");
    for decision in knowledge {
        knowledge_entry(out, decision);
    }
    out.push_str("  </knowledge_context>\n");
}

/// One decision as an `<entry>` of `<knowledge_context>`; a promoted one
/// says so.
pub(super) fn knowledge_entry(out: &mut String, decision: &Decision) {
    let promoted = if decision.promoted {
        " promoted=\"true\""
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "    <entry category=\"{}\" key=\"{}\"{promoted}>{}</entry>",
        escape(&decision.category),
        escape(&decision.key),
        escape(decision.value.trim())
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(category: &str, key: &str, value: &str, scene: Option<&str>) -> Decision {
        Decision {
            category: category.to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
            source: None,
            scene: scene.map(str::to_owned),
            created_at: None,
            updated_at: None,
            promoted: false,
        }
    }

    /// A knowledge base of a book in progress: constraints, decisions about
    /// each character and place, and decisions saved on scenes.
    fn decisions() -> Vec<Decision> {
        let mut all = vec![
            decision("constraint", "tense", "Past tense, close third.", None),
            decision("character", "Iria Vell", "Iria never lies to Kael.", None),
            decision(
                "world",
                "The Salt Fortress",
                "The fortress has nine lamps on its wall.",
                None,
            ),
            decision(
                "plot",
                "the gate",
                "The gate is barred at dusk by Ysolde's order.",
                Some("SCN-the-gate"),
            ),
        ];
        for n in 0..6 {
            all.push(decision(
                "plot",
                "the storm",
                &format!("The storm's {n}th surge takes the lower wall."),
                Some("SCN-the-fall"),
            ));
        }
        all.push(decision(
            "character",
            "Brannoc",
            "Brannoc owes the carters a debt.",
            None,
        ));
        all.push(decision("world", "carters", "Brannoc drinks alone.", None));
        // Named by an alias of his card only ("the Warden").
        all.push(decision(
            "plot",
            "the Warden",
            "The Warden's ring is iron.",
            None,
        ));
        all
    }

    #[test]
    fn a_scenes_knowledge_is_its_part_of_the_graph_and_the_decisions_about_it() {
        let workspace = Workspace::load(&crate::index::test_support::example_root());
        let decisions = decisions();
        let limit = 5;
        // Before: the flat list, the most recent decisions whatever they are about.
        let mut before = String::new();
        let (flat, _) = super::select_decisions(&decisions, limit);
        super::knowledge_context(&mut before, &flat);
        // After: the gate's part of the graph and what concerns it.
        let around = SceneSubgraph::of(&workspace, "SCN-the-gate", Variant::T3, &decisions, None);
        let (knowledge, _) = around.select(&decisions, limit);
        let mut after = String::new();
        around.write(&mut after, &knowledge);
        println!(
            "knowledge_context for SCN-the-gate: {} tokens before ({} entries), {} after ({} entries, {} entities)\n{after}",
            before.len().div_ceil(4),
            flat.len(),
            after.len().div_ceil(4),
            knowledge.len(),
            around.near.len()
        );
        assert!(
            after.starts_with("  <knowledge_context scene=\"SCN-the-gate\">"),
            "{after}"
        );
        assert!(
            after.contains(
                "<entity kind=\"character\" relation=\"point of view\">Iria Vell</entity>"
            ),
            "{after}"
        );
        assert!(
            after.contains(
                "<entity kind=\"place\" relation=\"located at\">The Salt Fortress</entity>"
            ),
            "{after}"
        );
        for kept in [
            "The Warden's ring",
            "Past tense",
            "Iria never lies",
            "nine lamps",
            "barred at dusk",
        ] {
            assert!(after.contains(kept), "{kept}: {after}");
        }
        for left in ["storm", "Brannoc"] {
            assert!(!after.contains(left), "{left}: {after}");
            assert!(before.contains(left), "the flat list held {left}: {before}");
        }
        // At t1, fewer entities.
        let small = SceneSubgraph::of(&workspace, "SCN-the-gate", Variant::T1, &decisions, None);
        assert!(small.near.len() <= 6 && small.near.len() < around.near.len().max(7));
        // A scene nobody wrote: its cast unknown, every character decision may matter.
        let unwritten = SceneSubgraph::of(
            &workspace,
            "SCN-the-reckoning",
            Variant::T3,
            &decisions,
            None,
        );
        let (knowledge, _) = unwritten.select(&decisions, limit);
        assert!(
            knowledge.iter().any(|d| d.key == "Brannoc"),
            "{:?}",
            knowledge.iter().map(|d| &d.key).collect::<Vec<_>>()
        );
    }
}

//! The story's knowledge graph (the second brain of the agent-instruction
//! spec, §11), derived from the manuscript as it is: characters, places and
//! other canon from the cards, the outline's scenes, the Story Bible's world
//! rules, plot events (the beat sheet's beats), the theme and its motifs,
//! and the knowledge base's decisions; and how they relate: a card appears
//! in a scene (its mentions, its place in the scene's front matter), a
//! character speaks in a scene, a scene is told from a point of view and
//! located at a place, two characters know each other (they share scenes),
//! a scene happens before the next in the outline and a beat before the
//! next beat, a beat happens in the scenes it names, a motif appears in the
//! scenes whose prose carries it and is related to the theme, and a
//! decision is related to what it names (its scene, a card by name or
//! alias, a rule, a motif, a beat).
//!
//! Built on petgraph. Centrality is a PageRank weighted by the relations'
//! strength (how often a card is in a scene), by power iteration over
//! petgraph's adjacency: petgraph's own `page_rank` counts every edge the
//! same and costs the square of the nodes per round. Distance between two
//! characters is the fewest scenes shared along the way (a shortest path
//! over "knows").

use std::collections::HashMap;
use std::sync::Arc;

use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::visit::EdgeRef;

use crate::index::motifs::Motifs;
use crate::index::{BibleKind, CardKind, SourceFile, Workspace};
use crate::kb::Decision;

mod facts;
mod names;
pub use facts::{GraphCache, MEMO_FILE, SceneFacts, SceneMemo};
use names::Namer;

/// A decision's key in the graph: its category and key, which a later
/// decision with the same two supersedes.
pub fn decision_key(decision: &Decision) -> String {
    format!("decision:{}:{}", decision.category, decision.key)
}

/// How many scenes each pair of characters (by slot, the lower first)
/// shares: a square while the cast is small, a map of the pairs met beyond
/// (a square of 3,000 cards would hold 9 million cells).
enum Knows {
    Square { side: usize, cells: Vec<f64> },
    Pairs(HashMap<(usize, usize), f64>),
}

impl Knows {
    fn new(characters: usize) -> Knows {
        if characters <= 1024 {
            Knows::Square {
                side: characters,
                cells: vec![0.0; characters * characters],
            }
        } else {
            Knows::Pairs(HashMap::new())
        }
    }

    fn add(&mut self, a: usize, b: usize) {
        match self {
            Knows::Square { side, cells } => cells[a * *side + b] += 1.0,
            Knows::Pairs(pairs) => *pairs.entry((a, b)).or_default() += 1.0,
        }
    }

    /// The pairs who share scenes, in slot order.
    fn pairs(self) -> Vec<((usize, usize), f64)> {
        match self {
            Knows::Square { side, cells } => (0..side)
                .flat_map(|a| (a + 1..side).map(move |b| (a, b)))
                .map(|(a, b)| ((a, b), cells[a * side + b]))
                .filter(|(_, weight)| *weight > 0.0)
                .collect(),
            Knows::Pairs(pairs) => {
                let mut pairs: Vec<_> = pairs.into_iter().collect();
                pairs.sort_by_key(|(pair, _)| *pair);
                pairs
            }
        }
    }
}

/// What an entity is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    Character,
    Place,
    /// Other canon (items, factions…).
    Canon,
    Scene,
    WorldRule,
    /// A beat of the beat sheet.
    PlotEvent,
    /// The theme's statement.
    Theme,
    /// A motif of the theme's Motifs list.
    Motif,
    /// A decision of the knowledge base.
    Decision,
}

/// One entity: its kind, its key (a card's path, a scene's id, a rule's
/// name) and how the writer names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entity {
    pub kind: EntityKind,
    pub key: String,
    pub label: String,
}

/// How two entities relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RelationKind {
    /// A card in a scene: mentioned, listed, or its point of view.
    AppearsIn,
    /// A scene's point of view.
    PovOf,
    /// A scene's place.
    LocatedAt,
    /// Two characters who share scenes.
    Knows,
    /// A scene before the next in the outline; a beat before the next beat.
    HappensBefore,
    /// A character who speaks a line in a scene.
    SpeaksIn,
    /// A beat in a scene it names.
    HappensIn,
    /// A decision and what it names; a motif and the theme.
    RelatedTo,
}

impl EntityKind {
    /// As prompts and reports name it.
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Character => "character",
            EntityKind::Place => "place",
            EntityKind::Canon => "canon",
            EntityKind::Scene => "scene",
            EntityKind::WorldRule => "world rule",
            EntityKind::PlotEvent => "plot event",
            EntityKind::Theme => "theme",
            EntityKind::Motif => "motif",
            EntityKind::Decision => "decision",
        }
    }
}

impl RelationKind {
    /// As prompts and reports name it.
    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::AppearsIn => "appears in",
            RelationKind::PovOf => "point of view",
            RelationKind::LocatedAt => "located at",
            RelationKind::Knows => "knows",
            RelationKind::HappensBefore => "next in the outline",
            RelationKind::SpeaksIn => "speaks in",
            RelationKind::HappensIn => "happens in",
            RelationKind::RelatedTo => "related to",
        }
    }
}

/// A relation and its strength (mentions, shared scenes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Relation {
    pub kind: RelationKind,
    pub weight: f64,
}

/// The graph, and each entity's node by its key.
#[derive(Debug, Default)]
pub struct StoryGraph {
    pub graph: UnGraph<Entity, Relation>,
    by_key: HashMap<String, NodeIndex>,
}

impl StoryGraph {
    /// The graph of the manuscript as `workspace` holds it, with the
    /// decisions of its knowledge base (`.control-room/kb/decisions.jsonl`).
    pub fn build(workspace: &Workspace) -> StoryGraph {
        StoryGraph::build_with(workspace, &mut SceneMemo::default())
    }

    /// [`StoryGraph::build`], reading each scene's part (its point of view,
    /// place, who is in it how often, who speaks, its motifs) through
    /// `memo`: after an edit, only the edited scene is read again.
    pub fn build_with(workspace: &Workspace, memo: &mut SceneMemo) -> StoryGraph {
        // A line that is not a decision is the knowledge base's own problem,
        // reported where it is read for the prompts and in the editor.
        let decisions = crate::kb::load_decisions(workspace.root(), &mut Vec::new());
        StoryGraph::build_from(workspace, memo, &decisions)
    }

    /// [`StoryGraph::build_with`] over the decisions given.
    pub fn build_from(
        workspace: &Workspace,
        memo: &mut SceneMemo,
        decisions: &[Decision],
    ) -> StoryGraph {
        let mut story = StoryGraph::default();
        let catalog = workspace.catalog();
        for (path, card) in catalog.cards() {
            let kind = match card.kind {
                CardKind::Character => EntityKind::Character,
                CardKind::Location => EntityKind::Place,
                CardKind::Other => EntityKind::Canon,
            };
            story.add(kind, path, card.display_name());
        }
        if let Some(file) = catalog.bible(BibleKind::WorldRules)
            && let Some(rules) = file.bible()
        {
            for name in rules.rule_names(&file.text) {
                let name = name.text;
                story.add(EntityKind::WorldRule, &format!("rule:{name}"), &name);
            }
        }
        let order: Vec<String> = catalog
            .outline()
            .and_then(|file| file.outline())
            .map(|outline| outline.entries.iter().map(|e| e.scene_id.clone()).collect())
            .unwrap_or_default();
        for id in &order {
            story.add(EntityKind::Scene, id, id);
        }
        for pair in order.windows(2) {
            story.relate(&pair[0], &pair[1], RelationKind::HappensBefore, 1.0);
        }
        let motifs = Motifs::of(workspace);
        story.add_theme(workspace, &motifs);
        let scenes: Vec<(&Arc<SourceFile>, &crate::index::Scene)> = catalog.scenes().collect();
        let facts = memo.facts(workspace, &scenes, &motifs);
        story.add_scenes(&scenes, &facts);
        story.add_beats(workspace);
        story.add_decisions(workspace, decisions);
        story
    }

    /// Each scene's part: its point of view, place, cast, speakers and
    /// motifs; and the characters who share scenes.
    fn add_scenes(
        &mut self,
        scenes: &[(&Arc<SourceFile>, &crate::index::Scene)],
        facts: &[Arc<SceneFacts>],
    ) {
        // Each pair of characters who share a scene, summed before any edge
        // is made (one edge a pair), in a square of the characters' slots.
        let mut slot_of: Vec<Option<usize>> = vec![None; self.graph.node_count()];
        let mut slots: Vec<NodeIndex> = Vec::new();
        for node in self.graph.node_indices() {
            if self.graph[node].kind == EntityKind::Character {
                slot_of[node.index()] = Some(slots.len());
                slots.push(node);
            }
        }
        let mut knows = Knows::new(slots.len());
        for ((_, scene), facts) in scenes.iter().zip(facts) {
            let scene_node = self.add(EntityKind::Scene, &scene.id, &scene.id);
            let edge = |story: &mut StoryGraph, a: NodeIndex, b: NodeIndex, kind, weight| {
                story.graph.add_edge(a, b, Relation { kind, weight });
            };
            if let Some(pov) = facts.pov.as_deref().and_then(|key| self.node(key)) {
                edge(self, pov, scene_node, RelationKind::PovOf, 1.0);
            }
            if let Some(place) = facts.place.as_deref().and_then(|key| self.node(key)) {
                edge(self, scene_node, place, RelationKind::LocatedAt, 1.0);
            }
            let mut characters = Vec::new();
            for (key, count) in facts.counts.iter() {
                let Some(node) = self.node(key) else {
                    continue;
                };
                edge(self, node, scene_node, RelationKind::AppearsIn, *count);
                if let Some(Some(slot)) = slot_of.get(node.index()) {
                    characters.push(*slot);
                }
            }
            for key in &facts.speaks {
                if let Some(node) = self.node(key) {
                    edge(self, node, scene_node, RelationKind::SpeaksIn, 1.0);
                }
            }
            for (name, count) in &facts.motifs {
                if let Some(node) = self.node(&format!("motif:{name}")) {
                    edge(self, node, scene_node, RelationKind::AppearsIn, *count);
                }
            }
            characters.sort_unstable();
            for (at, a) in characters.iter().enumerate() {
                for b in &characters[at + 1..] {
                    knows.add(*a, *b);
                }
            }
        }
        for ((a, b), weight) in knows.pairs() {
            self.graph.add_edge(
                slots[a],
                slots[b],
                Relation {
                    kind: RelationKind::Knows,
                    weight,
                },
            );
        }
    }

    /// The theme (its statement, else its central theme) and its motifs.
    fn add_theme(&mut self, workspace: &Workspace, motifs: &Motifs) {
        let theme = workspace
            .catalog()
            .bible(BibleKind::Theme)
            .and_then(|file| file.bible())
            .and_then(|bible| {
                ["theme_statement", "central_theme"]
                    .iter()
                    .filter_map(|key| bible.section(key))
                    .map(|section| section.text.trim())
                    .find(|text| !text.is_empty() && !crate::index::bible::is_placeholder(text))
                    .map(|text| {
                        let line = text.lines().next().unwrap_or(text);
                        crate::text::clip(line, 160).to_owned()
                    })
            });
        let theme = theme.map(|label| self.add(EntityKind::Theme, "theme", &label));
        for motif in &motifs.list {
            let node = self.add(
                EntityKind::Motif,
                &format!("motif:{}", motif.name),
                &motif.name,
            );
            if let Some(theme) = theme {
                self.relate_nodes(node, theme, RelationKind::RelatedTo, 1.0);
            }
        }
    }

    /// The beat sheet's beats written so far, each a plot event that
    /// happens in the scenes it names, in the sheet's order.
    fn add_beats(&mut self, workspace: &Workspace) {
        let Some(bible) = workspace
            .catalog()
            .bible(BibleKind::BeatSheet)
            .and_then(|file| file.bible())
        else {
            return;
        };
        let mut previous: Option<NodeIndex> = None;
        for part in &bible.parts {
            let Some(section) = part.section.map(|at| &bible.sections[at]) else {
                continue;
            };
            if crate::index::bible::is_placeholder(&section.text) {
                continue;
            }
            let title = part.spec.title;
            let beat = self.add(EntityKind::PlotEvent, &format!("beat:{title}"), title);
            for id in &section.scene_ids {
                if let Some(scene) = self.node(&id.text) {
                    self.relate_nodes(beat, scene, RelationKind::HappensIn, 1.0);
                }
            }
            if let Some(previous) = previous {
                self.relate_nodes(previous, beat, RelationKind::HappensBefore, 1.0);
            }
            previous = Some(beat);
        }
    }

    /// Each decision, related to its scene and to every entity its key or
    /// value names (whole words, in any case: a card by its name, file stem
    /// or an alias, a scene by its id, a rule, a motif, a beat by name).
    fn add_decisions(&mut self, workspace: &Workspace, decisions: &[Decision]) {
        if decisions.is_empty() {
            return;
        }
        let namer = Namer::of(self, workspace);
        for decision in decisions {
            let said = format!("{}: {}", decision.key, decision.value);
            let label = crate::text::clip(&said, 160);
            let node = self.add(EntityKind::Decision, &decision_key(decision), label);
            if let Some(scene) = decision.scene.as_deref().and_then(|id| self.node(id)) {
                self.relate_nodes(node, scene, RelationKind::RelatedTo, 1.0);
            }
            for named in namer.named(&said) {
                if named != node {
                    self.relate_nodes(node, named, RelationKind::RelatedTo, 1.0);
                }
            }
        }
    }

    /// The decisions related to the entity `key`.
    pub fn decisions_about(&self, key: &str) -> impl Iterator<Item = &Entity> + '_ {
        self.node(key).into_iter().flat_map(move |node| {
            self.graph
                .edges(node)
                .filter(|edge| edge.weight().kind == RelationKind::RelatedTo)
                .map(move |edge| {
                    let other = if edge.source() == node {
                        edge.target()
                    } else {
                        edge.source()
                    };
                    &self.graph[other]
                })
                .filter(|entity| entity.kind == EntityKind::Decision)
        })
    }

    fn add(&mut self, kind: EntityKind, key: &str, label: &str) -> NodeIndex {
        if let Some(node) = self.by_key.get(key) {
            return *node;
        }
        let node = self.graph.add_node(Entity {
            kind,
            key: key.to_owned(),
            label: label.to_owned(),
        });
        self.by_key.insert(key.to_owned(), node);
        node
    }

    fn relate(&mut self, a: &str, b: &str, kind: RelationKind, weight: f64) {
        if let (Some(a), Some(b)) = (self.by_key.get(a), self.by_key.get(b)) {
            self.relate_nodes(*a, *b, kind, weight);
        }
    }

    /// Adds `weight` to the relation `kind` between `a` and `b`.
    fn relate_nodes(&mut self, a: NodeIndex, b: NodeIndex, kind: RelationKind, weight: f64) {
        let existing = self
            .graph
            .edges_connecting(a, b)
            .find(|edge| edge.weight().kind == kind)
            .map(|edge| edge.id());
        match existing {
            Some(edge) => self.graph[edge].weight += weight,
            None => {
                self.graph.add_edge(a, b, Relation { kind, weight });
            }
        }
    }

    /// The node of `key` (a card's path, a scene's id, `rule:NAME`).
    pub fn node(&self, key: &str) -> Option<NodeIndex> {
        self.by_key.get(key).copied()
    }

    /// Who carries the book: every entity's PageRank over the relations
    /// that place cards in scenes (appearances and places, each as strong as
    /// its weight: a card mentioned ten times in a scene is ten times in it),
    /// with damping 0.85, until it settles; highest first. Shared scenes
    /// ("knows") are left out: they would carry a large family up with its
    /// eldest.
    pub fn centrality(&self) -> Vec<(NodeIndex, f64)> {
        // A motif's occurrences are the prose's, not a card's part in it.
        let counted = |edge: petgraph::graph::EdgeReference<'_, Relation>| {
            matches!(
                edge.weight().kind,
                RelationKind::AppearsIn | RelationKind::LocatedAt
            ) && self.graph[edge.source()].kind != EntityKind::Motif
        };
        let count = self.graph.node_count();
        if count == 0 {
            return Vec::new();
        }
        let strength: Vec<f64> = self
            .graph
            .node_indices()
            .map(|node| {
                self.graph
                    .edges(node)
                    .filter(|edge| counted(*edge))
                    .map(|edge| edge.weight().weight)
                    .sum()
            })
            .collect();
        let damping = 0.85;
        let mut rank = vec![1.0 / count as f64; count];
        for _ in 0..100 {
            // What nodes with no relation hold goes to everyone.
            let dangling: f64 = rank
                .iter()
                .zip(&strength)
                .filter(|(_, s)| **s == 0.0)
                .map(|(r, _)| r)
                .sum();
            let base = (1.0 - damping + damping * dangling) / count as f64;
            let mut next = vec![base; count];
            for edge in self.graph.edge_references() {
                if !counted(edge) {
                    continue;
                }
                let (a, b) = (edge.source().index(), edge.target().index());
                let weight = edge.weight().weight;
                next[b] += damping * rank[a] * weight / strength[a];
                next[a] += damping * rank[b] * weight / strength[b];
            }
            let moved: f64 = next.iter().zip(&rank).map(|(n, r)| (n - r).abs()).sum();
            rank = next;
            if moved < 1e-10 {
                break;
            }
        }
        let mut ranked: Vec<(NodeIndex, f64)> = self
            .graph
            .node_indices()
            .map(|node| (node, rank[node.index()]))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked
    }

    /// How far apart two characters are: the fewest "knows" steps between
    /// them (1: they share a scene), `None` when nothing links them.
    pub fn distance(&self, from: &str, to: &str) -> Option<usize> {
        let (from, to) = (self.node(from)?, self.node(to)?);
        let knows = petgraph::visit::EdgeFiltered::from_fn(&self.graph, |edge| {
            edge.weight().kind == RelationKind::Knows
        });
        let costs = petgraph::algo::dijkstra(&knows, from, Some(to), |_| 1usize);
        costs.get(&to).copied()
    }

    /// The entities around scene `id`: those in it, where it is, and the
    /// scenes on either side, with how they relate to it.
    pub fn around_scene(&self, id: &str) -> Vec<(&Entity, RelationKind, f64)> {
        let Some(scene) = self.node(id) else {
            return Vec::new();
        };
        let mut around: Vec<(&Entity, RelationKind, f64)> = self
            .graph
            .edges(scene)
            .map(|edge| {
                let other = if edge.source() == scene {
                    edge.target()
                } else {
                    edge.source()
                };
                (&self.graph[other], edge.weight().kind, edge.weight().weight)
            })
            .collect();
        around.sort_by(|a, b| a.1.cmp(&b.1).then(b.2.total_cmp(&a.2)));
        around
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_carries_its_point_of_view_characters_and_links_its_cast() {
        let workspace = Workspace::load(&crate::index::test_support::example_root());
        let story = StoryGraph::build(&workspace);
        let ranked: Vec<&str> = story
            .centrality()
            .into_iter()
            .map(|(node, _)| &story.graph[node])
            .filter(|entity| entity.kind == EntityKind::Character)
            .map(|entity| entity.label.as_str())
            .take(2)
            .collect();
        assert_eq!(ranked, ["Kael Maren", "Iria Vell"]);
        let kael = "Compendium/Characters/CHAR-kael-maren.md";
        let iria = "Compendium/Characters/CHAR-iria-vell.md";
        assert_eq!(story.distance(kael, iria), Some(1));
        assert_eq!(story.distance(kael, kael), Some(0));
        let around = story.around_scene("SCN-the-gate");
        assert!(
            around
                .iter()
                .any(|(entity, kind, _)| entity.key == iria && *kind == RelationKind::PovOf),
            "{around:?}"
        );
        assert!(
            around
                .iter()
                .any(|(entity, kind, _)| entity.kind == EntityKind::Scene
                    && *kind == RelationKind::HappensBefore)
        );
    }

    #[test]
    fn beats_the_theme_its_motifs_speakers_and_decisions_are_in_the_graph() {
        let (_dir, workspace) =
            crate::index::test_support::example_with_motifs("- **Salt**: brine\n");
        let decision = |key: &str, value: &str, scene: Option<&str>| Decision {
            category: "plot".into(),
            key: key.into(),
            value: value.into(),
            source: None,
            scene: scene.map(str::to_owned),
            created_at: None,
            updated_at: None,
            promoted: false,
        };
        let decisions = [
            decision("the warden", "His ring is iron.", None),
            decision("gate", "Barred by order.", Some("SCN-the-gate")),
            decision("weather", "It never snows.", None),
        ];
        let story = StoryGraph::build_from(&workspace, &mut SceneMemo::default(), &decisions);
        let related = |a: &str, b: &str, kind: RelationKind| {
            let (a, b) = (story.node(a).unwrap(), story.node(b).unwrap());
            story
                .graph
                .edges_connecting(a, b)
                .any(|edge| edge.weight().kind == kind)
        };
        let kael = "Compendium/Characters/CHAR-kael-maren.md";
        // The beat sheet's Catalyst names the gate; it comes after the Set-Up.
        assert!(related(
            "beat:Catalyst",
            "SCN-the-gate",
            RelationKind::HappensIn
        ));
        assert!(related(
            "beat:Set-Up",
            "beat:Catalyst",
            RelationKind::HappensBefore
        ));
        // Kael speaks at the gate.
        assert!(related(kael, "SCN-the-gate", RelationKind::SpeaksIn));
        // The motif is the theme's and in the scenes whose prose has salt.
        assert_eq!(
            story.graph[story.node("theme").unwrap()].kind,
            EntityKind::Theme
        );
        assert!(related("motif:salt", "theme", RelationKind::RelatedTo));
        let salted = story
            .graph
            .edges(story.node("motif:salt").unwrap())
            .filter(|edge| edge.weight().kind == RelationKind::AppearsIn)
            .count();
        assert!(salted >= 3, "{salted}");
        // Decisions: by an alias in any case, by their scene; one names nothing.
        assert!(related(
            "decision:plot:the warden",
            kael,
            RelationKind::RelatedTo
        ));
        assert!(related(
            "decision:plot:gate",
            "SCN-the-gate",
            RelationKind::RelatedTo
        ));
        let loose = story.node("decision:plot:weather").unwrap();
        assert_eq!(story.graph.edges(loose).count(), 0);
        let about_kael: Vec<&str> = story
            .decisions_about(kael)
            .map(|entity| entity.key.as_str())
            .collect();
        assert_eq!(about_kael, ["decision:plot:the warden"]);
        // A motif's occurrences carry nobody up the ranking.
        let ranked: Vec<EntityKind> = story
            .centrality()
            .into_iter()
            .take(3)
            .map(|(node, _)| story.graph[node].kind)
            .collect();
        assert!(!ranked.contains(&EntityKind::Motif), "{ranked:?}");
    }
}

//! How a decision names the graph's entities: one case-insensitive
//! Aho-Corasick automaton over every name of every entity (a card's name,
//! file stem and aliases; a scene's id; a rule's, a motif's, a beat's name),
//! matched as whole words, so relating a hundred decisions to thousands of
//! entities reads each decision once.

use aho_corasick::AhoCorasick;
use petgraph::graph::NodeIndex;

use super::{EntityKind, StoryGraph};
use crate::index::Workspace;

/// Every entity's names, and the entity each one names.
pub(super) struct Namer {
    finder: Option<AhoCorasick>,
    owner: Vec<NodeIndex>,
}

impl Namer {
    /// The names of `story`'s entities (decisions aside).
    pub(super) fn of(story: &StoryGraph, workspace: &Workspace) -> Namer {
        let mut patterns: Vec<String> = Vec::new();
        let mut owner = Vec::new();
        for node in story.graph.node_indices() {
            let entity = &story.graph[node];
            let mut names = vec![entity.label.clone()];
            match entity.kind {
                EntityKind::Decision | EntityKind::Theme => continue,
                EntityKind::Character | EntityKind::Place | EntityKind::Canon => {
                    names.push(crate::index::file::file_stem(&entity.key).to_owned());
                    if let Some(card) = workspace
                        .catalog()
                        .card(&entity.key)
                        .and_then(|file| file.card())
                    {
                        names.extend(card.aliases.iter().map(|alias| alias.text.clone()));
                    }
                }
                _ => {}
            }
            for name in names {
                let name = name.trim().to_lowercase();
                if !name.is_empty() {
                    patterns.push(name);
                    owner.push(node);
                }
            }
        }
        let finder = crate::index::motifs::words_automaton(&patterns);
        Namer { finder, owner }
    }

    /// The entities `text` names, each once, in the order first named.
    pub(super) fn named(&self, text: &str) -> Vec<NodeIndex> {
        let Some(finder) = &self.finder else {
            return Vec::new();
        };
        let lower = text.to_lowercase();
        let mut found: Vec<NodeIndex> = Vec::new();
        for hit in finder.find_iter(&lower) {
            let before = lower[..hit.start()].chars().next_back();
            let after = lower[hit.end()..].chars().next();
            if before.is_some_and(char::is_alphanumeric) || after.is_some_and(char::is_alphanumeric)
            {
                continue;
            }
            let node = self.owner[hit.pattern().as_usize()];
            if !found.contains(&node) {
                found.push(node);
            }
        }
        found
    }
}

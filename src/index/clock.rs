//! The story clock, found once per change: when each dated scene happens in
//! minutes of the calendar, the roads between places with their travel
//! times (location cards' `travel:`), and each character's itinerary (the
//! dated scenes they are present in, as `pov` or in `characters`, in story
//! time). The clock checks (`timeline-order` on one day, `travel-time`,
//! `lifespan`, and `secret` by date) and the inlay hints read it.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use petgraph::graph::{NodeIndex, UnGraph};

use super::calendar::{Calendar, DAY, TimeWindow};
use super::file::{FilePath, SourceFile};
use super::model::{CardKind, Scene, StoryDate};
use crate::text::TextRange;

/// When a scene happens: the earliest and latest minute it can be, counted
/// from the calendar's fixed day.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub earliest: i64,
    pub latest: i64,
}

/// A character's presence in a dated scene.
#[derive(Clone, Debug)]
pub struct Stop {
    pub scene: Arc<SourceFile>,
    pub span: Span,
    /// The scene's location card, when it names one.
    pub place: Option<FilePath>,
    /// Where the scene lists the character (`pov` or `characters`).
    pub entry: TextRange,
}

/// The fastest way between two places.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub minutes: i64,
    /// The places passed through, without the ends.
    pub via: Vec<FilePath>,
}

#[derive(Clone, Debug, Default)]
pub struct Clock {
    calendar: Arc<Calendar>,
    /// The roads and places, shared by the clocks an edit of prose makes.
    roads: Arc<Roads>,
    /// Each character's stops, shared: an edit of a scene's prose copies
    /// only the itineraries that pass through it.
    itineraries: HashMap<FilePath, Arc<Vec<Stop>>>,
    /// Each scene that is a stop, with the characters it is a stop of.
    stops_of: Arc<HashMap<FilePath, Vec<FilePath>>>,
    /// A hash of when each scene with `tracks:` (or `learns:`) happens.
    tracked_times: u64,
}

/// The roads between places (location cards' `travel:`).
#[derive(Clone, Debug, Default)]
struct Roads {
    graph: UnGraph<FilePath, i64>,
    places: HashMap<FilePath, NodeIndex>,
    /// A hash of every road and its travel time.
    fingerprint: u64,
}

impl Roads {
    fn build(cards: &[Arc<SourceFile>], resolve: &impl Resolve) -> Roads {
        let mut roads = Roads::default();
        let mut hasher = DefaultHasher::new();
        for file in cards {
            let Some(card) = file.card() else { continue };
            for road in &card.travel {
                let Some(to) = resolve.card(&road.to.text, &[CardKind::Location]) else {
                    continue;
                };
                if to == file.path {
                    continue;
                }
                (&file.path, &to, road.minutes).hash(&mut hasher);
                let from = roads.place_node(&file.path);
                let to = roads.place_node(&to);
                match roads.graph.find_edge(from, to) {
                    Some(edge) => {
                        let minutes = &mut roads.graph[edge];
                        *minutes = (*minutes).min(road.minutes);
                    }
                    None => {
                        roads.graph.add_edge(from, to, road.minutes);
                    }
                }
            }
        }
        roads.fingerprint = hasher.finish();
        roads
    }

    fn place_node(&mut self, place: &FilePath) -> NodeIndex {
        if let Some(node) = self.places.get(place) {
            return *node;
        }
        let node = self.graph.add_node(place.clone());
        self.places.insert(place.clone(), node);
        node
    }
}

/// How the clock finds cards: a reference (name, alias or id) to a card of
/// one of the kinds, as the catalog resolves it.
pub trait Resolve {
    fn card(&self, reference: &str, kinds: &[CardKind]) -> Option<FilePath>;
}

impl Clock {
    /// Whether `file` (this very `Arc`) is a stop of someone's itinerary.
    pub fn holds(&self, file: &Arc<SourceFile>) -> bool {
        self.stops_of.get(&file.path).is_some_and(|characters| {
            characters.iter().any(|who| {
                self.itinerary(who)
                    .iter()
                    .any(|stop| Arc::ptr_eq(&stop.scene, file))
            })
        })
    }

    /// Keeps `new` wherever `old` was a stop (the same scene, its prose
    /// changed: its time, place and people did not).
    pub fn replace(&mut self, old: &Arc<SourceFile>, new: &Arc<SourceFile>) {
        let Some(characters) = self.stops_of.get(&old.path) else {
            return;
        };
        for who in characters {
            let Some(stops) = self.itineraries.get_mut(who) else {
                continue;
            };
            if !stops.iter().any(|stop| Arc::ptr_eq(&stop.scene, old)) {
                continue;
            }
            for stop in Arc::make_mut(stops) {
                if Arc::ptr_eq(&stop.scene, old) {
                    stop.scene = new.clone();
                }
            }
        }
    }

    pub fn build(
        calendar: Arc<Calendar>,
        scenes: &[Arc<SourceFile>],
        cards: &[Arc<SourceFile>],
        resolve: &impl Resolve,
    ) -> Clock {
        let mut clock = Clock {
            calendar,
            roads: Arc::new(Roads::build(cards, resolve)),
            ..Clock::default()
        };
        let mut itineraries: HashMap<FilePath, Vec<Stop>> = HashMap::new();
        let mut tracked = DefaultHasher::new();
        for file in scenes {
            let Some(scene) = file.scene() else { continue };
            let span = clock.when(scene);
            if !scene.tracks.is_empty() {
                (&file.path, span).hash(&mut tracked);
            }
            let Some(span) = span else {
                continue;
            };
            let place = scene
                .location
                .as_ref()
                .and_then(|place| resolve.card(&place.text, &[CardKind::Location]));
            for entry in scene.pov.iter().chain(&scene.characters) {
                let Some(who) = resolve.card(&entry.text, &[CardKind::Character]) else {
                    continue;
                };
                let stops = itineraries.entry(who).or_default();
                if stops
                    .last()
                    .is_some_and(|stop: &Stop| Arc::ptr_eq(&stop.scene, file))
                {
                    continue;
                }
                stops.push(Stop {
                    scene: file.clone(),
                    span,
                    place: place.clone(),
                    entry: entry.range,
                });
            }
        }
        clock.tracked_times = tracked.finish();
        for stops in itineraries.values_mut() {
            stops.sort_by(|a, b| {
                (a.span.earliest, a.span.latest, &a.scene.path).cmp(&(
                    b.span.earliest,
                    b.span.latest,
                    &b.scene.path,
                ))
            });
        }
        let mut stops_of: HashMap<FilePath, Vec<FilePath>> = HashMap::new();
        for (who, stops) in &itineraries {
            for stop in stops {
                stops_of
                    .entry(stop.scene.path.clone())
                    .or_default()
                    .push(who.clone());
            }
        }
        clock.stops_of = Arc::new(stops_of);
        clock.itineraries = itineraries
            .into_iter()
            .map(|(who, stops)| (who, Arc::new(stops)))
            .collect();
        clock
    }

    pub fn calendar(&self) -> &Calendar {
        &self.calendar
    }

    /// When a scene with a whole date happens (its `time:` narrowing the day).
    pub fn when(&self, scene: &Scene) -> Option<Span> {
        let day = self.calendar.day_number(&scene.story_date?)?;
        let window = scene
            .time
            .as_ref()
            .and_then(|time| TimeWindow::parse(&time.text))
            .unwrap_or(TimeWindow::WHOLE_DAY);
        Some(Span {
            earliest: day * DAY + window.earliest,
            latest: day * DAY + window.latest,
        })
    }

    /// The fastest known way from one place to another.
    pub fn route(&self, from: &FilePath, to: &FilePath) -> Option<Route> {
        let roads = &*self.roads;
        let (start, goal) = (*roads.places.get(from)?, *roads.places.get(to)?);
        let (minutes, path) = petgraph::algo::astar(
            &roads.graph,
            start,
            |node| node == goal,
            |edge| *edge.weight(),
            |_| 0,
        )?;
        let via = path[1..path.len().saturating_sub(1)]
            .iter()
            .map(|node| roads.graph[*node].clone())
            .collect();
        Some(Route { minutes, via })
    }

    /// A hash of every road and its travel time.
    pub fn roads_fingerprint(&self) -> u64 {
        self.roads.fingerprint
    }

    /// A hash of when each scene that tracks something happens.
    pub fn tracked_times(&self) -> u64 {
        self.tracked_times
    }

    /// The dated scenes a character is present in, earliest first.
    pub fn itinerary(&self, character: &str) -> &[Stop] {
        self.itineraries
            .get(character)
            .map_or(&[], |stops| stops.as_slice())
    }

    /// Where `character` last was, at a known place, before `file`'s scene
    /// in story time.
    pub fn previous_stop(&self, character: &str, file: &SourceFile) -> Option<&Stop> {
        let stops = self.itinerary(character);
        let here = stops.iter().position(|stop| stop.scene.path == file.path)?;
        stops[..here].iter().rev().find(|stop| stop.place.is_some())
    }

    /// A date as the calendar names it.
    pub fn format(&self, date: &StoryDate) -> String {
        self.calendar.format(date)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::config::PathsConfig;

    struct ByStem;

    impl Resolve for ByStem {
        fn card(&self, reference: &str, kinds: &[CardKind]) -> Option<FilePath> {
            let folder = if kinds.contains(&CardKind::Location) {
                "Compendium/Locations"
            } else {
                "Compendium/Characters"
            };
            let stem = reference.to_lowercase().replace(' ', "-");
            Some(format!("{folder}/{stem}.md").into())
        }
    }

    fn file(path: &str, text: &str) -> Arc<SourceFile> {
        Arc::new(SourceFile::parse(
            path.into(),
            text.into(),
            &PathsConfig::default(),
        ))
    }

    #[test]
    fn the_fastest_route_goes_through_the_places_between() {
        let cards = [
            file(
                "Compendium/Locations/a.md",
                "---\ntype: location\nname: A\ntravel:\n  B: 1 day\n  C: 5 days\n---\n",
            ),
            file(
                "Compendium/Locations/b.md",
                "---\ntype: location\nname: B\ntravel:\n  C: 12 hours\n---\n",
            ),
            file(
                "Compendium/Locations/c.md",
                "---\ntype: location\nname: C\n---\n",
            ),
        ];
        let clock = Clock::build(Arc::default(), &[], &cards, &ByStem);
        let place = |stem: &str| FilePath::from(format!("Compendium/Locations/{stem}.md"));
        let route = clock.route(&place("c"), &place("a")).unwrap();
        assert_eq!(route.minutes, DAY + DAY / 2);
        assert_eq!(route.via, vec![place("b")]);
        assert_eq!(clock.route(&place("a"), &place("d")), None);
    }

    #[test]
    fn a_travel_time_or_a_learns_entry_that_cannot_be_read_is_a_problem_at_it() {
        let card = file(
            "Compendium/Locations/a.md",
            "---\ntype: location\nname: A\ntravel:\n  B: soon\n  C: 2 days\n---\n",
        );
        let messages: Vec<&str> = card.problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].contains("`travel: B: soon` is not a travel time"));
        assert_eq!(card.problems[0].range.slice(&card.text), "soon");
        // The readable road is kept.
        assert_eq!(card.card().unwrap().travel.len(), 1);

        let scene = file(
            "Story/Scenes/SCN-a.md",
            "---\nlearns:\n  - Tomas is the heir\n  - Iria: the road is closed\n---\n",
        );
        let messages: Vec<&str> = scene.problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].contains("has no `pov`"), "{messages:?}");
        assert_eq!(
            scene.problems[0].range.slice(&scene.text),
            "Tomas is the heir"
        );
        let learned = &scene.scene().unwrap().tracks;
        assert_eq!(learned.len(), 1, "Iria's entry is kept");
        assert!(learned[0].learns);
    }

    #[test]
    fn an_itinerary_runs_in_story_time_whatever_the_files_order() {
        let scenes = [
            file(
                "Story/Scenes/SCN-a.md",
                "---\npov: Kael\nlocation: A\ndate: 1203-04-13\ntime: dawn\n---\n",
            ),
            file(
                "Story/Scenes/SCN-b.md",
                "---\ncharacters: [Kael]\nlocation: B\ndate: 1203-04-12\ntime: dusk\n---\n",
            ),
            file(
                "Story/Scenes/SCN-c.md",
                "---\ncharacters: [Kael]\ndate: 1203-04\n---\n",
            ),
        ];
        let clock = Clock::build(Arc::default(), &scenes, &[], &ByStem);
        let stops = clock.itinerary("Compendium/Characters/kael.md");
        let order: Vec<&str> = stops.iter().map(|stop| &*stop.scene.path).collect();
        assert_eq!(order, ["Story/Scenes/SCN-b.md", "Story/Scenes/SCN-a.md"]);
        let before = clock
            .previous_stop("Compendium/Characters/kael.md", &scenes[0])
            .unwrap();
        assert_eq!(&*before.scene.path, "Story/Scenes/SCN-b.md");
        assert_eq!(stops[1].span.earliest - stops[0].span.latest, 7 * 60);
    }
}

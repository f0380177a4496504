//! Symbols, folding ranges and word counts: the shape of files and of the book.

use crate::index::{CardKind, FileContent, FilePath, SourceFile, Workspace};
use crate::syntax::BlockKind;
use crate::text::TextRange;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Heading,
    Scene,
    Character,
    Location,
    Canon,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub detail: Option<String>,
    pub kind: SymbolKind,
    pub path: FilePath,
    /// The whole extent (a heading's section, a list item).
    pub range: TextRange,
    /// What to highlight (the title, the id).
    pub selection: TextRange,
    pub children: Vec<Symbol>,
}

/// Headings nested by level; in the outline, scene entries under their headings.
pub fn document_symbols(file: &SourceFile) -> Vec<Symbol> {
    let mut flat: Vec<(u8, Symbol)> = Vec::new();
    let body_start = file
        .front_matter
        .as_ref()
        .map_or(0, |front| front.range.end);
    for block in &file.syntax.blocks {
        if let BlockKind::Heading { level } = block.kind
            && block.range.start >= body_start
        {
            flat.push((
                level,
                Symbol {
                    name: block.inline.slice(&file.text).trim().to_owned(),
                    detail: None,
                    kind: SymbolKind::Heading,
                    path: file.path.clone(),
                    range: block.range,
                    selection: block.inline,
                    children: Vec::new(),
                },
            ));
        }
    }
    if let FileContent::Outline(outline) = &file.content {
        for entry in &outline.entries {
            flat.push((
                u8::MAX,
                Symbol {
                    name: entry.scene_id.clone(),
                    detail: (!entry.beat.is_empty()).then(|| entry.beat.clone()),
                    kind: SymbolKind::Scene,
                    path: file.path.clone(),
                    range: entry.range,
                    selection: entry.id_range,
                    children: Vec::new(),
                },
            ));
        }
        flat.sort_by_key(|(_, symbol)| symbol.range.start);
    }
    nest(flat, file.text.len())
}

/// Turns a flat list of (level, symbol) in document order into a tree, with
/// each heading's range running to the next heading of the same or higher level.
fn nest(flat: Vec<(u8, Symbol)>, end: usize) -> Vec<Symbol> {
    let mut roots: Vec<Symbol> = Vec::new();
    let mut stack: Vec<(u8, Symbol)> = Vec::new();
    let close =
        |stack: &mut Vec<(u8, Symbol)>, roots: &mut Vec<Symbol>, until_level: u8, at: usize| {
            while let Some((level, _)) = stack.last() {
                if *level < until_level {
                    break;
                }
                let (_, mut symbol) = stack
                    .pop()
                    .expect("the loop checked the stack is not empty");
                if symbol.kind == SymbolKind::Heading {
                    symbol.range.end = symbol.range.end.max(at);
                }
                match stack.last_mut() {
                    Some((_, parent)) => parent.children.push(symbol),
                    None => roots.push(symbol),
                }
            }
        };
    for (level, symbol) in flat {
        close(&mut stack, &mut roots, level, symbol.range.start);
        stack.push((level, symbol));
    }
    close(&mut stack, &mut roots, 0, end);
    roots
}

/// Scenes (by id and title) and cards (by name and alias) matching `query`:
/// its characters in order, ignoring case ("kmar" finds "Kael Maren").
pub fn workspace_symbols(workspace: &Workspace, query: &str) -> Vec<Symbol> {
    let query: Vec<char> = query
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let matches = |text: &str| {
        let mut wanted = query.iter().peekable();
        for c in text.chars().flat_map(char::to_lowercase) {
            if wanted.peek() == Some(&&c) {
                wanted.next();
            }
        }
        wanted.peek().is_none()
    };
    let catalog = workspace.catalog();
    let mut symbols = Vec::new();
    for (file, scene) in catalog.scenes() {
        let title = scene.title.as_deref().unwrap_or("");
        if matches(&scene.id) || matches(title) {
            let selection = scene.id_range.unwrap_or_else(|| file.head_range());
            symbols.push(Symbol {
                name: scene.id.clone(),
                detail: (!title.is_empty()).then(|| title.to_owned()),
                kind: SymbolKind::Scene,
                path: file.path.clone(),
                range: selection,
                selection,
                children: Vec::new(),
            });
        }
    }
    for (path, card) in catalog.cards() {
        if card.names().any(|name| matches(&name.text)) || matches(&card.id) {
            let selection = card
                .name
                .as_ref()
                .map_or(TextRange::empty(0), |name| name.range);
            symbols.push(Symbol {
                name: card.display_name().to_owned(),
                detail: card.alias_list(),
                kind: match card.kind {
                    CardKind::Character => SymbolKind::Character,
                    CardKind::Location => SymbolKind::Location,
                    CardKind::Other => SymbolKind::Canon,
                },
                path: path.clone(),
                range: selection,
                selection,
                children: Vec::new(),
            });
        }
    }
    symbols
}

/// Foldable ranges: the front matter and every heading's section.
pub fn folding_ranges(file: &SourceFile) -> Vec<TextRange> {
    let mut ranges: Vec<TextRange> = file.front_matter.iter().map(|front| front.range).collect();
    fn walk(symbols: &[Symbol], ranges: &mut Vec<TextRange>) {
        for symbol in symbols {
            if symbol.kind == SymbolKind::Heading {
                ranges.push(symbol.range);
            }
            walk(&symbol.children, ranges);
        }
    }
    walk(&document_symbols(file), &mut ranges);
    ranges
}

/// A scene's length against its target, shown where the scene is named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordCount {
    pub range: TextRange,
    pub words: Option<usize>,
    pub target: Option<u32>,
}

impl WordCount {
    pub fn label(&self) -> String {
        let words = |n: usize| {
            let digits = n.to_string();
            let mut grouped = String::new();
            for (index, digit) in digits.chars().enumerate() {
                if index > 0 && (digits.len() - index).is_multiple_of(3) {
                    grouped.push(',');
                }
                grouped.push(digit);
            }
            grouped
        };
        match (self.words, self.target) {
            (None, _) => "no scene file yet".to_owned(),
            (Some(count), Some(target)) if target > 0 => {
                let percent = (count as f64 / f64::from(target) * 100.0).round();
                format!(
                    "{} / {} words ({percent}%)",
                    words(count),
                    words(target as usize)
                )
            }
            (Some(count), _) => format!("{} words", words(count)),
        }
    }
}

/// Word counts for a scene file (at its head) or for each outline entry.
pub fn word_counts(workspace: &Workspace, file: &SourceFile) -> Vec<WordCount> {
    match &file.content {
        FileContent::Scene(scene) => vec![WordCount {
            range: file.head_range(),
            words: Some(scene.word_count),
            target: scene.words_target,
        }],
        FileContent::Outline(outline) => outline
            .entries
            .iter()
            .map(|entry| {
                let scene = workspace
                    .catalog()
                    .scene(&entry.scene_id)
                    .and_then(|file| file.scene());
                WordCount {
                    range: entry.id_range,
                    words: scene.map(|scene| scene.word_count),
                    target: scene.and_then(|scene| scene.words_target),
                }
            })
            .collect(),
        _ => Vec::new(),
    }
}

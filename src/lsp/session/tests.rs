//! The session's tests: trees kept for the documents written in, an opened
//! document sharing its indexed file, files changed on disk while the
//! index runs, locations converted across files.

use tower_lsp_server::ls_types::Range;

use super::*;

#[test]
fn only_the_documents_written_in_last_keep_their_trees_and_the_others_parse_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path(), PositionEncoding::Utf16);
    let path = |n: usize| FilePath::from(format!("Story/Scenes/SCN-{n}.md"));
    let count = TREES_KEPT + 2;
    let write_in = |session: &mut Session, n: usize, version: i32| {
        let at = Position::new(6, 0);
        session.change(
            &path(n),
            version,
            vec![TextDocumentContentChangeEvent {
                range: Some(Range::new(at, at)),
                range_length: None,
                text: "Later. ".to_owned(),
            }],
        );
    };
    for n in 0..count {
        let text =
            format!("---\nid: SCN-{n}\n---\n\n# Scene {n}\n\nThe tide came in.\n\n- a list\n");
        session.open(path(n), text, 1);
    }
    // Opened, not written in: no tree, and each one's syntax read.
    assert!((0..count).all(|n| !session.has_tree(&path(n))));
    assert!(session.trees.is_empty());
    let opened = session.workspace.file(&path(1)).unwrap().clone();
    let paths = &session.workspace.config().paths;
    let fresh = SourceFile::parse(path(1), opened.text.clone(), paths);
    assert!(!opened.syntax.blocks.is_empty());
    assert_eq!(opened.syntax, fresh.syntax);

    for n in 0..count {
        write_in(&mut session, n, 2);
    }
    let kept: Vec<bool> = (0..count).map(|n| session.has_tree(&path(n))).collect();
    assert_eq!(kept.iter().filter(|kept| **kept).count(), TREES_KEPT);
    assert!(!kept[0] && kept[count - 1], "{kept:?}");

    // The first one written in is written in again: parsed afresh, as a
    // fresh parse reads it, and it keeps its tree while the least
    // recent of the others loses one.
    write_in(&mut session, 0, 3);
    let file = session.workspace.file(&path(0)).unwrap().clone();
    assert!(file.text.contains("Later. Later. The tide came in."));
    let fresh = SourceFile::parse(
        path(0),
        file.text.clone(),
        &session.workspace.config().paths,
    );
    assert_eq!(file.syntax, fresh.syntax);
    assert!(session.has_tree(&path(0)));
    assert!(!session.has_tree(&path(2)));
    assert_eq!(
        (0..count).filter(|n| session.has_tree(&path(*n))).count(),
        TREES_KEPT
    );

    // A document too large to analyse has no tree and takes no place,
    // written in or not.
    let huge = path(count);
    session.open(huge.clone(), "Rain. ".repeat(200_000), 1);
    write_in(&mut session, count, 2);
    assert!(!session.has_tree(&huge) && !session.trees.contains(&huge));
    assert!(session.has_tree(&path(0)) && session.has_tree(&path(3)));

    // A closed document leaves the list.
    session.close(&path(0));
    assert!(!session.trees.contains(&path(0)));
}

#[test]
fn a_document_opened_as_the_index_read_it_shares_the_indexed_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path(), PositionEncoding::Utf16);
    let paths = session.workspace.config().paths.clone();
    let path = |n: usize| FilePath::from(format!("Story/Scenes/SCN-{n}.md"));
    let text = |n: usize| format!("---\nid: SCN-{n}\n---\n\nThe tide came in.\n");
    for n in 0..3 {
        let mut file = SourceFile::parse(path(n), text(n).into(), &paths);
        // The third as read for the catalog alone: its syntax is to come.
        file.catalogued = n == 2;
        session.workspace.insert_file(file);
    }
    let indexed = |session: &Session, n: usize| session.workspace.file(&path(n)).unwrap().clone();
    let before: Vec<Arc<SourceFile>> = (0..3).map(|n| indexed(&session, n)).collect();

    session.open(path(0), text(0), 1);
    assert!(
        Arc::ptr_eq(&before[0], &indexed(&session, 0)),
        "the same text: the same file"
    );
    assert!(session.open_paths().contains(&path(0)));

    session.open(path(1), format!("{}Rain.\n", text(1)), 1);
    let opened = indexed(&session, 1);
    assert!(!Arc::ptr_eq(&before[1], &opened));
    assert!(opened.text.ends_with("Rain.\n"));
    assert_eq!(
        opened.syntax,
        SourceFile::parse(path(1), opened.text.clone(), &paths).syntax
    );

    session.open(path(2), text(2), 1);
    let opened = indexed(&session, 2);
    assert!(
        !opened.catalogued && !opened.syntax.blocks.is_empty(),
        "parsed"
    );
}

#[test]
fn a_file_changed_on_disk_while_indexing_is_not_replaced_by_the_index_s_older_read() {
    let dir = tempfile::tempdir().unwrap();
    let scenes = dir.path().join("Story/Scenes");
    std::fs::create_dir_all(&scenes).unwrap();
    let mut session = Session::new(dir.path(), PositionEncoding::Utf16);
    let paths = session.workspace.config().paths.clone();
    let changed = FilePath::from("Story/Scenes/SCN-gate.md");
    let deleted = FilePath::from("Story/Scenes/SCN-dream.md");
    let old = |id: &str| format!("---\nid: {id}\npov: Iria\n---\n\nThe gate.\n");
    // The index reads both files, then another program changes one and
    // deletes the other, and the editor's watcher says so.
    let read_by_the_index = vec![
        SourceFile::parse(changed.clone(), old("SCN-gate").into(), &paths),
        SourceFile::parse(deleted.clone(), old("SCN-dream").into(), &paths),
    ];
    let new = "---\nid: SCN-gate\npov: Marit\n---\n\nThe gate.\n";
    std::fs::write(scenes.join("SCN-gate.md"), new).unwrap();
    session.reload_from_disk(&changed);
    session.reload_from_disk(&deleted);
    // The index's batch comes in after.
    session.insert_indexed(read_by_the_index);
    assert_eq!(&*session.workspace.file(&changed).unwrap().text, new);
    assert!(session.workspace.file(&deleted).is_none());

    // Once the index is done, its later reads are the files' own.
    session.finish_indexing();
    let again = SourceFile::parse(deleted.clone(), old("SCN-dream").into(), &paths);
    session.insert_indexed(vec![again]);
    assert!(session.workspace.file(&deleted).is_some());
}

#[test]
fn many_locations_convert_as_each_alone_across_files_lines_and_wide_characters() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path(), PositionEncoding::Utf16);
    let scene = |n: usize| FilePath::from(format!("Story/Scenes/SCN-{n}.md"));
    let texts = [
        "---\nid: SCN-0\n---\n\n“Iria,” said Kael. 𝄞 Iria — Iria.\nIria ran.\n",
        "---\nid: SCN-1\n---\n\nNaïve Iria, Iria.\n\n¿Iria?\n",
    ];
    let mut wanted = Vec::new();
    for (n, text) in texts.iter().enumerate() {
        session.open(scene(n), (*text).to_owned(), 1);
        for (at, _) in text.match_indices("Iria") {
            wanted.push(crate::ide::Location {
                path: scene(n),
                range: crate::text::TextRange::new(at, at + "Iria".len()),
            });
        }
    }
    // Overlapping and backward ranges in a file are converted too.
    wanted.push(crate::ide::Location {
        path: scene(1),
        range: crate::text::TextRange::new(4, 30),
    });
    wanted.push(crate::ide::Location {
        path: "Story/Scenes/gone.md".into(),
        range: crate::text::TextRange::new(0, 1),
    });
    let snapshot = session.snapshot();
    let each: Vec<tower_lsp_server::ls_types::Location> = wanted
        .iter()
        .filter_map(|location| snapshot.location(location))
        .collect();
    assert_eq!(each.len(), wanted.len() - 1);
    assert_eq!(snapshot.locations(&wanted), each);
    // The wide characters before a name count as UTF-16 columns.
    assert_eq!(each[1].range.start, Position::new(4, 22));
    assert!(snapshot.locations(&[]).is_empty());
}

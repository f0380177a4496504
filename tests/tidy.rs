//! Keeps the layering honest: only `src/lsp/` knows the LSP framework, and
//! every source file says what it is for.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

fn sources() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "found the sources");
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path.strip_prefix(&src).unwrap().to_path_buf(), text)
        })
        .collect()
}

#[test]
fn only_the_lsp_module_imports_the_lsp_framework() {
    for (path, text) in sources() {
        if path.starts_with("lsp") {
            continue;
        }
        for forbidden in ["tower_lsp_server", "ls_types", "lsp_types"] {
            assert!(
                !text.contains(forbidden),
                "{} mentions {forbidden}; keep LSP types in src/lsp/",
                path.display()
            );
        }
    }
}

#[test]
fn every_source_file_starts_with_a_module_doc() {
    for (path, text) in sources() {
        assert!(
            text.starts_with("//!"),
            "{} does not start with a `//!` doc comment",
            path.display()
        );
    }
}

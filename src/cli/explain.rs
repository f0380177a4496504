//! `control-room explain CODE`: what a diagnostic code means, from the
//! registry (`crate::codes`), as `rustc --explain` does for its errors.

use crate::codes::{self, CODES};

/// Prints every entry of `code`; exit 1 when the registry has none.
pub fn explain(code: &str) -> i32 {
    let code = code.trim().trim_matches('`');
    let mut found = false;
    for info in codes::lookup(code) {
        found = true;
        println!(
            "{} ({} diagnostics, default {})\n  {}\n  emitted by src/{}",
            info.code,
            info.family.as_str(),
            info.severity,
            info.doc,
            info.emitted_by
        );
    }
    if !found {
        let known: Vec<&str> = CODES.iter().map(|info| info.code).collect();
        eprintln!(
            "no diagnostic code `{code}`; the codes are {}",
            known.join(", ")
        );
    }
    i32::from(!found)
}

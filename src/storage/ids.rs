//! Identifiers and timestamps of what is stored: run, session and receipt
//! ids, and RFC 3339 times.

/// `prefix` and 12 random lowercase hex digits.
pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 6];
    if getrandom::fill(&mut bytes).is_err() {
        // No entropy source: fall back to the clock and the process id.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mixed = nanos ^ (u128::from(std::process::id()) << 64);
        bytes.copy_from_slice(&mixed.to_le_bytes()[..6]);
    }
    format!("{prefix}{}", super::hex(&bytes))
}

/// The current time, RFC 3339 in UTC with milliseconds.
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

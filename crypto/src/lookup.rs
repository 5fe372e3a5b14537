//! Finding an algorithm by name in a part of the catalogue (case-insensitive; an unknown name is
//! an error listing the valid ones). Below every algorithm, which all use it.

use crate::error::{Error, Result};

/// Finds `name` (ASCII case-insensitive) in `table`, or errors listing every valid name.
pub(crate) fn lookup<T: Copy>(
    kind: &'static str,
    table: &[(&'static str, T)],
    name: &str,
) -> Result<T> {
    table
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|&(_, value)| value)
        .ok_or_else(|| Error::UnknownAlgorithm {
            kind,
            name: name.to_owned(),
            valid: table.iter().map(|&(known, _)| known).collect(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_is_case_insensitive() {
        let table = [("sha256", 1), ("md5", 2)];
        assert_eq!(lookup("hash", &table, "SHA256").unwrap(), 1);
    }

    #[test]
    fn unknown_name_lists_valid_ones() {
        let table = [("sha256", 1), ("md5", 2)];
        match lookup("hash", &table, "sha0") {
            Err(Error::UnknownAlgorithm { kind, name, valid }) => {
                assert_eq!((kind, name.as_str()), ("hash", "sha0"));
                assert_eq!(valid, vec!["sha256", "md5"]);
            }
            other => panic!("expected UnknownAlgorithm, got {other:?}"),
        }
    }
}

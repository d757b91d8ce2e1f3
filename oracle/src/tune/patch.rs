//! A unified diff that writes adopted values into the engine's tunables table
//! (`engine/src/tune.rs`: one row `name: default, min, max, c_end, r_end;` per parameter),
//! ready for `git apply`.

use std::fmt::Write as _;

/// Lines of unchanged context around each change, as `diff -u` uses.
const CONTEXT: usize = 3;

/// Why the table cannot be patched.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatchError {
    /// No row declares this parameter.
    #[error("the tunables table has no row `{0}: …`")]
    Missing(String),
    /// More than one row declares it.
    #[error("the tunables table declares `{0}` more than once")]
    Ambiguous(String),
}

/// The diff of `source` (shown as `path`) with each named row's default set to its new value.
/// Rows whose default does not change are left out; no change at all gives an empty diff.
pub fn table_diff(
    source: &str,
    path: &str,
    defaults: &[(&str, String)],
) -> Result<String, PatchError> {
    let old: Vec<&str> = source.lines().collect();
    let mut new: Vec<String> = old.iter().map(|l| (*l).to_string()).collect();
    let mut changed = Vec::new();
    for (name, value) in defaults {
        let rows: Vec<usize> = old
            .iter()
            .enumerate()
            .filter(|(_, l)| row_default(l, name).is_some())
            .map(|(i, _)| i)
            .collect();
        let &[i] = rows.as_slice() else {
            return Err(if rows.is_empty() {
                PatchError::Missing((*name).to_string())
            } else {
                PatchError::Ambiguous((*name).to_string())
            });
        };
        let (start, end) = row_default(old[i], name).expect("found above");
        if old[i][start..end] != *value {
            new[i] = format!("{}{value}{}", &old[i][..start], &old[i][end..]);
            changed.push(i);
        }
    }
    changed.sort_unstable();
    let mut diff = String::new();
    if changed.is_empty() {
        return Ok(diff);
    }
    let _ = writeln!(diff, "--- a/{path}\n+++ b/{path}");
    // Group changes whose context windows touch into one hunk.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &i in &changed {
        match groups.last_mut() {
            Some(g) if i <= g[g.len() - 1] + 2 * CONTEXT + 1 => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    for g in groups {
        let from = g[0].saturating_sub(CONTEXT);
        let to = (g[g.len() - 1] + CONTEXT + 1).min(old.len());
        let len = to - from;
        let _ = writeln!(diff, "@@ -{},{len} +{},{len} @@", from + 1, from + 1);
        for i in from..to {
            if g.contains(&i) {
                let _ = writeln!(diff, "-{}\n+{}", old[i], new[i]);
            } else {
                let _ = writeln!(diff, " {}", old[i]);
            }
        }
    }
    Ok(diff)
}

/// The byte range of the default in a row `    name: default, …;`, if `line` is that row.
fn row_default(line: &str, name: &str) -> Option<(usize, usize)> {
    let indent = line.len() - line.trim_start().len();
    let rest = line[indent..].strip_prefix(name)?.strip_prefix(':')?;
    let value_start = line.len() - rest.trim_start().len();
    let value_len = line[value_start..].find(',')?;
    Some((value_start, value_start + value_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "tunables! {\n    /// a\n    asp_delta: 16, 5, 60, 3.0, 0.002;\n    /// b\n    \
        asp_min_depth: 5, 2, 10, 1.0, 0.002;\n    /// c\n    rfp_depth: 8, 2, 14, 1.0, 0.002;\n    /// d\n    \
        rfp_margin: 75, 30, 160, 8.0, 0.002;\n    /// e\n    x1: 1, 0, 2, 1.0, 0.002;\n    /// f\n    x2: 1, 0, 2, 1.0, 0.002;\n    \
        /// g\n    x3: 1, 0, 2, 1.0, 0.002;\n    /// h\n    last: 40, 0, 80, 4.0, 0.002;\n}\n";

    #[test]
    fn changes_only_the_defaults_in_merged_hunks() {
        let d = table_diff(
            TABLE,
            "engine/src/tune.rs",
            &[
                ("asp_delta", "18".into()),
                ("asp_min_depth", "5".into()),
                ("rfp_depth", "7".into()),
                ("last", "44".into()),
            ],
        )
        .unwrap();
        let want = "--- a/engine/src/tune.rs\n+++ b/engine/src/tune.rs\n\
            @@ -1,10 +1,10 @@\n tunables! {\n     /// a\n-    asp_delta: 16, 5, 60, 3.0, 0.002;\n+    asp_delta: 18, 5, 60, 3.0, 0.002;\n     /// b\n     asp_min_depth: 5, 2, 10, 1.0, 0.002;\n     /// c\n-    rfp_depth: 8, 2, 14, 1.0, 0.002;\n+    rfp_depth: 7, 2, 14, 1.0, 0.002;\n     /// d\n     rfp_margin: 75, 30, 160, 8.0, 0.002;\n     /// e\n\
            @@ -14,5 +14,5 @@\n     /// g\n     x3: 1, 0, 2, 1.0, 0.002;\n     /// h\n-    last: 40, 0, 80, 4.0, 0.002;\n+    last: 44, 0, 80, 4.0, 0.002;\n }\n";
        assert_eq!(d, want);
    }

    #[test]
    fn no_change_no_diff_and_unknown_rows_are_named() {
        assert_eq!(
            table_diff(TABLE, "t.rs", &[("x1", "1".into())]).unwrap(),
            ""
        );
        assert_eq!(
            table_diff(TABLE, "t.rs", &[("nope", "1".into())]).unwrap_err(),
            PatchError::Missing("nope".into())
        );
        // `x` is a prefix of `x1`, not a row of its own.
        assert!(table_diff(TABLE, "t.rs", &[("x", "1".into())]).is_err());
        let twice = format!("{TABLE}    x1: 2, 0, 2, 1.0, 0.002;\n");
        assert_eq!(
            table_diff(&twice, "t.rs", &[("x1", "0".into())]).unwrap_err(),
            PatchError::Ambiguous("x1".into())
        );
    }
}

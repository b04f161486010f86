//! The part of a function library a kernel calls: the f64 polyfills
//! ([`crate::wgsl_f64`]) are about a thousand lines, and every line of a
//! module costs naga's translation and the driver's compile, so a kernel
//! of the wide dialect gets only the items it reaches.
//!
//! A library is split into top-level items (`fn`, `const`, `struct`, each
//! with the comment lines right above it), and an item is kept when the
//! kernel names it or a kept item does (by identifier, so the rule holds
//! for any WGSL written in that layout: every item starts at column 0 with
//! its keyword, nothing else does).

use std::collections::{BTreeSet, HashMap};

/// One top-level item of a library.
struct Item<'a> {
    name: &'a str,
    text: String,
    uses: BTreeSet<String>,
}

/// The identifiers in `text`.
fn identifiers(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .collect()
}

/// The name an item line declares, if the line starts an item.
fn declared(line: &str) -> Option<&str> {
    let rest = ["fn ", "const ", "struct "]
        .iter()
        .find_map(|k| line.strip_prefix(k))?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// `library` cut into its items, in order.
fn items(library: &str) -> Vec<Item<'_>> {
    let mut items: Vec<Item<'_>> = Vec::new();
    let mut comments: Vec<&str> = Vec::new();
    for line in library.lines() {
        if let Some(name) = declared(line) {
            let mut text = comments.join("\n");
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(line);
            comments.clear();
            items.push(Item {
                name,
                text,
                uses: BTreeSet::new(),
            });
        } else if line.starts_with("//") {
            comments.push(line);
        } else if line.trim().is_empty() {
            comments.clear();
        } else if let Some(item) = items.last_mut() {
            item.text.push('\n');
            item.text.push_str(line);
        }
    }
    for item in &mut items {
        item.uses = identifiers(&item.text)
            .into_iter()
            .filter(|u| *u != item.name)
            .map(String::from)
            .collect();
    }
    items
}

/// The items of `library` that `kernel` reaches, in the library's order,
/// separated by blank lines (empty when it reaches none).
pub fn reached(library: &str, kernel: &str) -> String {
    let items = items(library);
    let by_name: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .map(|(i, it)| (it.name, i))
        .collect();
    let mut keep = vec![false; items.len()];
    let mut todo: Vec<usize> = identifiers(kernel)
        .into_iter()
        .filter_map(|w| by_name.get(w).copied())
        .collect();
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut keep[i], true) {
            continue;
        }
        todo.extend(
            items[i]
                .uses
                .iter()
                .filter_map(|u| by_name.get(u.as_str()).copied()),
        );
    }
    items
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(it, _)| it.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIBRARY: &str = "\
// The header.

// a's comment.
fn a(x: f32) -> f32 {
  return b(x) + C;
}

const C: f32 = 1.0;

fn b(x: f32) -> f32 {
  return x;
}

// Unused.
fn unused() {}

struct S {
  x: f32,
}
";

    #[test]
    fn only_reached_items_are_kept_with_their_comments() {
        assert_eq!(
            reached(LIBRARY, "let y = a(x);"),
            "// a's comment.\nfn a(x: f32) -> f32 {\n  return b(x) + C;\n}\n\nconst C: f32 = 1.0;\n\nfn b(x: f32) -> f32 {\n  return x;\n}"
        );
        assert_eq!(reached(LIBRARY, "let s: S;"), "struct S {\n  x: f32,\n}");
        assert_eq!(reached(LIBRARY, "let unusedx = ab(1);"), "");
    }

    #[test]
    fn the_f64_polyfills_reach_what_they_call() {
        let pow = reached(crate::wgsl_f64::PRELUDE_F64, "gb_pow_f64(a, b)");
        assert!(pow.contains("fn gb_pow_f64("));
        assert!(pow.contains("fn gb_f64_keep("));
        assert!(!pow.contains("fn gb_sin_f64("));
        let sin = reached(crate::wgsl_f64::PRELUDE_F64, "gb_sin_f64(a)");
        assert!(sin.contains("const gb_f64_two_over_pi"));
        assert!(sin.contains("struct gb_f64_reduced"));
    }
}

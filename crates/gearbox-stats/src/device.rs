//! The nmath functions as device source, one function per file in
//! `device/`, and the assembler that builds a kernel's preamble from exactly
//! the functions it calls.
//!
//! The files are written once in a portable subset of C that compiles as
//! CUDA C++ (NVRTC), as OpenCL C 1.2 with `cl_khr_fp64`, and as host C++
//! (g++, for the tests). Each file `device/gb_NAME.c` defines one function
//! `GB_FN ... gb_NAME(...)` and names the functions it calls on a line
//! `// @depends gb_a gb_b` (none: `// @depends` with nothing after it).
//! `device/prelude.h` picks the language (`__CUDACC__`, `__OPENCL_VERSION__`,
//! else the host), defines the qualifiers the files use in place of CUDA's
//! (`GB_FN`, `GB_NOINLINE`, `GB_TABLE` for read-only tables at file scope)
//! and the constants and macros every function may use, and always comes
//! first. [`assemble`] walks the dependency graph from the functions a kernel
//! asks for and emits them callees first (the nmathopencl pattern), so a
//! kernel compiles only what it uses.

use std::collections::HashMap;
use std::sync::OnceLock;

use gearbox_core::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/device_files.rs"));

/// The file that starts every assembled source.
pub const PRELUDE: &str = "prelude";

/// One device function: its name, the functions it calls, its source.
#[derive(Debug, Clone)]
pub struct DeviceFunction {
    /// The function's name (`gb_...`), also its file's stem.
    pub name: &'static str,
    /// The device functions it calls, from its `@depends` line.
    pub depends: Vec<&'static str>,
    /// The file's text.
    pub source: &'static str,
}

fn bad(name: &str, why: String) -> Error {
    Error::InvalidArgument {
        op: "device_source",
        name: "function",
        value: name.to_string(),
        why,
    }
}

/// Every device function, by name, parsed once from the embedded files.
pub fn functions() -> &'static HashMap<&'static str, DeviceFunction> {
    static TABLE: OnceLock<HashMap<&'static str, DeviceFunction>> = OnceLock::new();
    TABLE.get_or_init(|| {
        DEVICE_FILES
            .iter()
            .filter(|(stem, _)| *stem != PRELUDE)
            .map(|&(name, source)| {
                let depends = source
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("// @depends"))
                    .map(|rest| rest.split_whitespace().collect())
                    .unwrap_or_default();
                (
                    name,
                    DeviceFunction {
                        name,
                        depends,
                        source,
                    },
                )
            })
            .collect()
    })
}

/// The prelude's text (constants and macros).
pub fn prelude() -> &'static str {
    DEVICE_FILES
        .iter()
        .find(|(stem, _)| *stem == PRELUDE)
        .map_or("", |(_, s)| s)
}

/// The functions `roots` need, callees before callers, each once. Fails on
/// an unknown function, a missing `@depends` line, or a dependency cycle.
pub fn closure(roots: &[&str]) -> Result<Vec<&'static str>> {
    closure_in(functions(), roots)
}

fn closure_in(
    table: &HashMap<&'static str, DeviceFunction>,
    roots: &[&str],
) -> Result<Vec<&'static str>> {
    // 0: unvisited, 1: on the current path, 2: emitted.
    let mut state: HashMap<&str, u8> = HashMap::new();
    let mut order = Vec::new();
    for &root in roots {
        let f = table
            .get(root)
            .ok_or_else(|| bad(root, "no device file defines it".into()))?;
        // Iterative depth-first search: (function, next dependency index).
        let mut stack: Vec<(&DeviceFunction, usize)> = vec![(f, 0)];
        if state.get(f.name).copied().unwrap_or(0) == 2 {
            continue;
        }
        state.insert(f.name, 1);
        while let Some((g, i)) = stack.pop() {
            if !g.source.contains("// @depends") {
                return Err(bad(g.name, "its file has no `// @depends` line".into()));
            }
            if let Some(&dep) = g.depends.get(i) {
                stack.push((g, i + 1));
                let d = table.get(dep).ok_or_else(|| {
                    bad(
                        g.name,
                        format!("depends on {dep}, which no device file defines"),
                    )
                })?;
                match state.get(dep).copied().unwrap_or(0) {
                    0 => {
                        state.insert(dep, 1);
                        stack.push((d, 0));
                    }
                    1 => {
                        return Err(bad(g.name, format!("dependency cycle through {dep}")));
                    }
                    _ => {}
                }
            } else {
                state.insert(g.name, 2);
                order.push(g.name);
            }
        }
    }
    Ok(order)
}

/// Functions longer than this many lines are compiled once and called
/// (`GB_NOINLINE`: CUDA's `__noinline__`) rather than inlined at every call site: inlining the
/// TOMS 708 routines into each other multiplied NVRTC's compile time (minutes
/// for a kernel calling `pbeta`) for no gain in a kernel that is memory-bound.
pub const NOINLINE_LINES: usize = 25;

/// The device source for a kernel calling `roots`: the prelude, then every
/// function they need in dependency order (long ones marked `GB_NOINLINE`).
pub fn assemble(roots: &[&str]) -> Result<String> {
    let table = functions();
    let mut src = String::from(prelude());
    for name in closure(roots)? {
        src.push('\n');
        src.push_str(&with_inlining(table[name].source, name));
    }
    Ok(src)
}

/// `source` with its definition of `name` marked `GB_NOINLINE` when the
/// file is longer than [`NOINLINE_LINES`].
fn with_inlining(source: &str, name: &str) -> String {
    if source.lines().count() <= NOINLINE_LINES {
        return source.to_string();
    }
    let call = format!(" {name}(");
    source
        .lines()
        .map(|l| {
            if l.starts_with("GB_FN ") && l.contains(&call) {
                l.replacen("GB_FN ", "GB_FN GB_NOINLINE ", 1)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_file_is_well_formed_and_acyclic() {
        for (name, f) in functions() {
            assert!(
                name.starts_with("gb_"),
                "{name}: device names start with gb_"
            );
            let def = format!("{name}(");
            assert!(f.source.contains(&def), "{name}.c does not define {name}");
            let order = closure(&[name]).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(order.last(), Some(name), "{name} comes after its callees");
        }
    }

    #[test]
    fn each_kernel_pulls_exactly_the_transitive_dependencies() {
        for (name, f) in functions() {
            let order = closure(&[name]).unwrap();
            // Every pulled function is reachable: it is the root or some
            // pulled function depends on it.
            for g in &order {
                assert!(
                    g == name || order.iter().any(|h| functions()[h].depends.contains(g)),
                    "{name} pulls {g}, which nothing it calls needs"
                );
            }
            for d in &f.depends {
                let (pd, pf) = (
                    order.iter().position(|x| x == d).unwrap(),
                    order.iter().position(|x| x == name).unwrap(),
                );
                assert!(pd < pf, "{d} must come before {name}");
            }
            // No function appears twice.
            let mut sorted = order.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), order.len());
        }
    }

    #[test]
    fn a_dependency_cycle_is_reported() {
        let f = |name, depends: Vec<&'static str>| DeviceFunction {
            name,
            depends,
            source: "// @depends",
        };
        let table: HashMap<_, _> = [
            ("gb_a", f("gb_a", vec!["gb_b"])),
            ("gb_b", f("gb_b", vec!["gb_c"])),
            ("gb_c", f("gb_c", vec!["gb_a"])),
            ("gb_d", f("gb_d", vec![])),
        ]
        .into_iter()
        .collect();
        let e = closure_in(&table, &["gb_a"]).unwrap_err().to_string();
        assert!(e.contains("cycle"), "{e}");
        assert_eq!(closure_in(&table, &["gb_d"]).unwrap(), vec!["gb_d"]);
    }

    #[test]
    fn long_functions_are_not_inlined_and_short_ones_are() {
        let src = assemble(&["gb_pbeta"]).unwrap();
        assert!(
            src.contains("GB_FN GB_NOINLINE void gb_bratio("),
            "bratio is long"
        );
        assert!(
            !src.contains("GB_NOINLINE double gb_exparg("),
            "exparg is short"
        );
    }

    #[test]
    fn unknown_function_is_a_clear_error() {
        let e = assemble(&["gb_no_such_function"]).unwrap_err().to_string();
        assert!(e.contains("gb_no_such_function"), "{e}");
    }
}

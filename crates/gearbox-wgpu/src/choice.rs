//! Which adapter the backend drives when wgpu sees several, and what the
//! status table says about the others.
//!
//! Adapters are ranked discrete GPU first, CPU last (a CPU adapter such as
//! lavapipe only competes with the CPU backend for the same cores, so it is
//! used only when allowed: `GEARBOX_WGPU_ALLOW_CPU=1`).
//! `GEARBOX_WGPU_ADAPTER` picks one explicitly, by its position in that
//! ranking or by a part of its name (case-insensitive), CPU adapters
//! included; a choice that matches none is an error that lists them.

/// An adapter as the choice sees it: its name and whether it runs on the CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The adapter's name.
    pub name: String,
    /// Whether it runs on the CPU.
    pub cpu: bool,
}

/// The position of the adapter to drive among `ranked` (best first): the
/// one `wanted` names, else the first that is not a CPU adapter unless
/// `cpu_ok`; `Err` says why there is none.
pub fn choose(ranked: &[Candidate], wanted: Option<&str>, cpu_ok: bool) -> Result<usize, String> {
    if let Some(wanted) = wanted.map(str::trim).filter(|w| !w.is_empty()) {
        let lower = wanted.to_lowercase();
        let found = match wanted.parse::<usize>() {
            Ok(i) => (i < ranked.len()).then_some(i),
            Err(_) => ranked
                .iter()
                .position(|c| c.name.to_lowercase().contains(&lower)),
        };
        return found.ok_or_else(|| {
            let seen: Vec<String> = ranked
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{i}: {}", c.name))
                .collect();
            format!(
                "GEARBOX_WGPU_ADAPTER={wanted} matches no adapter (seen: {})",
                if seen.is_empty() {
                    "none".to_string()
                } else {
                    seen.join(", ")
                }
            )
        });
    }
    if let Some(i) = ranked.iter().position(|c| cpu_ok || !c.cpu) {
        return Ok(i);
    }
    match ranked.first() {
        Some(cpu) => Err(format!(
            "only a CPU adapter, {} (set GEARBOX_WGPU_ALLOW_CPU=1 to use it)",
            cpu.name
        )),
        None => Err(String::new()),
    }
}

/// Why each adapter of `ranked` other than `driven` is not used, with how
/// to pick it: (position, reason).
pub fn others(ranked: &[Candidate], driven: usize, cpu_ok: bool) -> Vec<(usize, String)> {
    ranked
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != driven)
        .map(|(i, c)| {
            let why = if c.cpu && !cpu_ok {
                "a CPU adapter, not used (GEARBOX_WGPU_ALLOW_CPU=1 allows CPU adapters)".to_string()
            } else {
                format!("not driven: the backend drives {}", ranked[driven].name)
            };
            (i, format!("{why}; GEARBOX_WGPU_ADAPTER={i} picks it"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked() -> Vec<Candidate> {
        vec![
            Candidate {
                name: "NVIDIA H100 80GB HBM3".into(),
                cpu: false,
            },
            Candidate {
                name: "AMD Radeon Pro".into(),
                cpu: false,
            },
            Candidate {
                name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
                cpu: true,
            },
        ]
    }

    #[test]
    fn the_best_gpu_is_driven_unless_one_is_named() {
        let r = ranked();
        assert_eq!(choose(&r, None, false), Ok(0));
        assert_eq!(choose(&r, Some("1"), false), Ok(1));
        assert_eq!(choose(&r, Some("radeon"), false), Ok(1));
        assert_eq!(choose(&r, Some("llvmpipe"), false), Ok(2));
        assert_eq!(choose(&r, Some(" "), false), Ok(0));
        let err = choose(&r, Some("intel"), false).unwrap_err();
        assert!(
            err.contains("GEARBOX_WGPU_ADAPTER=intel") && err.contains("2: llvmpipe"),
            "{err}"
        );
        assert!(choose(&r, Some("3"), false).is_err());
    }

    #[test]
    fn cpu_adapters_need_permission() {
        let cpu = vec![ranked()[2].clone()];
        let err = choose(&cpu, None, false).unwrap_err();
        assert!(
            err.contains("only a CPU adapter") && err.contains("ALLOW_CPU"),
            "{err}"
        );
        assert_eq!(choose(&cpu, None, true), Ok(0));
        assert_eq!(choose(&[], None, true), Err(String::new()));
    }

    #[test]
    fn the_others_say_why_and_how_to_pick_them() {
        let r = ranked();
        let rest = others(&r, 0, false);
        assert_eq!(rest.len(), 2);
        assert_eq!(rest[0].0, 1);
        assert!(rest[0].1.contains("drives NVIDIA H100"));
        assert!(rest[0].1.ends_with("GEARBOX_WGPU_ADAPTER=1 picks it"));
        assert!(rest[1].1.contains("a CPU adapter, not used"));
        assert!(others(&r, 2, true)[0].1.contains("drives llvmpipe"));
    }
}

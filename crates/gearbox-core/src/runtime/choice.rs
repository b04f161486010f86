//! Which device a backend drives when its API sees several (wgpu's
//! adapters, OpenCL's devices), and what the status table says about the
//! others.
//!
//! Devices are ranked by the backend, discrete GPU first, CPU last (a CPU
//! device such as lavapipe or pocl only competes with the CPU backend for
//! the same cores, so it is used only when allowed: the backend's
//! `..._ALLOW_CPU=1`). The backend's pick variable (`GEARBOX_WGPU_ADAPTER`,
//! `GEARBOX_OPENCL_DEVICE`) picks one explicitly, by its position in that
//! ranking or by a part of its name (case-insensitive), CPU devices
//! included; a choice that matches none is an error that lists them.

/// The environment variables a backend's choice is steered by, and what it
/// calls a device, for the messages.
#[derive(Debug, Clone, Copy)]
pub struct ChoiceNames {
    /// The variable picking a device (`GEARBOX_WGPU_ADAPTER`).
    pub pick: &'static str,
    /// The variable allowing CPU devices (`GEARBOX_WGPU_ALLOW_CPU`).
    pub allow_cpu: &'static str,
    /// What the API calls a device (`adapter`).
    pub noun: &'static str,
}

/// A device as the choice sees it: its name and whether it runs on the CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The adapter's name.
    pub name: String,
    /// Whether it runs on the CPU.
    pub cpu: bool,
}

/// The position of the device to drive among `ranked` (best first): the
/// one `wanted` names, else the first that is not a CPU device unless
/// `cpu_ok`; `Err` says why there is none (empty: there is no device).
pub fn choose(
    names: ChoiceNames,
    ranked: &[Candidate],
    wanted: Option<&str>,
    cpu_ok: bool,
) -> Result<usize, String> {
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
                "{}={wanted} matches no {} (seen: {})",
                names.pick,
                names.noun,
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
            "only a CPU {}, {} (set {}=1 to use it)",
            names.noun, cpu.name, names.allow_cpu
        )),
        None => Err(String::new()),
    }
}

/// Why each device of `ranked` other than `driven` is not used, with how
/// to pick it: (position, reason).
pub fn others(
    names: ChoiceNames,
    ranked: &[Candidate],
    driven: usize,
    cpu_ok: bool,
) -> Vec<(usize, String)> {
    ranked
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != driven)
        .map(|(i, c)| {
            let why = if c.cpu && !cpu_ok {
                format!(
                    "a CPU {0}, not used ({1}=1 allows CPU {0}s)",
                    names.noun, names.allow_cpu
                )
            } else {
                format!("not driven: the backend drives {}", ranked[driven].name)
            };
            (i, format!("{why}; {}={i} picks it", names.pick))
        })
        .collect()
}

/// Whether a device runs f64 at full rate (at least half its f32 rate),
/// which `strict` work needs, for APIs that do not report the rate: CPUs,
/// and the data-centre GPUs known by name (NVIDIA's P100, V100, A100, A30,
/// H100, H200, GH200, B100, B200; AMD's Instinct).
pub fn full_rate_f64_by_name(name: &str, cpu: bool) -> bool {
    const DATA_CENTRE: [&str; 10] = [
        "P100", "V100", "A100", "A30", "H100", "H200", "GH200", "B100", "B200", "Instinct",
    ];
    cpu || DATA_CENTRE.iter().any(|part| name.contains(part))
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: ChoiceNames = ChoiceNames {
        pick: "GEARBOX_WGPU_ADAPTER",
        allow_cpu: "GEARBOX_WGPU_ALLOW_CPU",
        noun: "adapter",
    };

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
        assert_eq!(choose(N, &r, None, false), Ok(0));
        assert_eq!(choose(N, &r, Some("1"), false), Ok(1));
        assert_eq!(choose(N, &r, Some("radeon"), false), Ok(1));
        assert_eq!(choose(N, &r, Some("llvmpipe"), false), Ok(2));
        assert_eq!(choose(N, &r, Some(" "), false), Ok(0));
        let err = choose(N, &r, Some("intel"), false).unwrap_err();
        assert!(
            err.contains("GEARBOX_WGPU_ADAPTER=intel") && err.contains("2: llvmpipe"),
            "{err}"
        );
        assert!(choose(N, &r, Some("3"), false).is_err());
    }

    #[test]
    fn cpu_adapters_need_permission() {
        let cpu = vec![ranked()[2].clone()];
        let err = choose(N, &cpu, None, false).unwrap_err();
        assert!(
            err.contains("only a CPU adapter") && err.contains("ALLOW_CPU"),
            "{err}"
        );
        assert_eq!(choose(N, &cpu, None, true), Ok(0));
        assert_eq!(choose(N, &[], None, true), Err(String::new()));
    }

    #[test]
    fn the_others_say_why_and_how_to_pick_them() {
        let r = ranked();
        let rest = others(N, &r, 0, false);
        assert_eq!(rest.len(), 2);
        assert_eq!(rest[0].0, 1);
        assert!(rest[0].1.contains("drives NVIDIA H100"));
        assert!(rest[0].1.ends_with("GEARBOX_WGPU_ADAPTER=1 picks it"));
        assert!(rest[1].1.contains("a CPU adapter, not used"));
        assert!(others(N, &r, 2, true)[0].1.contains("drives llvmpipe"));
    }
}

//! `gearbox status`: the backend status table.

use clap::Args;
use gearbox::runtime::{cache_repairs, gpu_status, memory_stats, Backend, MemoryStats};

use crate::output::{CliResult, Out};

/// Options of `gearbox status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Do not probe: show only what is known without touching a device
    /// (unprobed backends say so).
    #[arg(long)]
    pub no_probe: bool,
}

/// Prints the CPU reference backend and the table of GPU backends, probed
/// unless `--no-probe` (a backend whose probe fails says why, as the
/// work would find it), then any cache entries found damaged and rebuilt.
pub fn run(args: &StatusArgs, out: &mut Out) -> CliResult {
    if !args.no_probe {
        for row in gpu_status().rows.iter().filter(|r| r.available) {
            gearbox::runtime::registry::probe_backend(&row.backend, false);
        }
    }
    let cpu = gearbox::runtime::cpu::CpuBackend.info()?;
    out.line(format_args!(
        "cpu      reference backend, always available: {}",
        cpu.name
    ))?;
    let table = gpu_status();
    if table.rows.is_empty() {
        return out.line("no GPU backend is compiled into this build");
    }
    out.text(table)?;
    memory(out, &memory_stats())?;
    for repair in cache_repairs() {
        out.line(format_args!("cache    {repair}"))?;
    }
    Ok(())
}

/// A memory line per backend whose device this process has opened (the
/// pool's bytes in use, peak and cached, and the device's memory where
/// known), or a note that none is open.
fn memory(out: &mut Out, stats: &[(String, MemoryStats)]) -> CliResult {
    if stats.is_empty() {
        return out.line("memory   no device opened by this process");
    }
    for (name, s) in stats {
        out.line(format_args!("{name:<8} memory: {s}"))?;
    }
    Ok(())
}

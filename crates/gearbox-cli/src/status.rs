//! `gearbox status`: the backend status table.

use gearbox::runtime::{gpu_status, memory_stats, Backend, MemoryStats};

use crate::output::{CliResult, Out};

/// Prints the CPU reference backend and the table of GPU backends.
pub fn run(out: &mut Out) -> CliResult {
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
    memory(out, &memory_stats())
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

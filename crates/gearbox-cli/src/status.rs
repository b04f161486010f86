//! `gearbox status`: the backend status table.

use gearbox::runtime::{gpu_status, Backend};

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
        out.line("no GPU backend is compiled into this build")
    } else {
        out.text(table)
    }
}

//! `gearbox status`: the backend status table.

use gearbox::runtime::{gpu_status, Backend};
use gearbox::Result;

/// Prints the CPU reference backend and the table of GPU backends.
pub fn run() -> Result<()> {
    let cpu = gearbox::runtime::cpu::CpuBackend.info()?;
    println!("cpu      reference backend, always available: {}", cpu.name);
    let table = gpu_status();
    if table.rows.is_empty() {
        println!("no GPU backend is compiled into this build");
    } else {
        print!("{table}");
    }
    Ok(())
}

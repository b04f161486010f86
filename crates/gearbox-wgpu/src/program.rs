//! WGSL programs: the [`Compiler`] of the shared program cache
//! ([`gearbox_core::runtime::programs`]). A "binary" is the complete WGSL
//! module (the rendered kernel and the f64 polyfills it reaches), which
//! naga translates for the driver when the module is created; a loaded
//! program is one compute pipeline per entry point. Shader errors carry
//! naga's diagnostics. The generated kernels keep naga's loop bounding
//! (NVIDIA's compiler crashes without it) and drop its bounds checks, which
//! cost every access a comparison (`GEARBOX_WGPU_CHECKED`, [`crate::params`]).

use std::collections::HashMap;

use gearbox_core::runtime::programs::Compiler;
use gearbox_core::{DeviceErrorKind, Result};

use crate::device::{fault, Device};

/// A loaded WGSL module: a compute pipeline per entry point.
pub struct Program {
    pipelines: HashMap<String, wgpu::ComputePipeline>,
    /// Whether its kernels read and write through `vec4` views of their
    /// buffers (the packed dialect): launches bind them.
    pub packed: bool,
}

impl Program {
    /// The pipeline of entry point `name`.
    pub fn pipeline(&self, name: &str) -> Result<&wgpu::ComputePipeline> {
        self.pipelines
            .get(name)
            .ok_or_else(|| fault("launch", format!("entry point {name} is not in its module")))
    }
}

/// Builds WGSL on one device.
pub struct WgslCompiler<'a>(pub &'a Device);

impl Compiler for WgslCompiler<'_> {
    type Program = Program;

    fn target(&self) -> String {
        let info = &self.0.info;
        format!(
            "wgsl-{}-{}",
            info.name,
            info.driver.as_deref().unwrap_or("")
        )
    }

    fn extension(&self) -> &'static str {
        "wgsl"
    }

    /// The complete module ([`crate::wgsl::complete`]).
    fn compile(&self, source: &str) -> Result<Vec<u8>> {
        Ok(crate::wgsl::complete(source).into_bytes())
    }

    fn load(&self, binary: &[u8], entries: &[&str]) -> Result<Program> {
        let dev = self.0;
        let source = std::str::from_utf8(binary).map_err(|_| fault("load", "WGSL is not text"))?;
        let desc = wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(source.into()),
        };
        let module = dev.checked("compile", DeviceErrorKind::Compile, || {
            // SAFETY: the kernels come from the shared renderer, whose loops
            // are grid-stride with positive strides (they end) and whose
            // indices stay below the element counts of the buffers they read
            // and write (the launch ABI sizes every buffer; the conformance
            // suite runs every op and boundary size), so dropping either
            // check is sound.
            unsafe {
                dev.device
                    .create_shader_module_trusted(desc, crate::params::params().runtime_checks)
            }
        })?;
        let mut pipelines = HashMap::new();
        for &entry in entries {
            let pipeline = dev.checked("compile", DeviceErrorKind::Compile, || {
                dev.device
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(entry),
                        layout: None,
                        module: &module,
                        entry_point: Some(entry),
                        compilation_options: Default::default(),
                        cache: dev.pipelines.as_ref().map(|p| p.cache()),
                    })
            })?;
            pipelines.insert(entry.to_string(), pipeline);
        }
        if let Some(disk) = &dev.pipelines {
            disk.save();
        }
        Ok(Program {
            pipelines,
            packed: source.contains(crate::wgsl::PACK_VIEWS),
        })
    }
}

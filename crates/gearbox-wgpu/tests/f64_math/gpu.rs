//! The GPU side of `gpu_f64_math.rs`: the compute shader that applies one
//! function of the prelude to every element of its inputs ([`kernel`]),
//! and a device with SHADER_F64 and SHADER_INT64 that runs such a shader
//! and reads its output back ([`Gpu`]).

use gearbox_wgpu::wgsl_f64::PRELUDE_F64;
use wgpu::util::DeviceExt;

use super::cases::Case;

/// The features the device is opened with (the prelude needs both).
const FEATURES: wgpu::Features = wgpu::Features::SHADER_F64.union(wgpu::Features::SHADER_INT64);

// ---- Shader --------------------------------------------------------------

/// A compute shader applying `case.call` to each element of `a` (and `b`).
pub fn kernel(case: &Case) -> String {
    let b = if case.b.is_empty() {
        ""
    } else {
        "@group(0) @binding(1) var<storage, read> gb_in_b: array<f64>;\n"
    };
    let load_b = if case.b.is_empty() {
        ""
    } else {
        "let b = gb_in_b[i];"
    };
    format!(
        "{PRELUDE_F64}
@group(0) @binding(0) var<storage, read> gb_in_a: array<f64>;
{b}@group(0) @binding(2) var<storage, read_write> gb_out: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
  let i = id.x;
  if (i >= arrayLength(&gb_out)) {{
    return;
  }}
  let a = gb_in_a[i];
  {load_b}
  gb_out[i] = {};
}}
",
        case.call
    )
}

// ---- Device --------------------------------------------------------------

pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// The adapter: name, backend and driver.
    pub name: String,
}

/// Gives libwayland an empty runtime directory when the environment has
/// none: lavapipe loads it while adapters are enumerated, and it complains
/// on standard error otherwise.
pub fn quiet_wayland() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join("gearbox-f64-math-runtime");
        if std::fs::create_dir_all(&dir).is_ok() {
            // SAFETY: called first in the only test that starts threads of
            // its own (wgpu's), before any of them; no other test of this
            // binary reads the environment.
            unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
        }
    }
}

/// A device with SHADER_F64 and SHADER_INT64 on an adapter that has them,
/// CPU adapters last.
pub fn open_gpu() -> Option<Gpu> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let mut adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    adapters.retain(|a| a.features().contains(FEATURES));
    adapters.sort_by_key(|a| a.get_info().device_type == wgpu::DeviceType::Cpu);
    let adapter = adapters.into_iter().next()?;
    let info = adapter.get_info();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("f64_math"),
        required_features: FEATURES,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .ok()?;
    Some(Gpu {
        device,
        queue,
        name: format!("{} ({:?}, {})", info.name, info.backend, info.driver_info),
    })
}

impl Gpu {
    fn storage(&self, values: &[f64]) -> wgpu::Buffer {
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::cast_slice(values),
                usage: wgpu::BufferUsages::STORAGE,
            })
    }

    /// Runs `source`'s `main` over `a` (and `b`), one invocation per element,
    /// and downloads its output.
    pub fn run(&self, source: &str, a: &[f64], b: &[f64]) -> Vec<f64> {
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
        let bytes = (a.len() * 8) as u64;
        let out = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let in_a = self.storage(a);
        let in_b = (!b.is_empty()).then(|| self.storage(b));
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: in_a.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: out.as_entire_binding(),
            },
        ];
        if let Some(in_b) = &in_b {
            entries.push(wgpu::BindGroupEntry {
                binding: 1,
                resource: in_b.as_entire_binding(),
            });
        }
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(a.len().div_ceil(64) as u32, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&out, 0, &staging, 0, bytes);
        self.queue.submit([encoder.finish()]);
        staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("map the output"));
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("wait for the device");
        let view = staging.get_mapped_range(..).expect("read the output");
        bytemuck::pod_collect_to_vec(&view[..])
    }
}

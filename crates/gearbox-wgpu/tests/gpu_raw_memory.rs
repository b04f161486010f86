//! Buffers on Vulkan memory the backend allocates itself
//! ([`gearbox_wgpu::raw_memory`]) hold what is written to them: for each
//! way of allocating, random values written through the queue, copied into
//! a second raw buffer on the device and read back are the values written.
//! Memory from the CUDA driver is tried where libcuda loads (the H100) and
//! skipped, saying so, where it does not. Without a Vulkan adapter the
//! test prints `SKIP: <reason>` and passes, unless
//! `GEARBOX_REQUIRE_WGPU=1`.

mod common;

use gearbox_core::runtime::pool::size_class;
use gearbox_core::runtime::testing::gpu::values;
use gearbox_core::{DType, HostBuffer};
use gearbox_wgpu::raw_memory::{create_buffer, RawMemory};

#[test]
fn raw_buffers_hold_what_is_written_for_every_way_of_allocating() {
    let Some(_guard) = common::adapter() else {
        return;
    };
    let backend = gearbox_wgpu::shared().expect("registered");
    let dev = backend.device().expect("a healthy backend has a device");
    let ways = [
        RawMemory::default(),
        RawMemory {
            clear: true,
            ..RawMemory::default()
        },
        RawMemory {
            dedicated: true,
            ..RawMemory::default()
        },
        RawMemory {
            export: true,
            ..RawMemory::default()
        },
        RawMemory {
            dedicated: true,
            export: true,
            ..RawMemory::default()
        },
        RawMemory {
            arena_bytes: 64 << 20,
            ..RawMemory::default()
        },
        RawMemory {
            cuda: Some(false),
            ..RawMemory::default()
        },
    ];
    // An odd length: the copy's size is not a power of two.
    let len = 300_007;
    for (i, how) in ways.iter().enumerate() {
        let HostBuffer::F32(want) = values(len, DType::F32, 40 + i as u64) else {
            unreachable!("values of the dtype asked for")
        };
        let bytes = size_class(len * 4) as u64;
        let made = (
            create_buffer(&dev.device, bytes, how),
            create_buffer(&dev.device, bytes, how),
        );
        let (src, dst) = match made {
            (Ok(Some(src)), Ok(Some(dst))) => (src, dst),
            (Ok(None), _) => {
                println!("SKIP: the adapter is not Vulkan");
                return;
            }
            (Err(e), _) | (_, Err(e))
                if how.cuda.is_some() && e.to_string().contains("libcuda") =>
            {
                println!("SKIP {how:?}: {e}");
                continue;
            }
            (Err(e), _) | (_, Err(e)) => panic!("{how:?}: {e}"),
            (_, Ok(None)) => unreachable!("the same device"),
        };
        dev.queue.write_buffer(&src, 0, bytemuck::cast_slice(&want));
        let staging = dev.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: len as u64 * 4,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        dev.record(|encoder| {
            encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, len as u64 * 4);
            encoder.copy_buffer_to_buffer(&dst, 0, &staging, 0, len as u64 * 4);
        })
        .unwrap();
        // Submitted before the mapping is asked for (a mapped buffer cannot
        // be in a submission).
        dev.flush().unwrap();
        staging.map_async(wgpu::MapMode::Read, .., |mapped| mapped.expect("mapped"));
        dev.wait().unwrap();
        let got: Vec<f32> = bytemuck::pod_collect_to_vec(&staging.get_mapped_range(..).unwrap());
        assert_eq!(got, want, "{how:?}");
    }
}

//! Device buffers whose Vulkan memory this backend allocates itself
//! instead of wgpu's allocator, so that the properties NVIDIA's driver
//! places memory by (memory type, dedicated allocation, exportability) can
//! be chosen. `GEARBOX_WGPU_RAW_MEMORY` turns it on for buffers of at
//! least `min` MiB: a comma list of `on`, `type=N` (a memory type index;
//! else the first device-local type the buffer allows, wgpu's choice),
//! `dedicated` (a `VkMemoryDedicatedAllocateInfo` naming the buffer),
//! `export` (exportable as an opaque file descriptor, as memory shared
//! with CUDA is), `clear` (filled with zeros once made, as wgpu does
//! before a buffer's first use), `arena=GiB` (every buffer bound, one
//! after another and never reused, inside one allocation of that size
//! made at the first buffer: an experiment, memory is not given back
//! before the process ends), `cuda` or `cuda-compressed` (memory the CUDA
//! driver allocated, without or with its generic compression, imported
//! through a file descriptor ([`crate::cuda_memory`])) and `min=MiB`.
//! Off, or on an adapter that is not Vulkan, buffers come from wgpu.
//!
//! [`describe`] reports the adapter's memory heaps and types and what the
//! driver asks of a 1 GiB storage buffer.

use ash::vk;
use gearbox_core::Result;
use wgpu::hal::api::Vulkan;

use crate::device::fault;

/// How buffers are allocated when `GEARBOX_WGPU_RAW_MEMORY` is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawMemory {
    /// The memory type index (`None`: the first device-local type allowed).
    pub memory_type: Option<u32>,
    /// Whether the allocation is dedicated to its buffer.
    pub dedicated: bool,
    /// Whether the memory is exportable as an opaque file descriptor.
    pub export: bool,
    /// Whether a new buffer is filled with zeros.
    pub clear: bool,
    /// Smallest buffer, in bytes, allocated this way.
    pub min_bytes: u64,
    /// Bytes of the one allocation all buffers are bound inside (0: an
    /// allocation per buffer).
    pub arena_bytes: u64,
    /// Memory from the CUDA driver: `Some(compressed)`.
    pub cuda: Option<bool>,
}

/// The arena's memory and the offset of its first free byte.
static ARENA: std::sync::Mutex<Option<(vk::DeviceMemory, u64)>> = std::sync::Mutex::new(None);

/// A `GEARBOX_WGPU_RAW_MEMORY` value as a setting (`None`: off, or not a
/// setting, which is logged and ignored); read once per process by
/// [`crate::params`].
pub fn setting(value: &str) -> Option<RawMemory> {
    let parsed = parse(value);
    if parsed.is_none() {
        tracing::warn!("GEARBOX_WGPU_RAW_MEMORY={value:?} is not a setting; ignored");
    }
    parsed.flatten()
}

/// `GEARBOX_WGPU_RAW_MEMORY`'s value: `Some(None)` for `off`, `None` when
/// a word is not one of the settings.
fn parse(value: &str) -> Option<Option<RawMemory>> {
    let mut raw = RawMemory::default();
    for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word.split_once('=') {
            None if word == "off" || word == "0" => return Some(None),
            None if word == "on" || word == "1" => {}
            None if word == "dedicated" => raw.dedicated = true,
            None if word == "export" => raw.export = true,
            None if word == "clear" => raw.clear = true,
            None if word == "cuda" => raw.cuda = Some(false),
            None if word == "cuda-compressed" => raw.cuda = Some(true),
            Some(("type", n)) => raw.memory_type = Some(n.parse().ok()?),
            Some(("min", mib)) => raw.min_bytes = mib.parse::<u64>().ok()? << 20,
            Some(("arena", gib)) => raw.arena_bytes = gib.parse::<u64>().ok()? << 30,
            _ => return None,
        }
    }
    Some(Some(raw))
}

/// A storage buffer of `bytes` (usages STORAGE, COPY_SRC, COPY_DST) as
/// Vulkan is asked for it.
fn storage_buffer(bytes: u64) -> vk::BufferCreateInfo<'static> {
    vk::BufferCreateInfo::default()
        .size(bytes)
        .usage(
            vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::TRANSFER_SRC
                | vk::BufferUsageFlags::TRANSFER_DST,
        )
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
}

/// A storage buffer of `bytes` on `device` (usages STORAGE, COPY_SRC,
/// COPY_DST) with memory allocated as `how` says; `None` when the device
/// is not Vulkan.
pub fn create_buffer(
    device: &wgpu::Device,
    bytes: u64,
    how: &RawMemory,
) -> Result<Option<wgpu::Buffer>> {
    // SAFETY: the Vulkan device is only used to create, bind and (on
    // failure) destroy objects this function owns; the buffer handed to
    // wgpu is bound to memory of its size and wgpu frees both.
    unsafe {
        let Some(hal) = device.as_hal::<Vulkan>() else {
            return Ok(None);
        };
        let raw = hal.raw_device();
        let instance = hal.shared_instance().raw_instance();
        let properties = instance.get_physical_device_memory_properties(hal.raw_physical_device());
        let mut external = vk::ExternalMemoryBufferCreateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let mut info = storage_buffer(bytes);
        if how.export || how.cuda.is_some() {
            info = info.push_next(&mut external);
        }
        let buffer = raw
            .create_buffer(&info, None)
            .map_err(|e| fault("allocate", format!("vkCreateBuffer: {e}")))?;
        let needs = raw.get_buffer_memory_requirements(buffer);
        let chosen = match how.memory_type {
            Some(t) => Some(t).filter(|t| needs.memory_type_bits & (1 << t) != 0),
            None => (0..properties.memory_type_count).find(|&t| {
                needs.memory_type_bits & (1 << t) != 0
                    && properties.memory_types[t as usize]
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            }),
        };
        let Some(memory_type) = chosen else {
            raw.destroy_buffer(buffer, None);
            return Err(fault(
                "allocate",
                format!(
                    "no memory type {:?} among those the buffer allows (bits {:#b})",
                    how.memory_type, needs.memory_type_bits
                ),
            ));
        };
        if how.arena_bytes > 0 {
            let mut arena = ARENA.lock().unwrap_or_else(|e| e.into_inner());
            if arena.is_none() {
                let allocate = vk::MemoryAllocateInfo::default()
                    .allocation_size(how.arena_bytes)
                    .memory_type_index(memory_type);
                match raw.allocate_memory(&allocate, None) {
                    Ok(memory) => *arena = Some((memory, 0)),
                    Err(e) => {
                        raw.destroy_buffer(buffer, None);
                        let why = format!("arena of {} bytes: {e}", how.arena_bytes);
                        return Err(fault("allocate", why));
                    }
                }
            }
            let (memory, free) = arena.as_mut().expect("made above");
            let offset = free.next_multiple_of(needs.alignment.max(1));
            if offset + needs.size > how.arena_bytes {
                raw.destroy_buffer(buffer, None);
                return Err(fault("allocate", "the arena is full"));
            }
            if let Err(e) = raw.bind_buffer_memory(buffer, *memory, offset) {
                raw.destroy_buffer(buffer, None);
                return Err(fault("allocate", format!("vkBindBufferMemory: {e}")));
            }
            *free = offset + needs.size;
            drop(arena);
            let hal_buffer = wgpu::hal::vulkan::Buffer::from_raw(buffer);
            drop(hal);
            return Ok(Some(
                device.create_buffer_from_hal::<Vulkan>(hal_buffer, &descriptor(bytes)),
            ));
        }
        let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
        let mut export = vk::ExportMemoryAllocateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let mut allocate = vk::MemoryAllocateInfo::default()
            .allocation_size(needs.size)
            .memory_type_index(memory_type);
        if how.dedicated {
            allocate = allocate.push_next(&mut dedicated);
        }
        if how.export {
            allocate = allocate.push_next(&mut export);
        }
        let mut import = vk::ImportMemoryFdInfoKHR::default()
            .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let mut cuda_memory = None;
        if let Some(compressed) = how.cuda {
            let mut id = vk::PhysicalDeviceIDProperties::default();
            let mut properties = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
            instance.get_physical_device_properties2(hal.raw_physical_device(), &mut properties);
            let uuid = id.device_uuid;
            let cuda = match crate::cuda_memory::exported(needs.size, uuid, compressed) {
                Ok(memory) => memory,
                Err(e) => {
                    raw.destroy_buffer(buffer, None);
                    return Err(e);
                }
            };
            import = import.fd(cuda.fd);
            allocate = allocate.allocation_size(cuda.size).push_next(&mut import);
            cuda_memory = Some(cuda);
        }
        let memory = match raw.allocate_memory(&allocate, None) {
            Ok(memory) => memory,
            Err(e) => {
                if let Some(cuda) = cuda_memory {
                    // A failed import leaves the descriptor with the caller.
                    libc::close(cuda.fd);
                    cuda.release();
                }
                raw.destroy_buffer(buffer, None);
                return Err(gearbox_core::Error::Device {
                    backend: "wgpu".into(),
                    op: "allocate".into(),
                    reason: format!("vkAllocateMemory of {} bytes: {e}", needs.size),
                    kind: gearbox_core::DeviceErrorKind::OutOfMemory,
                });
            }
        };
        if let Err(e) = raw.bind_buffer_memory(buffer, memory, 0) {
            raw.destroy_buffer(buffer, None);
            raw.free_memory(memory, None);
            if let Some(cuda) = cuda_memory {
                cuda.release();
            }
            return Err(fault("allocate", format!("vkBindBufferMemory: {e}")));
        }
        let hal_buffer = match cuda_memory {
            // wgpu destroys the buffer and frees the memory when the GPU is
            // done with it; CUDA's handle goes then too.
            Some(cuda) => {
                let raw = raw.clone();
                wgpu::hal::vulkan::Buffer::from_raw_externally_owned(
                    buffer,
                    Box::new(move || {
                        raw.destroy_buffer(buffer, None);
                        raw.free_memory(memory, None);
                        cuda.release();
                    }),
                )
            }
            None => wgpu::hal::vulkan::Buffer::from_raw_managed(buffer, memory, 0, needs.size),
        };
        drop(hal);
        Ok(Some(device.create_buffer_from_hal::<Vulkan>(
            hal_buffer,
            &descriptor(bytes),
        )))
    }
}

/// How wgpu is told about a buffer made here.
fn descriptor(bytes: u64) -> wgpu::BufferDescriptor<'static> {
    wgpu::BufferDescriptor {
        label: Some("gearbox raw memory"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    }
}

/// The adapter's memory heaps and types, the device extensions wgpu
/// enabled, and the driver's requirements for a 1 GiB storage buffer (one
/// line each); `None` when the device is not Vulkan.
pub fn describe(device: &wgpu::Device) -> Option<String> {
    // SAFETY: queries only; the probe buffer is destroyed before return.
    unsafe {
        let hal = device.as_hal::<Vulkan>()?;
        let raw = hal.raw_device();
        let instance = hal.shared_instance().raw_instance();
        let properties = instance.get_physical_device_memory_properties(hal.raw_physical_device());
        let mut lines = Vec::new();
        for (i, heap) in properties.memory_heaps_as_slice().iter().enumerate() {
            lines.push(format!(
                "heap {i}: {} MiB {:?}",
                heap.size >> 20,
                heap.flags
            ));
        }
        for (i, t) in properties.memory_types_as_slice().iter().enumerate() {
            lines.push(format!(
                "type {i}: heap {} {:?}",
                t.heap_index, t.property_flags
            ));
        }
        let extensions: Vec<String> = hal
            .enabled_device_extensions()
            .iter()
            .map(|e| e.to_string_lossy().into_owned())
            .collect();
        lines.push(format!("extensions: {}", extensions.join(" ")));
        if let Ok(buffer) = raw.create_buffer(&storage_buffer(1 << 30), None) {
            let mut dedicated = vk::MemoryDedicatedRequirements::default();
            let mut needs = vk::MemoryRequirements2::default().push_next(&mut dedicated);
            raw.get_buffer_memory_requirements2(
                &vk::BufferMemoryRequirementsInfo2::default().buffer(buffer),
                &mut needs,
            );
            let plain = needs.memory_requirements;
            lines.push(format!(
                "1 GiB buffer: size {} alignment {} types {:#b} prefers dedicated {} requires dedicated {}",
                plain.size,
                plain.alignment,
                plain.memory_type_bits,
                dedicated.prefers_dedicated_allocation,
                dedicated.requires_dedicated_allocation
            ));
            raw.destroy_buffer(buffer, None);
        }
        Some(lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_bad_words_are_refused() {
        assert_eq!(parse("off"), Some(None));
        assert_eq!(parse("on"), Some(Some(RawMemory::default())));
        assert_eq!(
            parse("type=2, dedicated,export,clear,min=64"),
            Some(Some(RawMemory {
                memory_type: Some(2),
                dedicated: true,
                export: true,
                clear: true,
                min_bytes: 64 << 20,
                arena_bytes: 0,
                cuda: None,
            }))
        );
        assert_eq!(
            parse("arena=12"),
            Some(Some(RawMemory {
                arena_bytes: 12 << 30,
                ..RawMemory::default()
            }))
        );
        assert_eq!(
            parse("cuda-compressed").map(|r| r.map(|r| r.cuda)),
            Some(Some(Some(true)))
        );
        assert_eq!(parse("type=x"), None);
        assert_eq!(parse("fast"), None);
    }
}

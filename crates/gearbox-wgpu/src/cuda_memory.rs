//! Device memory allocated by the CUDA driver (`cuMemCreate`) and handed to
//! Vulkan as an opaque file descriptor: how [`crate::raw_memory`] tests
//! whether a buffer's speed on an NVIDIA card follows the memory the
//! driver hands Vulkan or the way Vulkan maps it. The CUDA driver is
//! loaded at run time (no CUDA is needed to build); without it this is an
//! error naming what is missing.

use std::ffi::{c_int, c_uint, c_ulonglong, c_void};
use std::sync::OnceLock;

use gearbox_core::Result;

use crate::device::fault;

/// `CUmemAllocationProp` of the CUDA driver API (cuda.h), as laid out in C.
#[repr(C)]
struct AllocationProp {
    /// `CU_MEM_ALLOCATION_TYPE_PINNED` (1).
    kind: c_int,
    /// `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR` (1).
    handle_types: c_int,
    /// `CU_MEM_LOCATION_TYPE_DEVICE` (1).
    location_kind: c_int,
    /// The device ordinal.
    location_id: c_int,
    win32_metadata: *mut c_void,
    /// `CU_MEM_ALLOCATION_COMP_NONE` (0) or `_GENERIC` (1).
    compression: u8,
    rdma_capable: u8,
    usage: u16,
    reserved: [u8; 4],
}

type CuResult = c_int;

/// The CUDA driver's entry points this module calls.
struct Driver {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    device_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_uuid: unsafe extern "C" fn(*mut [u8; 16], c_int) -> CuResult,
    granularity: unsafe extern "C" fn(*mut usize, *const AllocationProp, c_int) -> CuResult,
    create: unsafe extern "C" fn(
        *mut c_ulonglong,
        usize,
        *const AllocationProp,
        c_ulonglong,
    ) -> CuResult,
    export: unsafe extern "C" fn(*mut c_void, c_ulonglong, c_int, c_ulonglong) -> CuResult,
    release: unsafe extern "C" fn(c_ulonglong) -> CuResult,
    _library: libloading::Library,
}

/// The CUDA driver, loaded and initialized once.
fn driver() -> Result<&'static Driver> {
    static DRIVER: OnceLock<std::result::Result<Driver, String>> = OnceLock::new();
    DRIVER
        .get_or_init(|| {
            // SAFETY: the symbols are the CUDA driver API's, declared with
            // their C signatures; the library stays loaded with them.
            unsafe {
                let library = libloading::Library::new("libcuda.so.1")
                    .map_err(|e| format!("the CUDA driver (libcuda.so.1): {e}"))?;
                macro_rules! symbol {
                    ($name:literal) => {
                        *library
                            .get(concat!($name, "\0").as_bytes())
                            .map_err(|e| format!("{}: {e}", $name))?
                    };
                }
                let driver = Driver {
                    init: symbol!("cuInit"),
                    device_count: symbol!("cuDeviceGetCount"),
                    device_uuid: symbol!("cuDeviceGetUuid_v2"),
                    granularity: symbol!("cuMemGetAllocationGranularity"),
                    create: symbol!("cuMemCreate"),
                    export: symbol!("cuMemExportToShareableHandle"),
                    release: symbol!("cuMemRelease"),
                    _library: library,
                };
                match (driver.init)(0) {
                    0 => Ok(driver),
                    code => Err(format!("cuInit failed with CUDA error {code}")),
                }
            }
        })
        .as_ref()
        .map_err(|why| fault("allocate", why.clone()))
}

/// Memory the CUDA driver allocated and exported: the file descriptor
/// (owned by whoever imports it), the size, and the CUDA handle, which
/// keeps the memory until [`Exported::release`].
pub struct Exported {
    /// The exported file descriptor.
    pub fd: c_int,
    /// Bytes allocated (the request rounded up to the driver's granularity).
    pub size: u64,
    handle: c_ulonglong,
}

impl Exported {
    /// Gives the CUDA handle back (the memory goes once no import holds it).
    pub fn release(self) {
        if let Ok(cuda) = driver() {
            // SAFETY: the handle came from cuMemCreate and is released once.
            unsafe { (cuda.release)(self.handle) };
        }
    }
}

/// Memory of at least `bytes` on the CUDA device whose UUID is `uuid`,
/// compressible when `compressed`, exported as a file descriptor.
pub fn exported(bytes: u64, uuid: [u8; 16], compressed: bool) -> Result<Exported> {
    let cuda = driver()?;
    let check = |what: &str, code: CuResult| {
        if code == 0 {
            Ok(())
        } else {
            Err(fault(
                "allocate",
                format!("{what} failed with CUDA error {code}"),
            ))
        }
    };
    // SAFETY: out-pointers to locals of the declared types.
    unsafe {
        let mut count = 0;
        check("cuDeviceGetCount", (cuda.device_count)(&mut count))?;
        let mut ordinal = None;
        for d in 0..count {
            let mut id = [0u8; 16];
            check("cuDeviceGetUuid", (cuda.device_uuid)(&mut id, d))?;
            if id == uuid {
                ordinal = Some(d);
            }
        }
        let ordinal = ordinal
            .ok_or_else(|| fault("allocate", "no CUDA device has the Vulkan adapter's UUID"))?;
        let prop = AllocationProp {
            kind: 1,
            handle_types: 1,
            location_kind: 1,
            location_id: ordinal,
            win32_metadata: std::ptr::null_mut(),
            compression: compressed as u8,
            rdma_capable: 0,
            usage: 0,
            reserved: [0; 4],
        };
        let mut granularity = 0usize;
        check(
            "cuMemGetAllocationGranularity",
            (cuda.granularity)(&mut granularity, &prop, 1),
        )?;
        let size = (bytes as usize).next_multiple_of(granularity.max(1));
        let mut handle = 0;
        check("cuMemCreate", (cuda.create)(&mut handle, size, &prop, 0))?;
        let mut fd: c_int = -1;
        let code = (cuda.export)((&mut fd as *mut c_int).cast(), handle, 1, 0);
        if let Err(e) = check("cuMemExportToShareableHandle", code) {
            (cuda.release)(handle);
            return Err(e);
        }
        Ok(Exported {
            fd,
            size: size as u64,
            handle,
        })
    }
}

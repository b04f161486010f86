//! Host memory for values whose size depends on the user's shapes.
//!
//! Rust's ordinary allocation (`vec![x; n]`, `collect`, `clone`) aborts the
//! whole process when the allocator refuses a request ("memory allocation of
//! N bytes failed", then SIGABRT). Every buffer that a CPU kernel, a creation
//! op, a dtype conversion, a copy or a download makes for a result comes from
//! this module instead: the request is reserved first, and a refusal becomes
//! [`Error::OutOfMemory`], which names what needed the memory, the bytes
//! asked for and the memory the system reports available.
//!
//! Where a library allocates on its own (faer's factorizations), the caller
//! first asks [`ensure_available`] whether a request of the size that library
//! will make can be reserved at all.
//!
//! What this cannot see: on Linux with memory overcommit, a reservation may
//! succeed and the process still be killed later, when pages are first
//! written and nothing can back them. That is the kernel's policy, outside
//! any library; a request the allocator refuses outright (larger than the
//! address space, or than the overcommit heuristic allows) is always an
//! error here, never an abort.
//!
//! Scratch of bounded size (a tile of a fused kernel, a fixed handful of
//! values) may keep the ordinary allocation.
//!
//! Large buffers (from [`HUGE_PAGES_FROM`] bytes) are advised onto
//! transparent huge pages on Linux (`madvise(MADV_HUGEPAGE)`, as NumPy does
//! for its arrays): a fresh 512 MB result otherwise takes 131,072 page
//! faults on first touch, which cost more than writing it.

use std::alloc::Layout;

use rayon::prelude::*;

use crate::dtype::Element;
use crate::error::{Error, Result};

/// The [`Error::OutOfMemory`] for a request of `bytes` made for `op`.
pub fn out_of_memory(op: &str, bytes: usize) -> Error {
    Error::OutOfMemory {
        op: op.to_string(),
        bytes,
        available: available_bytes(),
    }
}

/// Bytes of `n` values of `T` (saturating: a count that large is refused anyway).
fn bytes_of<T>(n: usize) -> usize {
    n.saturating_mul(std::mem::size_of::<T>())
}

/// Buffers from this many bytes are advised onto huge pages.
pub const HUGE_PAGES_FROM: usize = 4 << 20;

/// Advises the `bytes` at `ptr` (a fresh, untouched allocation) onto
/// transparent huge pages, from its first whole page on; a no-op below
/// [`HUGE_PAGES_FROM`], off Linux, or where the kernel declines.
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_PAGES_FROM {
        const PAGE: usize = 4096;
        let skip = (PAGE - ptr as usize % PAGE) % PAGE;
        // SAFETY: the range lies inside the allocation (`skip < PAGE` and
        // `bytes >= 4 MB`), starts on a page boundary, and madvise only
        // changes how the kernel backs those pages, never their contents.
        unsafe {
            libc::madvise(
                ptr.add(skip).cast(),
                (bytes - skip) / PAGE * PAGE,
                libc::MADV_HUGEPAGE,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// An empty vector with room for `n` values, or [`Error::OutOfMemory`].
pub fn with_capacity<T>(op: &str, n: usize) -> Result<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| out_of_memory(op, bytes_of::<T>(n)))?;
    advise_huge_pages(v.as_mut_ptr().cast(), bytes_of::<T>(v.capacity()));
    Ok(v)
}

/// `n` zeros (`false` for bool), or [`Error::OutOfMemory`].
///
/// The memory comes zeroed from the allocator (`calloc`), as `vec![0.0; n]`
/// does, so large results are not written twice: pages are touched first by
/// whoever fills them (in parallel, for the CPU kernels).
pub fn zeroed<T: Element>(op: &str, n: usize) -> Result<Vec<T>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = Layout::array::<T>(n).map_err(|_| out_of_memory(op, bytes_of::<T>(n)))?;
    // SAFETY: `layout` has a nonzero size: n > 0 and every element type has
    // a nonzero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(out_of_memory(op, layout.size()));
    }
    advise_huge_pages(ptr.cast(), layout.size());
    // SAFETY: `ptr` comes from the global allocator with the layout of `n`
    // values of `T`, which is the layout a `Vec<T>` of capacity `n` owns. All
    // its bytes are zero, and for every element type (f64, f32, i64, bool;
    // `Element` is sealed to these) all-zero bytes are a valid value: 0.0, 0
    // or false. So the `n` values are initialized.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// `n` copies of `value`, or [`Error::OutOfMemory`].
pub fn filled<T: Element>(op: &str, n: usize, value: T) -> Result<Vec<T>> {
    let x = value.to_f64();
    if x == 0.0 && x.is_sign_positive() {
        // All-zero bytes (not -0.0): let the allocator zero the pages.
        return zeroed(op, n);
    }
    repeated(op, n, value)
}

/// `n` copies of any cloneable `value` (accumulators, scan states), or
/// [`Error::OutOfMemory`]; [`filled`] is the faster choice for elements.
pub fn repeated<T: Clone>(op: &str, n: usize, value: T) -> Result<Vec<T>> {
    let mut v = with_capacity(op, n)?;
    v.resize(n, value);
    Ok(v)
}

/// The values of an iterator of known length, or [`Error::OutOfMemory`].
pub fn collect<T>(op: &str, iter: impl ExactSizeIterator<Item = T>) -> Result<Vec<T>> {
    let mut v = with_capacity(op, iter.len())?;
    v.extend(iter);
    Ok(v)
}

/// The values of an indexed parallel iterator, in order, written straight
/// into memory reserved first; or [`Error::OutOfMemory`].
pub fn par_collect<T: Send>(
    op: &str,
    iter: impl IndexedParallelIterator<Item = T>,
) -> Result<Vec<T>> {
    let mut v = with_capacity(op, iter.len())?;
    // With the capacity in place, rayon reserves nothing more.
    iter.collect_into_vec(&mut v);
    Ok(v)
}

/// A copy of `src`, or [`Error::OutOfMemory`].
pub fn copy_of<T: Copy>(op: &str, src: &[T]) -> Result<Vec<T>> {
    let mut v = with_capacity(op, src.len())?;
    v.extend_from_slice(src);
    Ok(v)
}

/// Checks that `bytes` can be reserved now (reserving and releasing them),
/// before handing work to a library that allocates that much on its own and
/// would abort if refused.
pub fn ensure_available(op: &str, bytes: usize) -> Result<()> {
    with_capacity::<u8>(op, bytes).map(drop)
}

/// Bytes of memory available to new allocations, as the system reports it
/// (`MemAvailable` in `/proc/meminfo`); `None` where it cannot be read.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

/// The `MemAvailable` line of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut fields = line.split_whitespace().skip(1);
    let value: u64 = fields.next()?.parse().ok()?;
    let unit = match fields.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    value.checked_mul(unit)
}

/// A byte count for people: `512 B`, `1.5 KiB`, ..., `8.0 EiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The available-memory part of an out-of-memory message: `N bytes (h)`,
/// or `an unknown amount of memory` where the system does not say.
pub fn describe_available(available: Option<u64>) -> String {
    match available {
        Some(b) => format!("{b} bytes ({})", human_bytes(b)),
        None => "an unknown amount of memory".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_values_are_zero_for_every_element_type() {
        assert!(zeroed::<f64>("t", 1000).unwrap().iter().all(|&x| x == 0.0));
        assert!(zeroed::<f32>("t", 1000).unwrap().iter().all(|&x| x == 0.0));
        assert!(zeroed::<i64>("t", 1000).unwrap().iter().all(|&x| x == 0));
        assert!(zeroed::<bool>("t", 1000).unwrap().iter().all(|&x| !x));
        assert!(zeroed::<f64>("t", 0).unwrap().is_empty());
        let mut v = zeroed::<f64>("t", 3).unwrap();
        v.push(1.0); // the vector owns its allocation like any other
        assert_eq!(v, [0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn filled_keeps_negative_zero_and_other_values() {
        let v = filled("t", 3, -0.0f64).unwrap();
        assert!(v.iter().all(|x| *x == 0.0 && x.is_sign_negative()));
        assert_eq!(filled("t", 2, 7i64).unwrap(), [7, 7]);
        assert_eq!(filled("t", 2, true).unwrap(), [true, true]);
    }

    #[test]
    fn requests_larger_than_memory_are_errors_naming_the_bytes() {
        // 2^60 bytes: more than any address space, so always refused.
        let n = 1usize << 57;
        for err in [
            zeroed::<f64>("zeros", n).unwrap_err(),
            filled("ones", n, 1.0f64).unwrap_err(),
            with_capacity::<f64>("copy", n).unwrap_err(),
            ensure_available("qr", 1 << 60).unwrap_err(),
        ] {
            let Error::OutOfMemory { bytes, .. } = &err else {
                panic!("expected OutOfMemory, got {err}");
            };
            assert_eq!(*bytes, 1 << 60);
            let msg = err.to_string();
            assert!(msg.contains("1152921504606846976 bytes (1.0 EiB)"), "{msg}");
            assert!(msg.contains("available"), "{msg}");
        }
        // A count whose byte size overflows usize is refused too.
        assert!(zeroed::<f64>("t", usize::MAX).is_err());
    }

    #[test]
    fn collectors_keep_order() {
        assert_eq!(
            collect("t", (0..5).map(|i| i * 2)).unwrap(),
            [0, 2, 4, 6, 8]
        );
        let big: Vec<usize> =
            par_collect("t", (0..100_000).into_par_iter().map(|i| i + 1)).unwrap();
        assert!(big.iter().enumerate().all(|(i, &x)| x == i + 1));
        assert_eq!(copy_of("t", &[1.5, 2.5]).unwrap(), [1.5, 2.5]);
    }

    #[test]
    fn meminfo_and_human_sizes() {
        let text = "MemTotal:       24683656 kB\nMemAvailable:   23337884 kB\n";
        assert_eq!(mem_available(text), Some(23337884 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(32 << 30), "32.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
        #[cfg(target_os = "linux")]
        assert!(available_bytes().is_some_and(|b| b > 0));
        assert_eq!(describe_available(None), "an unknown amount of memory");
    }
}

//! A caching pool of device memory blocks, for any backend: freed blocks
//! are kept by size class and handed out again, so a loop that allocates
//! and frees the same sizes stops asking the driver after its first
//! iteration and memory stays flat.
//!
//! Size classes: powers of two up to 1 MiB, then multiples of 2 MiB. When
//! the driver refuses a block, the pool frees every cached block and tries
//! once more. Cached memory is capped; blocks returned beyond the cap are
//! dropped (freed) at once.
//!
//! A block in use is a [`Pooled`] buffer: the backend's device buffer type,
//! which goes back to its pool when dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::dtype::DType;
use crate::error::Result;
use crate::runtime::backend::{Backend, DeviceBuffer};

/// Bytes a request of `bytes` is rounded up to.
pub fn size_class(bytes: usize) -> usize {
    const MIB: usize = 1 << 20;
    if bytes <= MIB {
        bytes.max(256).next_power_of_two()
    } else {
        bytes.div_ceil(2 * MIB) * 2 * MIB
    }
}

/// Device memory of one backend, as its pool and its driver see it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryStats {
    /// Bytes held by live buffers (rounded up to their size classes).
    pub in_use: u64,
    /// The most bytes in use at once since the pool opened or since
    /// [`reset_peak`].
    pub peak: u64,
    /// Bytes of freed blocks the pool keeps for reuse ([`trim_pool`] gives
    /// them back).
    pub cached: u64,
    /// The device's memory, where the backend can tell (CUDA, OpenCL).
    pub device_total: Option<u64>,
    /// The device's free memory, where the driver reports it (CUDA).
    pub device_free: Option<u64>,
    /// The most bytes the pool may hold (`GEARBOX_MEMORY_LIMIT`), if set.
    pub limit: Option<u64>,
}

impl std::fmt::Display for MemoryStats {
    /// `in use 1.0 MiB, peak 2.0 MiB, cached 512 B`, then the device's
    /// total and free memory where known.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::memory::human_bytes;
        write!(
            f,
            "in use {}, peak {}, cached {}",
            human_bytes(self.in_use),
            human_bytes(self.peak),
            human_bytes(self.cached)
        )?;
        if let Some(total) = self.device_total {
            write!(f, "; device {} total", human_bytes(total))?;
        }
        if let Some(free) = self.device_free {
            write!(f, ", {} free", human_bytes(free))?;
        }
        if let Some(limit) = self.limit {
            write!(f, "; limit {}", human_bytes(limit))?;
        }
        Ok(())
    }
}

/// The backends whose devices this process has opened.
fn open_backends() -> impl Iterator<Item = Arc<dyn Backend>> {
    crate::runtime::registry::candidates(false)
        .into_iter()
        .filter_map(|c| c.backend)
        .filter(|b| b.is_initialized())
}

/// The memory of every backend whose device this process has opened, by
/// backend name.
pub fn memory_stats() -> Vec<(String, MemoryStats)> {
    open_backends()
        .map(|b| (b.name().to_string(), b.memory_stats()))
        .collect()
}

/// Gives every opened backend's cached blocks back to its driver; returns
/// the bytes released. Buffers in use are untouched.
pub fn trim_pool() -> u64 {
    open_backends().map(|b| b.trim_pool()).sum()
}

/// Starts every opened backend's high-water mark ([`MemoryStats::peak`])
/// again from its bytes in use now.
pub fn reset_peak() {
    open_backends().for_each(|b| b.reset_peak());
}

/// `GEARBOX_MEMORY_LIMIT` in bytes: a count (`2000000000`, `2e9`), with a
/// unit (`512MiB`, `4GiB`, `8GB`), or a share of the device's
/// `device_total` bytes (`0.5`, `50%`); `None` when unset.
pub fn memory_limit(device_total: Option<u64>) -> Result<Option<u64>> {
    match std::env::var("GEARBOX_MEMORY_LIMIT") {
        Ok(v) if !v.trim().is_empty() => parse_memory_limit(&v, device_total).map(Some),
        _ => Ok(None),
    }
}

/// The tightest `GEARBOX_MEMORY_LIMIT` of the devices this process has
/// opened, else the variable read as bytes (a share of a device is known
/// once one is open); `None` without a limit. Work that sizes its own
/// pieces (the GLM grid's chunks of points) keeps them under it.
pub fn tightest_memory_limit() -> Option<u64> {
    open_backends()
        .filter_map(|b| b.memory_stats().limit)
        .min()
        .or_else(|| memory_limit(None).ok().flatten())
}

/// [`memory_limit`]'s reading of one value.
pub fn parse_memory_limit(value: &str, device_total: Option<u64>) -> Result<u64> {
    let bad = |why: String| crate::Error::InvalidArgument {
        op: "GEARBOX_MEMORY_LIMIT",
        name: "value",
        value: value.into(),
        why,
    };
    let v = value.trim();
    let units: [(&str, f64); 8] = [
        ("KiB", 1024.0),
        ("MiB", 1024.0 * 1024.0),
        ("GiB", 1024.0 * 1024.0 * 1024.0),
        ("TiB", 1024.0f64.powi(4)),
        ("KB", 1e3),
        ("MB", 1e6),
        ("GB", 1e9),
        ("TB", 1e12),
    ];
    let (number, scale, share) = if let Some(p) = v.strip_suffix('%') {
        (p.trim(), 0.01, true)
    } else if let Some((n, f)) = units
        .iter()
        .find_map(|(u, f)| v.strip_suffix(u).map(|n| (n.trim(), *f)))
    {
        (n, f, false)
    } else {
        (v, 1.0, false)
    };
    let x: f64 = number.parse().map_err(|_| {
        bad("a byte count (2e9, 512MiB, 4GiB) or a share of the device (0.5, 50%)".into())
    })?;
    if x.is_nan() {
        return Err(bad("not a number".into()));
    }
    if x <= 0.0 {
        return Err(bad("the limit must be positive".into()));
    }
    if !x.is_finite() || x * scale >= u64::MAX as f64 {
        return Err(bad(format!(
            "too large: it overflows a byte count (at most {} bytes)",
            u64::MAX
        )));
    }
    let share = share || (scale == 1.0 && x <= 1.0);
    if share {
        let fraction = x * scale;
        if fraction > 1.0 {
            return Err(bad("a share of the device is at most 100%".into()));
        }
        let total = device_total.ok_or_else(|| {
            bad("a share of the device needs its memory size, which this backend does not report; give bytes".into())
        })?;
        return Ok((total as f64 * fraction) as u64);
    }
    Ok((x * scale) as u64)
}

/// The cached blocks `B` of one device, and its counters.
#[derive(Debug)]
pub struct BlockPool<B> {
    free: Mutex<HashMap<usize, Vec<B>>>,
    in_use: AtomicU64,
    peak: AtomicU64,
    cached: AtomicU64,
    cap: u64,
    /// The most bytes held (in use and cached), `GEARBOX_MEMORY_LIMIT`.
    limit: AtomicU64,
    /// The backend named in the limit's errors.
    owner: Mutex<&'static str>,
    /// Allocations served from the cache.
    pub reused: AtomicU64,
    /// Allocations that went to the driver.
    pub fresh: AtomicU64,
}

impl<B> BlockPool<B> {
    /// A pool that caches up to `cap` bytes of freed blocks.
    pub fn new(cap: u64) -> Self {
        BlockPool {
            free: Mutex::new(HashMap::new()),
            in_use: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            cached: AtomicU64::new(0),
            cap,
            limit: AtomicU64::new(u64::MAX),
            owner: Mutex::new("device"),
            reused: AtomicU64::new(0),
            fresh: AtomicU64::new(0),
        }
    }

    /// (allocations served from the cache, allocations from the driver).
    pub fn counters(&self) -> (u64, u64) {
        (
            self.reused.load(Ordering::Relaxed),
            self.fresh.load(Ordering::Relaxed),
        )
    }

    /// Bytes in use, their high-water mark and bytes cached (the device
    /// fields are `None`: the backend fills them in).
    pub fn memory_stats(&self) -> MemoryStats {
        MemoryStats {
            in_use: self.in_use.load(Ordering::Relaxed),
            peak: self.peak.load(Ordering::Relaxed),
            cached: self.cached.load(Ordering::Relaxed),
            limit: self.limit(),
            ..MemoryStats::default()
        }
    }

    /// Starts the high-water mark again from the bytes in use now.
    pub fn reset_peak(&self) {
        self.peak
            .store(self.in_use.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// Frees every cached block; returns the bytes released.
    pub fn empty_cache(&self) -> u64 {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        self.free_cached(&mut free)
    }

    /// Frees the cached blocks `free` holds; returns their bytes. The
    /// caller holds the lock of `free`: a block counts against the limit
    /// until the driver has it back.
    fn free_cached(&self, free: &mut HashMap<usize, Vec<B>>) -> u64 {
        free.clear();
        self.cached.swap(0, Ordering::Relaxed)
    }

    /// Bounds the bytes this pool holds (in use and cached) by
    /// `GEARBOX_MEMORY_LIMIT` ([`memory_limit`]) for `backend`'s device of
    /// `device_total` bytes; an unparsable value is an error naming it.
    pub fn limit_from_env(&self, backend: &'static str, device_total: Option<u64>) -> Result<()> {
        *self.owner.lock().unwrap_or_else(|e| e.into_inner()) = backend;
        let limit = memory_limit(device_total)?.unwrap_or(u64::MAX);
        self.limit.store(limit, Ordering::Relaxed);
        Ok(())
    }

    /// The limit on the bytes held, if one is set.
    pub fn limit(&self) -> Option<u64> {
        Some(self.limit.load(Ordering::Relaxed)).filter(|&l| l != u64::MAX)
    }

    /// A block of `class` bytes (a [`size_class`]): a cached one, else one
    /// from `fresh`, which is retried once after emptying the cache when it
    /// fails. The block counts as in use until [`BlockPool::give_back`].
    /// Past the memory limit it is an out-of-memory error (the runtime
    /// then reruns the work on the CPU, with a log entry); cached blocks
    /// are given back first to stay under it.
    ///
    /// The counters change only under the lock of the cached blocks, and a
    /// fresh block's bytes are counted in use before the driver is asked
    /// for it: threads allocating at once never pass the limit together.
    pub fn take(&self, class: usize, fresh: impl Fn(usize) -> Result<B>) -> Result<B> {
        let bytes = class as u64;
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(b) = free.get_mut(&class).and_then(Vec::pop) {
                self.cached.fetch_sub(bytes, Ordering::Relaxed);
                self.reused.fetch_add(1, Ordering::Relaxed);
                self.count_in_use(bytes);
                return Ok(b);
            }
            let limit = self.limit.load(Ordering::Relaxed);
            let in_use = self.in_use.load(Ordering::Relaxed);
            if in_use.saturating_add(bytes) > limit {
                return Err(crate::Error::Device {
                    backend: (*self.owner.lock().unwrap_or_else(|e| e.into_inner())).into(),
                    op: "allocate".into(),
                    reason: format!(
                        "{class} more bytes would pass GEARBOX_MEMORY_LIMIT ({limit} bytes; {in_use} in use)"
                    ),
                    kind: crate::DeviceErrorKind::OutOfMemory,
                });
            }
            if in_use + self.cached.load(Ordering::Relaxed) + bytes > limit {
                self.free_cached(&mut free);
            }
            self.count_in_use(bytes);
        }
        let block = fresh(class).or_else(|_| {
            self.empty_cache();
            fresh(class)
        });
        match block {
            Ok(b) => {
                self.fresh.fetch_add(1, Ordering::Relaxed);
                Ok(b)
            }
            Err(e) => {
                let _free = self.free.lock().unwrap_or_else(|e| e.into_inner());
                self.in_use.fetch_sub(bytes, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Counts `bytes` more in use and raises the high-water mark (the
    /// caller holds the lock of the cached blocks).
    fn count_in_use(&self, bytes: u64) {
        let in_use = self.in_use.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(in_use, Ordering::Relaxed);
    }

    /// Returns a block of `class` bytes taken from this pool: cached, or
    /// dropped when the cache is full.
    pub fn give_back(&self, block: B, class: usize) {
        let bytes = class as u64;
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        self.in_use.fetch_sub(bytes, Ordering::Relaxed);
        if self.cached.load(Ordering::Relaxed) + bytes > self.cap {
            // Freed under the lock, like every block that leaves the count.
            drop(block);
            return;
        }
        self.cached.fetch_add(bytes, Ordering::Relaxed);
        free.entry(class).or_default().push(block);
    }
}

/// A device buffer of backend `backend`: `len` elements of `dtype` in a
/// block of `class` bytes taken from `pool`, which it returns there when
/// dropped. The backends' buffer types are this type over their block
/// type (`B` tells them apart, so the runtime recovers a backend's own
/// buffers by downcasting).
pub struct Pooled<B> {
    block: Option<B>,
    class: usize,
    len: usize,
    dtype: DType,
    backend: &'static str,
    pool: Arc<BlockPool<B>>,
}

impl<B> Pooled<B> {
    /// `len` elements of `dtype` in `block`, a block of `class` bytes taken
    /// from `pool` by backend `backend`.
    pub fn new(
        block: B,
        class: usize,
        (len, dtype): (usize, DType),
        backend: &'static str,
        pool: &Arc<BlockPool<B>>,
    ) -> Self {
        Pooled {
            block: Some(block),
            class,
            len,
            dtype,
            backend,
            pool: Arc::clone(pool),
        }
    }

    /// The device block (its size is the class's: at least the elements').
    pub fn block(&self) -> &B {
        self.block.as_ref().expect("a live buffer has its block")
    }

    /// The device block, writable.
    pub fn block_mut(&mut self) -> &mut B {
        self.block.as_mut().expect("a live buffer has its block")
    }

    /// Bytes of the block (the size class).
    pub fn class(&self) -> usize {
        self.class
    }
}

impl<B> Drop for Pooled<B> {
    fn drop(&mut self) {
        if let Some(b) = self.block.take() {
            self.pool.give_back(b, self.class);
        }
    }
}

impl<B> std::fmt::Debug for Pooled<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} buffer({} x {}, {} bytes)",
            self.backend, self.len, self.dtype, self.class
        )
    }
}

impl<B: Send + Sync + 'static> DeviceBuffer for Pooled<B> {
    fn backend(&self) -> &'static str {
        self.backend
    }

    fn len(&self) -> usize {
        self.len
    }

    fn dtype(&self) -> DType {
        self.dtype
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_limits_read_as_bytes_units_or_a_share_of_the_device() {
        let gib = 1u64 << 30;
        assert_eq!(
            parse_memory_limit("2000000000", None).unwrap(),
            2_000_000_000
        );
        assert_eq!(parse_memory_limit("2e9", None).unwrap(), 2_000_000_000);
        assert_eq!(parse_memory_limit("512MiB", None).unwrap(), 512 << 20);
        assert_eq!(parse_memory_limit(" 4 GiB ", None).unwrap(), 4 * gib);
        assert_eq!(parse_memory_limit("8GB", None).unwrap(), 8_000_000_000);
        assert_eq!(parse_memory_limit("0.5", Some(80 * gib)).unwrap(), 40 * gib);
        assert_eq!(parse_memory_limit("25%", Some(80 * gib)).unwrap(), 20 * gib);
        for (bad, why) in [
            ("lots", "byte count"),
            ("-1", "positive"),
            ("0", "positive"),
            ("1e400", "too large"),
            ("1e30", "too large"),
            ("inf", "too large"),
            ("NaN", "not a number"),
            ("1e400%", "too large"),
            ("150%", "at most 100%"),
            ("0.5", "give bytes"),
        ] {
            let e = parse_memory_limit(bad, None).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.contains("GEARBOX_MEMORY_LIMIT"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn past_the_limit_a_take_is_out_of_memory_and_the_cache_gives_way() {
        let pool: BlockPool<Vec<u8>> = BlockPool::new(1 << 20);
        pool.limit.store(4096, Ordering::Relaxed);
        let fresh = |class: usize| Ok(vec![0u8; class]);
        let a = pool.take(2048, fresh).unwrap();
        pool.give_back(a, 2048); // cached: 2048
        let b = pool.take(4096, fresh).unwrap(); // the cache is emptied for it
        assert_eq!(pool.memory_stats().cached, 0);
        let e = pool.take(64, fresh).unwrap_err();
        assert!(
            matches!(&e, crate::Error::Device { kind: crate::DeviceErrorKind::OutOfMemory, reason, .. } if reason.contains("GEARBOX_MEMORY_LIMIT")),
            "{e}"
        );
        pool.give_back(b, 4096);
        assert!(pool.take(64, fresh).is_ok());
    }

    /// A block that counts the bytes of its kind alive in `live`, and
    /// records the most ever alive in `most`.
    struct Counted(usize, Arc<(AtomicU64, AtomicU64)>);

    impl Counted {
        fn new(bytes: usize, counts: &Arc<(AtomicU64, AtomicU64)>) -> Counted {
            let live = counts.0.fetch_add(bytes as u64, Ordering::SeqCst) + bytes as u64;
            counts.1.fetch_max(live, Ordering::SeqCst);
            Counted(bytes, Arc::clone(counts))
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.1 .0.fetch_sub(self.0 as u64, Ordering::SeqCst);
        }
    }

    #[test]
    fn sixty_four_threads_never_hold_a_byte_past_the_limit() {
        const LIMIT: u64 = 5 << 20;
        for cap in [0, 1 << 30] {
            let pool: Arc<BlockPool<Counted>> = Arc::new(BlockPool::new(cap));
            pool.limit.store(LIMIT, Ordering::Relaxed);
            let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
            let granted = AtomicU64::new(0);
            let start = std::sync::Barrier::new(64);
            std::thread::scope(|s| {
                for t in 0..64usize {
                    let (pool, counts, granted, start) = (&pool, &counts, &granted, &start);
                    s.spawn(move || {
                        start.wait();
                        for round in 0..200 {
                            // 1.5 MiB handles (2 MiB classes) and small ones.
                            let class = if (t + round) % 3 == 0 {
                                256 << (t % 5)
                            } else {
                                2 << 20
                            };
                            if let Ok(b) = pool.take(class, |c| Ok(Counted::new(c, counts))) {
                                granted.fetch_add(1, Ordering::Relaxed);
                                assert!(pool.memory_stats().in_use <= LIMIT);
                                std::thread::yield_now();
                                pool.give_back(b, class);
                            }
                        }
                    });
                }
            });
            let held = counts.1.load(Ordering::SeqCst);
            assert!(
                held <= LIMIT,
                "cap {cap}: {held} bytes alive at once, limit {LIMIT}"
            );
            assert!(
                pool.memory_stats().peak <= LIMIT,
                "cap {cap}: {:?}",
                pool.memory_stats()
            );
            assert!(
                granted.load(Ordering::Relaxed) > 64,
                "the pool granted too little"
            );
            assert_eq!(pool.memory_stats().in_use, 0);
        }
    }

    use super::*;

    /// (bytes in use, bytes cached).
    fn stats<B>(pool: &BlockPool<B>) -> (u64, u64) {
        let m = pool.memory_stats();
        (m.in_use, m.cached)
    }

    #[test]
    fn the_peak_holds_the_high_water_mark_and_trimming_reports_the_bytes() {
        let pool: BlockPool<Vec<u8>> = BlockPool::new(1 << 20);
        let a = pool.take(512, |c| Ok(vec![0; c])).unwrap();
        let b = pool.take(1024, |c| Ok(vec![0; c])).unwrap();
        pool.give_back(a, 512);
        let m = pool.memory_stats();
        assert_eq!((m.in_use, m.peak, m.cached), (1024, 1536, 512));
        pool.reset_peak();
        assert_eq!(pool.memory_stats().peak, 1024);
        pool.give_back(b, 1024);
        assert_eq!(pool.empty_cache(), 1536);
        let m = pool.memory_stats();
        assert_eq!((m.in_use, m.peak, m.cached), (0, 1024, 0));
        assert_eq!(pool.empty_cache(), 0);
    }

    #[test]
    fn size_classes_round_up() {
        assert_eq!(size_class(0), 256);
        assert_eq!(size_class(257), 512);
        assert_eq!(size_class(1 << 20), 1 << 20);
        assert_eq!(size_class((1 << 20) + 1), 2 << 20);
        assert_eq!(size_class(5 << 20), 6 << 20);
    }

    #[test]
    fn freed_blocks_are_reused_up_to_the_cap_and_failures_retry_after_emptying() {
        let pool: BlockPool<Vec<u8>> = BlockPool::new(1024);
        let a = pool.take(512, |c| Ok(vec![1; c])).unwrap();
        assert_eq!(stats(&pool), (512, 0));
        pool.give_back(a, 512);
        assert_eq!(stats(&pool), (0, 512));
        let b = pool.take(512, |_| panic!("a cached block exists")).unwrap();
        assert_eq!(b[0], 1);
        assert_eq!(pool.counters(), (1, 1));
        // Beyond the cap: dropped, not cached.
        let big = pool.take(2048, |c| Ok(vec![0; c])).unwrap();
        pool.give_back(big, 2048);
        assert_eq!(stats(&pool), (512, 0));
        // A refused request empties the cache and retries once.
        pool.give_back(b, 512);
        let tries = std::cell::Cell::new(0);
        let c = pool.take(256, |n| {
            tries.set(tries.get() + 1);
            if tries.get() == 1 {
                Err(crate::Error::Config {
                    name: "test".into(),
                    value: "refused".into(),
                    why: "the first request fails".into(),
                })
            } else {
                Ok(vec![0; n])
            }
        });
        assert!(c.is_ok());
        assert_eq!((tries.get(), stats(&pool).1), (2, 0));
    }

    #[test]
    fn a_pooled_buffer_returns_its_block_when_dropped() {
        let pool = Arc::new(BlockPool::new(1 << 20));
        let class = size_class(10 * 8);
        let block = pool.take(class, |c| Ok(vec![7u8; c])).unwrap();
        let mut buf = Pooled::new(block, class, (10, DType::F64), "sim", &pool);
        assert_eq!(
            (buf.backend(), buf.len(), buf.dtype()),
            ("sim", 10, DType::F64)
        );
        assert_eq!((buf.class(), buf.size_bytes()), (256, 80));
        buf.block_mut()[0] = 1;
        assert_eq!(buf.block()[..2], [1, 7]);
        assert_eq!(format!("{buf:?}"), "sim buffer(10 x f64, 256 bytes)");
        assert!(buf.as_any().downcast_ref::<Pooled<Vec<u8>>>().is_some());
        assert_eq!(stats(&pool), (256, 0));
        drop(buf);
        assert_eq!(stats(&pool), (0, 256));
    }
}

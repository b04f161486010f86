//! What handing a CPU kernel's tasks to the thread pool costs the caller,
//! and so how much work makes it pay ([`crate::ops::loops::worth_parallel`]
//! for every CPU kernel, [`parallel_min_units`] for the fused ones' own
//! floors).
//!
//! A thread outside rayon's pool that runs parallel tasks injects them,
//! wakes the workers and sleeps until they finish; the round trip is a
//! fixed cost that depends on the host far more than on the work: about
//! 35 us on a 2-core virtual machine (where `x + y` of 65,536 f32 values
//! took 39 us in parallel and 22 us on the calling thread, and one of
//! 524,176 values 208 us against 182 us), a few microseconds on bare
//! metal. It is measured once per process, the first time a kernel is
//! planned from outside the pool. Work submitted from a pool thread (a
//! kernel inside a user's `par_iter`, the tests' pools) pays no such
//! round trip.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Serial nanoseconds per unit of [`crate::fusion::cpu::element_cost`] for the cheap
/// ops the threshold matters for (`x + y`: 3 units a value, 0.33 ns a
/// value in cache on a 2020s x86-64 core).
const NS_PER_UNIT: f64 = 0.11;

/// Round trips timed (after as many unmeasured ones to wake the pool).
const TRIPS: usize = 16;

/// The least work, in cost units, that a kernel run from the calling
/// thread must have for its tasks to go to the pool: enough serial time
/// to pay for two round trips (on the 2-core machine: `x + y` of 2^16
/// values stays on the caller, of 2^18 goes to the pool), and never less
/// than `floor` (the rule for work already on a pool thread).
pub(crate) fn parallel_min_units(floor: usize) -> usize {
    if rayon::current_thread_index().is_some() {
        return floor;
    }
    static MEASURED: OnceLock<usize> = OnceLock::new();
    let measured = *MEASURED.get_or_init(|| {
        let trip = round_trip();
        (2.0 * trip.as_nanos() as f64 / NS_PER_UNIT) as usize
    });
    measured.max(floor)
}

/// The median time of an empty job handed to the pool and waited for,
/// from this (non-pool) thread.
fn round_trip() -> Duration {
    if rayon::current_num_threads() <= 1 {
        return Duration::ZERO;
    }
    let mut times: Vec<Duration> = (0..2 * TRIPS)
        .map(|_| {
            let t = Instant::now();
            rayon::join(|| std::hint::black_box(0), || std::hint::black_box(1));
            t.elapsed()
        })
        .skip(TRIPS)
        .collect();
    times.sort();
    times[TRIPS / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_on_a_pool_thread_keeps_the_floor_and_outside_never_goes_below_it() {
        let floor = 1 << 18;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| parallel_min_units(floor)), floor);
        assert!(parallel_min_units(floor) >= floor);
        assert!(parallel_min_units(0) < usize::MAX);
    }
}

//! The thread-stress suite, on every backend: the CPU, and each GPU backend
//! usable here (lavapipe and pocl in CI; CUDA, wgpu and OpenCL on NVIDIA on
//! the GPU machine). Every result is compared **exactly** with the same
//! work done by one thread on the same backend; no work may fall back.
//!
//! - many threads, each with its own arrays (products, fused chains,
//!   reductions along either axis, gathers, transposes), while all of them
//!   also evaluate one shared lazy graph per round;
//! - first use: fresh processes whose threads all make their first
//!   products at once (a child process of this binary each);
//! - a resident handle written by one thread while others read views of
//!   it: every read is one whole write, never older than one already seen,
//!   and the writer reads back exactly what it wrote;
//! - a memory limit under 64 threads (a child process each, the limit is
//!   read when the device opens): never a byte past it.
//!
//! `GEARBOX_STRESS_ROUNDS` (default 1000) sets the rounds per backend,
//! `GEARBOX_STRESS_PROCESSES` (default 8) the fresh processes per backend.

mod common;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};

use gearbox::resident::ResidentHandle;
use gearbox::runtime::testing::gpu::{fast_f32, lock, on_cpu, values, work_on};
use gearbox::runtime::{fallback_log, fallback_log_reset, memory_stats};
use gearbox::{Array, DType};

/// Threads of the in-process stress.
const THREADS: usize = 8;

/// Distinct inputs per thread (a round uses `round % SEEDS`).
const SEEDS: u64 = 4;

/// The variable that turns this binary into a child process of a test.
const CHILD: &str = "GEARBOX_STRESS_CHILD";

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The backends under test: the CPU, then each usable GPU backend.
fn backends() -> Vec<&'static str> {
    let mut names = vec!["cpu"];
    names.extend(common::usable_devices().iter().map(|d| d.backend));
    names
}

/// Runs `f` with work forced onto `backend` (the CPU: every GPU backend
/// off).
fn on<T>(backend: &str, f: impl FnOnce() -> T) -> T {
    if backend == "cpu" {
        return on_cpu(f);
    }
    let d = common::DEVICES
        .into_iter()
        .find(|d| d.backend == backend)
        .expect("a GPU backend");
    let saved = gearbox::runtime::options();
    assert!(d.forced_and_healthy(), "{backend} stopped being usable");
    let out = f();
    gearbox::runtime::set_options(saved);
    out
}

/// An `f32` matrix of `n x n` reproducible values from `seed`, never zero.
fn matrix(n: usize, seed: u64) -> Array {
    let v = values(n * n, DType::F64, seed).to_vec::<f64>().unwrap();
    fast_f32([n, n], v)
}

/// The kinds of independent work a thread does.
const KINDS: usize = 7;

/// Work `kind` on inputs from `seed` (sizes vary with the seed, so pool
/// blocks of several classes are freed and reused between threads); its
/// values as f64.
fn work(kind: usize, seed: u64) -> Vec<f64> {
    let n = 24 + (seed % 5) as usize * 9;
    let x = matrix(n, seed);
    let y = matrix(n, seed + 7919);
    let out = match kind {
        0 => x.matmul(&x).unwrap().sum().unwrap(),
        1 => (&x * &x).unwrap(),
        2 => x.sum().unwrap(),
        3 => (x.exp().unwrap() * &y).unwrap().sum_axis(1).unwrap(),
        4 => (&x - &x.mean_axis(0).unwrap()).unwrap(),
        5 => {
            let positions: Vec<usize> = (0..n).rev().step_by(2).collect();
            x.take(1, &positions).unwrap()
        }
        _ => x.crossprod(&y).unwrap(),
    };
    out.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

/// The lazy graph every thread evaluates in a round (built, not evaluated).
fn shared_graph(seed: u64) -> Array {
    let x = matrix(40, seed + 101);
    let z = (x.matmul(&x).unwrap().tanh().unwrap() + &x).unwrap();
    z.sum_axis(0).unwrap().astype(DType::F64).unwrap()
}

/// Fails naming `what`, how many of `of` went wrong and the first few,
/// unless `wrong` (filled by the threads) is empty.
fn assert_none(what: &str, wrong: Mutex<Vec<String>>, of: u64) {
    let wrong = wrong.into_inner().unwrap();
    assert!(
        wrong.is_empty(),
        "{what}: {} of {of}, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(8)]
    );
}

/// Bit patterns, so NaN and -0 compare exactly too.
fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn threads_get_one_threads_values_on_every_backend() {
    let _g = lock();
    let rounds = setting("GEARBOX_STRESS_ROUNDS", 1000);
    for backend in backends() {
        on(backend, || {
            // One thread's values first.
            let reference: Vec<Vec<Vec<u64>>> = (0..KINDS)
                .map(|k| {
                    (0..THREADS as u64 * SEEDS)
                        .map(|s| bits(&work(k, s)))
                        .collect()
                })
                .collect();
            let shared_reference: Vec<Vec<u64>> = (0..SEEDS)
                .map(|s| bits(&shared_graph(s).to_vec::<f64>().unwrap()))
                .collect();
            fallback_log_reset();
            let before = work_on(backend);
            let wrong = Mutex::new(Vec::new());
            let checked = AtomicUsize::new(0);
            let barrier = Barrier::new(THREADS);
            let shared: Vec<Array> = (0..rounds as u64)
                .map(|r| shared_graph(r % SEEDS))
                .collect();
            std::thread::scope(|s| {
                for t in 0..THREADS {
                    let (reference, shared_reference) = (&reference, &shared_reference);
                    let (wrong, checked, barrier, shared) = (&wrong, &checked, &barrier, &shared);
                    s.spawn(move || {
                        for r in 0..rounds {
                            barrier.wait();
                            let seed = t as u64 * SEEDS + r as u64 % SEEDS;
                            let kind = (t + r) % KINDS;
                            let got = bits(&work(kind, seed));
                            if got != reference[kind][seed as usize] {
                                wrong
                                    .lock()
                                    .unwrap()
                                    .push(format!("thread {t} round {r}: kind {kind} seed {seed}"));
                            }
                            let g = bits(&shared[r].to_vec::<f64>().unwrap());
                            if g != shared_reference[r % SEEDS as usize] {
                                wrong
                                    .lock()
                                    .unwrap()
                                    .push(format!("thread {t} round {r}: the shared graph"));
                            }
                            checked.fetch_add(2, Ordering::Relaxed);
                        }
                    });
                }
            });
            let what = format!("{backend}: results that differ from one thread's");
            assert_none(&what, wrong, checked.load(Ordering::Relaxed) as u64);
            assert!(fallback_log().is_empty(), "{backend}: {:?}", fallback_log());
            if backend != "cpu" {
                assert!(work_on(backend) > before, "{backend} ran none of the work");
            }
            println!(
                "{backend}: {} results over {rounds} rounds of {THREADS} threads, all exact",
                checked.load(Ordering::Relaxed)
            );
        });
    }
}

#[test]
fn a_handle_written_while_read_gives_whole_and_current_values() {
    let _g = lock();
    let writes = setting("GEARBOX_STRESS_ROUNDS", 1000).min(300) as u64;
    for backend in backends() {
        on(backend, || {
            let h = ResidentHandle::zeros([64, 48], DType::F32, backend).unwrap();
            let done = std::sync::atomic::AtomicBool::new(false);
            let reads = AtomicU64::new(0);
            let wrong = Mutex::new(Vec::new());
            std::thread::scope(|s| {
                for reader in 0..3 {
                    let (h, done, reads, wrong) = (&h, &done, &reads, &wrong);
                    s.spawn(move || {
                        let mut newest = 0.0f32;
                        let view = h.as_array();
                        while !done.load(Ordering::Acquire) {
                            // A fresh view and one kept: both must follow the writes.
                            for a in [h.as_array(), view.clone()] {
                                let v = a.to_vec::<f32>().unwrap();
                                let first = v[0];
                                if v.iter().any(|&x| x != first) || first < newest {
                                    wrong.lock().unwrap().push(format!(
                                        "reader {reader}: {first} after {newest}, mixed {}",
                                        v.iter().any(|&x| x != first)
                                    ));
                                }
                                newest = newest.max(first);
                                reads.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    });
                }
                let view = h.as_array();
                for k in 1..=writes {
                    h.fill(k as f64).unwrap();
                    for a in [h.as_array(), view.clone()] {
                        let v = a.to_vec::<f32>().unwrap();
                        if v.iter().any(|&x| x != k as f32) {
                            wrong
                                .lock()
                                .unwrap()
                                .push(format!("writer read {} after fill({k})", v[0]));
                        }
                    }
                }
                done.store(true, Ordering::Release);
            });
            let what = format!("{backend}: stale or torn reads");
            assert_none(&what, wrong, reads.load(Ordering::Relaxed));
        });
    }
}

/// Runs this binary's [`child`] entry with `mode` for `backend` and
/// `env`: whether it succeeded, and what it printed.
fn run_child(mode: &str, backend: &str, env: &[(&str, &str)]) -> (bool, String) {
    let spec = format!("{mode}:{backend}");
    let all: Vec<(&str, &str)> = [(CHILD, spec.as_str())]
        .into_iter()
        .chain(env.iter().copied())
        .collect();
    common::run_child(&all)
}

#[test]
fn fresh_processes_whose_threads_start_at_once_are_right() {
    let _g = lock();
    let processes = setting("GEARBOX_STRESS_PROCESSES", 8);
    for backend in backends().into_iter().filter(|b| *b != "cpu") {
        let failed: Vec<String> = (0..processes)
            .filter_map(|_| {
                let (ok, text) = run_child("first-use", backend, &[]);
                (!ok).then_some(text)
            })
            .collect();
        assert!(
            failed.is_empty(),
            "{backend}: {} of {processes} fresh processes failed; the first:\n{}",
            failed.len(),
            failed[0]
        );
    }
}

#[test]
fn sixty_four_threads_never_pass_the_memory_limit() {
    let _g = lock();
    for backend in backends().into_iter().filter(|b| *b != "cpu") {
        let (ok, text) = run_child("limit", backend, &[("GEARBOX_MEMORY_LIMIT", "5MiB")]);
        assert!(ok, "{backend}: {text}");
        assert!(text.contains("within the limit"), "{backend}: {text}");
    }
}

/// The child processes' entry point (ignored in a normal run): with
/// `GEARBOX_STRESS_CHILD=<mode>:<backend>` it runs that mode and fails the
/// process on a wrong value.
#[test]
#[ignore = "the entry point of the child processes the stress tests start"]
fn child() {
    let spec = std::env::var(CHILD).expect("started by a stress test");
    let (mode, backend) = spec.split_once(':').expect("mode:backend");
    common::init_allowing_cpu_devices();
    match mode {
        "first-use" => on(backend, first_use),
        "limit" => on(backend, || memory_limit(backend)),
        other => panic!("unknown child mode {other}"),
    }
}

/// Threads that make their first products at once, then the same work on
/// one thread: equal bits.
fn first_use() {
    let barrier = Barrier::new(THREADS);
    let concurrent: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let mut v = bits(&work(0, t as u64));
                    v.extend(bits(&work(6, t as u64)));
                    v
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (t, got) in concurrent.iter().enumerate() {
        let mut want = bits(&work(0, t as u64));
        want.extend(bits(&work(6, t as u64)));
        assert_eq!(
            got, &want,
            "thread {t}'s first products differ from one thread's"
        );
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

/// 64 threads each asking for a 1.5 MiB handle under a 5 MiB limit, all
/// at once: at most two are granted (2 MiB blocks), the rest are refused
/// naming the limit, and the pool's peak never passes it.
fn memory_limit(backend: &str) {
    const LIMIT: u64 = 5 << 20;
    let barrier = Barrier::new(64);
    let granted = AtomicUsize::new(0);
    let errors = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..64 {
            let (barrier, granted, errors) = (&barrier, &granted, &errors);
            s.spawn(move || {
                barrier.wait();
                match ResidentHandle::zeros([196_608], DType::F64, backend) {
                    Ok(h) => {
                        granted.fetch_add(1, Ordering::SeqCst);
                        barrier.wait();
                        drop(h);
                    }
                    Err(e) => {
                        errors.lock().unwrap().push(e.to_string());
                        barrier.wait();
                    }
                }
            });
        }
    });
    let stats = memory_stats()
        .into_iter()
        .find(|(b, _)| b == backend)
        .map(|(_, s)| s)
        .expect("the backend's pool");
    let granted = granted.into_inner();
    let errors = errors.into_inner().unwrap();
    assert!(
        stats.peak <= LIMIT,
        "peak {} passes the limit {LIMIT}",
        stats.peak
    );
    assert!(
        (1..=2).contains(&granted),
        "{granted} handles of 1.5 MiB granted under 5 MiB"
    );
    assert!(
        errors.iter().all(|e| e.contains("GEARBOX_MEMORY_LIMIT")),
        "{:?}",
        &errors[..errors.len().min(4)]
    );
    println!(
        "{granted} granted, peak {} bytes: within the limit",
        stats.peak
    );
}

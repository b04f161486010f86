#!/usr/bin/env bash
# The GPU checks, the same way every time.
#   scripts/gpu.sh build   # here: builds release binaries into .gpu/ (ignored by git)
#   scripts/gpu.sh fetch-vulkan   # here, once: the Vulkan loader's, the OpenCL ICD
#   loader's and CLBlast's packages into .gl/
#   scripts/gpu.sh build-ops   # here: only the op suite and the reduction/permute/
#   conformance device tests (release), for `run ops` and `run shell`
#   scripts/gpu.sh build-reliability   # here: only the thread-stress, cache-corruption
#   and resident suites (debug test binaries, stripped) into .gpu/, for `run reliability`
#   then, through the device tool, with carry [".gpu", ".gl"] (the binaries travel as
#   one archive, .gpu/bin.tgz, unpacked by `run`; .gl gives wgpu its Vulkan loader):
#   bash scripts/gpu.sh run [core|stats|tests|reliability|shell CMD|wgpu|opencl|autodiff|resident|wgpu-knobs|wgpu-cache|wgpu-device|wgpu-placement|sweep|lm-sweep|grid-kernels|profile|ops [FILTER]]   # there: GPU tests, demo,
#   calibration, benchmarks vs PyTorch -> $OUT (core: all but the statistics
#   benchmark; stats: only it; tests: only the GPU tests; sweep: only the GLM
#   shape sweep, GPU and host cores, against PyTorch; lm-sweep: only the many_lm
#   sweep on the GPU; grid-kernels: the GLM per-point kernels' tests and timings;
#   profile: Nsight Compute on the GLM per-point kernel; wgpu: the wgpu tests
#   and its benchmark beside CUDA; wgpu-knobs: the wgpu speed knobs A/B with
#   the card's clocks sampled; wgpu-cache: after the wgpu tests, bench
#   processes with their caches and with empty ones; wgpu-device: full
#   sweeps timed on the device's clock with wgpu's memory blocks;
#   wgpu-placement: new 1 GiB arrays' read speed with each way of
#   allocating their Vulkan memory, then full sweeps with the best; opencl: the OpenCL tests on NVIDIA's
#   OpenCL driver and its benchmarks beside CUDA; autodiff: the MLP training
#   step and the gradient of the five-op chain beside PyTorch; resident: the
#   resident-handle tests, the R package's Rust layer on each backend and
#   the IRLS / power-iteration benchmark beside PyTorch; reliability: the
#   thread-stress and cache-corruption suites on CUDA, wgpu and OpenCL;
#   ops: the op speed suite (scripts/ops_cases.json) on CUDA, wgpu and
#   OpenCL beside PyTorch eager and compiled, and docs/perf/ops.md's table;
#   default: all
#   but the sweeps and the profile)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
fetch-vulkan)
  # Here, once: the Vulkan loader's Debian packages into .gl (ignored by
  # git; carried to the device machine, unpacked there by `run`).
  mkdir -p .git/info; grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo '/.gl/' >> .git/info/exclude
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update >/dev/null
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 ocl-icd-libopencl1 libclblast1)
  ;;
build-reliability)
  [ -d .git ] && { mkdir -p .git/info; grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude; }
  rm -rf .gpu && mkdir -p .gpu
  cargo build -p gearbox-cli -p gearbox --bin gearbox --example r_layer
  cp target/debug/gearbox target/debug/examples/r_layer .gpu/
  { cargo test -p gearbox --test threads --test cache_corruption --test resident --test memory_limit --no-run --message-format=json 2>/dev/null
    cargo test -p gearbox-stats --test gpu_nmath --test device_opencl --no-run --message-format=json 2>/dev/null; } \
    | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])' | while read -r exe; do cp "$exe" ".gpu/test-$(basename "$exe" | sed 's/-[0-9a-f]*$//')"; done
  strip .gpu/*
  # Debug binaries: xz keeps them under the device tool's 64 MiB.
  (cd .gpu && tar cJf bin.txz --remove-files ./*)
  ls -la .gpu
  ;;
build-ops)
  # Here: only what `run ops` and `run shell` with the reduction, permute,
  # scan and conformance device tests need (release ops_bench and GPU test
  # binaries), packed with xz for the device tool's 64 MiB.
  [ -d .git ] && { mkdir -p .git/info; grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude; }
  rm -rf .gpu && mkdir -p .gpu
  cargo build --release -p gearbox --example ops_bench
  cp target/release/examples/ops_bench .gpu/
  { cargo test --release -p gearbox-cuda --test gpu_movement --test gpu --no-run --message-format=json 2>/dev/null
    cargo test --release -p gearbox-wgpu --test gpu_library --test gpu_wgpu --test gpu_scan --no-run --message-format=json 2>/dev/null
    cargo test --release -p gearbox-opencl --test gpu_opencl_library --test gpu_opencl --test gpu_opencl_scan --no-run --message-format=json 2>/dev/null; } \
    | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])' | while read -r exe; do cp "$exe" ".gpu/test-$(basename "$exe" | sed 's/-[0-9a-f]*$//')"; done
  strip .gpu/*
  (cd .gpu && tar cJf bin.txz --remove-files ./*)
  ls -la .gpu
  ;;
build)
  # (.git is a file in a worktree: its exclude list is the main checkout's)
  [ -d .git ] && { mkdir -p .git/info; grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude; }
  rm -rf .gpu && mkdir -p .gpu
  cargo build --release -p gearbox-cli
  cargo build --release -p gearbox-cuda --example cuda_bench
  cargo build --release -p gearbox-wgpu --example wgpu_bench --example wgpu_host_cost --example wgpu_placement
  cargo build --release -p gearbox-opencl --example opencl_bench
  cargo build --release -p gearbox --example train_bench --example iterative_bench --example r_layer --example take_bench --example ops_bench
  cargo build --release -p gearbox-stats --example stats_bench --example glm_diag --example lm_diag --example glm_sweep --example lm_sweep
  cp target/release/gearbox target/release/examples/cuda_bench target/release/examples/wgpu_bench target/release/examples/wgpu_host_cost target/release/examples/wgpu_placement target/release/examples/opencl_bench target/release/examples/train_bench target/release/examples/iterative_bench target/release/examples/r_layer target/release/examples/take_bench target/release/examples/ops_bench target/release/examples/stats_bench target/release/examples/glm_diag target/release/examples/lm_diag target/release/examples/glm_sweep target/release/examples/lm_sweep .gpu/
  cargo test --release -p gearbox -p gearbox-cuda -p gearbox-stats -p gearbox-wgpu -p gearbox-opencl --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])' | while read -r exe; do cp "$exe" ".gpu/test-$(basename "$exe" | sed 's/-[0-9a-f]*$//')"; done
  # Only the GPU suite needs the device; the other test binaries run in CI.
  find .gpu -name 'test-*' ! -name 'test-gpu*' ! -name 'test-device_opencl' ! -name 'test-resident' ! -name 'test-iterative' ! -name 'test-memory*' -delete
  # `run tests` runs only these (no demo, calibration or benchmarks).
  # Symbols off and one compressed archive: the device tool carries at
  # most 64 MiB, and the loose binaries are more than that.
  strip .gpu/*
  # GEARBOX_GPU_KEEP (a grep -E pattern of file names) keeps only some
  # binaries, for runs that need a part (the archive must stay under the
  # device tool's 64 MiB); e.g. 'opencl|nmath|gpu_stats|stats_bench|gearbox$'.
  if [ -n "${GEARBOX_GPU_KEEP:-}" ]; then
    ls .gpu | grep -Ev "$GEARBOX_GPU_KEEP" | sed 's|^|.gpu/|' | xargs -r rm -f
  fi
  (cd .gpu && tar czf bin.tgz --remove-files ./*)
  ls -la .gpu
  ;;
run)
  [ -f .gpu/bin.tgz ] && tar xzf .gpu/bin.tgz -C .gpu && rm .gpu/bin.tgz
  [ -f .gpu/bin.txz ] && python3 -c 'import tarfile; tarfile.open(".gpu/bin.txz").extractall(".gpu")' && rm .gpu/bin.txz
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  export GEARBOX_CACHE_DIR=${GEARBOX_CACHE_DIR:-/tmp/gearbox-cache}
  # Results go to a scratch folder, then back to $OUT as one archive plus the
  # tables (the device tool returns at most 8 files).
  FINAL_OUT=${OUT:-/tmp/gearbox-out}; mkdir -p "$FINAL_OUT"
  OUT=$(mktemp -d)
  # (Background samplers some parts start end with the run.)
  trap 'kill $(jobs -p) 2>/dev/null || true; tar czf "$FINAL_OUT/results.tgz" -C "$OUT" . ; cp "$OUT"/*.md "$FINAL_OUT"/ 2>/dev/null || true' EXIT
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/device.txt" || true
  status=0
  # Vulkan for the wgpu backend: the machine has NVIDIA's ICD but no loader,
  # and the ICD (in libGLX_nvidia) needs the GL dispatch libraries; their
  # Debian packages travel in .gl (scripts/gpu.sh fetch-vulkan).
  if [ -d .gl ]; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
  fi
  [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  # OpenCL: NVIDIA's driver is installed but not registered with the ICD
  # loader (which, with CLBlast, came from .gl): a vendors folder of our own
  # names it, leaving /etc alone.
  nv_ocl=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
  if [ -e "$nv_ocl" ]; then
    mkdir -p /tmp/gearbox-icd && echo "$nv_ocl" > /tmp/gearbox-icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/gearbox-icd
  fi
  part=${2:-all}
  # The wgpu backend's GPU test binaries (run wgpu, run wgpu-cache).
  wgpu_tests=".gpu/test-gpu_wgpu .gpu/test-gpu_f64_math .gpu/test-gpu_library .gpu/test-gpu_scan .gpu/test-gpu_gemm .gpu/test-gpu_timing .gpu/test-gpu_raw_memory"
  if [ "$part" = wgpu ]; then
    # The wgpu backend only: its tests and its benchmark beside CUDA's.
    export GEARBOX_REQUIRE_WGPU=1
    # The card's clocks beside the run (the slow runs of docs/perf/wgpu.md).
    nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 500 > "$OUT/clocks.csv" 2>&1 &
    for t in $wgpu_tests; do
      "$t" --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/tests.log" | grep -E "^test .*FAILED|test result|SKIP|device:|conformance|panicked" || status=1
    done
    ./.gpu/wgpu_bench > "$FINAL_OUT/wgpu.json" 2> "$OUT/wgpu-bench.log" || status=1
    grep -v XDG_RUNTIME "$OUT/wgpu-bench.log"
    ./.gpu/wgpu_host_cost 2>&1 | grep -v XDG_RUNTIME | tee "$OUT/wgpu-host-cost.txt"
    # PyTorch at the same shapes, then the joined table.
    python3 scripts/bench_wgpu_torch.py > "$FINAL_OUT/wgpu-torch.json" 2> "$OUT/wgpu-torch.log" || status=1
    python3 scripts/wgpu_table.py "$FINAL_OUT/wgpu.json" "$FINAL_OUT/wgpu-torch.json" | tee "$OUT/wgpu.md" || status=1
    echo "clocks during the run (P-state, SM MHz, memory MHz): $(awk -F', ' '{print $2, $3, $4}' "$OUT/clocks.csv" | sort | uniq -c | sort -rn | head -5 | tr '\n' ';')"
    exit $status
  fi
  if [ "$part" = ops ]; then
    # Issue 32: the op speed suite. ops_bench on each backend of
    # GEARBOX_OPS_BACKENDS (default: cuda wgpu opencl; add cpu for the CPU
    # backend on this machine's cores), one process each, then the peers
    # of GEARBOX_OPS_PEERS (default torch: eager and torch.compile; add
    # numpy for the CPU table) in the same run, then scripts/ops_table.py
    # into ops.md. FILTER ($3, or GEARBOX_OPS_ONLY): comma-separated
    # substrings of the cells' keys (op/shape/dtype), to split the suite
    # across calls (e.g. `unary.,binary` then `reduce.` then
    # `scan.,take.,copy.,comp.`; the JSON of several calls make one table:
    # ops_table.py takes them all). GEARBOX_OPS_QUICK=1: the smoke subset;
    # GEARBOX_OPS_COMPILE=0: eager PyTorch only; GEARBOX_OPS_WARMUP=0: no
    # warm-up process (below). Each Gearbox process stops
    # starting cells after GEARBOX_OPS_SECONDS / 8 (default 540 / 8, or
    # GEARBOX_OPS_BACKEND_SECONDS) and the peers after half of it (or
    # GEARBOX_OPS_PEER_SECONDS); cells not reached are marked skipped.
    export GEARBOX_OPS_ONLY=${3:-${GEARBOX_OPS_ONLY:-}}
    total=${GEARBOX_OPS_SECONDS:-540}
    tag=${GEARBOX_OPS_ONLY:+-$(echo "$GEARBOX_OPS_ONLY" | tr -c 'A-Za-z0-9_\n' '_')}
    gb=()
    # A warm-up process per backend first (GEARBOX_OPS_WARMUP=0 skips it):
    # on a fresh machine the first process timed some cells up to 3x slower
    # than the same binary right after (H200, 2026-11-29: wgpu's f64
    # logsumexp 1.54 ms, then 0.46), which would count against whichever
    # side ran first.
    if [ "${GEARBOX_OPS_WARMUP:-1}" != 0 ]; then
      for b in ${GEARBOX_OPS_BACKENDS:-cuda wgpu opencl}; do
        GEARBOX_OPS_QUICK=1 GEARBOX_OPS_BACKENDS=$b ./.gpu/ops_bench > /dev/null 2>&1 || true
      done
    fi
    for b in ${GEARBOX_OPS_BACKENDS:-cuda wgpu opencl}; do
      echo "== ops_bench $b"
      GEARBOX_OPS_BACKENDS=$b GEARBOX_OPS_DEADLINE_S=${GEARBOX_OPS_BACKEND_SECONDS:-$((total / 8))} ./.gpu/ops_bench \
        > "$FINAL_OUT/ops$tag-$b.json" 2> "$OUT/ops-$b.log" || status=1
      grep -v XDG_RUNTIME "$OUT/ops-$b.log" | grep -E "cells per|copy/|not usable|error" | head -n 40
      gb+=("$FINAL_OUT/ops$tag-$b.json")
    done
    echo "== peers"
    GEARBOX_OPS_PEERS=${GEARBOX_OPS_PEERS:-torch} GEARBOX_OPS_DEADLINE_S=${GEARBOX_OPS_PEER_SECONDS:-$((total / 2))} \
      python3 scripts/bench_ops_torch.py > "$FINAL_OUT/ops$tag-peers.json" 2> "$OUT/ops-peers.log" || status=1
    grep -E "bench_ops_torch|copy/|error|skipped" "$OUT/ops-peers.log" | head -n 40
    python3 scripts/ops_table.py --gearbox "${gb[@]}" --peer "$FINAL_OUT/ops$tag-peers.json" \
      --title "Op-by-op speed: Gearbox, PyTorch and NumPy ($(head -n 2 "$OUT/device.txt" | tail -n 1 | cut -d, -f1))" \
      --out "$OUT/ops$tag.md" > /dev/null || status=1
    sed -n '/^## Summary/,/^## Size sweep/p' "$OUT/ops$tag.md"
    exit $status
  fi
  if [ "$part" = shell ]; then
    # Any command, in the environment the parts set up (Vulkan and OpenCL
    # loaders, CUDA's libraries): `run shell '<command>'`.
    bash -c "${3:?run shell needs a command}" || status=1
    exit $status
  fi
  if [ "$part" = reliability ]; then
    # Issue 31's suites on every backend of the card: threads compared bit
    # for bit with one thread (1,000 rounds), fresh processes' first
    # products, handles written while read, 64 threads under a memory
    # limit; every cache file damaged every way; the resident suite.
    export GEARBOX_REQUIRE_CUDA=1 GEARBOX_REQUIRE_WGPU=1 GEARBOX_REQUIRE_OPENCL=1
    export GEARBOX_STRESS_PROCESSES=${GEARBOX_STRESS_PROCESSES:-20}
    for t in .gpu/test-threads .gpu/test-cache_corruption .gpu/test-resident .gpu/test-memory_limit; do
      /usr/bin/time -f "$t: %e s" "$t" --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/reliability.log" \
        | grep -E "^test .*(ok|FAILED)|test result|SKIP|exact|rebuilt|panicked|differ|stale|failed|: [0-9.]+ s$" || status=1
    done
    for t in .gpu/test-gpu_nmath .gpu/test-device_opencl; do
      "$t" --test-threads=1 2>&1 | tee -a "$OUT/reliability.log" | grep -E "test result|SKIP|panicked" || status=1
    done
    ./.gpu/r_layer 2>&1 | tee "$OUT/r_layer.txt" | tail -n 40 || status=1
    ./.gpu/gearbox status | tee "$OUT/status.txt"
    ./.gpu/gearbox explain --op matmul --shape 2048x2048 --precision fast | tee -a "$OUT/status.txt"
    grep -E "exact|rebuilt|test result" "$OUT/reliability.log" > "$OUT/reliability.md" || true
    exit $status
  fi
  if [ "$part" = wgpu-device ]; then
    # Full wgpu sweeps in a row, every case timed on the device's clock
    # with wgpu's memory blocks beside it: which cases a slow process
    # slows, and after which allocations (docs/perf/wgpu.md).
    for p in 1 2 3 4; do
      GEARBOX_WGPU_TIMESTAMPS=1 GEARBOX_BENCH_ALLOCATOR=1 ./.gpu/wgpu_bench > "$OUT/p$p.json" 2> "$OUT/p$p.log" || status=1
    done
    python3 scripts/wgpu_device_times.py "$OUT" | tee "$OUT/wgpu-device.md" || status=1
    exit $status
  fi
  if [ "$part" = wgpu-placement ]; then
    # Which allocation property NVIDIA's driver slows later buffers by
    # (docs/perf/wgpu.md): a process per way of allocating
    # (GEARBOX_WGPU_RAW_MEMORY, every device-local memory type too), each
    # making and summing new 1 GiB arrays on the device's clock; then full
    # sweeps with wgpu's allocator and with the setting whose slowest new
    # array was fastest.
    export GEARBOX_WGPU_TIMESTAMPS=1 GEARBOX_PLACEMENT_MOST_MIB=0 GEARBOX_PLACEMENT_NEW=${GEARBOX_PLACEMENT_NEW:-6}
    ./.gpu/wgpu_placement > "$OUT/placement-wgpu.txt" 2>&1 || status=1
    cat "$OUT/placement-wgpu.txt"
    types=$(grep -E '^type [0-9]+: .*DEVICE_LOCAL' "$OUT/placement-wgpu.txt" | sed -E 's/^type ([0-9]+):.*/type=\1/')
    GEARBOX_PLACEMENT_NEW=16 python3 scripts/placement_torch.py > "$OUT/placement-torch.txt" 2>&1 || status=1
    # One line per way of allocating: its sums in order, or its error.
    row() { echo "$1: $(grep -E '^(new array|array 0)' "$2" | sed -E 's/.*sum //; s/ ms//' | tr '\n' ' ')$(grep -iE 'error|usable' "$2" | head -1)"; }
    { row torch "$OUT/placement-torch.txt"; row wgpu "$OUT/placement-wgpu.txt"; } | tee "$OUT/placement.md"
    settings=${GEARBOX_PLACEMENT_SETTINGS:-on on,clear dedicated export dedicated,export arena=40 cuda cuda-compressed $types}
    for setting in $settings; do
      GEARBOX_WGPU_RAW_MEMORY=$setting ./.gpu/wgpu_placement > "$OUT/placement-$setting.txt" 2>&1 || status=1
      row "$setting" "$OUT/placement-$setting.txt"
    done | tee -a "$OUT/placement.md"
    best=$(python3 -c 'import sys
rows = [l.split(":", 1) for l in open(sys.argv[1])]
rows = [(max(map(float, v.split())), k) for k, v in rows if k != "torch" and v.split() and all(w.replace(".", "").isdigit() for w in v.split())]
print(min(rows)[1] if rows else "")' "$OUT/placement.md")
    echo "best: $best" | tee -a "$OUT/placement.md"
    mkdir -p "$OUT/sweeps"
    for setting in wgpu "$best"; do
      GEARBOX_WGPU_RAW_MEMORY=$([ "$setting" = wgpu ] || echo "$setting") GEARBOX_BENCH_ALLOCATOR=1 ./.gpu/wgpu_bench > "$OUT/sweeps/p-$setting.json" 2> "$OUT/sweeps/p-$setting.log" || status=1
    done
    python3 scripts/wgpu_device_times.py "$OUT/sweeps" | tee "$OUT/wgpu-placement.md" || status=1
    exit $status
  fi
  if [ "$part" = wgpu-knobs ] || [ "$part" = wgpu-cache ]; then
    # wgpu-knobs: the wgpu backend's speed knobs, A/B in alternating
    # processes (f32, 2^20 and 2^28, the CUDA backend in each), with the
    # card's clocks, power and P-state sampled every 200 ms beside them.
    # wgpu-cache: the wgpu tests first (as `run wgpu` does), then bench
    # processes alternating between the kernel and pipeline caches the
    # tests left and an empty cache folder: whether the slow runs of
    # docs/perf/wgpu.md come from what the caches hold.
    nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,MEMORY > "$OUT/smi-start.txt" 2>&1 || true
    fields=timestamp,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active,utilization.gpu,utilization.memory
    nvidia-smi --query-gpu=$fields --format=csv >/dev/null 2>&1 || fields=${fields/clocks_event_reasons/clocks_throttle_reasons}
    nvidia-smi --query-gpu=$fields --format=csv,noheader -lms 200 > "$OUT/clocks.csv" 2>&1 &
    smi=$!
    began=$(date +%s)
    settings="base GEARBOX_WGPU_TIMESTAMPS=1 GEARBOX_WGPU_SPIN_US=0 GEARBOX_WGPU_SHARED_PASS=0 GEARBOX_WGPU_REDUCE_GROUPS=2048 GEARBOX_WGPU_ELEMENTWISE_PACKS=4"
    if [ "$part" = wgpu-cache ]; then
      settings="shared-cache fresh-cache GEARBOX_WGPU_TIMESTAMPS=1"
      echo "$(date +%s.%N) start 0 tests" >> "$OUT/marks.txt"
      for t in $wgpu_tests; do
        "$t" --test-threads=1 >> "$OUT/tests.log" 2>&1 || status=1
      done
      echo "$(date +%s.%N) end 0 tests" >> "$OUT/marks.txt"
      du -sh "$GEARBOX_CACHE_DIR" "$GEARBOX_CACHE_DIR"/* 2>&1 | tee "$OUT/cache-size.txt"
    fi
    for round in 1 2 3; do
      # Inside the device tool's ten minutes, with time left for the table.
      [ $(( $(date +%s) - began )) -lt 420 ] || break
      for setting in $settings; do
        case "$setting" in
          base|shared-cache) knob=() ;;
          fresh-cache) knob=(GEARBOX_CACHE_DIR="$(mktemp -d)") ;;
          *) knob=("$setting") ;;
        esac
        echo "$(date +%s.%N) start $round $setting" >> "$OUT/marks.txt"
        env "${knob[@]}" GEARBOX_BENCH_QUICK=1 GEARBOX_BENCH_LOG2N=20,28 \
          ./.gpu/wgpu_bench > "$OUT/knobs-$round-$setting.json" 2> "$OUT/knobs-$round-$setting.log" || status=1
        echo "$(date +%s.%N) end $round $setting" >> "$OUT/marks.txt"
      done
    done
    kill $smi || true
    nvidia-smi -q -d PERFORMANCE,CLOCK,POWER > "$OUT/smi-end.txt" 2>&1 || true
    python3 scripts/wgpu_knobs_table.py "$OUT" | tee "$OUT/wgpu-knobs.md" || status=1
    exit $status
  fi
  if [ "$part" = opencl ]; then
    # The OpenCL backend only: its tests (conformance, library calls, nmath,
    # GLM grid, many_lm, forced onto it), its benchmark beside CUDA twice
    # (the second a warm process: programs from the disk cache), the
    # statistics benchmark on each backend, and PyTorch at the same shapes.
    export GEARBOX_REQUIRE_OPENCL=1
    for t in .gpu/test-gpu_opencl* .gpu/test-device_opencl; do
      "$t" --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/tests.log" | grep -E "^test .*FAILED|test result|SKIP|device:|conformance|panicked|worst|max rel" || status=1
    done
    for t in .gpu/test-gpu_nmath .gpu/test-gpu_stats; do
      "$t" opencl --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/tests.log" | grep -E "^test .*FAILED|test result|SKIP|panicked|opencl:|many_lm" || status=1
    done
    ./.gpu/opencl_bench > "$FINAL_OUT/opencl.json" 2> "$OUT/opencl-bench.log" || status=1
    cat "$OUT/opencl-bench.log"
    echo "== warm process"
    GEARBOX_BENCH_LOG2N=20 ./.gpu/opencl_bench > "$FINAL_OUT/opencl-warm.json" 2> "$OUT/opencl-warm.log" || status=1
    grep -E "new_kernel|seen_kernel" "$OUT/opencl-warm.log"
    for b in opencl cuda; do
      echo "== stats bench on $b"
      GEARBOX_STATS_BENCH_BACKEND=$b ./.gpu/stats_bench > "$FINAL_OUT/stats-$b.json" 2> "$OUT/stats-$b.log" || status=1
      grep -E "ms$|fallbacks" "$OUT/stats-$b.log"
    done
    python3 scripts/bench_wgpu_torch.py > "$FINAL_OUT/torch.json" 2> "$OUT/torch.log" || status=1
    exit $status
  fi
  if [ "$part" = autodiff ]; then
    # Issue 15's targets: the gradient tests on CUDA and OpenCL against the
    # CPU, an Adam step of an MLP 784-1024-1024-10 (batch 4096, f32) and
    # grad of the five-op chain over 2^26, on CUDA, beside PyTorch eager and
    # compiled (scripts/bench_train_torch.py).
    [ -x .gpu/test-gpu_autodiff ] && { ./.gpu/test-gpu_autodiff --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/tests.log" | grep -E "^test |test result|SKIP|panicked|cuda:|opencl:" || status=1; }
    GEARBOX_TRAIN_STEPS=${GEARBOX_TRAIN_STEPS:-10000} ./.gpu/train_bench > "$FINAL_OUT/train.json" 2> "$OUT/train.log" || status=1
    cat "$OUT/train.log"
    python3 scripts/bench_train_torch.py > "$FINAL_OUT/train-torch.json" 2> "$OUT/train-torch.log" || status=1
    cat "$OUT/train-torch.log"
    exit $status
  fi
  if [ "$part" = resident ]; then
    # Issue 16: resident handles and the iterative examples on CUDA, wgpu
    # and OpenCL against the CPU, memory that does not creep and
    # GEARBOX_MEMORY_LIMIT (forced onto OpenCL), then IRLS (10^6 x 50 f64, 25 iterations)
    # and power iteration (8192^2 f32, 100 steps) with handles and with
    # immutable arrays, beside PyTorch allocating and in place.
    export GEARBOX_REQUIRE_CUDA=1 GEARBOX_REQUIRE_WGPU=1 GEARBOX_REQUIRE_OPENCL=1
    for t in .gpu/test-resident .gpu/test-iterative .gpu/test-memory .gpu/test-memory_limit; do
      [ -x "$t" ] && { "$t" --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/tests.log" | grep -E "^test |test result|SKIP|panicked|irls on|power iteration on|pool blocks|pieces|fits|RSS|fresh" || status=1; }
    done
    # The R package's Rust layer (no R on the device) on each backend.
    [ -x .gpu/r_layer ] && { ./.gpu/r_layer 2>&1 | grep -v XDG_RUNTIME | tee "$OUT/r-layer.txt" || status=1; }
    ./.gpu/iterative_bench > "$FINAL_OUT/iterative.json" 2> "$OUT/iterative.log" || status=1
    cat "$OUT/iterative.log"
    python3 scripts/bench_iterative_torch.py > "$FINAL_OUT/iterative-torch.json" 2> "$OUT/iterative-torch.log" || status=1
    cat "$OUT/iterative-torch.log"
    exit $status
  fi
  if [ "$part" = lm-sweep ]; then
    # Only the many_lm sweep, both sides, each given GEARBOX_SWEEP_SECONDS / 2
    # (default 430); the table by scripts/lm_sweep_table.py.
    half=$(( ${GEARBOX_SWEEP_SECONDS:-430} / 2 ))
    GEARBOX_SWEEP_DEADLINE_S=$half ./.gpu/lm_sweep > "$FINAL_OUT/lm-gearbox.jsonl" 2> "$OUT/lm-gearbox.log" || status=1
    GEARBOX_SWEEP_DEADLINE_S=$half python3 scripts/bench_lm_sweep_torch.py > "$FINAL_OUT/lm-torch.jsonl" 2> "$OUT/lm-torch.log" || status=1
    python3 scripts/lm_sweep_table.py "$FINAL_OUT/lm-gearbox.jsonl" "$FINAL_OUT/lm-torch.jsonl" --title "many_lm shape sweep (same run)" | tee "$OUT/lm.md"
    exit $status
  fi
  if [ "$part" = grid-kernels ]; then
    # The per-point GLM grid's two CUDA kernels (scalar, tensor cores): the
    # strategy tests by the default choice and with each forced (unless
    # GEARBOX_GRID_TESTS=0), then the per-point strategy timed under each
    # setting of GEARBOX_GRID_RUNS (space-separated runs, each a
    # comma-separated list of VAR=value; default: each kernel forced) into
    # grid-kernels.jsonl, each row tagged with its run. GEARBOX_SWEEP_*
    # narrow the shapes; pairs up to GEARBOX_SWEEP_GPU_MAX_PAIRS (2e9).
    if [ "${GEARBOX_GRID_TESTS:-1}" = 1 ]; then
      for mma in "" 0 1; do
        echo "== gpu_glm_strategies GEARBOX_CUDA_GRID_MMA=$mma"
        GEARBOX_CUDA_GRID_MMA=$mma ./.gpu/test-gpu_glm_strategies --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/tests.log" | grep -E "^test |test result|device:|panicked" || status=1
      done
    fi
    export GEARBOX_SWEEP_PER_POINT_ONLY=1 GEARBOX_SWEEP_MAX_PAIRS=${GEARBOX_SWEEP_GPU_MAX_PAIRS:-2e9}
    for run in ${GEARBOX_GRID_RUNS:-GEARBOX_CUDA_GRID_MMA=0 GEARBOX_CUDA_GRID_MMA=1}; do
      echo "== per-point sweep $run"
      env $(echo "$run" | tr ',' ' ') GEARBOX_CUDA_GRID_REPORT=1 ./.gpu/glm_sweep 2>> "$OUT/grid-kernels.log" | sed "s/^{/{\"run\": \"$run\", /" >> "$FINAL_OUT/grid-kernels.jsonl" || status=1
    done
    grep "^grid kernel" "$OUT/grid-kernels.log" | sort | uniq -c | sort -rn | head -40
    exit $status
  fi
  if [ "$part" = profile ]; then
    # Nsight Compute on the GLM per-point kernel's first launch at one shape
    # (GEARBOX_SWEEP_FAMILIES, _L1, _L2, _M1; default binomial 300 x 14 x
    # 1e6): the full section set as text, and the SASS source view with
    # per-instruction counts and stall samples as CSV, summarized by
    # scripts/sass_mix.py.
    export GEARBOX_SWEEP_PER_POINT_ONLY=1 GEARBOX_SWEEP_FAMILIES=${GEARBOX_SWEEP_FAMILIES:-binomial}
    export GEARBOX_SWEEP_L1=${GEARBOX_SWEEP_L1:-300} GEARBOX_SWEEP_L2=${GEARBOX_SWEEP_L2:-14} GEARBOX_SWEEP_M1=${GEARBOX_SWEEP_M1:-1e6}
    ncu --clock-control none -k regex:'^gb_linear_grid$' -c 1 --set full -o "$OUT/grid" ./.gpu/glm_sweep > "$OUT/profile-run.log" 2>&1 || status=1
    ncu -i "$OUT/grid.ncu-rep" --page details > "$FINAL_OUT/details.txt" 2>&1 || status=1
    ncu -i "$OUT/grid.ncu-rep" --page source --csv --print-source sass > "$FINAL_OUT/sass.csv" 2>&1 || status=1
    rm -f "$OUT/grid.ncu-rep"
    python3 scripts/sass_mix.py "$FINAL_OUT/sass.csv" | tee "$OUT/sass-mix.txt"
    grep -E "Duration|Registers Per Thread|Achieved Occupancy|Issue Slots Busy" "$FINAL_OUT/details.txt"
    exit $status
  fi
  if [ "$part" = sweep ]; then
    # GEARBOX_SWEEP_* narrow the shapes (see glm_sweep.rs); each side's rows
    # go straight to $FINAL_OUT as JSON lines (for scripts/sweep_report.py
    # and scripts/lm_sweep_table.py), so what ran comes back even if the
    # call is cut short; the logs go into results.tgz. Each side stops
    # starting shapes at its share of GEARBOX_SWEEP_SECONDS (default 480).
    # GPU shapes up to GEARBOX_SWEEP_GPU_MAX_PAIRS observation-point pairs
    # (default 5e9), host-core shapes up to 3e7; then the many_lm sweep
    # (examples/lm_sweep.rs, scripts/bench_lm_sweep_torch.py) on the GPU.
    total=${GEARBOX_SWEEP_SECONDS:-480}
    export GEARBOX_SWEEP_MAX_PAIRS=${GEARBOX_SWEEP_GPU_MAX_PAIRS:-5e9}
    for family in binomial poisson; do
      export GEARBOX_SWEEP_FAMILIES=$family GEARBOX_SWEEP_DEADLINE_S=$((total * 2 / 10))
      echo "== glm sweep $family (gpu)"
      ./.gpu/glm_sweep >> "$FINAL_OUT/sweep-gearbox.jsonl" 2>> "$OUT/sweep-gearbox.log" || status=1
      python3 scripts/bench_glm_sweep_torch.py >> "$FINAL_OUT/sweep-torch.jsonl" 2>> "$OUT/sweep-torch.log" || status=1
    done
    # GEARBOX_SWEEP_ONLY=glm stops here (the GLM's GPU shapes only).
    if [ "${GEARBOX_SWEEP_ONLY:-}" = glm ]; then tail -n 3 "$OUT"/*.log; wc -l "$FINAL_OUT"/*.jsonl; exit $status; fi
    export GEARBOX_SWEEP_FAMILIES= GEARBOX_SWEEP_DEADLINE_S=$((total / 10))
    echo "== many_lm sweep (gpu)"
    ./.gpu/lm_sweep > "$FINAL_OUT/lm-gearbox.jsonl" 2> "$OUT/lm-gearbox.log" || status=1
    python3 scripts/bench_lm_sweep_torch.py > "$FINAL_OUT/lm-torch.jsonl" 2> "$OUT/lm-torch.log" || status=1
    export GEARBOX_SWEEP_MAX_PAIRS=3e7
    echo "== glm sweep (host cores: $(nproc))"
    GEARBOX_SWEEP_CPU=1 ./.gpu/glm_sweep > "$FINAL_OUT/sweep-gearbox-cpu.jsonl" 2> "$OUT/sweep-gearbox-cpu.log" || status=1
    python3 scripts/bench_glm_sweep_torch.py --cpu > "$FINAL_OUT/sweep-torch-cpu.jsonl" 2> "$OUT/sweep-torch-cpu.log" || status=1
    tail -n 3 "$OUT"/*.log
    wc -l "$FINAL_OUT"/*.jsonl
    exit $status
  fi
  if [ "$part" != stats ]; then
  for t in .gpu/test-*; do
    echo "== $t"
    "$t" --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/tests.log" | grep -E "^test .*FAILED|test result|SKIP|device:|relative error|pool:|compiled|max rel err|gradient|many_lm" || status=1
  done
  [ "$part" = tests ] && exit $status
  echo "== demo"; ./.gpu/gearbox demo --size 4096 2>&1 | tee "$OUT/demo.txt" || status=1
  echo "== calibrate"; ./.gpu/gearbox calibrate --plot "$OUT/calibration.svg" 2>&1 | tee "$OUT/calibrate.txt" | grep -v "━\|░" || status=1
  echo "== bench"
  ./.gpu/cuda_bench > "$OUT/gearbox.json" 2> "$OUT/bench-gearbox.log" || status=1
  python3 scripts/bench_torch.py > "$OUT/torch.json" 2> "$OUT/bench-torch.log" || status=1
  # The memory-bound cases twice more, the two sides alternately; each side
  # keeps its best median (scripts/best_of.py), so a slow moment of the
  # device does not decide a ratio.
  gb_runs=("$OUT/gearbox.json"); th_runs=("$OUT/torch.json")
  for r in 2 3; do
    GEARBOX_BENCH_ONLY=memory ./.gpu/cuda_bench > "$OUT/gearbox-memory$r.json" 2>> "$OUT/bench-gearbox.log" && gb_runs+=("$OUT/gearbox-memory$r.json")
    GEARBOX_BENCH_ONLY=memory python3 scripts/bench_torch.py > "$OUT/torch-memory$r.json" 2>> "$OUT/bench-torch.log" && th_runs+=("$OUT/torch-memory$r.json")
  done
  python3 scripts/best_of.py "${gb_runs[@]}" > "$OUT/gearbox-best.json"
  python3 scripts/best_of.py "${th_runs[@]}" > "$OUT/torch-best.json"
  # Knob sweep of the memory-bound kernels: GEARBOX_SWEEP holds
  # space-separated runs, each a comma-separated list of VAR=value
  # (e.g. "GEARBOX_CUDA_REDUCE_PACKS=1 GEARBOX_CUDA_STREAMING=1,GEARBOX_CUDA_BLOCKS_PER_SM=2048").
  for knobs in ${GEARBOX_SWEEP:-}; do
    echo "$knobs:" >> "$OUT/sweep.log"
    env $(echo "$knobs" | tr ',' ' ') GEARBOX_BENCH_ONLY=memory ./.gpu/cuda_bench 2>&1 >/dev/null | grep -E "chain|sum|col_means" >> "$OUT/sweep.log" || true
  done
  python3 scripts/gpu_table.py "$OUT/gearbox-best.json" "$OUT/torch-best.json" "scripts/gpu.sh build; scripts/gpu.sh run (device tool, carry .gpu)" > "$OUT/cuda.md" && cat "$OUT/cuda.md"
  fi
  if [ "$part" != core ]; then
  echo "== glm diag"; ./.gpu/glm_diag 2>&1 | tee "$OUT/glm_diag.txt" || status=1
  echo "== lm diag"; ./.gpu/lm_diag 2>&1 | tee "$OUT/lm_diag.txt" || status=1
  echo "== stats bench"
  GEARBOX_STATS_BENCH_CPU=1 ./.gpu/stats_bench > "$OUT/stats-gearbox.json" 2> "$OUT/stats-gearbox.log" || status=1
  python3 scripts/bench_stats_torch.py > "$OUT/stats-torch.json" 2> "$OUT/stats-torch.log" || status=1
  python3 scripts/stats_table.py "$OUT/stats-gearbox.json" "$OUT/stats-torch.json" "scripts/gpu.sh build; scripts/gpu.sh run (device tool, carry .gpu)" > "$OUT/stats.md" && cat "$OUT/stats.md"
  fi
  exit $status
  ;;
*) echo "usage: scripts/gpu.sh build|run" >&2; exit 2 ;;
esac

// A host-side stand-in for the CUDA built-ins the generated kernels use, so
// that g++ can check their syntax and run them: every thread of a block is a
// std::thread, __syncthreads is a barrier over the block, __shfl_down_sync
// exchanges values through per-warp slots between two warp barriers, and
// blocks run one after another (so __shared__ can be a function static).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)

struct gb_dim3 {
  unsigned int x, y, z;
};
static thread_local gb_dim3 threadIdx;
static gb_dim3 blockIdx, blockDim, gridDim;

struct gb_barrier {
  std::mutex m;
  std::condition_variable cv;
  unsigned count = 0, total = 0, gen = 0;
  void reset(unsigned t) {
    count = 0;
    total = t;
  }
  void wait() {
    std::unique_lock<std::mutex> lock(m);
    const unsigned g = gen;
    if (++count == total) {
      count = 0;
      ++gen;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return gen != g; });
    }
  }
};
static gb_barrier gb_block_barrier;
static gb_barrier gb_warp_barrier[32];
static unsigned long long gb_warp_slot[32][32];

static void __syncthreads() { gb_block_barrier.wait(); }

// Every lane of the warp publishes `v`; each gets the value of lane
// `from(lane)`, or its own where `from` gives 32 or more.
template <typename T, typename From>
static T gb_warp_exchange(T v, From from) {
  const unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  gb_warp_slot[w][lane] = bits;
  gb_warp_barrier[w].wait();
  T r = v;
  const unsigned src = from(lane);
  if (src < 32) {
    std::memcpy(&r, &gb_warp_slot[w][src], sizeof(T));
  }
  gb_warp_barrier[w].wait();
  return r;
}

template <typename T>
static T __shfl_down_sync(unsigned mask, T v, int offset) {
  (void)mask;
  return gb_warp_exchange(v, [&](unsigned lane) { return lane + (unsigned)offset; });
}

// The value of lane `src` (src_lane of __shfl_sync), in every lane.
template <typename T>
static T __shfl_sync(unsigned mask, T v, int src) {
  (void)mask;
  return gb_warp_exchange(v, [&](unsigned) { return (unsigned)src % 32; });
}

// The value `offset` lanes below (its own in the lanes below `offset`).
template <typename T>
static T __shfl_up_sync(unsigned mask, T v, int offset) {
  (void)mask;
  return gb_warp_exchange(v, [&](unsigned lane) {
    return lane >= (unsigned)offset ? lane - (unsigned)offset : 32u;
  });
}

// CUDA's integer min and max overloads.
static long long min(long long a, long long b) { return a < b ? a : b; }
static long long max(long long a, long long b) { return a > b ? a : b; }

template <typename T>
static T __ldg(const T* p) {
  return *p;
}
struct uint2 {
  unsigned int x, y;
};
struct uint4 {
  unsigned int x, y, z, w;
};
template <typename T>
static T __ldcs(const T* p) {
  return *p;
}
template <typename T>
static void __stcs(T* p, const T& v) {
  *p = v;
}
static unsigned int __float_as_uint(float x) {
  unsigned int u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
static long long __double_as_longlong(double x) {
  long long u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
static double __longlong_as_double(long long u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
static float __uint_as_float(unsigned int u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
static float __double2float_rn(double x) { return (float)x; }
static float __ll2float_rn(long long x) { return (float)x; }
static double __ll2double_rn(long long x) { return (double)x; }

// Runs `kernel` on a grid of `grid` blocks of `block` threads.
template <typename F>
static void gb_launch(unsigned grid, unsigned block, F kernel) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx = {b, 0, 0};
    gb_block_barrier.reset(block);
    for (auto& w : gb_warp_barrier) {
      w.reset(32);
    }
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; ++t) {
      threads.emplace_back([t, &kernel] {
        threadIdx = {t, 0, 0};
        kernel();
      });
    }
    for (auto& t : threads) {
      t.join();
    }
  }
}

// A zero-filled buffer aligned like the GPU allocator's (256 bytes).
template <typename T>
static T* gb_alloc(size_t count, const void* init, size_t init_bytes) {
  size_t bytes = (count * sizeof(T) + 255) / 256 * 256;
  if (bytes == 0) {
    bytes = 256;
  }
  T* p = (T*)std::aligned_alloc(256, bytes);
  std::memset(p, 0, bytes);
  if (init_bytes > 0) {
    std::memcpy(p, init, init_bytes);
  }
  return p;
}

// Prints `count` elements as hex bits: "<case> <name> <hex> <hex> ...".
template <typename T>
static void gb_print(const char* c, const char* name, const T* p, size_t count) {
  std::printf("%s %s", c, name);
  for (size_t i = 0; i < count; ++i) {
    unsigned long long bits = 0;
    std::memcpy(&bits, &p[i], sizeof(T));
    std::printf(" %llx", bits);
  }
  std::printf("\n");
}

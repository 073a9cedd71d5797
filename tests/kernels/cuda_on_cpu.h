// The subset of CUDA that kernels/attention_flash.cu uses, on the CPU, so that the kernel the book
// prints can be run and checked on a machine without a GPU: one std::thread per CUDA thread, a
// std::barrier for __syncthreads(), one block at a time (so block-level __shared__ arrays can be
// function statics), and __half stored as a float (this checks the index arithmetic and the
// algorithm, not fp16 rounding).
#pragma once
#include <barrier>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

struct __half { float f; };
inline __half __float2half(float x) { return __half{x}; }
inline float __half2float(__half h) { return h.f; }
#define __expf(x) std::exp(x)
#define __global__
#define __launch_bounds__(n)
#define __shared__ static

struct uint3_ { int x, y, z; };
inline thread_local uint3_ threadIdx, blockIdx;
inline std::barrier<>* cuda_block_barrier = nullptr;
inline void __syncthreads() { cuda_block_barrier->arrive_and_wait(); }

// Dynamic shared memory: the kernel's `extern __shared__` array is rewritten to point here.
alignas(16) inline unsigned char cuda_dynamic_smem[1 << 20];

// Run `kernel` as a grid of `blocks` blocks of `threads` threads, one block after another.
inline void launch(int blocks, int threads, const std::function<void()>& kernel) {
    for (int b = 0; b < blocks; ++b) {
        std::barrier<> barrier(threads);
        cuda_block_barrier = &barrier;
        std::vector<std::thread> team;
        for (int t = 0; t < threads; ++t)
            team.emplace_back([&, t, b] { threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0}; kernel(); });
        for (auto& th : team) th.join();
    }
}

// The subset of CUDA that the kernels in kernels/*.cu use, on the CPU, so that the kernels the book
// prints can be run and checked on a machine without a GPU. launch (Kernel 4's check): one
// std::thread per CUDA thread and a std::barrier for __syncthreads(); cuda_launch (Kernels 1-3):
// one fiber per CUDA thread, below. Either way one block at a time (so block-level __shared__ arrays can be
// function statics), and __half stored as a float (this checks the index arithmetic and the
// algorithm, not fp16 rounding). Grids and blocks have up to three dimensions; the host
// launchers' `kernel<<<grid, block, smem, stream>>>(args)` is rewritten by the test into
// cuda_launch(grid, block, smem, [&] { kernel(args); }), which refuses what a GPU refuses (more
// than 1,024 threads a block, more than the default 48 KiB of dynamic shared memory) with the
// error cudaGetLastError() then returns. __shfl_xor_sync exchanges through the block (every
// thread of the block must call it, as block_reduce's threads do).
#pragma once
#include <barrier>
#include <ucontext.h>
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

#define __device__
#define __forceinline__ inline

struct uint3_ { int x, y, z; };
struct dim3 {
    int x, y, z;
    dim3(int x_ = 1, int y_ = 1, int z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local uint3_ threadIdx, blockIdx, blockDim, gridDim;
inline std::barrier<>* cuda_block_barrier = nullptr;
inline void __syncthreads();

// Dynamic shared memory: the kernel's `extern __shared__` array is rewritten to point here.
alignas(16) inline unsigned char cuda_dynamic_smem[1 << 20];

// Run `kernel` as a grid of `blocks` blocks of `threads` threads, one block after another.
inline void launch(int blocks, int threads, const std::function<void()>& kernel) {
    for (int b = 0; b < blocks; ++b) {
        std::barrier<> barrier(threads);
        cuda_block_barrier = &barrier;
        std::vector<std::thread> team;
        for (int t = 0; t < threads; ++t)
            team.emplace_back([&, t, b] { threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0}; blockDim = {threads, 1, 1};
                                           gridDim = {blocks, 1, 1}; kernel(); });
        for (auto& th : team) th.join();
    }
}

// ---- host side: launches, errors, streams, warp shuffles (for the kernels other than Kernel 4)
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidConfiguration = 9 };
using cudaStream_t = void*;
inline cudaError_t cuda_last_error = cudaSuccess;
inline cudaError_t cudaGetLastError() { cudaError_t e = cuda_last_error; cuda_last_error = cudaSuccess; return e; }

inline std::vector<float> cuda_shuffle_slots;

// cuda_launch runs a block's threads as fibers (ucontext) on the calling thread, not as OS threads:
// __syncthreads() hands control back to a scheduler that resumes every other thread of the block
// in turn, so a barrier costs a few context switches in user space, and a busy machine slows the
// check down no more than any other single-threaded program. Which thread runs when is fixed
// (round robin), so a run is repeatable.
struct CudaFiber { ucontext_t ctx; std::vector<char> stack; bool done = false; };
inline ucontext_t cuda_scheduler;
inline std::vector<CudaFiber> cuda_fibers;
inline int cuda_fiber_now = -1;                       // the fiber running, or -1: OS threads (launch)
inline const std::function<void()>* cuda_fiber_kernel = nullptr;

inline void cuda_fiber_main() {
    (*cuda_fiber_kernel)();
    cuda_fibers[cuda_fiber_now].done = true;          // returns to cuda_scheduler (uc_link)
}

inline void cuda_launch(dim3 grid, dim3 block, size_t dynamic_smem, const std::function<void()>& kernel) {
    const int threads = block.x * block.y * block.z;
    if (threads < 1 || threads > 1024 || dynamic_smem > 48 * 1024 || grid.x < 1 || grid.y < 1 || grid.z < 1) {
        cuda_last_error = cudaErrorInvalidConfiguration;
        return;
    }
    cuda_shuffle_slots.assign(threads, 0.0f);
    cuda_fibers.resize(threads);
    for (auto& f : cuda_fibers) f.stack.resize(64 * 1024);     // a kernel thread's frames are small
    cuda_fiber_kernel = &kernel;
    blockDim = {block.x, block.y, block.z};
    gridDim = {grid.x, grid.y, grid.z};
    for (int bz = 0; bz < grid.z; ++bz)
        for (int by = 0; by < grid.y; ++by)
            for (int bx = 0; bx < grid.x; ++bx) {
                blockIdx = {bx, by, bz};
                for (int t = 0; t < threads; ++t) {
                    CudaFiber& f = cuda_fibers[t];
                    f.done = false;
                    getcontext(&f.ctx);
                    f.ctx.uc_stack = {f.stack.data(), 0, f.stack.size()};
                    f.ctx.uc_link = &cuda_scheduler;
                    makecontext(&f.ctx, cuda_fiber_main, 0);
                }
                for (bool running = true; running;) {          // one pass: every thread to the next barrier
                    running = false;
                    for (int t = 0; t < threads; ++t) {
                        if (cuda_fibers[t].done) continue;
                        threadIdx = {t % block.x, t / block.x % block.y, t / (block.x * block.y)};
                        cuda_fiber_now = t;
                        swapcontext(&cuda_scheduler, &cuda_fibers[t].ctx);
                        running |= !cuda_fibers[t].done;
                    }
                }
                cuda_fiber_now = -1;
            }
}

// Lane l of a warp gets lane l ^ lane_mask's x. Warps are consecutive runs of 32 linear thread
// indices, as on a GPU; a mask under 32 keeps the partner in the same warp.
inline float __shfl_xor_sync(unsigned, float x, int lane_mask) {
    const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    cuda_shuffle_slots[t] = x;
    __syncthreads();
    const float got = cuda_shuffle_slots[t ^ lane_mask];
    __syncthreads();
    return got;
}

inline void __syncthreads() {
    if (cuda_fiber_now >= 0) swapcontext(&cuda_fibers[cuda_fiber_now].ctx, &cuda_scheduler);   // cuda_launch
    else cuda_block_barrier->arrive_and_wait();                                               // launch
}

// Kernel 3: both matrix products tiled through shared memory;
// S and P still go through HBM.
//
//   S = scale * Q K^T   tiled_matmul<true>   (K read as its transpose)
//   P = softmax(S)      softmax_rows         (a block per row, read once)
//   O = P V             tiled_matmul<false>
//
// A block of TILE x TILE threads owns a TILE x TILE tile of the result.
// It walks the shared dimension one TILE-wide phase at a time: each
// thread copies one element of the A tile and one of the B tile into
// shared memory, the block synchronises, and each thread then does TILE
// multiply-adds out of shared memory. Every element brought in from
// global memory is used TILE times instead of once.
// fp16 storage, fp32 arithmetic.

#include <cuda_fp16.h>
#include <math.h>

constexpr int TILE = 32;    // 32 x 32 = 1024 threads; tiles a (32 x 32 floats, 4 KiB)
                            // and b (32 x 33, 4,224 B): 8,320 B of shared memory

// C[M x Nc] = alpha * A[M x Kd] * B', all row-major, where
//   B' = B^T with B stored Nc x Kd   if B_TRANSPOSED,
//   B' = B   with B stored Kd x Nc   otherwise.
template <bool B_TRANSPOSED>
__global__ void tiled_matmul(const __half* A, const __half* B, __half* C,
                             int M, int Nc, int Kd, float alpha) {
    __shared__ float a[TILE][TILE];
    __shared__ float b[TILE][TILE + 1];  // +1: the transposed store below
                                         // would hit one bank 32 times
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;

    for (int k0 = 0; k0 < Kd; k0 += TILE) {
        // Copy one element of each tile; zeros outside the matrices.
        int ka = k0 + tx;
        a[ty][tx] = (row < M && ka < Kd)
                        ? __half2float(A[(size_t)row * Kd + ka]) : 0.0f;
        if (B_TRANSPOSED) {
            // b[k][j] = B[col0 + j][k0 + k]. Consecutive threads (tx)
            // read consecutive k along one row of B: coalesced.
            int brow = blockIdx.x * TILE + ty, kb = k0 + tx;
            b[tx][ty] = (brow < Nc && kb < Kd)
                            ? __half2float(B[(size_t)brow * Kd + kb]) : 0.0f;
        } else {
            int kb = k0 + ty;
            b[ty][tx] = (kb < Kd && col < Nc)
                            ? __half2float(B[(size_t)kb * Nc + col]) : 0.0f;
        }
        __syncthreads();                 // both tiles are complete
        for (int k = 0; k < TILE; ++k)
            acc += a[ty][k] * b[k][tx];
        __syncthreads();                 // all done before the next copy
    }
    if (row < M && col < Nc)
        C[(size_t)row * Nc + col] = __float2half(alpha * acc);
}

// Reduce x over the block with op (max or +); every thread gets the
// result. red holds one partial per warp; blockDim.x is a multiple of 32.
template <typename Op>
__device__ float block_reduce(float x, float* red, Op op) {
    for (int off = 16; off > 0; off /= 2)
        x = op(x, __shfl_xor_sync(0xffffffffu, x, off));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) red[warp] = x;
    __syncthreads();
    x = red[0];
    for (int w = 1; w < blockDim.x / 32; ++w) x = op(x, red[w]);
    __syncthreads();                     // red is reused by the next call
    return x;
}

// One block per row of S. The row (N floats) is staged in dynamic shared
// memory, so S is read from HBM once and P is written once.
__global__ void softmax_rows(const __half* S, __half* P, int N) {
    extern __shared__ float row[];       // N floats
    __shared__ float red[32];
    const size_t base = (size_t)blockIdx.x * N;
    auto max_op = [](float u, float v) { return fmaxf(u, v); };
    auto add_op = [](float u, float v) { return u + v; };

    float m = -INFINITY;
    for (int j = threadIdx.x; j < N; j += blockDim.x) {
        row[j] = __half2float(S[base + j]);
        m = fmaxf(m, row[j]);
    }
    m = block_reduce(m, red, max_op);
    float sum = 0.0f;
    for (int j = threadIdx.x; j < N; j += blockDim.x) {
        row[j] = __expf(row[j] - m);     // numerator, with the same m
        sum += row[j];
    }
    sum = block_reduce(sum, red, add_op);
    for (int j = threadIdx.x; j < N; j += blockDim.x)
        P[base + j] = __float2half(row[j] / sum);
}

// Host side. (For N above 12,256 the softmax's row, 4N bytes, and the 128-byte
// reduction buffer no longer fit the default 48 KiB of shared memory per block,
// static and dynamic together: such a launch needs the opt-in attribute.)
// Returns the first launch error (an invalid configuration, too much shared
// memory); errors while a kernel runs surface at the next synchronisation.
cudaError_t launch_attention_tiled(const __half* Q, const __half* K,
                                   const __half* V, __half* S, __half* P,
                                   __half* O, int N, int d,
                                   cudaStream_t stream) {
    const float scale = 1.0f / sqrtf((float)d);
    const dim3 block(TILE, TILE);
    const dim3 grid_s((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    tiled_matmul<true><<<grid_s, block, 0, stream>>>(Q, K, S, N, N, d,
                                                     scale);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;

    softmax_rows<<<N, 256, N * sizeof(float), stream>>>(S, P, N);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;

    const dim3 grid_o((d + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    tiled_matmul<false><<<grid_o, block, 0, stream>>>(P, V, O, N, d, N,
                                                      1.0f);
    return cudaGetLastError();
}


// Kernel 2: one thread per output element.
//
// The three loop nests of Kernel 1 become three kernels. In each, the
// outer loops (over the elements of the result) disappear into the grid:
// a thread finds its element from blockIdx and threadIdx and runs only
// the innermost loop.
//
//   scores_kernel   thread (i, j): S[i][j] = scale * (row i of Q).(row j of K)
//   softmax_kernel  thread i:      row i of P = softmax(row i of S)
//   output_kernel   thread (i, c): O[i][c] = (row i of P).(column c of V)
//
// Nothing is shared between threads: every operand a thread reads comes
// from global memory (what the caches catch is luck, not design).
// fp16 storage, fp32 arithmetic.

#include <cuda_fp16.h>
#include <math.h>

__device__ __forceinline__ float ld(const __half* p, size_t i) {
    return __half2float(p[i]);
}
__device__ __forceinline__ void st(__half* p, size_t i, float x) {
    p[i] = __float2half(x);
}

__global__ void scores_kernel(const __half* Q, const __half* K, __half* S,
                              int N, int d, float scale) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;  // key: x varies fastest
    int i = blockIdx.y * blockDim.y + threadIdx.y;  // query
    if (i >= N || j >= N) return;      // the grid may overhang the matrix
    float acc = 0.0f;
    for (int k = 0; k < d; ++k)
        acc += ld(Q, (size_t)i * d + k) * ld(K, (size_t)j * d + k);
    st(S, (size_t)i * N + j, scale * acc);
}

__global__ void softmax_kernel(const __half* S, __half* P, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // one thread, one row
    if (i >= N) return;
    const __half* row = S + (size_t)i * N;
    float m = -INFINITY;
    for (int j = 0; j < N; ++j) m = fmaxf(m, ld(row, j));       // max
    float sum = 0.0f;
    for (int j = 0; j < N; ++j) sum += __expf(ld(row, j) - m);   // sum
    for (int j = 0; j < N; ++j)                                  // normalise
        st(P, (size_t)i * N + j, __expf(ld(row, j) - m) / sum);
}

__global__ void output_kernel(const __half* P, const __half* V, __half* O,
                              int N, int d) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;  // output column
    int i = blockIdx.y * blockDim.y + threadIdx.y;  // output row
    if (i >= N || c >= d) return;
    float acc = 0.0f;
    for (int j = 0; j < N; ++j)
        acc += ld(P, (size_t)i * N + j) * ld(V, (size_t)j * d + c);
    st(O, (size_t)i * d + c, acc);
}

// Host side: three launches on one stream, so each starts after the
// previous one has finished.
// Returns the first launch error (an invalid configuration, too much shared
// memory); errors while a kernel runs surface at the next synchronisation.
cudaError_t launch_attention_per_output(const __half* Q, const __half* K,
                                        const __half* V, __half* S, __half* P,
                                        __half* O, int N, int d,
                                        cudaStream_t stream) {
    float scale = 1.0f / sqrtf((float)d);
    dim3 block(16, 16);                              // 256 threads
    dim3 grid_s((N + 15) / 16, (N + 15) / 16);
    scores_kernel<<<grid_s, block, 0, stream>>>(Q, K, S, N, d, scale);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;

    softmax_kernel<<<(N + 255) / 256, 256, 0, stream>>>(S, P, N);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;

    dim3 grid_o((d + 15) / 16, (N + 15) / 16);
    output_kernel<<<grid_o, block, 0, stream>>>(P, V, O, N, d);
    return cudaGetLastError();
}


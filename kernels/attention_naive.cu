// Kernel 1: attention with no parallelism.
//
//   O = softmax(scale * Q K^T) V
//   Q, K, V, O: N x d, row-major; scale = 1/sqrt(d)
//
// One thread does everything, in three loop nests, as the pseudocode
// does. S (scores) and P (probabilities) are N x N matrices in global
// memory (HBM), so the caller passes two N*N workspaces.
// Storage is fp16 (__half); arithmetic is fp32.
//
// Launch with one block of one thread. This is a correctness baseline,
// not a fast kernel: one thread runs while the rest of the GPU idles.

#include <cuda_fp16.h>
#include <math.h>

__device__ __forceinline__ float ld(const __half* p, size_t i) {
    return __half2float(p[i]);
}
__device__ __forceinline__ void st(__half* p, size_t i, float x) {
    p[i] = __float2half(x);
}

__global__ void attention_naive(const __half* Q, const __half* K,
                                const __half* V, __half* S, __half* P,
                                __half* O, int N, int d, float scale) {
    // Phase 1: S = scale * Q K^T. Row j of K is column j of K^T, so
    // both operands are walked along their rows.
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < d; ++k)
                acc += ld(Q, (size_t)i * d + k) * ld(K, (size_t)j * d + k);
            st(S, (size_t)i * N + j, scale * acc);
        }

    // Phase 2: P = softmax(S), row by row, in three passes over the row.
    // The SAME row maximum m_i is subtracted in numerator and denominator:
    //   P[i][j] = exp(S[i][j] - m_i) / sum_k exp(S[i][k] - m_i)
    for (int i = 0; i < N; ++i) {
        const __half* row = S + (size_t)i * N;
        float m = -INFINITY;
        for (int j = 0; j < N; ++j) m = fmaxf(m, ld(row, j));
        float sum = 0.0f;
        for (int j = 0; j < N; ++j) sum += __expf(ld(row, j) - m);
        for (int j = 0; j < N; ++j)
            st(P, (size_t)i * N + j, __expf(ld(row, j) - m) / sum);
    }

    // Phase 3: O = P V; each output element is the dot product of a row
    // of P with a column of V.
    for (int i = 0; i < N; ++i)
        for (int c = 0; c < d; ++c) {
            float acc = 0.0f;
            for (int j = 0; j < N; ++j)
                acc += ld(P, (size_t)i * N + j) * ld(V, (size_t)j * d + c);
            st(O, (size_t)i * d + c, acc);
        }
}

// Host side: one block of one thread.
// Returns the first launch error (an invalid configuration, too much shared
// memory); errors while a kernel runs surface at the next synchronisation.
cudaError_t launch_attention_naive(const __half* Q, const __half* K,
                                   const __half* V, __half* S, __half* P,
                                   __half* O, int N, int d,
                                   cudaStream_t stream) {
    float scale = 1.0f / sqrtf((float)d);
    attention_naive<<<1, 1, 0, stream>>>(Q, K, V, S, P, O, N, d, scale);
    return cudaGetLastError();
}


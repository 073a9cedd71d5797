// Kernel 4: FlashAttention's forward pass: one fused kernel with an
// online softmax.
//
// A thread block owns BR consecutive query rows Q_i. It keeps Q_i in
// shared memory and its slice of the output, O_i, in registers, and
// streams the keys and values through shared memory BC rows at a time.
// For each key block K_j, V_j it
//   1. computes the scores  S_ij = scale * Q_i K_j^T   (BR x BC, on chip)
//   2. updates each row's running maximum m and running sum l, turns
//      S_ij into P_ij = exp(S_ij - m_new) in place, and records the
//      factor alpha = exp(m_old - m_new)
//   3. rescales and accumulates  O_i = alpha * O_i + P_ij V_j
// and only after the last block divides O_i by l and writes it out.
// S and P exist one BR x BC block at a time, on chip; HBM sees Q and O
// once, K and V once per query block (see the loop order below), and one
// float per row (the log-sum-exp, when lse is given).
//
// Loop order: the paper's Algorithm 1 puts the key blocks in the outer
// loop and the query blocks in the inner one, so O_i, l_i and m_i go
// back to HBM after every key block. Here the query blocks are the grid
// (the outer, parallel loop) and the key blocks the inner loop, as in
// FlashAttention-2: O_i stays on chip until it is final, at the price of
// reading K and V once per query block.
//
// fp16 storage, fp32 arithmetic, CUDA cores only (no Tensor Cores): a
// readable kernel, not a tuned one. It does keep shared memory free of
// bank conflicts: every row is padded by one word (two words for the
// fp32 scores), so the 16 rows a warp works on start in 16 different
// banks, and the two threads of a row take alternate columns, so they
// touch neighbouring words. Dynamic shared memory is (BR + 2*BC)*(D + 2)
// halves + BR*(BC + 2) floats = 98 KiB for the defaults, above the
// 48 KiB default limit, hence the opt-in attribute in the launcher.

#include <cuda_fp16.h>
#include <math.h>

template <int D, int BR, int BC, int THREADS>
__global__ void __launch_bounds__(THREADS)
attention_flash(const __half* Q, const __half* K, const __half* V,
                __half* O, float* lse, int N, float scale) {
    static_assert(THREADS == 2 * BR, "two threads per query row");
    static_assert(D % 2 == 0 && BC % 2 == 0, "each takes half a row");
    constexpr int DH = D / 2;            // output columns per thread
    constexpr int DP = D + 2;            // padded row of Q, K, V: D/2 + 1 words
    constexpr int SP = BC + 2;           // padded row of scores: BC + 2 words

    extern __shared__ unsigned char smem[];
    __half* q = reinterpret_cast<__half*>(smem);     // BR x DP
    __half* k = q + BR * DP;                         // BC x DP
    __half* v = k + BC * DP;                         // BC x DP
    float* s = reinterpret_cast<float*>(v + BC * DP); // BR x SP scores
    __shared__ float alpha_row[BR];      // each row's rescale factor
    __shared__ float l_row[BR];

    const int t = threadIdx.x;
    const int r = t / 2;                 // this thread's row in the block
    const int half = t % 2;              // its columns: half, half + 2, ...
    const int q0 = blockIdx.x * BR;      // first query row of the block

    // Q_i: read from HBM once; rows past N are zero (output discarded).
    for (int e = t; e < BR * D; e += THREADS) {
        int row = q0 + e / D;
        q[e / D * DP + e % D] = row < N ? Q[(size_t)row * D + e % D]
                                        : __float2half(0.0f);
    }

    float acc[DH];                       // this thread's part of O_i
    for (int c = 0; c < DH; ++c) acc[c] = 0.0f;
    float m = -INFINITY, l = 0.0f;       // running max and sum (half 0)

    for (int k0 = 0; k0 < N; k0 += BC) {
        // K_j, V_j: BC rows each, zero past N.
        for (int e = t; e < BC * D; e += THREADS) {
            int row = k0 + e / D;
            bool in = row < N;
            size_t g = (size_t)row * D + e % D;
            int o = e / D * DP + e % D;
            k[o] = in ? K[g] : __float2half(0.0f);
            v[o] = in ? V[g] : __float2half(0.0f);
        }
        __syncthreads();

        // 1. S_ij = scale * Q_i K_j^T; keys past N get -inf (exp -> 0).
        for (int jj = half; jj < BC; jj += 2) {
            float dot = 0.0f;
            for (int c = 0; c < D; ++c)
                dot += __half2float(q[r * DP + c]) *
                       __half2float(k[jj * DP + c]);
            s[r * SP + jj] = (k0 + jj < N) ? scale * dot : -INFINITY;
        }
        __syncthreads();

        // 2. Online softmax update, one thread per row:
        //    m_new = max(m, rowmax(S_ij)),  P_ij = exp(S_ij - m_new),
        //    l_new = exp(m - m_new) * l + rowsum(P_ij).
        if (half == 0) {
            float m_blk = -INFINITY;
            for (int jj = 0; jj < BC; ++jj)
                m_blk = fmaxf(m_blk, s[r * SP + jj]);
            float m_new = fmaxf(m, m_blk);  // finite: a block holds a key
            float sum = 0.0f;
            for (int jj = 0; jj < BC; ++jj) {
                float p = __expf(s[r * SP + jj] - m_new);
                s[r * SP + jj] = p;
                sum += p;
            }
            float alpha = __expf(m - m_new);  // 0 on the first block
            l = alpha * l + sum;
            m = m_new;
            alpha_row[r] = alpha;
        }
        __syncthreads();

        // 3. O_i = alpha * O_i + P_ij V_j, for this thread's DH columns
        //    (acc[c] is column 2c + half).
        const float alpha = alpha_row[r];
        for (int c = 0; c < DH; ++c) acc[c] *= alpha;
        for (int jj = 0; jj < BC; ++jj) {
            const float p = s[r * SP + jj];
            const __half* vrow = v + jj * DP + half;
            for (int c = 0; c < DH; ++c)
                acc[c] += p * __half2float(vrow[2 * c]);
        }
        __syncthreads();                 // k, v, s are overwritten next
    }

    // Normalise once, O_i = diag(l)^-1 O_i, and write it to HBM once.
    if (half == 0) l_row[r] = l;
    __syncthreads();
    const int row = q0 + r;
    if (row < N) {
        const float inv_l = 1.0f / l_row[r];
        for (int c = 0; c < DH; ++c)
            O[(size_t)row * D + 2 * c + half] = __float2half(acc[c] * inv_l);
        // The row's log-sum-exp, m + log l: all that the backward pass
        // needs to rebuild P block by block.
        if (lse != nullptr && half == 0) lse[row] = m + logf(l);
    }
}

// Host side for d = 128: 128 query rows per block (256 threads) and 64
// keys per step.
// Returns the first launch error (an invalid configuration, too much shared
// memory); errors while a kernel runs surface at the next synchronisation.
cudaError_t launch_attention_flash(const __half* Q, const __half* K,
                                   const __half* V, __half* O, float* lse,
                                   int N, cudaStream_t stream) {
    constexpr int D = 128, BR = 128, BC = 64, THREADS = 2 * BR;
    auto kernel = attention_flash<D, BR, BC, THREADS>;
    const size_t smem = (BR + 2 * BC) * (D + 2) * sizeof(__half)
                      + BR * (BC + 2) * sizeof(float);
    cudaError_t err = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) return err;  // more than this GPU allows
    const float scale = 1.0f / sqrtf((float)D);
    kernel<<<(N + BR - 1) / BR, THREADS, smem, stream>>>(Q, K, V, O, lse,
                                                         N, scale);
    return cudaGetLastError();
}

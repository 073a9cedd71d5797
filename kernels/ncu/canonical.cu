// The canonical kernels of calc/simkernels.py in CUDA, line for line, to hold the simulator
// (calc.warpsim) to Nsight Compute's counters on a real GPU: kernels/ncu/run_ncu.py compiles this
// file, profiles every launch of main() and writes the counters as JSON; tests/kernels/test_ncu.py
// compares that JSON with the simulator's counts for the same launches.
//
// Shared arrays are volatile so that every shared access in the source is one access in the
// machine code, as the simulator counts them (without it nvcc may merge the matmul's row reads of
// As into 16-byte loads). Global pointers are plain (no const __restrict__), so loads go through
// the LSU pipe whose counters the runner reads (l1tex__t_*_pipe_lsu_mem_global_op_*), not the
// read-only path.

#define TILE 32
#define RBLOCK 256

__global__ void copy_strided(float* A, float* B, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) B[i] = A[i * stride];
}

template <int PAD>
__global__ void transpose_shared(float* A, float* B, int n) {
    __shared__ volatile float tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = A[y * n + x];      // a warp reads a row of A: coalesced
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    B[y * n + x] = tile[threadIdx.x][threadIdx.y];      // a warp reads a column of the tile
}

__global__ void reduce_interleaved(float* g_in, float* g_out) {   // Harris #1
    __shared__ volatile float sdata[RBLOCK];
    int tid = threadIdx.x;
    sdata[tid] = g_in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int s = 1; s < (int)blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] = sdata[tid] + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = sdata[0];
}

__global__ void reduce_strided(float* g_in, float* g_out) {       // Harris #2
    __shared__ volatile float sdata[RBLOCK];
    int tid = threadIdx.x;
    sdata[tid] = g_in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int s = 1; s < (int)blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < (int)blockDim.x) sdata[index] = sdata[index] + sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = sdata[0];
}

__global__ void reduce_sequential(float* g_in, float* g_out) {    // Harris #3
    __shared__ volatile float sdata[RBLOCK];
    int tid = threadIdx.x;
    sdata[tid] = g_in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s) sdata[tid] = sdata[tid] + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = sdata[0];
}

template <int T>
__global__ void matmul_tiled(float* A, float* B, float* C, int n) {  // Kirk & Hwu
    __shared__ volatile float As[T][T];
    __shared__ volatile float Bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty;
    int col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int p = 0; p < n / T; ++p) {
        As[ty][tx] = A[row * n + p * T + tx];
        Bs[ty][tx] = B[(p * T + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < T; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// Host side: every case of tests/kernels/test_ncu.py, launched once each, in this order
// (`canonical --list` prints the names; the runner matches Nsight Compute's launch IDs to them).
#ifndef CANONICAL_NO_MAIN
#include <cstdio>
#include <cstring>
#include <vector>

static const char* CASES[] = {"copy_s1", "copy_s2", "copy_s32", "transpose_pad0", "transpose_pad1",
                              "reduce_interleaved", "reduce_strided", "reduce_sequential",
                              "matmul_n64_t16", "matmul_n64_t32"};

static float* device_array(size_t n, float fill) {
    std::vector<float> h(n, fill);
    float* d = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    return d;
}

int main(int argc, char** argv) {
    if (argc > 1 && !strcmp(argv[1], "--list")) {
        for (const char* c : CASES) printf("%s\n", c);
        return 0;
    }
    const int n = 4096;
    for (int stride : {1, 2, 32}) {
        float *A = device_array((size_t)n * stride, 1.0f), *B = device_array(n, 0.0f);
        copy_strided<<<n / 256, 256>>>(A, B, n, stride);
        cudaDeviceSynchronize();
        cudaFree(A);
        cudaFree(B);
    }
    {
        const int m = 64;
        float *A = device_array(m * m, 1.0f), *B = device_array(m * m, 0.0f);
        transpose_shared<0><<<dim3(m / TILE, m / TILE), dim3(TILE, TILE)>>>(A, B, m);
        transpose_shared<1><<<dim3(m / TILE, m / TILE), dim3(TILE, TILE)>>>(A, B, m);
        cudaDeviceSynchronize();
        cudaFree(A);
        cudaFree(B);
    }
    {
        const int r = 1024;
        float *in = device_array(r, 1.0f), *out = device_array(r / RBLOCK, 0.0f);
        reduce_interleaved<<<r / RBLOCK, RBLOCK>>>(in, out);
        reduce_strided<<<r / RBLOCK, RBLOCK>>>(in, out);
        reduce_sequential<<<r / RBLOCK, RBLOCK>>>(in, out);
        cudaDeviceSynchronize();
        cudaFree(in);
        cudaFree(out);
    }
    {
        const int m = 64;
        float *A = device_array(m * m, 1.0f), *B = device_array(m * m, 1.0f), *C = device_array(m * m, 0.0f);
        matmul_tiled<16><<<dim3(m / 16, m / 16), dim3(16, 16)>>>(A, B, C, m);
        matmul_tiled<32><<<dim3(m / 32, m / 32), dim3(32, 32)>>>(A, B, C, m);
        cudaDeviceSynchronize();
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}
#endif

// Runs Kernel 4 (kernels/attention_flash.cu, its kernel part, included by the test as
// flash_kernel.inc) on random inputs for several N, against attention computed in double:
// prints "N max|O - O_ref| max|lse - lse_ref|" per line.
#include "cuda_on_cpu.h"
#include <cstdio>
#include <random>
#include "flash_kernel.inc"

int main() {
    constexpr int D = 128, BR = 128, BC = 64, THREADS = 2 * BR;   // the launcher's sizes
    for (int N : {1, 63, 64, 65, 129, 300}) {
        std::mt19937 rng(N);
        std::normal_distribution<float> normal(0.f, 1.f);
        std::vector<__half> Q(N * D), K(N * D), V(N * D), O(N * D);
        std::vector<float> lse(N);
        for (auto* m : {&Q, &K, &V})
            for (auto& x : *m) x = __float2half(normal(rng));
        const float scale = 1.0f / std::sqrt((float)D);
        launch((N + BR - 1) / BR, THREADS, [&] {
            attention_flash<D, BR, BC, THREADS>(Q.data(), K.data(), V.data(), O.data(), lse.data(), N, scale);
        });
        double worst_o = 0, worst_lse = 0;
        for (int i = 0; i < N; ++i) {
            std::vector<double> p(N);
            double mx = -INFINITY, l = 0;
            for (int j = 0; j < N; ++j) {
                double dot = 0;
                for (int c = 0; c < D; ++c) dot += (double)Q[i * D + c].f * K[j * D + c].f;
                p[j] = dot * scale;
                mx = std::max(mx, p[j]);
            }
            for (int j = 0; j < N; ++j) { p[j] = std::exp(p[j] - mx); l += p[j]; }
            for (int c = 0; c < D; ++c) {
                double o = 0;
                for (int j = 0; j < N; ++j) o += p[j] * V[j * D + c].f;
                worst_o = std::max(worst_o, std::fabs(o / l - O[i * D + c].f));
            }
            worst_lse = std::max(worst_lse, std::fabs(mx + std::log(l) - lse[i]));
        }
        std::printf("%d %.3g %.3g\n", N, worst_o, worst_lse);
    }
}

// Runs one of Kernels 1-3 (kernels/attention_{naive,per_output,tiled}.cu, whole, host launcher
// included, as the test rewrote it into kernel.inc) through its launcher, on random inputs, for the
// sizes given on the command line as N:d pairs, against attention computed in double: prints
// "N d launch-error max|O - O_ref| max|P - P_ref|" per line.
#include "cuda_on_cpu.h"
#include <cstdio>
#include <cstdlib>
#include <random>
#include "kernel.inc"

#ifndef LAUNCH
#error "LAUNCH names the kernel's host launcher"
#endif

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);     // each size's line as soon as it is done
    for (int a = 1; a < argc; ++a) {
        int N = 0, d = 0;
        std::sscanf(argv[a], "%d:%d", &N, &d);
        std::mt19937 rng(N * 1000 + d);
        std::normal_distribution<float> normal(0.f, 1.f);
        std::vector<__half> Q(N * d), K(N * d), V(N * d), O(N * d, __half{NAN});
        std::vector<__half> S((size_t)N * N, __half{NAN}), P((size_t)N * N, __half{NAN});
        for (auto* m : {&Q, &K, &V})
            for (auto& x : *m) x = __float2half(normal(rng));
        const int err = LAUNCH(Q.data(), K.data(), V.data(), S.data(), P.data(), O.data(), N, d, nullptr);
        double worst_o = 0, worst_p = 0;
        const double scale = 1.0 / std::sqrt((double)d);
        for (int i = 0; i < N; ++i) {
            std::vector<double> p(N);
            double mx = -INFINITY, l = 0;
            for (int j = 0; j < N; ++j) {
                double dot = 0;
                for (int c = 0; c < d; ++c) dot += (double)Q[i * d + c].f * K[j * d + c].f;
                p[j] = dot * scale;
                mx = std::max(mx, p[j]);
            }
            for (int j = 0; j < N; ++j) { p[j] = std::exp(p[j] - mx); l += p[j]; }
            for (int j = 0; j < N; ++j) {
                const double got = P[(size_t)i * N + j].f;     // NaN (never written) fails the check
                worst_p = std::isnan(got) ? INFINITY : std::max(worst_p, std::fabs(p[j] / l - got));
            }
            for (int c = 0; c < d; ++c) {
                double o = 0;
                for (int j = 0; j < N; ++j) o += p[j] * V[j * d + c].f;
                const double got = O[i * d + c].f;
                worst_o = std::isnan(got) ? INFINITY : std::max(worst_o, std::fabs(o / l - got));
            }
        }
        std::printf("%d %d %d %.3g %.3g\n", N, d, err, worst_o, worst_p);
    }
}

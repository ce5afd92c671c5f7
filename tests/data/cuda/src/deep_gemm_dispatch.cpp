// servewise test fixture: a host-only imitation of DeepGEMM's JIT dispatcher.
//
// DeepGEMM ships no fatbin.  It compiles kernels at run time from headers such as
// deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh and picks them with
// `arch_major` checks, so its only architecture evidence is host strings and
// symbol names.  Built twice by scripts/build_cuda_fixtures.sh:
//   -DSW_WITH_SM120 -DSW_DG_HASH='"a6b593d2"'  -> libdispatch_with_sm120.so
//                   -DSW_DG_HASH='"f5a76426"'  -> libdispatch_without_sm120.so
// The list of names here is mirrored in the build script's expected.json step:
// change both together.  -DSW_PYINIT=deep_gemm_cpp adds the PyInit_ export of a
// Python extension module (standalone DeepGEMM's deep_gemm_cpp layout).
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#ifndef SW_DG_HASH
#error "define SW_DG_HASH"
#endif

#define SW_EXPORT extern "C" __attribute__((visibility("default"), used, noinline))
#define SW_ASSERT(cond)                                                              \
    do {                                                                             \
        if (!(cond))                                                                 \
            throw std::runtime_error(std::string("Assertion error (deepgemm "        \
                                                 "csrc/jit_kernels/heuristics.hpp): ") \
                                     + #cond);                                       \
    } while (0)

extern "C" __attribute__((visibility("default"), used))
const char deep_gemm_version[] = "DeepGEMM " SW_DG_HASH;

// Kernel names the JIT compiles; the impl header for each is NAME.cuh.
extern "C" __attribute__((visibility("default"), used))
const char *const deep_gemm_kernel_names[] = {
    "sm90_fp8_gemm_1d2d",
    "sm90_fp8_gemm_1d1d",
    "sm90_bf16_gemm",
    "sm90_fp8_mqa_logits",
    "sm100_fp8_fp4_gemm_1d1d",
    "sm100_fp8_gemm_1d1d",
    "sm100_bf16_gemm",
    "sm100_fp8_mqa_logits",
    "sm100_tf32_hc_prenorm_gemm",
#ifdef SW_WITH_SM120
    "sm120_fp8_fp4_gemm_1d1d",
    "sm120_fp8_gemm_1d1d",
    "sm120_bf16_gemm",
    "sm120_fp8_mqa_logits",
#endif
    nullptr,
};

extern "C" __attribute__((visibility("default"), used))
const char *const deep_gemm_nvcc_flags[] = {
    "-gencode=arch=compute_90a,code=sm_90a",
    "-gencode=arch=compute_100f,code=sm_100f",
#ifdef SW_WITH_SM120
    "-gencode=arch=compute_120f,code=sm_120f",
#endif
    nullptr,
};

static int sw_jit(const char *name, int arch_major) {
    std::printf("#include <deep_gemm/impls/%s.cuh> // arch_major=%d\n", name, arch_major);
    return static_cast<int>(std::strlen(name));
}

// C entry points named after the kernels, one per name above.
SW_EXPORT int sm90_fp8_gemm_1d2d(int a) { return sw_jit("sm90_fp8_gemm_1d2d", a); }
SW_EXPORT int sm90_fp8_gemm_1d1d(int a) { return sw_jit("sm90_fp8_gemm_1d1d", a); }
SW_EXPORT int sm90_bf16_gemm(int a) { return sw_jit("sm90_bf16_gemm", a); }
SW_EXPORT int sm90_fp8_mqa_logits(int a) { return sw_jit("sm90_fp8_mqa_logits", a); }
SW_EXPORT int sm100_fp8_fp4_gemm_1d1d(int a) { return sw_jit("sm100_fp8_fp4_gemm_1d1d", a); }
SW_EXPORT int sm100_fp8_gemm_1d1d(int a) { return sw_jit("sm100_fp8_gemm_1d1d", a); }
SW_EXPORT int sm100_bf16_gemm(int a) { return sw_jit("sm100_bf16_gemm", a); }
SW_EXPORT int sm100_fp8_mqa_logits(int a) { return sw_jit("sm100_fp8_mqa_logits", a); }
SW_EXPORT int sm100_tf32_hc_prenorm_gemm(int a) { return sw_jit("sm100_tf32_hc_prenorm_gemm", a); }
#ifdef SW_WITH_SM120
SW_EXPORT int sm120_fp8_fp4_gemm_1d1d(int a) { return sw_jit("sm120_fp8_fp4_gemm_1d1d", a); }
SW_EXPORT int sm120_fp8_gemm_1d1d(int a) { return sw_jit("sm120_fp8_gemm_1d1d", a); }
SW_EXPORT int sm120_bf16_gemm(int a) { return sw_jit("sm120_bf16_gemm", a); }
SW_EXPORT int sm120_fp8_mqa_logits(int a) { return sw_jit("sm120_fp8_mqa_logits", a); }
#endif

// C++ runtimes in a namespace: their mangled names carry SM90 / SM100 / SM120.
// Each checks the device's major compute capability (exported and not inlined,
// so the `arch_major == N` assert text survives optimisation).
namespace deep_gemm {

struct __attribute__((visibility("default"))) SM90FP8Gemm1D2DRuntime {
    __attribute__((noinline)) static int run(int arch_major, int m, int n, int k);
};
int SM90FP8Gemm1D2DRuntime::run(int arch_major, int m, int n, int k) {
    SW_ASSERT(arch_major == 9);
    return sm90_fp8_gemm_1d2d(m + n + k);
}

struct __attribute__((visibility("default"))) SM100FP8FP4Gemm1D1DRuntime {
    __attribute__((noinline)) static int run(int arch_major, int m, int n, int k);
};
int SM100FP8FP4Gemm1D1DRuntime::run(int arch_major, int m, int n, int k) {
    SW_ASSERT(arch_major == 10);
    return sm100_fp8_fp4_gemm_1d1d(m + n + k);
}

#ifdef SW_WITH_SM120
struct __attribute__((visibility("default"))) SM120FP8Gemm {
    __attribute__((noinline)) static int run(int arch_major, int m, int n, int k);
};
int SM120FP8Gemm::run(int arch_major, int m, int n, int k) {
    SW_ASSERT(arch_major == 12);
    return sm120_fp8_fp4_gemm_1d1d(m + n + k);
}
#endif

// The dispatcher: the fork that lost sm_120 has no branch for major 12, so
// SM120 GPUs fall through to "Unsupported architecture".
__attribute__((visibility("default"))) int fp8_gemm_nt(int arch_major, int m, int n, int k) {
    switch (arch_major) {
        case 9: return SM90FP8Gemm1D2DRuntime::run(arch_major, m, n, k);
        case 10: return SM100FP8FP4Gemm1D1DRuntime::run(arch_major, m, n, k);
#ifdef SW_WITH_SM120
        case 12: return SM120FP8Gemm::run(arch_major, m, n, k);
#endif
        default: throw std::runtime_error("Unsupported architecture");
    }
}

}  // namespace deep_gemm

#ifdef SW_PYINIT
#define SW_CAT_(a, b) a##b
#define SW_CAT(a, b) SW_CAT_(a, b)
extern "C" __attribute__((visibility("default"))) void *SW_CAT(PyInit_, SW_PYINIT)(void) {
    return nullptr;
}
#endif

// servewise test fixture: host code linked next to real SASS, carrying `sm100_`
// strings the way vllm 0.33's _C_stable_libtorch.abi3.so does.  A tool must not
// treat these strings as JIT-dispatch evidence when the library has its own cubins.
extern "C" __attribute__((visibility("default"), used))
const char *const sw_engine_kernel_tags[] = {
    "sm100_cutlass_scaled_mm_fp8",
    "sm100_cutlass_moe_mm",
    nullptr,
};

extern "C" __attribute__((visibility("default"))) int sw_engine_tag_count(void) {
    int n = 0;
    while (sw_engine_kernel_tags[n] != nullptr) ++n;
    return n;
}

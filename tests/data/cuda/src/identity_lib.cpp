// servewise test fixture: the host side of a library that says who it is.
//
// Real libraries identify themselves in their dynamic symbol table and strings:
// NCCL exports ncclCommInitRank and embeds "NCCL version 2.x.y+cudaX.Y", MSCCL++
// exports C++ names in namespace mscclpp, a Python extension module exports
// PyInit_<module>.  scripts/build_cuda_fixtures.sh links this file (next to
// saxpy.cu for GPU code) with one set of the macros below and -soname:
//   SW_NS        C++ namespace of the exported runtime class      (mscclpp)
//   SW_NS2       a second namespace, for a library embedding another one
//   SW_C_PREFIX  prefix of exported C functions                   (nccl)
//   SW_PYINIT    Python extension module name: exports PyInit_<name>
//   SW_VERSION   an embedded version string                       ("NCCL version 2.27.3")
#include <cstddef>

#define SW_CAT_(a, b) a##b
#define SW_CAT(a, b) SW_CAT_(a, b)
#define SW_EXPORT __attribute__((visibility("default")))

#ifdef SW_NS
namespace SW_NS {
struct SW_EXPORT Communicator {
    __attribute__((noinline)) int rank() const;
    __attribute__((noinline)) int size() const;
};
int Communicator::rank() const { return 0; }
int Communicator::size() const { return 1; }
SW_EXPORT int version() { return 1; }
}  // namespace SW_NS
#endif

#ifdef SW_NS2
namespace SW_NS2 {
SW_EXPORT __attribute__((noinline)) int embedded_all_reduce(int x) { return x; }
}  // namespace SW_NS2
#endif

#ifdef SW_C_PREFIX
extern "C" {
SW_EXPORT int SW_CAT(SW_C_PREFIX, CommInitRank)(void **comm, int n, int rank) {
    *comm = nullptr;
    return n + rank;
}
SW_EXPORT int SW_CAT(SW_C_PREFIX, AllReduce)(const void *in, void *out, std::size_t n) {
    return in == out ? 0 : static_cast<int>(n);
}
SW_EXPORT int SW_CAT(SW_C_PREFIX, GetVersion)(int *version) {
    *version = 22703;
    return 0;
}
}
#endif

#ifdef SW_PYINIT
extern "C" SW_EXPORT void *SW_CAT(PyInit_, SW_PYINIT)(void) { return nullptr; }
#endif

#ifdef SW_VERSION
extern "C" SW_EXPORT __attribute__((used)) const char sw_version_string[] = SW_VERSION;
#endif

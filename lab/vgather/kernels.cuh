// The kernels the lab times (included by crate.cu): main's gather
// (gather_main.cu, written by base-kernel.sh from git) and the working
// tree's kernels/gather.cu, both of its entry points (the block gather and
// the warp gather), each in a namespace of its own with its entry points
// renamed.
#define fastpair_values k_main
namespace km {
#include "gather_main.cu"
}
#undef fastpair_values
#undef VT_THREADS
#undef VT_STAGE_ALLOC

#define FP_VT_WB 1024
#define fastpair_values k_new
#define fastpair_values_w k_neww
namespace kn {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef fastpair_values_w

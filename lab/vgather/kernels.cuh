// The kernels the lab times (included by crate.cu): main's gather (a
// copy) and the working tree's kernels/gather.cu at several warp-staging
// sizes and with its lab knobs (FP_VT_MINB, FP_VT_TRIM, FP_VT_PRELOAD), each
// in a namespace of its own with its entry point renamed.
#define fastpair_values k_main
namespace km {
#include "gather_main.cu"
}
#undef fastpair_values
#undef VT_THREADS
#undef VT_STAGE_ALLOC

#define FP_VT_WB 512
#define fastpair_values k_w512
namespace w512 {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef FP_VT_WB
#undef FP_VT_TRIM
#undef FP_VT_PRELOAD
#undef FP_VT_MINB
#undef VT_THREADS
#undef VT_WARPS
#undef VT_WB_ALLOC

#define FP_VT_WB 1024
#define fastpair_values k_w1024
namespace w1024 {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef FP_VT_WB
#undef FP_VT_TRIM
#undef FP_VT_PRELOAD
#undef FP_VT_MINB
#undef VT_THREADS
#undef VT_WARPS
#undef VT_WB_ALLOC

#define FP_VT_WB 2048
#define fastpair_values k_w2048
namespace w2048 {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef FP_VT_WB
#undef FP_VT_TRIM
#undef FP_VT_PRELOAD
#undef FP_VT_MINB
#undef VT_THREADS
#undef VT_WARPS
#undef VT_WB_ALLOC

#define FP_VT_WB 1024
#define FP_VT_MINB 1
#define fastpair_values k_w1024b1
namespace w1024b1 {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef FP_VT_WB
#undef FP_VT_TRIM
#undef FP_VT_PRELOAD
#undef FP_VT_MINB
#undef VT_THREADS
#undef VT_WARPS
#undef VT_WB_ALLOC

#define FP_VT_WB 1024
#define FP_VT_MINB 6
#define fastpair_values k_w1024b6
namespace w1024b6 {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef FP_VT_WB
#undef FP_VT_TRIM
#undef FP_VT_PRELOAD
#undef FP_VT_MINB
#undef VT_THREADS
#undef VT_WARPS
#undef VT_WB_ALLOC

#define FP_VT_WB 1024
#define FP_VT_MINB 8
#define fastpair_values k_w1024b8
namespace w1024b8 {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef FP_VT_WB
#undef FP_VT_TRIM
#undef FP_VT_PRELOAD
#undef FP_VT_MINB
#undef VT_THREADS
#undef VT_WARPS
#undef VT_WB_ALLOC

#define FP_VT_WB 1024
#define FP_VT_PRELOAD 0
#define fastpair_values k_w1024np
namespace w1024np {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef FP_VT_WB
#undef FP_VT_TRIM
#undef FP_VT_PRELOAD
#undef FP_VT_MINB
#undef VT_THREADS
#undef VT_WARPS
#undef VT_WB_ALLOC

#define FP_VT_WB 1024
#define FP_VT_PRELOAD 0
#define FP_VT_TRIM 0
#define fastpair_values k_w1024nt
namespace w1024nt {
#include "../../kernels/gather.cu"
}
#undef fastpair_values
#undef FP_VT_WB
#undef FP_VT_TRIM
#undef FP_VT_PRELOAD
#undef FP_VT_MINB
#undef VT_THREADS
#undef VT_WARPS
#undef VT_WB_ALLOC

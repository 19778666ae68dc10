# Block annotations of several value types.
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    for i, k in T.grid(64, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            T.block_attr({"meta_schedule.cooperative_fetch": 4, "meta_schedule.tiling_structure": "SSRSRS", "software_pipeline_stage": [0, 0, 1], "flag": True, "ratio": 0.5})
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]

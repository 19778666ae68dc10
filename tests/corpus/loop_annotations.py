# Loops carrying annotations (auto-unroll pragma, pipeline stages).
@T.prim_func
def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32")):
    for i in T.serial(256, annotations={"pragma_auto_unroll_max_step": 64, "pragma_unroll_explicit": 1}):
        for j in T.serial(0, 256, annotations={"software_pipeline_order": [0, 1, 2], "software_pipeline_stage": [0, 0, 1]}):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] + T.float32(1)

# Scheduled transpose through a padded 32x33 shared-memory tile.
@T.prim_func
def main(A: T.Buffer((2048, 2048), "float32"), B: T.Buffer((2048, 2048), "float32")):
    T.func_attr({"tir.noalias": True})
    for by in T.thread_binding(64, thread="blockIdx.y"):
        for bx in T.thread_binding(64, thread="blockIdx.x"):
            with T.block("tile"):
                vby, vbx = T.axis.remap("SS", [by, bx])
                T.reads(A[vby * 32:vby * 32 + 32, vbx * 32:vbx * 32 + 32])
                T.writes(B[vbx * 32:vbx * 32 + 32, vby * 32:vby * 32 + 32])
                tile = T.alloc_buffer((32, 33), scope="shared")
                for ty in T.thread_binding(8, thread="threadIdx.y"):
                    for tx in T.thread_binding(32, thread="threadIdx.x"):
                        for r in T.unroll(4):
                            with T.block("load"):
                                vy = T.axis.spatial(32, r * 8 + ty)
                                vx = T.axis.spatial(32, tx)
                                T.reads(A[vby * 32 + vy, vbx * 32 + vx])
                                T.writes(tile[vy, vx])
                                tile[vy, vx] = A[vby * 32 + vy, vbx * 32 + vx]
                for ty in T.thread_binding(8, thread="threadIdx.y"):
                    for tx in T.thread_binding(32, thread="threadIdx.x"):
                        for r in T.unroll(4):
                            with T.block("store"):
                                vy = T.axis.spatial(32, r * 8 + ty)
                                vx = T.axis.spatial(32, tx)
                                T.reads(tile[vx, vy])
                                T.writes(B[vbx * 32 + vy, vby * 32 + vx])
                                B[vbx * 32 + vy, vby * 32 + vx] = tile[vx, vy]

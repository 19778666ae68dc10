@T.prim_func
def main(A: T.Buffer((128,), "float32"):
	pass
  x = $

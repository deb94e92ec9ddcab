import sys, faulthandler, numpy as np, stagepy
faulthandler.enable()
def f(A, B):
    for i in range(A.shape[0]):
        B[i] = A[i] * 2.0 + 1.0
A = np.arange(4096.0); B = np.zeros(4096)
stagepy.set_target(sys.argv[1])
stagepy.enable()
f(A, B); f(A, B)
stagepy.disable()
print(sys.argv[1], "ok", B[:3], stagepy.gpu_info()["launches"], [r["status"] for r in stagepy.report()], flush=True)

"""CUDA-event timing shared by the device measurement scripts (attention_backends.py, moe_gemm_shapes.py)."""
import torch


def event_times_ms(fn, reps, warm):
    """`warm` untimed calls, then `reps` calls each between two CUDA events; the times in ms."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return ts

#!/usr/bin/env python3
"""PyTorch baselines for the CUDA backend's benchmarks, run on the
GPU machine: attention forward with torch SDPA (FlashAttention backend) in
TFLOP/s, a sigmoid attention written in PyTorch, a SelectiveScan token loop
in GB/s, and a chunked Retention. Prints one line per case; compare with
seqrt_cuda_kernel_bench's lines (bench/cuda/README.md).

Usage: python3 torch_reference.py [--quick]
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F


def timed(fn, repeat):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeat


def attention_flops(b, h, t, d, causal):
    flops = 4.0 * b * h * t * t * d  # QK^T and PV
    return flops / 2 if causal else flops


def bench_attention(quick):
    lengths = [1024, 4096] if quick else [1024, 4096, 16384]
    for t in lengths:
        for d in (64, 128):
            h = 2048 // d  # model width 2048
            b = max(1, 16384 // t)  # B*T = 16k tokens
            q, k, v = (torch.randn(b, h, t, d, device="cuda",
                                   dtype=torch.float16) for _ in range(3))
            for causal in (False, True):
                with torch.nn.attention.sdpa_kernel(
                        torch.nn.attention.SDPBackend.FLASH_ATTENTION):
                    s = timed(lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal), 10)
                print(f"sdpa T={t} d={d} causal={int(causal)}: {s * 1e3:.3f} ms "
                      f"{attention_flops(b, h, t, d, causal) / s / 1e12:.1f} TFLOP/s")
            if t <= 4096:
                bias = -math.log(t)
                sig = lambda: torch.sigmoid(
                    (q @ k.transpose(-1, -2)) / math.sqrt(d) + bias) @ v
                s = timed(sig, 5)
                print(f"torch sigmoid attention T={t} d={d}: {s * 1e3:.3f} ms "
                      f"{attention_flops(b, h, t, d, False) / s / 1e12:.1f} TFLOP/s")


def bench_selective_scan(quick):
    b, dim, n, length = (1 if quick else 8), 5120, 16, 2048
    u, delta, z = (torch.randn(b, dim, length, device="cuda") for _ in range(3))
    a = -torch.rand(dim, n, device="cuda")
    bm, cm = (torch.randn(b, 1, n, length, device="cuda") for _ in range(2))

    def scan():
        dt = F.softplus(delta)
        h = torch.zeros(b, dim, n, device="cuda")
        ys = []
        for t in range(length):
            h = torch.exp(dt[:, :, t, None] * a) * h + \
                dt[:, :, t, None] * bm[:, :, :, t] * u[:, :, t, None]
            ys.append((h * cm[:, :, :, t]).sum(-1))
        return torch.stack(ys, -1) * F.silu(z)

    s = timed(scan, 1)
    moved = 4.0 * (4 * b * dim * length + 2 * b * n * length)
    print(f"torch SelectiveScan loop B={b}: {s * 1e3:.1f} ms "
          f"{moved / s / 1e9:.1f} GB/s")


def bench_retention(quick):
    b, h, t, dk, chunk = 1, 16, (1024 if quick else 4096), 128, 64
    q, k, v = (torch.randn(b, h, t, dk, device="cuda") for _ in range(3))
    gamma = 1 - 2.0 ** (-5 - torch.arange(h, device="cuda", dtype=torch.float32))

    def chunked():
        idx = torch.arange(chunk, device="cuda", dtype=torch.float32)
        diff = (idx[:, None] - idx[None, :]).clamp(min=0)
        decay = gamma[:, None, None] ** diff * (idx[:, None] >= idx[None, :])
        state = torch.zeros(b, h, dk, dk, device="cuda")
        out = []
        for c in range(0, t, chunk):
            qc, kc, vc = q[:, :, c:c + chunk], k[:, :, c:c + chunk], v[:, :, c:c + chunk]
            inner = ((qc @ kc.transpose(-1, -2)) * decay) @ vc
            cross = (qc * (gamma[:, None, None] ** (idx[:, None] + 1))) @ state
            out.append(inner + cross)
            tail = gamma[:, None, None] ** (chunk - 1 - idx)[:, None]
            state = gamma[:, None, None] ** chunk * state + (kc * tail).transpose(-1, -2) @ vc
        return torch.cat(out, 2)

    s = timed(chunked, 3)
    print(f"torch Retention chunked T={t} H={h} d={dk}: {s * 1e3:.2f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    bench_attention(args.quick)
    bench_selective_scan(args.quick)
    bench_retention(args.quick)


if __name__ == "__main__":
    main()

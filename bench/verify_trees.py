"""The speculative-verify trees of bench_decode.py and probe_verify_splits.py:
Lq drafts per sequence, a random tree over them (each draft's parent an
earlier draft or the cache) appended after the cache's L - Lq committed
entries, as examples/tree_verify.mlir takes it (an ancestor bitmask of 32-bit
words per draft, and the cache length) and as SDPA's boolean mask."""
import torch


def random_tree(B, Lq, L, device):
    """(words [B, Lq, 2] int32, cache_len [B] int32, allowed [B, 1, Lq, L]
    bool) for B sequences, seeded by Lq."""
    gen = torch.Generator().manual_seed(Lq)
    cache = L - Lq
    ancestors = torch.zeros(B, Lq, 2, dtype=torch.int64)
    allowed = torch.zeros(B, 1, Lq, L, dtype=torch.bool)
    allowed[:, :, :, :cache] = True
    for b in range(B):
        parent = [int(torch.randint(-1, i, (1,), generator=gen)) for i in range(Lq)]
        for i in range(Lq):
            j = i
            while j >= 0:
                ancestors[b, i, j // 32] |= 1 << (j % 32)
                allowed[b, 0, i, cache + j] = True
                j = parent[j]
    words = torch.where(ancestors >= 2**31, ancestors - 2**32, ancestors).to(torch.int32).to(device)
    cache_len = torch.full((B,), cache, dtype=torch.int32, device=device)
    return words, cache_len, allowed.to(device)

"""Prints the attn text kiln.mods makes of a few Python mods (for FileCheck
and kiln-opt in flex-translate.test), then the message for an unsupported op."""
import sys

import torch

import kiln
from kiln import mods

which = sys.argv[1]
slopes = torch.ones(4)
table = torch.zeros(4, 8, dtype=torch.float64)
docs = torch.zeros(40, dtype=torch.int32)


def softcap_alibi(score, b, h, q_idx, kv_idx):
    return torch.tanh(score / 20.0) * 20.0 + slopes[h] * (kv_idx - q_idx)


def documents(b, h, q_idx, kv_idx):
    return (docs[q_idx] == docs[kv_idx]) & ~(kv_idx > q_idx)


def buckets(score, b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, score + table[h, (kv_idx - q_idx) % 8], -float("inf"))


if which == "score-and-mask":
    print(mods.variant_text(softcap_alibi, documents, 64, 64, torch.bfloat16)[0])
elif which == "table":
    print(mods.variant_text(buckets, None, 128, 64, torch.float16, scale=0.1, gqa_group=4)[0])
else:
    try:
        mods.variant_text(lambda s, b, h, q, kv: torch.sigmoid(s), None, 64, 64, torch.bfloat16)
    except kiln.KilnError as e:
        print(e)

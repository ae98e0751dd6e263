#!/usr/bin/env python3
"""The oddshapes probe's cases (probe.sh): KernelBench-format modules at unfriendly shapes, one
table row each - name, what it probes, an __init__ statement (a module with parameters) or None,
forward's arguments, forward's return expression, get_inputs()'s list. Writes the module files:
    python3 bench/import/oddshapes/cases.py DIR [CASE...]     (default: every case)
    python3 bench/import/oddshapes/cases.py --list
"""
import os
import sys

CASES = [
    ('e01_chain_7x13x17',
     'element-wise chain on 7x13x17 = 1547 elements',
     None, 'x',
     'torch.sigmoid(x * 2.0 + 1.0) * x',
     '[torch.randn(7, 13, 17)]'),
    ('e02_chain_bf16_odd',
     'bf16 element-wise chain on 3x1001',
     None, 'x',
     'torch.nn.functional.gelu(x) + 1.0',
     '[torch.randn(3, 1001, dtype=torch.bfloat16)]'),
    ('e03_one_element',
     'sigmoid of a 1-element tensor',
     None, 'x',
     'torch.sigmoid(x)',
     '[torch.randn(1)]'),
    ('e04_add_broadcast_odd',
     'x + y with a row broadcast, odd sizes',
     None, 'x, y',
     'torch.relu(x + y)',
     '[torch.randn(999, 37), torch.randn(37)]'),
    ('e05_one_element_2d',
     'softmax and tanh chains on a 1x1 tensor',
     None, 'x',
     'torch.tanh(torch.softmax(x, dim=1))',
     '[torch.randn(1, 1)]'),
    ('g01_linear_odd',
     'nn.Linear 999 -> 1001 on 1000 rows (f32: rows of 999 floats, 4-byte aligned)',
     'self.fc = nn.Linear(999, 1001)', 'x',
     'self.fc(x)',
     '[torch.randn(1000, 999)]'),
    ('g02_matmul_odd',
     'torch.matmul 1000x999 @ 999x1001 (f32)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(1000, 999), torch.randn(999, 1001)]'),
    ('g03_matmul_k7',
     'torch.matmul with K = 7 (f32 rows of 28 bytes)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(1024, 7), torch.randn(7, 512)]'),
    ('g04_matmul_n1',
     'torch.matmul with N = 1 (a matrix-vector product, f32)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(1000, 999), torch.randn(999, 1)]'),
    ('g05_matmul_m1',
     'torch.matmul with M = 1 (f32)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(1, 999), torch.randn(999, 1001)]'),
    ('g06_bmm_b1',
     'torch.bmm with batch 1 and odd M, K, N (f32)',
     None, 'a, b',
     'torch.bmm(a, b)',
     '[torch.randn(1, 127, 65), torch.randn(1, 65, 33)]'),
    ('g07_bmm_odd',
     'torch.bmm batch 3, 100x37 @ 37x51 (f32)',
     None, 'a, b',
     'torch.bmm(a, b)',
     '[torch.randn(3, 100, 37), torch.randn(3, 37, 51)]'),
    ('g08_matmul_bf16_k1001',
     'bf16 torch.matmul with K = 1001 (rows of 2002 bytes: neither 16- nor 4-byte aligned)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(512, 1001, dtype=torch.bfloat16), torch.randn(1001, 1024, '
     'dtype=torch.bfloat16)]'),
    ('g09_matmul_bf16_k1004',
     'bf16 torch.matmul with K = 1004 and N = 1020 (rows 8-byte aligned, not 16: no TMA)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(512, 1004, dtype=torch.bfloat16), torch.randn(1004, 1020, '
     'dtype=torch.bfloat16)]'),
    ('g10_matmul_f16_n1001',
     'fp16 torch.matmul with N = 1001 (B and C rows of 2002 bytes)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(256, 512, dtype=torch.float16), torch.randn(512, 1001, dtype=torch.float16)]'),
    ('g11_linear_relu_odd',
     'nn.Linear 1001 -> 999 then ReLU on 7 rows (f32)',
     'self.fc = nn.Linear(1001, 999)', 'x',
     'torch.relu(self.fc(x))',
     '[torch.randn(7, 1001)]'),
    ('g12_matmul_bt_f16_n1001',
     "fp16 A @ B.T with K = 1024 (A and B rows 16-byte aligned) and N = 1001: only the output's "
     'rows (2002 bytes) are misaligned.',
     None, 'a, b',
     'torch.matmul(a, b.T)',
     '[torch.randn(256, 1024, dtype=torch.float16), torch.randn(1001, 1024, dtype=torch.float16)]'),
    ('g13_matmul_odd_large',
     'torch.matmul 2000x1999 @ 1999x2001 (f32, enough tiles for the Hopper staged 3xTF32 path)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(2000, 1999), torch.randn(1999, 2001)]'),
    ('g14_outer_k1',
     'torch.matmul with K = 1 (an outer product, f32 rows of 4 bytes)',
     None, 'a, b',
     'torch.matmul(a, b)',
     '[torch.randn(333, 1), torch.randn(1, 517)]'),
    ('g15_linear_bf16_k1001',
     'bf16 nn.Linear 1001 -> 513 with bias on 77 rows (x and weight rows of 2002 bytes)',
     'self.fc = nn.Linear(1001, 513, dtype=torch.bfloat16)', 'x',
     'torch.nn.functional.gelu(self.fc(x))',
     '[torch.randn(77, 1001, dtype=torch.bfloat16)]'),
    ('k01_softmax_16x16384',
     'KernelBench level 1 softmax: batch 16, dim 16384',
     None, 'x',
     'torch.softmax(x, dim=1)',
     '[torch.randn(16, 16384)]'),
    ('k02_relu_16x16384',
     'KernelBench level 1 ReLU: batch 16, dim 16384',
     None, 'x',
     'torch.relu(x)',
     '[torch.randn(16, 16384)]'),
    ('k03_sum_16x256x256',
     'KernelBench level 1 sum over dim 1: 16 x 256 x 256',
     None, 'x',
     'torch.sum(x, dim=1, keepdim=True)',
     '[torch.randn(16, 256, 256)]'),
    ('k04_layernorm_16x16384',
     'layer_norm over 16384 on batch 16',
     'self.ln = nn.LayerNorm(16384)', 'x',
     'self.ln(x)',
     '[torch.randn(16, 16384)]'),
    ('r01_softmax_len1',
     'softmax over rows of length 1',
     None, 'x',
     'torch.softmax(x, dim=1)',
     '[torch.randn(1000, 1)]'),
    ('r02_softmax_len3',
     'softmax over rows of length 3',
     None, 'x',
     'torch.softmax(x, dim=1)',
     '[torch.randn(4097, 3)]'),
    ('r03_softmax_len1023',
     'softmax over rows of length 1023',
     None, 'x',
     'torch.softmax(x, dim=-1)',
     '[torch.randn(129, 1023)]'),
    ('r04_softmax_len100003',
     'softmax over rows of length 100003 (prime)',
     None, 'x',
     'torch.softmax(x, dim=1)',
     '[torch.randn(5, 100003)]'),
    ('r05_softmax_bf16_len1023',
     'bf16 softmax over rows of 1023 (2046 bytes: no 16-byte vectors)',
     None, 'x',
     'torch.softmax(x, dim=1)',
     '[torch.randn(64, 1023, dtype=torch.bfloat16)]'),
    ('r06_layernorm_len3',
     'layer_norm over a trailing dim of 3',
     'self.ln = nn.LayerNorm(3)', 'x',
     'self.ln(x)',
     '[torch.randn(1001, 3)]'),
    ('r07_layernorm_len1023',
     'layer_norm over a trailing dim of 1023',
     'self.ln = nn.LayerNorm(1023)', 'x',
     'self.ln(x)',
     '[torch.randn(33, 1023)]'),
    ('r08_layernorm_bf16_len1001',
     'bf16 layer_norm (no affine) over rows of 1001',
     None, 'x',
     'torch.nn.functional.layer_norm(x, (1001,))',
     '[torch.randn(65, 1001, dtype=torch.bfloat16)]'),
    ('r09_sum_len1',
     'sum over a dim of length 1',
     None, 'x',
     'torch.sum(x, dim=1)',
     '[torch.randn(999, 1)]'),
    ('r10_sum_len100003',
     'sum over rows of 100003',
     None, 'x',
     'torch.sum(x, dim=1)',
     '[torch.randn(3, 100003)]'),
    ('r11_sum_dim0_3d',
     'sum over dim 0 of a 3-D tensor with odd dims',
     None, 'x',
     'torch.sum(x, dim=0)',
     '[torch.randn(5, 7, 9)]'),
    ('r12_mean_dim0_3d',
     'mean over dim 0 of a 3-D tensor',
     None, 'x',
     'torch.mean(x, dim=0)',
     '[torch.randn(17, 33, 65)]'),
    ('r13_max_dim1_3d',
     'max over the middle dim of a 3-D tensor (odd dims)',
     None, 'x',
     'torch.max(x, dim=1)[0]',
     '[torch.randn(7, 13, 17)]'),
    ('r14_sum_bf16_len1001',
     'bf16 sum over rows of 1001',
     None, 'x',
     'torch.sum(x, dim=-1)',
     '[torch.randn(31, 1001, dtype=torch.bfloat16)]'),
    ('r15_sum_dim0_16x7x9',
     'sum over dim 0 (extent 16, a multiple of 4) of a 16x7x9 tensor: the kept 63 columns are '
     'odd, so no vector of 4 fits a column.',
     None, 'x',
     'torch.sum(x, dim=0)',
     '[torch.randn(16, 7, 9)]'),
    ('r16_sum_all_odd',
     'sum of all 7x13x17 elements (a 0-d output)',
     None, 'x',
     'torch.sum(x)',
     '[torch.randn(7, 13, 17)]'),
    ('r17_amax_dim0_1001x3',
     'max over dim 0 of a 1001x3 matrix (a column reduction over an odd extent)',
     None, 'x',
     'torch.amax(x, dim=0)',
     '[torch.randn(1001, 3)]'),
    ('c01_conv_c3_k7_odd',
     'nn.Conv2d 3 -> 7 channels, 3x3, with bias, on odd 31x29 images (C = 3: channels padded)',
     'self.conv = nn.Conv2d(3, 7, 3)', 'x',
     'self.conv(x)',
     '[torch.randn(2, 3, 31, 29)]'),
    ('c02_conv_stride2_pad1_odd',
     'nn.Conv2d 5 -> 16, 3x3, stride 2, padding 1, no bias, on 33x17 images, then relu',
     'self.conv = nn.Conv2d(5, 16, 3, stride=2, padding=1, bias=False)', 'x',
     'torch.relu(self.conv(x))',
     '[torch.randn(3, 5, 33, 17)]'),
    ('c03_conv_1x1_batch1',
     'pointwise nn.Conv2d 13 -> 9 (1x1 kernel) on one 7x11 image',
     'self.conv = nn.Conv2d(13, 9, 1)', 'x',
     'self.conv(x)',
     "[torch.randn(1, 13, 7, 11)]"),
    ('c04_conv_same_dilated',
     "nn.Conv2d 8 -> 8, 3x3, padding='same', dilation 2 (y keeps x's 15x15), plus x",
     "self.conv = nn.Conv2d(8, 8, 3, padding='same', dilation=2)", 'x',
     'self.conv(x) + x',
     '[torch.randn(4, 8, 15, 15)]'),
    ('c05_conv_kernel_covers_input',
     'nn.Conv2d 4 -> 6 with a 5x5 kernel on 5x5 images: a 1x1 output',
     'self.conv = nn.Conv2d(4, 6, 5)', 'x',
     'self.conv(x)',
     '[torch.randn(2, 4, 5, 5)]'),
    ('c06_conv_rect_kernel',
     'nn.Conv2d 3 -> 16 with a 1x7 kernel, stride (1, 2), padding (0, 3) on 9x50 images',
     'self.conv = nn.Conv2d(3, 16, (1, 7), stride=(1, 2), padding=(0, 3))', 'x',
     'self.conv(x)',
     '[torch.randn(2, 3, 9, 50)]'),
    ('c07_conv_grouped',
     'grouped nn.Conv2d 8 -> 8, groups 2: imports; the lowering refuses grouped convolution',
     'self.conv = nn.Conv2d(8, 8, 3, groups=2)', 'x',
     'self.conv(x)',
     '[torch.randn(2, 8, 12, 12)]'),
    ('c08_conv_bf16',
     'bf16 nn.Conv2d 3 -> 8, 3x3, on 17x17 images',
     'self.conv = nn.Conv2d(3, 8, 3).to(torch.bfloat16)', 'x',
     'self.conv(x)',
     '[torch.randn(2, 3, 17, 17, dtype=torch.bfloat16)]'),
]

TEMPLATE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """{doc}"""

    def __init__(self):
        super().__init__()
        {init}

    def forward(self, {args}):
        return {ret}


def get_inputs():
    return {inputs}


def get_init_inputs():
    return []
'''


def module_text(case):
    _, doc, init, args, ret, inputs = case
    return TEMPLATE.format(doc=doc, init=init or "pass", args=args, ret=ret, inputs=inputs)


def main(argv):
    names = [c[0] for c in CASES]
    if argv[:1] == ["--list"]:
        print("\n".join(names))
        return 0
    if not argv:
        sys.exit("usage: cases.py DIR [CASE...] | --list")
    out, want = argv[0], argv[1:] or names
    unknown = sorted(set(want) - set(names))
    if unknown:
        sys.exit(f"cases.py: no case {', '.join(unknown)} (--list names them)")
    os.makedirs(out, exist_ok=True)
    for case in CASES:
        if case[0] in want:
            with open(os.path.join(out, case[0] + ".py"), "w") as f:
                f.write(module_text(case))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""tests/onnx/make_xformer.py - the ONNX files of tests/test_cli_xformer.sh,
exported by PyTorch's TorchScript exporter (torch.onnx.export(...,
dynamo=False), opset 14, random weights, seed 0): what the fusion rules
of the normalization and activation modules must recognize.

    python3 tests/onnx/make_xformer.py OUT_DIR

  ln14.onnx          nn.LayerNorm(8) of a [2, 3, 8] input
  gelu14.onnx        F.gelu of a [2, 3, 8] input
  tiny_bert14.onnx   transformers' BertModel of a tiny BertConfig (hidden
                     32, 2 layers, 2 heads, intermediate 64, vocabulary
                     100), input_ids and attention_mask of runtime batch
                     and sequence: decomposed LayerNorm, GELU, attention
  tiny_bert_dyn.onnx the same BERT, every weight drawn again (biases not
                     0), by the dynamo exporter (its
                     scaled_dot_product_attention: q and k scaled, the
                     mask added, the isnan guard; rule sdpa_qk_mask_guard)
  tiny_bert_eager14.onnx  that BERT with transformers' eager attention
                     (scores multiplied by the scale, the mask added),
                     TorchScript, opset 14 (rule attn_mul_mask)
"""
import os
import sys

import torch


class Gelu(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x)


class Bert(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, mask):
        return self.m(input_ids=ids, attention_mask=mask).last_hidden_state


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8)
    for name, m in (("ln14", torch.nn.LayerNorm(8)), ("gelu14", Gelu())):
        torch.onnx.export(m.eval(), (x,), os.path.join(out, name + ".onnx"),
                          opset_version=14, dynamo=False)
    from transformers import BertConfig, BertModel
    b = BertModel(BertConfig(hidden_size=32, num_hidden_layers=2,
                             num_attention_heads=2, intermediate_size=64,
                             vocab_size=100, max_position_embeddings=64))
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 12:] = 0
    dyn = {"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"}}
    torch.onnx.export(Bert(b.eval()), (ids, mask),
                      os.path.join(out, "tiny_bert14.onnx"),
                      input_names=["input_ids", "attention_mask"],
                      output_names=["out"], dynamic_axes=dyn,
                      opset_version=14, dynamo=False)
    # every weight random (a fresh model's biases are 0 and its LayerNorm
    # scales 1: the fused biases would go untested)
    with torch.no_grad():
        for w in b.parameters():
            w.normal_(0.0, 0.2)
    B = torch.export.Dim("b", min=1)
    S = torch.export.Dim("s", min=2)
    torch.onnx.export(Bert(b.eval()), (ids, mask),
                      os.path.join(out, "tiny_bert_dyn.onnx"),
                      input_names=["input_ids", "attention_mask"],
                      output_names=["out"],
                      dynamic_shapes={"ids": {0: B, 1: S},
                                      "mask": {0: B, 1: S}},
                      dynamo=True, external_data=False)
    b.config._attn_implementation = "eager"
    torch.onnx.export(Bert(b.eval()), (ids, mask),
                      os.path.join(out, "tiny_bert_eager14.onnx"),
                      input_names=["input_ids", "attention_mask"],
                      output_names=["out"], dynamic_axes=dyn,
                      opset_version=14, dynamo=False)


if __name__ == "__main__":
    main()

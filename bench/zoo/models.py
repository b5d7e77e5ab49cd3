# The zoo: real models by name, each made offline with random weights (nothing is downloaded: torchvision
# `weights=None` and `weights_backbone=None`, timm `pretrained=False`, transformers models built from a small config),
# batch 1, for bench/zoo/zoo.py. An entry's `build()` gives (module, example inputs); the caller seeds torch with
# SEED first, so the same torch makes the same weights and inputs in every process. torch is imported inside the
# builders, so the registry can be listed where torch is not installed.
import dataclasses
from typing import Callable

SEED = 20261201


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str
    source: str            # torchvision, timm, transformers, own
    build: Callable
    conv: bool             # has convolutions: on CUDA torch runs them in TF32 by default
    dtype: str = "f32"     # of the weights and floating-point inputs
    note: str = ""
    devices: tuple = ("cpu", "cuda")   # where it can run: zoo.py skips its rows on other devices, saying so
    group: str = ""        # a name for several entries at once: MODELS=newops
    # Several input sets: build() then returns (module, [inputs0, inputs1, ...]).
    #   "sequence": the sets run in order on one loaded model whose buffers carry state from call to call;
    #   "shapes":   independent calls at different shapes of a model exported with dynamic dims (`dynamic`).
    calls: str = ""
    dynamic: Callable = None   # () -> torch.export dynamic_shapes, for calls == "shapes"


REGISTRY = {}


def _add(name, source, build, conv, dtype="f32", note="", **more):
    REGISTRY[name] = Entry(name, source, build, conv, dtype, note, **more)


def groups():
    """Group name -> its entries' names, in registry order."""
    found = {}
    for e in REGISTRY.values():
        if e.group:
            found.setdefault(e.group, []).append(e.name)
    return found


def input_sets(entry, built_inputs):
    """The list of input tuples an entry's build() gave: one set, or several (entry.calls)."""
    return [tuple(s) for s in built_inputs] if entry.calls else [tuple(built_inputs)]


def place(module, device):
    """The module in eval mode on DEVICE, with any weights packed for that device (own_models_ops)."""
    module = module.eval().to(device)
    for m in module.modules():
        if m is not module and hasattr(m, "prepare_for_device"):
            m.prepare_for_device(device)
    return module


def get(name):
    if name not in REGISTRY:
        raise KeyError(f"no model {name!r} in the zoo; known: {', '.join(REGISTRY)}")
    return REGISTRY[name]


# --- torchvision classifiers and a segmentation net, 224x224 ---

def _torchvision(fn_name, size=224, **kwargs):
    def build():
        import torch
        import torchvision
        model = getattr(torchvision.models, fn_name)(weights=None, **kwargs)
        return model, (torch.randn(1, 3, size, size),)
    return build


for _name in ("resnet18", "efficientnet_b0", "convnext_tiny", "shufflenet_v2_x1_0", "regnet_y_400mf",
              "mobilenet_v3_small", "mobilenet_v2", "mnasnet0_5", "squeezenet1_1"):
    _add(_name, "torchvision", _torchvision(_name), conv=True)


def _deeplabv3():
    import torch
    import torchvision
    from own_models import OneOutput
    model = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None)
    return OneOutput(model, "out"), (torch.randn(1, 3, 224, 224),)


_add("deeplabv3_mobilenet_v3_large", "torchvision", _deeplabv3, conv=True,
     note="224x224 (its training size is 520), output 'out' of the dict")


def _timm_vit_tiny():
    import timm
    import torch
    return timm.create_model("vit_tiny_patch16_224", pretrained=False), (torch.randn(1, 3, 224, 224),)


_add("vit_tiny", "timm", _timm_vit_tiny, conv=True, note="timm vit_tiny_patch16_224 (patch embedding is a conv)")


# --- the zoo's own modules: 1-d, 3-d and transposed convolutions ---

def _audio_encoder():
    import torch
    from own_models import AudioEncoder
    return AudioEncoder(), (torch.randn(1, 80, 3000),)


def _conv3d_net():
    import torch
    from own_models import Conv3dNet, randomize_batchnorm
    return randomize_batchnorm(Conv3dNet()), (torch.randn(1, 3, 8, 56, 56),)


def _deconv_decoder():
    import torch
    from own_models import DeconvDecoder, randomize_batchnorm
    return randomize_batchnorm(DeconvDecoder()), (torch.randn(1, 64, 16, 16),)


_add("audio_encoder", "own", _audio_encoder, conv=True,
     note="Whisper-tiny-sized: 80x3000 log-mel, 2 Conv1d + GELU, 4 layers d=384")
_add("conv3d_net", "own", _conv3d_net, conv=True, note="clip 3x8x56x56")
_add("deconv_decoder", "own", _deconv_decoder, conv=True, note="latent 64x16x16 -> 3x128x128")


# --- transformers, small random configs; forward returns last_hidden_state or logits ---

VOCAB_ENCODER, VOCAB_LM = 8192, 16384
SEQ_ENCODER, SEQ_LM = 64, 32


def _hf(config_cls, model_cls, key, seq, vocab, call_kwargs, dtype=None, first_token=0, **config):
    def build():
        import torch
        import transformers
        from own_models import OneOutput
        cfg = getattr(transformers, config_cls)(**config)
        model = getattr(transformers, model_cls)(cfg)
        if dtype:
            model = model.to(getattr(torch, dtype))
        ids = torch.randint(first_token, vocab, (1, seq), dtype=torch.int64)
        return OneOutput(model, key, "input_ids", **call_kwargs), (ids,)
    return build


_ENC = dict(vocab_size=VOCAB_ENCODER, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
            intermediate_size=1024, max_position_embeddings=256)
_add("bert", "transformers",
     _hf("BertConfig", "BertModel", "last_hidden_state", SEQ_ENCODER, VOCAB_ENCODER, {}, **_ENC),
     conv=False, note="4 layers, d=256, seq 64")
_add("distilbert", "transformers",
     _hf("DistilBertConfig", "DistilBertModel", "last_hidden_state", SEQ_ENCODER, VOCAB_ENCODER, {},
         vocab_size=VOCAB_ENCODER, dim=256, n_layers=4, n_heads=4, hidden_dim=1024, max_position_embeddings=256),
     conv=False, note="4 layers, d=256, seq 64")
# Token ids from 3 up: RoBERTa's pad id is 1, and its positions count non-pad tokens (a cumsum).
_add("roberta", "transformers",
     _hf("RobertaConfig", "RobertaModel", "last_hidden_state", SEQ_ENCODER, VOCAB_ENCODER, {}, first_token=3,
         **dict(_ENC, max_position_embeddings=SEQ_ENCODER + 2)),
     conv=False, note="4 layers, d=256, seq 64")

_LM = dict(vocab_size=VOCAB_LM, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
           num_attention_heads=8, max_position_embeddings=256)
_NO_CACHE = {"use_cache": False}
_add("gpt2", "transformers",
     _hf("GPT2Config", "GPT2LMHeadModel", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE,
         vocab_size=VOCAB_LM, n_positions=256, n_embd=256, n_layer=4, n_head=4),
     conv=False, note="4 layers, d=256, seq 32, logits")
_add("llama", "transformers",
     _hf("LlamaConfig", "LlamaForCausalLM", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE, num_key_value_heads=4, **_LM),
     conv=False, note="4 layers, d=256, GQA 8/4, seq 32, logits")
_add("qwen2", "transformers",
     _hf("Qwen2Config", "Qwen2ForCausalLM", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE, num_key_value_heads=2, **_LM),
     conv=False, note="4 layers, d=256, GQA 8/2, seq 32, logits")
_add("mistral", "transformers",
     _hf("MistralConfig", "MistralForCausalLM", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE, num_key_value_heads=2,
         **_LM),
     conv=False, note="4 layers, d=256, GQA 8/2, seq 32, logits")


# --- bf16 ---

def _mlp_bf16():
    import torch
    from own_models import mlp
    return mlp().to(torch.bfloat16), (torch.randn(8, 512).to(torch.bfloat16),)


_add("mlp_bf16", "own", _mlp_bf16, conv=False, dtype="bf16", note="Linear 512-2048-512 + GELU, batch 8")


def _mlp_bf16_part(layers):
    """The first LAYERS modules of mlp_bf16, with its weights and input (the same seed, the same draws)."""
    def build():
        import torch
        module, inputs = _mlp_bf16()
        return torch.nn.Sequential(*list(module)[:layers]), inputs
    return build


# mlp_bf16's steps alone, to find which one parts from torch on CUDA (bench/device/bf16_blas.py).
_add("mlp_bf16_linear", "own", _mlp_bf16_part(1), conv=False, dtype="bf16", note="mlp_bf16's first Linear alone")
_add("mlp_bf16_linear_gelu", "own", _mlp_bf16_part(2), conv=False, dtype="bf16",
     note="mlp_bf16's first Linear + GELU")
_add("llama_bf16", "transformers",
     _hf("LlamaConfig", "LlamaForCausalLM", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE, dtype="bfloat16",
         num_key_value_heads=4, **_LM),
     conv=False, dtype="bf16", note="the llama entry in bf16")


# --- newops: models whose packages call the fallback ops mpspack's shim provides (own_models_ops.py) ---

def _ops(cls_name, *shapes_and_dtypes, **kwargs):
    """A builder: own_models_ops.CLS_NAME(**kwargs) and random float inputs of the given (shape, dtype)s."""
    def build():
        import torch
        import own_models_ops
        inputs = tuple(torch.randn(*shape).to(getattr(torch, dtype)) for shape, dtype in shapes_and_dtypes)
        return getattr(own_models_ops, cls_name)(**kwargs), inputs
    return build


def _moe_lm():
    import torch
    from own_models_ops import MoELM
    return MoELM(), (torch.randint(0, 512, (1, 16), dtype=torch.int64),)


def _quant_mlp(bits):
    def build():
        import torch
        import own_models_ops as o
        linear = o.Int8Linear if bits == 8 else o.Int4Linear
        x = torch.randn(1, 8, 256).to(torch.float32 if bits == 8 else torch.bfloat16)
        return o.QuantMLP(linear), (x,)
    return build


def _kv_cache():
    import torch
    from own_models_ops import KVCacheAttention
    sets = [(torch.randn(1, 4, 64), torch.arange(4 * i, 4 * i + 4, dtype=torch.int64)) for i in range(2)]
    return KVCacheAttention(), sets


def _dynamic_encoder():
    import torch
    from own_models_ops import DynamicEncoder
    sets = [(torch.randint(0, 1000, (batch, seq), dtype=torch.int64),) for batch, seq in ((1, 16), (3, 40))]
    return DynamicEncoder(), sets


def _dynamic_dims():
    from torch.export import Dim
    return ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=2, max=64)},)


def _multi_dtype_io():
    import torch
    from own_models_ops import MultiDtypeIO
    mask = torch.rand(2, 6) > 0.3
    mask[:, 0] = True
    return MultiDtypeIO(), (torch.randn(2, 16), torch.randint(0, 100, (2, 6), dtype=torch.int64), mask)


def _hf_vision(config_cls, model_cls, key, size=256):
    def build():
        import torch
        import transformers
        from own_models import OneOutput
        model = getattr(transformers, model_cls)(getattr(transformers, config_cls)())
        return OneOutput(model, key, "pixel_values"), (torch.randn(1, 3, size, size),)
    return build


_NEW = dict(group="newops")
_add("detection_head", "own", _ops("DetectionHead", ((1, 3, 64, 64), "float32")), conv=True, **_NEW,
     note="topk over 192 anchors, sort, nonzero_static; out boxes f32, labels i64, keep bool")
_add("moe_lm", "own", _moe_lm, conv=False, **_NEW,
     note="Mixtral-style MoE LM, 2 layers d=64, top-2 of 4 experts: softmax router, topk, scatter, gather, "
          "index_select, index_add; seq 16, logits")
_add("int8_mlp", "own", _quant_mlp(8), conv=False, **_NEW,
     note="Llama MLP 256-512-256, int8 weights per-channel scales: _weight_int8pack_mm, f32 activations")
_add("int4_mlp", "own", _quant_mlp(4), conv=False, dtype="bf16", **_NEW,
     note="Llama MLP 256-512-256, int4 weights group 64 packed on the device: _weight_int4pack_mm (cuda), "
          "_weight_int4pack_mm_for_cpu (cpu); bf16 activations")
_add("fp8_linear", "own", _ops("Fp8Linear", ((16, 64), "float32")), conv=False, devices=("cuda",), **_NEW,
     note="torch._scaled_mm: float8_e4m3fn weight buffer and per-tensor activation quantization, f32 out")
_add("stft_classifier", "own", _ops("SpectrogramClassifier", ((2, 4000), "float32")), conv=True, **_NEW,
     note="torch.stft(return_complex=True) n_fft 256 hop 64 -> |.| -> log1p -> Conv1d -> Linear; FFT fallback")
_add("rotary_complex", "own", _ops("RotaryAttention", ((1, 16, 64), "float32")), conv=False, **_NEW,
     note="Llama-1 rotary embedding: view_as_complex, complex64 freqs buffer product, view_as_real; causal SDPA")
_add("kv_cache", "own", _kv_cache, conv=False, calls="sequence", **_NEW,
     note="k/v cache buffers written in place (index_copy_) at int64 positions 0..3 then 4..7, masked SDPA")
_add("dynamic_encoder", "own", _dynamic_encoder, conv=False, calls="shapes", dynamic=_dynamic_dims, **_NEW,
     note="exported with Dim batch (1-8) and seq (2-64), run at 1x16 and 3x40")
_add("multi_dtype_io", "own", _multi_dtype_io, conv=False, **_NEW,
     note="f32, i64, bool in; f32 logits, i64 argmax, bool out")
_add("segformer", "transformers", _hf_vision("SegformerConfig", "SegformerForSemanticSegmentation", "logits"),
     conv=True, **_NEW, note="SegformerForSemanticSegmentation default config (mit-b0 sized), 256x256, logits")
_add("convnextv2", "transformers", _hf_vision("ConvNextV2Config", "ConvNextV2Model", "last_hidden_state"),
     conv=True, **_NEW, note="ConvNextV2Model default config, 256x256, last_hidden_state")


# --- how closely mpspack must match torch eager ---

F32 = (1e-3, 1e-4)        # rtol, atol: float32 where both sides compute in full float32
TF32 = (1e-2, 1e-2)       # float32 with torch's default TF32 convolutions on CUDA (10-bit mantissa products)
BF16 = (1.6e-2, 1e-5)     # torch.testing.assert_close's defaults for bfloat16


def tolerance(entry, device, tf32=True, scale=None):
    """(rtol, atol, note) for comparing mpspack's outputs with torch eager's. SCALE, the largest |value| of the
    reference, scales float32's atol: random-weight models give outputs from 1e-7 (mnasnet) to 10, and an absolute
    1e-4 would let a 1e-7 output pass whatever it held."""
    if entry.dtype == "bf16":
        return BF16[0], BF16[1], "bf16 at torch's assert_close tolerance"
    rtol, atol, note = F32[0], F32[1], "float32"
    if device == "cuda" and entry.conv and tf32:
        rtol, atol, note = TF32[0], TF32[1], "CUDA convolutions in TF32 on torch's side (its default): TF32 tolerance"
    if scale and scale == scale and scale != float("inf"):
        atol *= scale
        note += f", atol x {scale:.3g} (the reference's largest |value|)"
    return rtol, float(f"{atol:.3g}"), note

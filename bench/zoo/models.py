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
    # forward() writes the module's buffers (a KV cache): the module is exported as built, before eager's call
    # writes them, so that a package whose write were lost computes another result.
    stateful: bool = False
    # Many layers in bf16 (or layers inductor fuses otherwise than eager): each layer's output is rounded to 8
    # bits, and the differences between two correct implementations grow with depth to a fraction of the output's scale, so bf16's atol scales with the
    # reference's largest |value| as float32's does (tolerance below).
    deep: bool = False
    # Seconds its compile may take (compile_one.py: build, eager, export, AOTInductor) before zoo.py stops it,
    # within COMPILE_DEADLINE_S; 0: that deadline alone. zoo.py starts the longest first.
    compile_limit_s: int = 0


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

def _torchvision(fn_name, size=224, batch=1, **kwargs):
    def build():
        import torch
        import torchvision
        model = getattr(torchvision.models, fn_name)(weights=None, **kwargs)
        return model, (torch.randn(batch, 3, size, size),)
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


def _hf(config_cls, model_cls, key, seq, vocab, call_kwargs, dtype=None, first_token=0, batch=1, **config):
    def build():
        import torch
        import transformers
        from own_models import OneOutput
        cfg = getattr(transformers, config_cls)(**config)
        model = getattr(transformers, model_cls)(cfg)
        if dtype:
            model = model.to(getattr(torch, dtype))
        ids = torch.randint(first_token, vocab, (batch, seq), dtype=torch.int64)
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
# deep: on the CPU torch's own runtime on this package differs from eager by 0.0117 on logits (129,173 elements past
# bf16's atol of 1e-5), as mpspack does; mpspack is one bf16 step (0.0078) from torch's runtime there.
_add("llama_bf16", "transformers",
     _hf("LlamaConfig", "LlamaForCausalLM", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE, dtype="bfloat16",
         num_key_value_heads=4, **_LM),
     conv=False, dtype="bf16", deep=True, note="the llama entry in bf16")


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
# deep: torch's own runtime on this package differs from eager by one bf16 step where eager's output nears 2 (0.0156
# on the CPU, 0.0078 on CUDA), as mpspack does; mpspack matches torch's runtime (0 on the CPU, 0.001 on CUDA).
_add("int4_mlp", "own", _quant_mlp(4), conv=False, dtype="bf16", deep=True, **_NEW,
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



# --- fullsize: the models people ship, at their real sizes (random weights; issue "full-size zoo rows") ---
# Each config is written out as the transformers config class of the named checkpoint holds it, so that nothing
# depends on a library's defaults. Prompt rows: transformers' own models, exported without a cache (use_cache
# False), logits of every prompt token. Decode rows: one token at position 511 over a 512-token static cache
# (own_models_decode.py) at the same sizes. compile_limit_s: stop-losses, not measurements (bench/zoo/README.md).

def _bert_config():
    # bert-base-uncased
    return dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                intermediate_size=3072, hidden_act="gelu", max_position_embeddings=512, type_vocab_size=2,
                layer_norm_eps=1e-12)


# gpt2 (124M): 12 layers, d 768, 12 heads, MLP 3072, 1,024 positions, the LM head tied to the token embedding.
_GPT2 = dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, n_inner=3072,
             activation_function="gelu_new", layer_norm_epsilon=1e-5, tie_word_embeddings=True)
# Qwen2.5-0.5B's sizes in Llama's architecture (no q/k/v biases): 494M parameters, 1.98 GB in float32.
_LLAMA_500M = dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                   num_attention_heads=14, num_key_value_heads=2, head_dim=64, max_position_embeddings=32768,
                   rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, hidden_act="silu")
# Llama-3.2-1B (1.24B parameters, 2.47 GB in bf16), without its "llama3" rope scaling (which changes the rotary
# frequencies' values only).
_LLAMA_1B = dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                 num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=131072,
                 rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=True, hidden_act="silu")
FULL_PROMPT, FULL_CACHE = 128, 512


def _decode_config(style, hf):
    """The decode module's config (own_models_decode.LMConfig) for the same sizes as a transformers config."""
    from own_models_decode import LMConfig
    if style == "gpt2":
        return LMConfig("gpt2", hf["vocab_size"], hf["n_embd"], hf["n_layer"], hf["n_head"], hf["n_head"],
                        hf["n_inner"], FULL_CACHE, positions=hf["n_positions"], eps=hf["layer_norm_epsilon"],
                        tied=hf["tie_word_embeddings"])
    return LMConfig("llama", hf["vocab_size"], hf["hidden_size"], hf["num_hidden_layers"], hf["num_attention_heads"],
                    hf["num_key_value_heads"], hf["intermediate_size"], FULL_CACHE, rope_theta=hf["rope_theta"],
                    eps=hf["rms_norm_eps"], tied=hf["tie_word_embeddings"])


def _decode(style, hf, dtype=None):
    def build():
        import torch
        from own_models_decode import decode_step
        return decode_step(_decode_config(style, hf), getattr(torch, dtype) if dtype else None)
    return build


def _whisper_base_encoder():
    import torch
    import transformers
    from own_models import OneOutput
    # openai/whisper-base
    cfg = transformers.WhisperConfig(vocab_size=51865, num_mel_bins=80, d_model=512, encoder_layers=6,
                                     encoder_attention_heads=8, encoder_ffn_dim=2048, decoder_layers=6,
                                     decoder_attention_heads=8, decoder_ffn_dim=2048, max_source_positions=1500,
                                     max_target_positions=448, activation_function="gelu")
    encoder = transformers.WhisperModel(cfg).get_encoder()
    return OneOutput(encoder, "last_hidden_state", "input_features"), (torch.randn(1, 80, 3000),)


def _timm(name, batch=1, size=224):
    def build():
        import timm
        import torch
        return timm.create_model(name, pretrained=False), (torch.randn(batch, 3, size, size),)
    return build


_FULL = dict(group="fullsize")
_BIG_LM = dict(compile_limit_s=420, **_FULL)
_OTHER = dict(compile_limit_s=300, **_FULL)
for _batch, _name in ((1, "bert_base"), (8, "bert_base_b8")):
    _add(_name, "transformers",
         _hf("BertConfig", "BertModel", "last_hidden_state", FULL_PROMPT, 30522, {}, batch=_batch, **_bert_config()),
         conv=False, **_OTHER, note=f"bert-base (110M): 12 layers, d 768, seq {FULL_PROMPT}, batch {_batch}")
_add("gpt2_124m", "transformers",
     _hf("GPT2Config", "GPT2LMHeadModel", "logits", FULL_PROMPT, 50257, _NO_CACHE, **_GPT2),
     conv=False, **_OTHER, note=f"gpt2 (124M), a {FULL_PROMPT}-token prompt, logits of every token")
_add("gpt2_124m_decode", "own", _decode("gpt2", _GPT2), conv=False, stateful=True, **_OTHER,
     note=f"gpt2 (124M) sizes, one token at position {FULL_CACHE - 1} over a {FULL_CACHE}-token static KV cache "
          "(own_models_decode.py)")
_add("llama_500m", "transformers",
     _hf("LlamaConfig", "LlamaForCausalLM", "logits", FULL_PROMPT, 151936, _NO_CACHE, **_LLAMA_500M),
     conv=False, devices=("cpu",), **_BIG_LM,
     note=f"Llama architecture at Qwen2.5-0.5B's sizes (494M, f32): 24 layers, d 896, GQA 14/2, "
          f"a {FULL_PROMPT}-token prompt, logits")
_add("llama_500m_decode", "own", _decode("llama", _LLAMA_500M), conv=False, devices=("cpu",), stateful=True,
     **_BIG_LM, note=f"llama_500m's sizes, one token over a {FULL_CACHE}-token static KV cache")
_add("llama_1b_bf16", "transformers",
     _hf("LlamaConfig", "LlamaForCausalLM", "logits", FULL_PROMPT, 128256, _NO_CACHE, dtype="bfloat16",
         **_LLAMA_1B),
     conv=False, dtype="bf16", devices=("cuda",), deep=True, **_BIG_LM,
     note=f"Llama-3.2-1B's sizes (1.24B, bf16): 16 layers, d 2048, GQA 32/8, a {FULL_PROMPT}-token prompt, logits")
_add("llama_1b_bf16_decode", "own", _decode("llama", _LLAMA_1B, "bfloat16"), conv=False, dtype="bf16",
     devices=("cuda",), stateful=True, deep=True, **_BIG_LM,
     note=f"llama_1b_bf16's sizes, one token over a {FULL_CACHE}-token static KV cache")
_add("resnet50", "torchvision", _torchvision("resnet50"), conv=True, **_OTHER, note="224x224, batch 1")
_add("resnet50_b8", "torchvision", _torchvision("resnet50", batch=8), conv=True, **_OTHER, note="224x224, batch 8")
_add("vit_b16", "timm", _timm("vit_base_patch16_224"), conv=True, **_OTHER,
     note="timm vit_base_patch16_224 (86M), 224x224, batch 1 (patch embedding is a conv)")
_add("whisper_base_encoder", "transformers", _whisper_base_encoder, conv=True, **_OTHER,
     note="whisper-base's encoder (20M): 80x3000 log-mel -> 1,500 frames, 6 layers d 512")

# --- how closely mpspack must match torch eager ---

F32 = (1e-3, 1e-4)        # rtol, atol: float32 where both sides compute in full float32
TF32 = (1e-2, 1e-2)       # float32 with torch's default TF32 convolutions on CUDA (10-bit mantissa products)
BF16 = (1.6e-2, 1e-5)     # torch.testing.assert_close's defaults for bfloat16


def tolerance(entry, device, tf32=True, scale=None):
    """(rtol, atol, note) for comparing mpspack's outputs with torch eager's. SCALE, the largest |value| of the
    reference, scales float32's atol: random-weight models give outputs from 1e-7 (mnasnet) to 10, and an absolute
    1e-4 would let a 1e-7 output pass whatever it held. A deep bf16 entry's atol is bf16's rtol times SCALE: the
    rounding of every layer's bf16 output to 8 bits leaves two correct implementations of a 16-layer model apart
    by more than bf16's 1e-5 on logits near zero, while a wrong kernel still misses by a large part of SCALE."""
    finite = bool(scale) and scale == scale and scale != float("inf")
    if entry.dtype == "bf16":
        if entry.deep and finite:
            return BF16[0], float(f"{BF16[0] * scale:.3g}"), \
                f"bf16, many layers: rtol {BF16[0]:g}, atol {BF16[0]:g} x {scale:.3g} (the reference's largest |value|)"
        return BF16[0], BF16[1], "bf16 at torch's assert_close tolerance"
    rtol, atol, note = F32[0], F32[1], "float32"
    if device == "cuda" and entry.conv and tf32:
        rtol, atol, note = TF32[0], TF32[1], "CUDA convolutions in TF32 on torch's side (its default): TF32 tolerance"
    if finite:
        atol *= scale
        note += f", atol x {scale:.3g} (the reference's largest |value|)"
    return rtol, float(f"{atol:.3g}"), note


# --- archs: architectures a new user tried that the zoo's own rows do not hold (issue "full-size models", its CPU
# rows): transformers encoders and LMs at the zoo's small sizes, ResNet-18 at batch 2, two timm vision nets ---

_ARCHS = dict(group="archs")
_EMB = dict(_ENC, embedding_size=128)
_add("albert", "transformers",
     _hf("AlbertConfig", "AlbertModel", "last_hidden_state", SEQ_ENCODER, VOCAB_ENCODER, {}, **_EMB),
     conv=False, **_ARCHS, note="4 layers, d=256 (embeddings 128, shared layer weights), seq 64")
_add("electra", "transformers",
     _hf("ElectraConfig", "ElectraModel", "last_hidden_state", SEQ_ENCODER, VOCAB_ENCODER, {}, **_EMB),
     conv=False, **_ARCHS, note="4 layers, d=256 (embeddings 128), seq 64")
_add("deberta_v2", "transformers",
     _hf("DebertaV2Config", "DebertaV2Model", "last_hidden_state", SEQ_ENCODER, VOCAB_ENCODER, {},
         relative_attention=True, position_buckets=64, pos_att_type=["p2c", "c2p"], **_ENC),
     conv=False, **_ARCHS, note="4 layers, d=256, disentangled relative attention as deberta-v3, seq 64")
_add("bloom", "transformers",
     _hf("BloomConfig", "BloomForCausalLM", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE,
         vocab_size=VOCAB_LM, hidden_size=256, n_layer=4, n_head=8),
     conv=False, **_ARCHS, note="4 layers, d=256, ALiBi, seq 32, logits")
# Token ids from 3 up: OPT's pad id is 1.
_add("opt", "transformers",
     _hf("OPTConfig", "OPTForCausalLM", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE, first_token=3,
         vocab_size=VOCAB_LM, hidden_size=256, word_embed_proj_dim=256, num_hidden_layers=4, ffn_dim=1024,
         num_attention_heads=8, max_position_embeddings=256),
     conv=False, **_ARCHS, note="4 layers, d=256, seq 32, logits")
_add("gemma", "transformers",
     _hf("GemmaConfig", "GemmaForCausalLM", "logits", SEQ_LM, VOCAB_LM, _NO_CACHE, num_key_value_heads=1, head_dim=32,
         **_LM),
     conv=False, **_ARCHS, note="4 layers, d=256, multi-query (8/1), GeGLU, seq 32, logits")
_add("resnet18_b2", "torchvision", _torchvision("resnet18", batch=2), conv=True, **_ARCHS, note="224x224, batch 2")
_add("levit", "timm", _timm("levit_128s"), conv=True, **_ARCHS, note="timm levit_128s, 224x224")
_add("mlp_mixer", "timm", _timm("mixer_s16_224"), conv=True, **_ARCHS, note="timm mixer_s16_224, 224x224")

# The zoo's "newops" modules (bench/zoo/models.py names them): small models whose AOTInductor packages call the
# fallback ops that mpspack's shim must provide (topk, sort, nonzero_static, index/scatter, int8/int4 weight
# products, fp8 _scaled_mm, FFT, complex views, in-place buffer updates), several dtypes in and out, dynamic
# shapes. Each is small enough to compile in seconds. Weights come from torch's seeded default initialisation
# (models.py seeds torch before building). A module whose weights are packed per device has
# prepare_for_device(device), which models.place calls after .to(device).
import math

import torch
import torch.nn.functional as F
from torch import nn

from own_models import EncoderLayer, sinusoids


# --- 1. detection head: topk, sort, nonzero_static ---

class DetectionHead(nn.Module):
    """A conv backbone to an 8x8 grid, per-anchor class scores and boxes; the best KEEP anchors by score (topk),
    ordered by their box's x1 (sort), then the ones above THRESHOLD selected into a fixed-size list
    (nonzero_static): boxes (float32), labels (int64) and which slots hold a box (bool)."""

    def __init__(self, classes=6, anchors=3, keep=24, threshold=0.55):
        super().__init__()
        self.classes, self.anchors, self.keep, self.threshold = classes, anchors, keep, threshold
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(32, anchors * classes, 1)
        self.box = nn.Conv2d(32, anchors * 4, 1)
        grid = 8
        ys, xs = torch.meshgrid(torch.arange(grid, dtype=torch.float32), torch.arange(grid, dtype=torch.float32),
                                indexing="ij")
        centres = torch.stack([xs, ys], -1).reshape(-1, 1, 2).expand(-1, anchors, 2).reshape(-1, 2)
        sizes = torch.tensor([1.0, 2.0, 3.0])[:anchors].repeat(grid * grid)[:, None]
        self.register_buffer("anchor_boxes", torch.cat([centres - sizes / 2, centres + sizes / 2], -1))

    def forward(self, image):
        f = self.backbone(image)
        b = image.shape[0]
        scores = torch.sigmoid(self.cls(f)).permute(0, 2, 3, 1).reshape(b, -1, self.classes)
        boxes = self.anchor_boxes + self.box(f).permute(0, 2, 3, 1).reshape(b, -1, 4)
        best, labels = scores.max(-1)
        top_scores, top = torch.topk(best, self.keep, dim=1)
        top_boxes = torch.gather(boxes, 1, top[..., None].expand(-1, -1, 4))
        top_labels = torch.gather(labels, 1, top)
        _, order = torch.sort(top_boxes[..., 0], dim=1, stable=True)
        top_boxes = torch.gather(top_boxes, 1, order[..., None].expand(-1, -1, 4))
        top_labels = torch.gather(top_labels, 1, order)
        above = torch.gather(top_scores, 1, order)[0] > self.threshold
        if hasattr(torch, "nonzero_static"):
            chosen = torch.nonzero_static(above, size=self.keep, fill_value=-1)[:, 0]
        else:  # torch before 2.3 (the local eager check): the same fixed-size list without nonzero_static
            slots = torch.arange(self.keep, device=above.device)
            chosen = torch.sort(torch.where(above, slots, slots + self.keep))[0]
            chosen = torch.where(chosen < self.keep, chosen, torch.full_like(chosen, -1))
        valid = chosen >= 0
        safe = chosen.clamp(min=0)
        out_boxes = top_boxes[0].index_select(0, safe) * valid[:, None]
        out_labels = torch.where(valid, top_labels[0].index_select(0, safe), torch.full_like(safe, -1))
        return out_boxes, out_labels, valid


# --- 2. mixture of experts: router softmax, topk 2 of 4, scatter / gather / index_add ---

class Expert(nn.Module):
    def __init__(self, d, ff):
        super().__init__()
        self.w1, self.w3, self.w2 = nn.Linear(d, ff, bias=False), nn.Linear(d, ff, bias=False), nn.Linear(ff, d, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoE(nn.Module):
    """Mixtral's sparse block, static-shaped: softmax router, the top 2 of 4 experts per token, weights
    renormalised; the routing matrix scattered ([tokens, experts]), each (token, choice) slot's input gathered by
    token index, every expert run on every slot and the slot's own expert's result kept, the slots' results
    index_add-ed back to their tokens."""

    def __init__(self, d, ff, experts=4, top=2):
        super().__init__()
        self.top = top
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(Expert(d, ff) for _ in range(experts))

    def forward(self, x):
        shape = x.shape
        h = x.reshape(-1, shape[-1])
        n = h.shape[0]
        probs = F.softmax(self.router(h), dim=-1, dtype=torch.float32)
        weights, chosen = torch.topk(probs, self.top, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        routing = torch.zeros_like(probs).scatter(1, chosen, weights)
        slot_expert = chosen.reshape(-1)
        slot_token = torch.arange(n, device=x.device)[:, None].expand(n, self.top).reshape(-1)
        slot_weight = torch.gather(routing, 1, chosen).reshape(-1, 1).to(h.dtype)
        slots = h.index_select(0, slot_token)
        y = torch.zeros_like(slots)
        for e, expert in enumerate(self.experts):
            y = y + (slot_expert == e)[:, None].to(h.dtype) * expert(slots)
        out = torch.zeros_like(h).index_add(0, slot_token, y * slot_weight)
        return out.reshape(shape)


class CausalLayer(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.moe = MoE(d, ff)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = [y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v)]
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.moe(self.ln2(x))


class MoELM(nn.Module):
    def __init__(self, vocab=512, d=64, heads=4, ff=128, layers=2, max_len=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.register_buffer("positions", sinusoids(max_len, d))
        self.layers = nn.ModuleList(CausalLayer(d, heads, ff) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.positions[: ids.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln(x))


# --- 3. int8 and int4 weight-only quantized MLPs ---

class Int8Linear(nn.Module):
    """int8 weights with one float32 scale per output channel; aten._weight_int8pack_mm computes
    x @ (weight * scales[:, None]).T."""

    def __init__(self, k, n):
        super().__init__()
        w = torch.randn(n, k) / math.sqrt(k)
        scales = w.abs().amax(1) / 127
        self.register_buffer("weight", (w / scales[:, None]).round().clamp(-128, 127).to(torch.int8))
        self.register_buffer("scales", scales)
        self.bias = nn.Parameter(torch.randn(n) * 0.02)

    def forward(self, x):
        y = torch.ops.aten._weight_int8pack_mm(x.reshape(-1, x.shape[-1]), self.weight, self.scales)
        return y.reshape(*x.shape[:-1], -1) + self.bias


class Int4Linear(nn.Module):
    """4-bit weights, asymmetric per group of GROUP input channels (the convention of torch's int4 kernels:
    w = (q - 8) * scale + zero, qScaleAndZeros [K / GROUP, N, 2] bfloat16), packed on the device they run on:
    CUDA aten._convert_weight_to_int4pack (two values a byte in, its tiled int32 layout out) with
    _weight_int4pack_mm; CPU _convert_weight_to_int4pack_for_cpu with _weight_int4pack_mm_for_cpu. bfloat16
    activations."""

    def __init__(self, k, n, group=64, inner_k_tiles=2):
        super().__init__()
        self.group, self.inner_k_tiles = group, inner_k_tiles
        w = (torch.randn(n, k) / math.sqrt(k)).reshape(n, k // group, group)
        lo, hi = w.amin(-1, keepdim=True), w.amax(-1, keepdim=True)
        scale = (hi - lo).clamp(min=1e-6) / 15
        q = ((w - lo) / scale).round().clamp(0, 15).to(torch.int32).reshape(n, k)
        zero = lo + 8 * scale
        self.register_buffer("q", q)
        self.register_buffer("scales_and_zeros",
                             torch.cat([scale, zero], -1).transpose(0, 1).contiguous().to(torch.bfloat16))

    def prepare_for_device(self, device):
        q = self.q.to(device)
        if torch.device(device).type == "cuda":
            two_a_byte = (q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8)
            packed = torch.ops.aten._convert_weight_to_int4pack(two_a_byte, self.inner_k_tiles)
        else:
            packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, self.inner_k_tiles)
        del self.q
        self.register_buffer("packed", packed)

    def forward(self, x):
        mm = (torch.ops.aten._weight_int4pack_mm if self.packed.is_cuda
              else torch.ops.aten._weight_int4pack_mm_for_cpu)
        y = mm(x.reshape(-1, x.shape[-1]), self.packed, self.group, self.scales_and_zeros)
        return y.reshape(*x.shape[:-1], -1)


class QuantMLP(nn.Module):
    """A Llama MLP (down(silu(gate(x)) * up(x))) of quantized linears."""

    def __init__(self, linear, d=256, hidden=512):
        super().__init__()
        self.gate, self.up, self.down = linear(d, hidden), linear(d, hidden), linear(hidden, d)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


# --- 4. fp8 product: torch._scaled_mm, float8_e4m3fn operands, per-tensor scales (CUDA) ---

FP8_MAX = 448.0


class Fp8Linear(nn.Module):
    """The weight stored in float8_e4m3fn with its float32 scale; the activation quantized per tensor at run time
    (amax / 448); one _scaled_mm with a float32 result, then a float32 bias."""

    def __init__(self, k=64, n=128):
        super().__init__()
        w = torch.randn(n, k) / math.sqrt(k)
        scale = w.abs().amax() / FP8_MAX
        self.register_buffer("weight", (w / scale).to(torch.float8_e4m3fn))
        self.register_buffer("weight_scale", scale.reshape(()).float())
        self.bias = nn.Parameter(torch.randn(n) * 0.02)

    def forward(self, x):
        x_scale = (x.abs().amax() / FP8_MAX).clamp(min=1e-12).float()
        xq = (x / x_scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        y = torch._scaled_mm(xq, self.weight.t(), scale_a=x_scale, scale_b=self.weight_scale,
                             out_dtype=torch.float32)
        return y + self.bias


# --- 5. audio front end: stft (complex) -> magnitude -> classifier ---

class SpectrogramClassifier(nn.Module):
    def __init__(self, n_fft=256, hop=64, classes=10):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.conv = nn.Conv1d(n_fft // 2 + 1, 32, 3, padding=1)
        self.head = nn.Linear(32, classes)

    def forward(self, wave):
        spec = torch.stft(wave, self.n_fft, hop_length=self.hop, window=self.window, return_complex=True)
        x = torch.log1p(spec.abs())
        x = F.relu(self.conv(x)).mean(-1)
        return self.head(x)


# --- 6. rotary embeddings with complex numbers (the Llama-1 reference code) ---

def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class RotaryAttention(nn.Module):
    """One causal attention layer with Llama-1's complex rotary embedding: a complex64 freqs_cis buffer."""

    def __init__(self, d=64, heads=4, max_len=64):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.wo = nn.Linear(d, d, bias=False)
        self.register_buffer("freqs_cis", precompute_freqs_cis(d // heads, max_len))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = [w(x).view(b, t, self.heads, d // self.heads) for w in (self.wq, self.wk, self.wv)]
        q, k = apply_rotary_emb(q, k, self.freqs_cis[:t])
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(a.transpose(1, 2).reshape(b, t, d))


# --- 7. a static KV cache updated in place across calls ---

class KVCacheAttention(nn.Module):
    """Buffers k_cache and v_cache [1, heads, MAX_LEN, d / heads]: each call writes its tokens' keys and values at
    POSITIONS (index_copy_) and attends over the whole cache, each query seeing the positions up to its own."""

    def __init__(self, d=64, heads=4, max_len=16):
        super().__init__()
        self.heads, self.max_len = heads, max_len
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.register_buffer("k_cache", torch.zeros(1, heads, max_len, d // heads))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_len, d // heads))

    def forward(self, x, positions):
        b, t, d = x.shape
        q, k, v = [y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for y in self.qkv(x).split(d, dim=-1)]
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
        mask = torch.arange(self.max_len, device=x.device)[None, :] <= positions[:, None]
        a = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        return self.proj(a.transpose(1, 2).reshape(b, t, d))


# --- 8. dynamic batch and sequence ---

class DynamicEncoder(nn.Module):
    """Token ids [batch, seq] -> embeddings + sinusoidal positions (sliced to seq) -> 2 encoder layers -> a
    per-token head; exported with batch and seq as torch.export.Dim."""

    def __init__(self, vocab=1000, d=64, heads=4, max_len=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.register_buffer("positions", sinusoids(max_len, d))
        self.layers = nn.ModuleList(EncoderLayer(d, heads, 2 * d) for _ in range(2))
        self.head = nn.Linear(d, 16)

    def forward(self, ids):
        x = self.embed(ids) + self.positions[: ids.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


# --- 9. inputs and outputs of several dtypes ---

class MultiDtypeIO(nn.Module):
    """float32 features, int64 token ids and a bool mask in; float32 logits, int64 labels (argmax) and a bool
    map (logits > 0) out."""

    def __init__(self, vocab=100, d=16, classes=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.fc = nn.Linear(2 * d, classes)

    def forward(self, features, ids, mask):
        e = self.embed(ids) * mask[..., None].to(features.dtype)
        pooled = e.sum(1) / mask.sum(1, keepdim=True).clamp(min=1).to(features.dtype)
        logits = self.fc(torch.cat([features, pooled], -1))
        return logits, logits.argmax(-1), logits > 0

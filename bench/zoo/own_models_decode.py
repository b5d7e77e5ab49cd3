# One decode step of a full-size causal LM over a static KV cache, for the zoo's "fullsize" rows (models.py): the
# step an LM server repeats for every generated token. transformers' own cache classes change from version to
# version and its models export with a cache only through version-specific wrappers, so the step is this module:
# GPT-2's or Llama's layer, at the sizes of the transformers configs models.py writes out, with each layer's keys
# and values in buffers [batch, kv_heads, MAX_LEN, head_dim] written in place (index_copy_) at the step's
# positions, as the kv_cache row of own_models_ops.py does. The prompt rows use transformers' models themselves.
import dataclasses

import torch
import torch.nn.functional as F
from torch import nn


@dataclasses.dataclass(frozen=True)
class LMConfig:
    style: str             # "gpt2": learned positions, LayerNorm, GELU (tanh) MLP, biases;
    #                        "llama": rotary positions, RMSNorm, SwiGLU MLP, grouped KV heads, no biases
    vocab: int
    d: int
    layers: int
    heads: int
    kv_heads: int
    ff: int
    max_len: int           # the static cache's length
    positions: int = 0     # gpt2: the learned position table's length
    rope_theta: float = 10000.0
    eps: float = 1e-5
    tied: bool = True      # the LM head is the token embedding


def parameter_count(c):
    """What StaticCacheLM(c) holds, from the config alone (the tied head counted once)."""
    hd = c.d // c.heads
    attn = c.d * c.heads * hd + 2 * c.d * c.kv_heads * hd + c.heads * hd * c.d
    if c.style == "gpt2":
        attn += c.heads * hd + 2 * c.kv_heads * hd + c.d               # q, k, v and output biases
        mlp, norms = 2 * c.d * c.ff + c.ff + c.d, 4 * c.d               # two LayerNorms, weight and bias
        extra = c.positions * c.d + 2 * c.d                             # positions, the final LayerNorm
    else:
        mlp, norms, extra = 3 * c.d * c.ff, 2 * c.d, c.d                # RMSNorm weights only
    head = 0 if c.tied else c.vocab * c.d
    return c.vocab * c.d + c.layers * (attn + mlp + norms) + extra + head


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        # In float32, then back to x's dtype, as transformers' LlamaRMSNorm.
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def rotary_angles(positions, head_dim, theta, dtype):
    """cos and sin [t, head_dim] of transformers' Llama rotary embedding at POSITIONS, computed in float32 whatever
    the weights' dtype (a bf16 angle at position 511 would be off by a radian)."""
    inv_freq = theta ** (-torch.arange(0, head_dim, 2, device=positions.device).float() / head_dim)
    freqs = positions[:, None].float() * inv_freq[None, :]
    angles = torch.cat((freqs, freqs), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def rotate(x, cos, sin):
    return x * cos + rotate_half(x) * sin


class Layer(nn.Module):
    def __init__(self, c, batch):
        super().__init__()
        self.c, self.hd = c, c.d // c.heads
        gpt2 = c.style == "gpt2"
        norm = (lambda: nn.LayerNorm(c.d, eps=c.eps)) if gpt2 else (lambda: RMSNorm(c.d, c.eps))
        self.norm1, self.norm2 = norm(), norm()
        self.q = nn.Linear(c.d, c.heads * self.hd, bias=gpt2)
        self.k = nn.Linear(c.d, c.kv_heads * self.hd, bias=gpt2)
        self.v = nn.Linear(c.d, c.kv_heads * self.hd, bias=gpt2)
        self.o = nn.Linear(c.heads * self.hd, c.d, bias=gpt2)
        if gpt2:
            self.up, self.down = nn.Linear(c.d, c.ff), nn.Linear(c.ff, c.d)
        else:
            self.gate = nn.Linear(c.d, c.ff, bias=False)
            self.up, self.down = nn.Linear(c.d, c.ff, bias=False), nn.Linear(c.ff, c.d, bias=False)
        self.register_buffer("k_cache", torch.zeros(batch, c.kv_heads, c.max_len, self.hd))
        self.register_buffer("v_cache", torch.zeros(batch, c.kv_heads, c.max_len, self.hd))

    def forward(self, x, positions, mask, cos, sin):
        b, t, _ = x.shape
        h = self.norm1(x)
        q, k, v = [y.reshape(b, t, -1, self.hd).transpose(1, 2) for y in (self.q(h), self.k(h), self.v(h))]
        if cos is not None:
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
        group = self.c.heads // self.c.kv_heads
        keys, values = self.k_cache, self.v_cache
        if group > 1:
            keys, values = keys.repeat_interleave(group, dim=1), values.repeat_interleave(group, dim=1)
        a = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, -1))
        h = self.norm2(x)
        if self.c.style == "gpt2":
            return x + self.down(F.gelu(self.up(h), approximate="tanh"))
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class StaticCacheLM(nn.Module):
    """forward(ids [batch, t] int64, positions [t] int64) -> logits [batch, t, vocab]: the tokens' keys and
    values go into every layer's cache at POSITIONS, and each token attends to the cache's positions up to its
    own. Weights as transformers initialises them (normal, std 0.02), biases small and random rather than zero,
    so that a backend that drops one is seen."""

    def __init__(self, c, batch=1):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab, c.d)
        if c.style == "gpt2":
            self.wpe = nn.Embedding(c.positions, c.d)
            self.norm = nn.LayerNorm(c.d, eps=c.eps)
        else:
            self.norm = RMSNorm(c.d, c.eps)
        self.layers = nn.ModuleList(Layer(c, batch) for _ in range(c.layers))
        self.head = nn.Linear(c.d, c.vocab, bias=False)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() > 1:
                    p.normal_(0.0, 0.02)
                elif name.endswith("bias"):
                    p.normal_(0.0, 0.02)
        if c.tied:
            self.head.weight = self.embed.weight

    def fill_cache(self, upto):
        """Cache positions 0..UPTO-1 hold keys and values of unit scale, as an earlier prompt of UPTO tokens would
        have left them; the rest stay zero, so that a step whose own write were lost would attend to zeros."""
        with torch.no_grad():
            for layer in self.layers:
                for cache in (layer.k_cache, layer.v_cache):
                    cache[:, :, :upto].normal_()
        return self

    def forward(self, ids, positions):
        x = self.embed(ids)
        cos = sin = None
        if self.c.style == "gpt2":
            x = x + self.wpe(positions)
        else:
            cos, sin = rotary_angles(positions, self.c.d // self.c.heads, self.c.rope_theta, x.dtype)
        mask = torch.arange(self.c.max_len, device=ids.device)[None, :] <= positions[:, None]
        for layer in self.layers:
            x = layer(x, positions, mask, cos, sin)
        return self.head(self.norm(x))


def decode_step(c, dtype=None, batch=1):
    """(module, (ids, positions)): one token at the cache's last position, the cache before it filled."""
    module = StaticCacheLM(c, batch).fill_cache(c.max_len - 1)
    if dtype is not None:
        module = module.to(dtype)
    ids = torch.randint(0, c.vocab, (batch, 1), dtype=torch.int64)
    return module, (ids, torch.tensor([c.max_len - 1], dtype=torch.int64))


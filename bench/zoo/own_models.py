# The zoo's own modules (bench/zoo/models.py names them): shapes that the torchvision and transformers models do
# not cover (1-d, 3-d and transposed convolutions, a bf16 MLP), and the wrapper that makes a model whose forward
# returns a dict or a transformers ModelOutput return one plain tensor, as an AOTInductor package's flat outputs are.
import math

import torch
import torch.nn.functional as F
from torch import nn


class OneOutput(nn.Module):
    """Calls `model` and returns `out[key]`; the input goes by keyword when `input_name` is given."""

    def __init__(self, model, key, input_name=None, **call_kwargs):
        super().__init__()
        self.model = model
        self.key = key
        self.input_name = input_name
        self.call_kwargs = call_kwargs

    def forward(self, x):
        if self.input_name:
            out = self.model(**{self.input_name: x}, **self.call_kwargs)
        else:
            out = self.model(x, **self.call_kwargs)
        return out[self.key]


def randomize_batchnorm(module):
    """Running statistics and affine parameters away from the identity, as a trained network has them, so that
    a backend that folds or applies batch norm wrongly is seen."""
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return module


def sinusoids(length, channels, max_timescale=10000.0):
    """Whisper's fixed positional embedding."""
    step = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-step * torch.arange(channels // 2, dtype=torch.float32))
    t = torch.arange(length, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class EncoderLayer(nn.Module):
    """A pre-norm transformer layer written out (Linear + scaled_dot_product_attention), so that export sees plain
    ops rather than nn.TransformerEncoderLayer's fused inference path."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = [y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v)]
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class AudioEncoder(nn.Module):
    """Whisper-style audio encoder (the size of Whisper tiny's): log-mel frames through two Conv1d + GELU (the
    second with stride 2), sinusoidal positions, pre-norm transformer layers, a final LayerNorm."""

    def __init__(self, mels=80, frames=3000, d=384, heads=6, layers=4):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.register_buffer("positions", sinusoids(frames // 2, d))
        self.layers = nn.ModuleList(EncoderLayer(d, heads, 4 * d) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, mel):
        x = F.gelu(self.conv1(mel))
        x = F.gelu(self.conv2(x))
        x = x.transpose(1, 2) + self.positions
        for layer in self.layers:
            x = layer(x)
        return self.ln(x)


class Conv3dNet(nn.Module):
    """A small video classifier: 3x3x3, strided, depthwise, pointwise and dilated 3-d convolutions."""

    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(3, 16, 3, padding=1), nn.BatchNorm3d(16), nn.ReLU(),
            nn.Conv3d(16, 32, 3, stride=2, padding=1), nn.BatchNorm3d(32), nn.ReLU(),
            nn.Conv3d(32, 32, 3, padding=1, groups=32), nn.Conv3d(32, 64, 1), nn.ReLU(),
            nn.Conv3d(64, 64, (1, 3, 3), stride=(1, 2, 2), padding=(0, 2, 2), dilation=(1, 2, 2)), nn.ReLU())
        self.head = nn.Linear(64, classes)

    def forward(self, clip):
        return self.head(self.features(clip).mean(dim=(2, 3, 4)))


class DeconvDecoder(nn.Module):
    """A small image decoder: ConvTranspose2d upsampling (stride 2, output_padding, groups, no bias) to 128x128."""

    def __init__(self, latent=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(latent, 64, 4, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.ConvTranspose2d(64, 32, 3, stride=2, padding=1, output_padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.ConvTranspose2d(32, 32, 4, stride=2, padding=1, groups=4, bias=False), nn.ReLU(),
            nn.ConvTranspose2d(32, 3, 3, padding=1), nn.Tanh())

    def forward(self, z):
        return self.net(z)


def mlp(d=512, hidden=2048):
    return nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))

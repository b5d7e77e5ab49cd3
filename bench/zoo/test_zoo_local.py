# What of bench/zoo can be checked without the device machine (no GPU, no transformers, torchvision or timm; Debian's
# torch 1.13, which lacks scaled_dot_product_attention, gets a plain stand-in here): the registry's full-size rows,
# their tolerances, the decode module's cache against a plain prompt, the table's memory columns and commands, and
# zoo.py's compile order and limits.
#   /usr/bin/python3 -m pytest -q -p no:cacheprovider bench/zoo/test_zoo_local.py
import json
import os
import subprocess
import sys

import pytest

try:
    import torch
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402
import report  # noqa: E402
import zoo  # noqa: E402

FULLSIZE = ["bert_base", "bert_base_b8", "gpt2_124m", "gpt2_124m_decode", "llama_500m", "llama_500m_decode",
            "llama_1b_bf16", "llama_1b_bf16_decode", "resnet50", "resnet50_b8", "vit_b16", "whisper_base_encoder"]


def test_fullsize_group_and_devices():
    assert models.groups()["fullsize"] == FULLSIZE
    assert models.get("llama_500m").devices == ("cpu",) and models.get("llama_500m").dtype == "f32"
    assert models.get("llama_1b_bf16").devices == ("cuda",) and models.get("llama_1b_bf16").dtype == "bf16"
    assert all(models.get(n).stateful for n in FULLSIZE if n.endswith("_decode"))


def test_list_runs_without_torch_and_all_leaves_fullsize_out(monkeypatch):
    r = subprocess.run([sys.executable, os.path.join(HERE, "zoo.py"), "--list"], capture_output=True, text=True)
    assert r.returncode == 0 and "MODELS=fullsize: " + ",".join(FULLSIZE) in r.stdout
    monkeypatch.setenv("MODELS", "all")
    assert not set(FULLSIZE) & set(zoo.Settings("mpspack").models)
    monkeypatch.setenv("MODELS", "fullsize,resnet18")
    assert zoo.Settings("mpspack").models == FULLSIZE + ["resnet18"]


def test_archs_group_is_left_out_of_all(monkeypatch):
    archs = models.groups()["archs"]
    assert archs == ["albert", "electra", "deberta_v2", "bloom", "opt", "gemma", "resnet18_b2", "levit", "mlp_mixer"]
    monkeypatch.setenv("MODELS", "all")
    assert not set(archs) & set(zoo.Settings("mpspack").models)
    monkeypatch.setenv("MODELS", "archs")
    assert zoo.Settings("mpspack").models == archs


def test_tolerances():
    deep = models.get("llama_1b_bf16")
    assert models.tolerance(deep, "cuda", scale=10.0)[:2] == (1.6e-2, 0.16)
    assert models.tolerance(deep, "cuda", scale=None)[:2] == (1.6e-2, 1e-5)      # no scale: bf16's own
    assert models.tolerance(models.get("mlp_bf16"), "cuda", scale=10.0)[:2] == (1.6e-2, 1e-5)
    assert models.tolerance(models.get("llama_500m"), "cpu", scale=20.0)[:2] == (1e-3, 2e-3)
    assert models.tolerance(models.get("whisper_base_encoder"), "cuda", scale=2.0)[:2] == (1e-2, 2e-2)
    assert models.tolerance(models.get("bert_base"), "cuda", scale=float("nan"))[:2] == (1e-3, 1e-4)


def test_compile_order_and_limits(monkeypatch):
    monkeypatch.setenv("MODELS", "resnet18,bert_base,llama_500m")
    monkeypatch.setenv("COMPILE_DEADLINE_S", "1000")
    s = zoo.Settings("mpspack")
    rows = [zoo.new_row(m, "cpu") for m in s.models]
    assert [r["model"] for r in zoo.compile_order(rows)] == ["llama_500m", "bert_base", "resnet18"]
    assert zoo.compile_timeout(s, rows[2])[0] == 420
    assert zoo.compile_timeout(s, rows[0])[0] > 900          # no limit of its own: the deadline's
    s.compile_deadline_s = 100                               # a deadline sooner than the entry's limit wins
    assert zoo.compile_timeout(s, rows[2])[0] <= 100


def test_first_result_limit_grows_with_the_package():
    assert zoo.first_result_limit("capi", None) == 15.0
    assert zoo.first_result_limit("capi", 2.5e9) == 40.0
    assert zoo.first_result_limit("eager", 1e9) == 90.0


def test_bench_memory_reads_the_report():
    cpu = zoo.bench_memory({"peak_rss_bytes": 123})
    assert cpu == {"peak_rss_bytes": 123}
    device = {"memory_used_bytes": 5 << 30, "memory_total_bytes": 80 << 30, "pool_peak_bytes": 7 << 20,
              "weights_upload": {"bytes": 2 << 30}}
    gpu = zoo.bench_memory({"peak_rss_bytes": 1, "device": device})
    assert gpu["device_used_bytes"] == 5 << 30 and gpu["pool_peak_bytes"] == 7 << 20
    assert gpu["weights_uploaded_bytes"] == 2 << 30


def _row(**more):
    row = {"model": "m", "device": "cuda", "errors": [], "match": True, "max_abs": 0.0, "max_rel": 0.0,
           "rtol": 1e-3, "atol": 1e-4, "mpspack_p50_ms": 1.0, "torch": {"p50_ms": 2.0, "runner": "r"}}
    row.update(more)
    return row


def test_table_rows_have_every_column():
    old = _row()                                             # a row as the zoo wrote them before memory columns
    new = _row(model="gpt2_124m", mpspack_memory={"peak_rss_bytes": 300 << 20, "device_used_bytes": 1500 << 20,
                                                  "pool_peak_bytes": 40 << 20},
               commands={"bench": "mpspack run x --bench"})
    new["torch"] = {"p50_ms": 2.0, "runner": "r", "command": "python3 time_torch.py capi",
                    "memory": {"peak_rss_bytes": 900 << 20, "device_used_bytes": 2100 << 20,
                               "max_allocated_bytes": 60 << 20}}
    failed = _row(model="f", torch={"runner": "none", "memory": [{"ok": False, "problem": "x"}]})
    text = report.markdown({"command": "c"}, [old, new, failed])
    table = [l for l in text.splitlines() if l.startswith("|")]
    assert all(l.count(" | ") == len(report.COLUMNS) - 1 for l in table if not l.startswith("|-"))
    cells = table[3].split(" | ")
    i = report.COLUMNS.index("peak RSS MiB mpspack / torch")
    assert cells[i] == "300 / 900" and cells[i + 1] == "1500 / 2100 (40 / 60)"
    assert table[2].split(" | ")[i] == "–" and table[4].split(" | ")[i] == "–"
    assert "- gpt2_124m cuda: mpspack `mpspack run x --bench`; torch `python3 time_torch.py capi`" in text
    json.dumps([old, new, failed])


def test_a_miss_says_how_far_torchs_runtime_is():
    both = _row(match=False, mismatches=7, max_abs=0.16)
    both["torch"]["vs_eager"] = [{"ok": False, "max_abs": 0.154, "max_rel": 9.0}]
    ours = _row(match=False, mismatches=7, max_abs=0.16)
    ours["torch"]["vs_eager"] = [{"ok": True, "max_abs": 1e-6, "max_rel": 1e-4}]
    cell = report.COLUMNS.index("matches torch eager: max abs / rel error (rtol, atol)")
    both_cells, ours_cells = (report.table_row(r).split(" | ")[cell] for r in (both, ours))
    assert both_cells.startswith("NO (7 elements): 0.16") and both_cells.endswith("torch's runtime misses too: 0.15")
    assert "torch's runtime" not in ours_cells


# --- the decode module, with torch 1.13's stand-in for scaled_dot_product_attention ---

needs_torch = pytest.mark.skipif(torch is None, reason="no torch here")


def _sdpa(q, k, v, attn_mask=None):
    scores = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5)
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf"))
    return scores.softmax(-1) @ v


@pytest.fixture
def decode(monkeypatch):
    if torch is None:
        pytest.skip("no torch here")
    F = torch.nn.functional
    if not hasattr(F, "scaled_dot_product_attention"):
        monkeypatch.setattr(F, "scaled_dot_product_attention", _sdpa, raising=False)
    import own_models_decode
    return own_models_decode


def small(decode, style, tied=True):
    if style == "gpt2":
        return decode.LMConfig("gpt2", 97, 32, 2, 4, 4, 64, 16, positions=24, tied=tied)
    return decode.LMConfig("llama", 97, 32, 2, 4, 2, 48, 16, rope_theta=500.0, tied=tied)


@pytest.mark.parametrize("style", ["gpt2", "llama"])
def test_steps_over_the_cache_give_the_prompt_logits(decode, style):
    """Token by token over the cache, each step's logits are the whole prompt's at that position: the cache is
    written where the step is, read back by the later ones, masked beyond each token's own position."""
    torch.manual_seed(0)
    c = small(decode, style)
    model = decode.StaticCacheLM(c).eval()
    ids = torch.randint(0, c.vocab, (1, 9))
    with torch.no_grad():
        import copy
        stepper = copy.deepcopy(model)
        prompt = model(ids, torch.arange(9))
        steps = torch.cat([stepper(ids[:, i:i + 1], torch.tensor([i])) for i in range(9)], dim=1)
    assert torch.allclose(prompt, steps, atol=1e-5)
    assert prompt[0, 3].abs().max() > 0 and not torch.allclose(prompt[0, 3], prompt[0, 4])


def test_the_step_reads_what_it_wrote(decode):
    """The timed step attends to its own key and value: with the write skipped (the slot left zero) it differs."""
    torch.manual_seed(1)
    model, (ids, pos) = decode.decode_step(small(decode, "llama"))
    assert int(pos) == 15 and float(model.layers[0].k_cache[0, :, 15].abs().sum()) == 0.0
    with torch.no_grad():
        import copy
        skipped = copy.deepcopy(model)
        for layer in skipped.layers:
            layer.k_cache.index_copy_ = lambda *a: None
            layer.v_cache.index_copy_ = lambda *a: None
        assert not torch.allclose(model(ids, pos), skipped(ids, pos))
        again = model(ids, pos)
        assert torch.equal(again, model(ids, pos))        # repeated steps write the same slot: the same logits


def test_rotary_scores_depend_on_the_distance_alone(decode):
    """Rotary positions: a query at m and a key at n score as at m + s and n + s (each pair of lanes turned by
    its own frequency), and not as at another distance."""
    torch.manual_seed(2)
    q, k = torch.randn(64), torch.randn(64)

    def score(m, n):
        cos, sin = decode.rotary_angles(torch.tensor([m, n]), 64, 10000.0, torch.float32)
        return float(decode.rotate(q, cos[0], sin[0]) @ decode.rotate(k, cos[1], sin[1]))

    assert score(5, 2) == pytest.approx(score(300, 297), rel=1e-4)
    assert score(5, 2) != pytest.approx(score(5, 3), rel=1e-2)
    cos, sin = decode.rotary_angles(torch.tensor([0]), 64, 10000.0, torch.float32)
    assert torch.equal(decode.rotate(q, cos[0], sin[0]), q)                       # position 0: no turn


@pytest.mark.parametrize("style,tied", [("gpt2", True), ("llama", True), ("llama", False)])
def test_parameter_count_is_the_module_s(decode, style, tied):
    model = decode.StaticCacheLM(small(decode, style, tied))
    assert decode.parameter_count(small(decode, style, tied)) == sum(p.numel() for p in model.parameters())


def test_full_sizes_are_the_checkpoints(decode):
    """The decode rows' sizes, from the same configs as the prompt rows: gpt2's 124,439,808 parameters,
    Llama-3.2-1B's 1,235,814,400, Qwen2.5-0.5B's 494,032,768 less its q/k/v biases (24 x 1,152)."""
    assert decode.parameter_count(models._decode_config("gpt2", models._GPT2)) == 124_439_808
    assert decode.parameter_count(models._decode_config("llama", models._LLAMA_1B)) == 1_235_814_400
    assert decode.parameter_count(models._decode_config("llama", models._LLAMA_500M)) == 494_032_768 - 24 * 1152


def test_decode_rows_export_as_built(decode):
    """The decode entry's build gives the module and its one input set (ids [1, 1], position 511)."""
    torch.manual_seed(models.SEED)
    c = models._decode_config("gpt2", models._GPT2)
    c = decode.LMConfig(**dict(c.__dict__, layers=1))                    # one layer is enough here
    model, (ids, pos) = decode.decode_step(c)
    assert ids.shape == (1, 1) and pos.tolist() == [511]
    assert model(ids, pos).shape == (1, 1, 50257)


FAKE_MPSPACK = r'''#!/usr/bin/python3
# mpspack's command line as zoo.py calls it, answering from the case's own files: `run --output` writes the
# expected outputs as mpspack's, `--json` says they match, `--bench` reports fixed figures.
import json, os, sys
import numpy as np
a = sys.argv[1:]
if a == ["--version"]:
    print("mpspack (stand-in)"); sys.exit(0)
if "build" in a:
    open(a[a.index("-o") + 1], "w").close(); sys.exit(0)
if "--bench" in a:
    print(json.dumps({"latency_ms": {"p50": 1.5}, "time_to_first_result_ms": 20.0, "peak_rss_bytes": 100 << 20}))
    sys.exit(0)
expects = [a[i + 1] for i, x in enumerate(a) if x == "--expect"]
if "--output" in a:
    out = a[a.index("--output") + 1]
    os.makedirs(out, exist_ok=True)
    for i, spec in enumerate(expects):
        path, _, shape = spec.rsplit(":", 2)
        np.save(os.path.join(out, f"output{i}.npy"),
                np.fromfile(path, dtype=np.float32).reshape([int(d) for d in shape.split("x")]))
print(json.dumps({"outputs": [{"match": True, "mismatches": 0, "max_abs_error": 0.0, "max_rel_error": 0.0}
                              for _ in expects], "timings": {}}))
'''


@needs_torch
def test_zoo_end_to_end_with_stand_ins(tmp_path):
    """zoo.py over a case made here (REUSE=1: no export or AOTInductor, which Debian's torch lacks), mpspack a
    stand-in, torch's side torch eager: the row gets both sides' p50s over two rounds and both sides' memory, the
    table shows them, and the runner's extracted library folder is gone afterwards."""
    import tensors
    name, case = "deconv_decoder", tmp_path / "work" / "cpu_deconv_decoder"
    case.mkdir(parents=True)
    torch.manual_seed(models.SEED)
    module, inputs = models.get(name).build()
    with torch.no_grad():
        outputs = tensors.flat_outputs(models.place(module, "cpu")(*inputs))
    meta = {"model": name, "device": "cpu", "ok": True, "pt2_bytes": 1000,
            "inputs": tensors.save_all(inputs, str(case), "input"),
            "outputs": tensors.save_all(outputs, str(case), "expected")}
    torch.save(list(inputs), case / "inputs.pt")
    torch.save(outputs, case / "expected.pt")
    (case / "meta.json").write_text(json.dumps(meta))
    (case / "model.pt2").write_bytes(b"")
    (case / "torch_capi").mkdir()
    fake = tmp_path / "mpspack"
    fake.write_text(FAKE_MPSPACK)
    fake.chmod(0o755)
    env = dict(os.environ, REUSE="1", MODELS=name, DEVICES="cpu", TORCH_RUNNER="eager", ROUNDS="2",
               ITERATIONS="20", WARMUP="1", WORK=str(tmp_path / "work"), OUT=str(tmp_path / "out"))
    r = subprocess.run([sys.executable, os.path.join(HERE, "zoo.py"), str(fake)], env=env, capture_output=True,
                       text=True, timeout=500)
    assert r.returncode == 0, r.stderr[-2000:]
    row = json.loads((tmp_path / "out" / "zoo.json").read_text())["rows"][0]
    assert row["errors"] == [] and row["match"] is True and len(row["rounds"]) == 2
    assert row["mpspack_p50_ms"] == 1.5 and row["torch"]["p50_ms"] > 0
    assert row["mpspack_memory"] == {"peak_rss_bytes": 100 << 20}
    assert row["torch"]["memory"]["peak_rss_bytes"] > 50 << 20          # a process that imported torch
    assert all(c["ok"] for c in row["torch"]["vs_mpspack"])
    assert not (case / "torch_capi").exists()
    md = (tmp_path / "out" / "zoo.md").read_text()
    assert "| 100 / " in md and f"- {name} cpu: mpspack `" in md

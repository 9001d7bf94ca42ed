import random

from course.checks import assert_equal, assert_not_using, assert_raises, fresh_seed
from course.i18n import tr
from course.memory import ActivationConfig, Model, korthikanti_layer_bytes, layer_activation_bytes, preset

from submission import gpt_layer_bytes, llama_layer_bytes

SETTINGS = [(1, False, "none"), (8, False, "none"), (8, True, "none"), (8, True, "selective"), (8, False, "selective"),
            (8, False, "full"), (8, True, "full")]
GPT_HINT = ("逐个数：哪些张量在 TP 的区域里（切成 1/t），哪些每个 rank 都有完整的一份？哪些随 ffn 变，哪些是 1 字节的 "
            "mask？",
            "count tensor by tensor: which lie inside the TP region (1/t each), which does every rank hold whole? "
            "Which grow with ffn, which are 1-byte masks?")


def test_gpt3_175b():
    m = preset("gpt3-175b")
    for t, sp, rec in SETTINGS:
        assert_equal(gpt_layer_bytes(2048, 1, m.hidden, m.heads, t, sp, rec),
                     korthikanti_layer_bytes(2048, 1, m.hidden, m.heads, t, sp, rec),
                     f"GPT-3 175B s=2048 b=1 t={t} sp={sp} recompute={rec}", tr(*GPT_HINT))


def test_random_gpt_shapes_widths_and_element_sizes():
    seed = fresh_seed()
    rng = random.Random(seed)
    for _ in range(40):
        t = rng.choice([1, 2, 4, 8])
        a = t * rng.randint(1, 8)
        h, s, b = a * rng.randint(1, 16), t * rng.randint(1, 64), rng.randint(1, 4)
        f, d = h * rng.randint(1, 6) + rng.choice([0, t]), rng.choice([2, 4])
        sp = t > 1 and rng.random() < 0.5
        rec = rng.choice(["none", "selective", "full"])
        want = layer_activation_bytes(Model("gpt", 1, h, a, a, f, 100, block="gpt"),
                                      ActivationConfig(seq=s, mbs=b, tp=t, sp=sp, recompute=rec, dtype_bytes=d))
        assert_equal(gpt_layer_bytes(s, b, h, a, t, sp, rec, ffn=f, dtype_bytes=d), want,
                     f"gpt_layer_bytes({s}, {b}, {h}, {a}, {t}, {sp}, {rec!r}, ffn={f}, dtype_bytes={d}) (seed={seed})",
                     tr(*GPT_HINT))
    assert_not_using(gpt_layer_bytes, "course")


def test_llama_presets_and_random_shapes():
    seed = fresh_seed()
    rng = random.Random(seed)
    cases = [(preset(name), 8192, 1, t, sp, rec, 2) for name in ("llama3-8b", "llama3-70b", "llama3-405b")
             for t, sp, rec in SETTINGS]
    for _ in range(30):
        t = rng.choice([1, 2, 4])
        kv = t * rng.randint(1, 4)
        a = kv * rng.randint(1, 4)
        h = a * rng.randint(1, 8)
        model = Model("random", 1, h, a, kv, h * rng.randint(1, 4), 100, block="llama")
        cases.append((model, t * rng.randint(1, 32), rng.randint(1, 3), t, t > 1 and rng.random() < 0.5,
                      rng.choice(["none", "selective", "full"]), rng.choice([2, 4])))
    for model, s, b, t, sp, rec, d in cases:
        want = layer_activation_bytes(model, ActivationConfig(seq=s, mbs=b, tp=t, sp=sp, recompute=rec, dtype_bytes=d))
        assert_equal(llama_layer_bytes(s, b, model.hidden, model.heads, model.kv_heads, model.ffn, t, sp, rec,
                                       dtype_bytes=d), want,
                     f"llama_layer_bytes({model.name}: s={s} b={b} h={model.hidden} a={model.heads} "
                     f"kv={model.kv_heads} ffn={model.ffn} t={t} sp={sp} {rec!r} dtype_bytes={d}) (seed={seed})",
                     tr("K、V 的宽度是 kv_heads × h/a；没有 dropout，softmax 的输出直接乘 V；SwiGLU "
                        "里每个按元素的操作存它的输入",
                        "K and V are kv_heads × h/a wide; with no dropout the softmax output multiplies V directly; "
                        "in SwiGLU every elementwise op keeps its input"))
    assert_not_using(llama_layer_bytes, "course")


def test_bad_arguments():
    for args in [(0, 1, 8, 2), (4, 1, 8, 2, 3), (4, 1, 8, 2, 2, True, "some"), (4, 1, 8, 2, 1, True),
                 (3, 1, 8, 2, 2, True), (4.0, 1, 8, 2), (True, 1, 8, 2), (4, 1, 8, 2, 1, False, "none", 0),
                 (4, 1, 8, 2, 1, False, "none", None, 2.0)]:
        assert_raises(ValueError, gpt_layer_bytes, *args, what=f"gpt_layer_bytes{args}")
    assert_raises(ValueError, llama_layer_bytes, 4, 1, 8, 4, 2, 16, 4,
                  what=tr("llama_layer_bytes：t 不整除 kv_heads", "llama_layer_bytes: t does not divide kv_heads"))

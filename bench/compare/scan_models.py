"""Recurrences written as plain ONNX `Scan`s over time (issue 26), built
node by node with onnx.helper and numpy weights: no seqrt op, no
seqrt.export, no torch. They are what a user's own converter or script
writes, so they measure how seqrt runs a standard-ONNX recurrence.

Opset 17, fp32, no batch axis except the LSTM's and GRU's (ONNX RNN
layout); the time axis of every sequence input and output is the symbolic
dim "seq". The constants (A, gamma, W, R, b, bW, bR) are initializers of the
main graph that the Scan bodies read from the outer scope; the axes of
Unsqueeze/Squeeze/ReduceSum and the split sizes are Constant nodes inside
the bodies.

scan_selective, Mamba-1's selective scan (S4D-real A = -[1..N] per channel):
    inputs  u (L, D), delta (L, D) in [1e-3, 0.1], B (L, N), C (L, N),
            h0 (D, N) (fed zeros); initializer A (D, N) < 0
    step    dA = Exp(Unsqueeze(delta_t, 1) * A)
            h  = dA * h + Unsqueeze(delta_t * u_t, 1) * Unsqueeze(B_t, 0)
            y_t = ReduceSum(h * Unsqueeze(C_t, 0), axes=[1], keepdims=0)
    outputs y (L, D), h_last (D, N)

scan_retention, RetNet's recurrent form (gamma_h = 1 - 2^(-5-h) for H = 8):
    inputs  q, k, v (T, H, d) (q scaled by d^-1/2), S0 (H, d, d) (zeros);
            initializer gamma (H)
    step    S   = Unsqueeze(gamma, [1, 2]) * S
                  + Unsqueeze(k_t, 2) * Unsqueeze(v_t, 1)
            o_t = Squeeze(MatMul(Unsqueeze(q_t, 1), S), 1)     (H, d)
    outputs o (T, H, d), S_last (H, d, d)

scan_delta, DeltaNet's delta rule (keys L2-normalised, beta in (0, 1)):
    inputs  q, k, v (T, H, d) (q scaled by d^-1/2), beta (T, H), S0 (H, d, d)
            (zeros)
    step    Sk  = Squeeze(MatMul(Unsqueeze(k_t, 1), S), 1)            (H, d)
            u   = Unsqueeze(beta_t, 1) * (v_t - Sk)
            S   = S + Unsqueeze(k_t, 2) * Unsqueeze(u, 1)
            o_t = Squeeze(MatMul(Unsqueeze(q_t, 1), S), 1)
    outputs o (T, H, d), S_last (H, d, d)

scan_lstm, one LSTM layer's cell (ONNX LSTM gate order i, o, f, c; no peepholes):
    inputs  x (T, 1, I), h0 (1, Hd), c0 (1, Hd) (zeros);
            initializers W (I, 4Hd), R (Hd, 4Hd), b (4Hd), U(±1/sqrt(Hd))
    step    i, o, f, g = Split(MatMul(x_t, W) + MatMul(h, R) + b, axis=1)
            c = Sigmoid(f) * c + Sigmoid(i) * Tanh(g)
            h = Sigmoid(o) * Tanh(c)
    outputs y (T, 1, Hd), h_last (1, Hd), c_last (1, Hd)

scan_gru, one GRU layer's cell as PyTorch writes it (gate order r, z, n;
linear_before_reset, i.e. the reset gate scales h·Rn + bRn):
    inputs  x (T, 1, I), h0 (1, Hd) (zeros);
            initializers W (I, 3Hd), R (Hd, 3Hd), bW, bR (3Hd), U(±1/sqrt(Hd))
    step    x_r, x_z, x_n = Split(MatMul(x_t, W) + bW, [Hd]*3, axis=1)
            h_r, h_z, h_n = Split(MatMul(h, R) + bR, [Hd]*3, axis=1)
            r = Sigmoid(x_r + h_r), z = Sigmoid(x_z + h_z)
            n = Tanh(x_n + r * h_n)
            h = (1 - z) * n + z * h
    outputs y (T, 1, Hd), h_last (1, Hd)
"""

import pathlib
from typing import Dict, List, Sequence, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .models import OPSET, Case

FLOAT = TensorProto.FLOAT
SEQ = "seq"


def _value(name: str, shape: Sequence) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, FLOAT, list(shape))


def _axes(name: str, axes: Sequence[int]) -> onnx.NodeProto:
    """A Constant node holding int64 axes (Unsqueeze/Squeeze/ReduceSum
    take them as an input since opset 13)."""
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(
                                np.array(axes, np.int64), name))


def _node(op: str, inputs: List[str], output: str, **attrs) -> onnx.NodeProto:
    return helper.make_node(op, inputs, [output], name=output, **attrs)


def _scan_model(name: str, body: onnx.GraphProto, states: List[Tuple[str, Sequence]],
                scanned: List[Tuple[str, Sequence]],
                results: List[Tuple[str, Sequence]],
                weights: Dict[str, np.ndarray]) -> onnx.ModelProto:
    """The main graph: one Scan over axis 0 of the `scanned` inputs,
    carrying `states`; its outputs are the final states then the stacked
    scan outputs, named as `results` lists them (states' first)."""
    inputs = [n for n, _ in scanned]
    scan = helper.make_node("Scan", [n for n, _ in states] + inputs,
                            [n for n, _ in results], name=f"{name}_scan",
                            body=body, num_scan_inputs=len(inputs))
    graph = helper.make_graph(
        [scan], name,
        [_value(n, s) for n, s in states + scanned],
        [_value(n, s) for n, s in results],
        initializer=[numpy_helper.from_array(v, n) for n, v in weights.items()])
    # IR 8 is opset 17's (the onnx package would stamp its newest, which
    # onnxruntime may not read yet).
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=8,
                              producer_name="seqrt bench/compare/scan_models.py")
    onnx.checker.check_model(model, full_check=True)
    return model


def selective_model(d: int, n: int) -> onnx.ModelProto:
    nodes = [
        _axes("axis0", [0]), _axes("axis1", [1]),
        _node("Unsqueeze", ["delta_t", "axis1"], "delta_col"),
        _node("Mul", ["delta_col", "A"], "delta_A"),
        _node("Exp", ["delta_A"], "dA"),
        _node("Mul", ["dA", "h_prev"], "decayed"),
        _node("Mul", ["delta_t", "u_t"], "delta_u"),
        _node("Unsqueeze", ["delta_u", "axis1"], "delta_u_col"),
        _node("Unsqueeze", ["B_t", "axis0"], "B_row"),
        _node("Mul", ["delta_u_col", "B_row"], "delta_B_u"),
        _node("Add", ["decayed", "delta_B_u"], "h"),
        _node("Unsqueeze", ["C_t", "axis0"], "C_row"),
        _node("Mul", ["h", "C_row"], "h_C"),
        _node("ReduceSum", ["h_C", "axis1"], "y_t", keepdims=0),
    ]
    body = helper.make_graph(
        nodes, "selective_step",
        [_value("h_prev", (d, n)), _value("u_t", (d,)), _value("delta_t", (d,)),
         _value("B_t", (n,)), _value("C_t", (n,))],
        [_value("h", (d, n)), _value("y_t", (d,))])
    a = -np.tile(np.arange(1, n + 1, dtype=np.float32), (d, 1))
    return _scan_model(
        "scan_selective", body, [("h0", (d, n))],
        [("u", (SEQ, d)), ("delta", (SEQ, d)), ("B", (SEQ, n)), ("C", (SEQ, n))],
        [("h_last", (d, n)), ("y", (SEQ, d))], {"A": a})


def selective_feeds(d: int, n: int, length: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    log_delta = rng.uniform(np.log(1e-3), np.log(0.1), (length, d))
    return {"h0": np.zeros((d, n), np.float32),
            "u": rng.standard_normal((length, d), np.float32),
            "delta": np.exp(log_delta).astype(np.float32),
            "B": rng.standard_normal((length, n), np.float32),
            "C": rng.standard_normal((length, n), np.float32)}


def retention_model(heads: int, dim: int) -> onnx.ModelProto:
    nodes = [
        _axes("axis1", [1]), _axes("axis2", [2]), _axes("axes12", [1, 2]),
        _node("Unsqueeze", ["gamma", "axes12"], "gamma_hd"),
        _node("Mul", ["gamma_hd", "S_prev"], "decayed"),
        _node("Unsqueeze", ["k_t", "axis2"], "k_col"),
        _node("Unsqueeze", ["v_t", "axis1"], "v_row"),
        _node("Mul", ["k_col", "v_row"], "k_v"),
        _node("Add", ["decayed", "k_v"], "S"),
        _node("Unsqueeze", ["q_t", "axis1"], "q_row"),
        _node("MatMul", ["q_row", "S"], "q_S"),
        _node("Squeeze", ["q_S", "axis1"], "o_t"),
    ]
    state = (heads, dim, dim)
    body = helper.make_graph(
        nodes, "retention_step",
        [_value("S_prev", state), _value("q_t", (heads, dim)),
         _value("k_t", (heads, dim)), _value("v_t", (heads, dim))],
        [_value("S", state), _value("o_t", (heads, dim))])
    gamma = 1 - 2.0 ** (-5 - np.arange(heads, dtype=np.float32))
    sequence = (SEQ, heads, dim)
    return _scan_model(
        "scan_retention", body, [("S0", state)],
        [("q", sequence), ("k", sequence), ("v", sequence)],
        [("S_last", state), ("o", sequence)], {"gamma": gamma.astype(np.float32)})


def retention_feeds(heads: int, dim: int, length: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    shape = (length, heads, dim)
    return {"S0": np.zeros((heads, dim, dim), np.float32),
            "q": rng.standard_normal(shape, np.float32) / np.float32(np.sqrt(dim)),
            "k": rng.standard_normal(shape, np.float32),
            "v": rng.standard_normal(shape, np.float32)}


def lstm_model(inputs: int, hidden: int) -> onnx.ModelProto:
    gates = ["i_pre", "o_pre", "f_pre", "g_pre"]
    nodes = [
        _node("MatMul", ["x_t", "W"], "x_W"),
        _node("MatMul", ["h_prev", "R"], "h_R"),
        _node("Add", ["x_W", "h_R"], "x_W_h_R"),
        _node("Add", ["x_W_h_R", "b"], "gates"),
        helper.make_node("Split", ["gates"], gates, name="split_gates", axis=1),
        _node("Sigmoid", ["i_pre"], "i"),
        _node("Sigmoid", ["o_pre"], "o"),
        _node("Sigmoid", ["f_pre"], "f"),
        _node("Tanh", ["g_pre"], "g"),
        _node("Mul", ["f", "c_prev"], "f_c"),
        _node("Mul", ["i", "g"], "i_g"),
        _node("Add", ["f_c", "i_g"], "c"),
        _node("Tanh", ["c"], "tanh_c"),
        _node("Mul", ["o", "tanh_c"], "h"),
        _node("Identity", ["h"], "y_t"),
    ]
    row = (1, hidden)
    body = helper.make_graph(
        nodes, "lstm_step",
        [_value("h_prev", row), _value("c_prev", row), _value("x_t", (1, inputs))],
        [_value("h", row), _value("c", row), _value("y_t", row)])
    rng = np.random.default_rng(1)
    bound = 1 / np.sqrt(hidden)

    def uniform(*shape):
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    weights = {"W": uniform(inputs, 4 * hidden), "R": uniform(hidden, 4 * hidden),
               "b": uniform(4 * hidden)}
    return _scan_model(
        "scan_lstm", body, [("h0", row), ("c0", row)], [("x", (SEQ, 1, inputs))],
        [("h_last", row), ("c_last", row), ("y", (SEQ, 1, hidden))], weights)


def lstm_feeds(inputs: int, hidden: int, length: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"h0": np.zeros((1, hidden), np.float32),
            "c0": np.zeros((1, hidden), np.float32),
            "x": rng.standard_normal((length, 1, inputs), np.float32)}


def gru_model(inputs: int, hidden: int) -> onnx.ModelProto:
    one = numpy_helper.from_array(np.array(1, np.float32), "one")
    nodes = [
        _axes("gate_sizes", [hidden] * 3),
        helper.make_node("Constant", [], ["one"], name="one", value=one),
        _node("MatMul", ["x_t", "W"], "x_W"),
        _node("Add", ["x_W", "bW"], "x_gates"),
        _node("MatMul", ["h_prev", "R"], "h_R"),
        _node("Add", ["h_R", "bR"], "h_gates"),
        helper.make_node("Split", ["x_gates", "gate_sizes"], ["x_r", "x_z", "x_n"],
                         name="split_x", axis=1),
        helper.make_node("Split", ["h_gates", "gate_sizes"], ["h_r", "h_z", "h_n"],
                         name="split_h", axis=1),
        _node("Add", ["x_r", "h_r"], "r_pre"),
        _node("Sigmoid", ["r_pre"], "r"),
        _node("Add", ["x_z", "h_z"], "z_pre"),
        _node("Sigmoid", ["z_pre"], "z"),
        _node("Mul", ["r", "h_n"], "r_h_n"),
        _node("Add", ["x_n", "r_h_n"], "n_pre"),
        _node("Tanh", ["n_pre"], "n"),
        _node("Sub", ["one", "z"], "one_minus_z"),
        _node("Mul", ["one_minus_z", "n"], "new_part"),
        _node("Mul", ["z", "h_prev"], "kept_part"),
        _node("Add", ["new_part", "kept_part"], "h"),
        _node("Identity", ["h"], "y_t"),
    ]
    row = (1, hidden)
    body = helper.make_graph(
        nodes, "gru_step", [_value("h_prev", row), _value("x_t", (1, inputs))],
        [_value("h", row), _value("y_t", row)])
    rng = np.random.default_rng(2)
    bound = 1 / np.sqrt(hidden)

    def uniform(*shape):
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    weights = {"W": uniform(inputs, 3 * hidden), "R": uniform(hidden, 3 * hidden),
               "bW": uniform(3 * hidden), "bR": uniform(3 * hidden)}
    return _scan_model(
        "scan_gru", body, [("h0", row)], [("x", (SEQ, 1, inputs))],
        [("h_last", row), ("y", (SEQ, 1, hidden))], weights)


def gru_feeds(inputs: int, hidden: int, length: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"h0": np.zeros((1, hidden), np.float32),
            "x": rng.standard_normal((length, 1, inputs), np.float32)}


def delta_model(heads: int, dim: int) -> onnx.ModelProto:
    nodes = [
        _axes("axis1", [1]), _axes("axis2", [2]),
        _node("Unsqueeze", ["k_t", "axis1"], "k_row"),
        _node("MatMul", ["k_row", "S_prev"], "k_S"),
        _node("Squeeze", ["k_S", "axis1"], "S_k"),
        _node("Sub", ["v_t", "S_k"], "error"),
        _node("Unsqueeze", ["beta_t", "axis1"], "beta_col"),
        _node("Mul", ["beta_col", "error"], "update"),
        _node("Unsqueeze", ["k_t", "axis2"], "k_col"),
        _node("Unsqueeze", ["update", "axis1"], "update_row"),
        _node("Mul", ["k_col", "update_row"], "k_update"),
        _node("Add", ["S_prev", "k_update"], "S"),
        _node("Unsqueeze", ["q_t", "axis1"], "q_row"),
        _node("MatMul", ["q_row", "S"], "q_S"),
        _node("Squeeze", ["q_S", "axis1"], "o_t"),
    ]
    state = (heads, dim, dim)
    body = helper.make_graph(
        nodes, "delta_step",
        [_value("S_prev", state), _value("q_t", (heads, dim)),
         _value("k_t", (heads, dim)), _value("v_t", (heads, dim)),
         _value("beta_t", (heads,))],
        [_value("S", state), _value("o_t", (heads, dim))])
    sequence = (SEQ, heads, dim)
    return _scan_model(
        "scan_delta", body, [("S0", state)],
        [("q", sequence), ("k", sequence), ("v", sequence),
         ("beta", (SEQ, heads))],
        [("S_last", state), ("o", sequence)], {})


def delta_feeds(heads: int, dim: int, length: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    shape = (length, heads, dim)
    k = rng.standard_normal(shape, np.float32)
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    return {"S0": np.zeros((heads, dim, dim), np.float32),
            "q": rng.standard_normal(shape, np.float32) / np.float32(np.sqrt(dim)),
            "k": k,
            "v": rng.standard_normal(shape, np.float32),
            "beta": rng.uniform(0.1, 0.9, (length, heads)).astype(np.float32)}


def _case(model: str, phase: str, key: str, tokens: int, build, feeds) -> Case:
    def write(path: pathlib.Path) -> Dict[str, np.ndarray]:
        onnx.save(build(), str(path))
        return feeds()
    return Case(model, phase, key, tokens, False, write)


def scan_selective_cases(quick: bool) -> List[Case]:
    d, n, length = (64, 8, 64) if quick else (1536, 16, 2048)
    return [_case("scan_selective", f"Scan selective scan D{d} N{n}, L {length}",
                  f"scan_selective_d{d}_n{n}_L{length}", length,
                  lambda: selective_model(d, n),
                  lambda: selective_feeds(d, n, length))]


def scan_retention_cases(quick: bool) -> List[Case]:
    heads, dim, length = (4, 16, 64) if quick else (8, 128, 2048)
    return [_case("scan_retention",
                  f"Scan retention H{heads} {dim}×{dim} state, T {length}",
                  f"scan_retention_h{heads}_d{dim}_T{length}", length,
                  lambda: retention_model(heads, dim),
                  lambda: retention_feeds(heads, dim, length))]


def scan_delta_cases(quick: bool) -> List[Case]:
    heads, dim, length = (4, 16, 64) if quick else (8, 128, 2048)
    return [_case("scan_delta",
                  f"Scan delta rule H{heads} {dim}×{dim} state, T {length}",
                  f"scan_delta_h{heads}_d{dim}_T{length}", length,
                  lambda: delta_model(heads, dim),
                  lambda: delta_feeds(heads, dim, length))]


def scan_lstm_cases(quick: bool) -> List[Case]:
    inputs, hidden, length = (32, 32, 32) if quick else (256, 256, 512)
    return [_case("scan_lstm", f"Scan LSTM cell I{inputs} H{hidden}, T {length}",
                  f"scan_lstm_i{inputs}_h{hidden}_T{length}", length,
                  lambda: lstm_model(inputs, hidden),
                  lambda: lstm_feeds(inputs, hidden, length))]


def scan_gru_cases(quick: bool) -> List[Case]:
    inputs, hidden, length = (32, 32, 32) if quick else (256, 256, 512)
    return [_case("scan_gru", f"Scan GRU cell I{inputs} H{hidden}, T {length}",
                  f"scan_gru_i{inputs}_h{hidden}_T{length}", length,
                  lambda: gru_model(inputs, hidden),
                  lambda: gru_feeds(inputs, hidden, length))]


MODELS = {"scan_selective": scan_selective_cases,
          "scan_retention": scan_retention_cases,
          "scan_delta": scan_delta_cases,
          "scan_lstm": scan_lstm_cases,
          "scan_gru": scan_gru_cases}

"""tests/gen/rnn_ref.py - an independent NumPy model of mica's RNNv2 layer
(TensorRT's IRNNv2Layer), for the fixture and manifest generators.

Written from the cell equations, not from the C reference: whole batches
at once with masks for ragged sequences, gates split with np.split.

Weights follow the manifest's layout: lists indexed by entry 2l + d (l the
layer, d the direction: 0 forward, 1 backward), each entry the gates one
after the other in TensorRT's order, a [G*H, in] matrix or a [G*H]
vector.  LSTM gates: input, output, forget, cell; GRU: update, reset,
hidden.  In skip mode `w` has no entries for layer 0 (the identity).
"""
import numpy as np

GATES = {"relu": 1, "tanh": 1, "lstm": 4, "gru": 3}


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def run(op, x, w, r, wb, rb, layers, hidden, bidirectional=False,
        skip=False, h0=None, c0=None, lens=None):
    """x [N..., T, E] -> (y [N..., T, D*H], hy [N..., L*D, H], cy or None).

    wb, rb may be None (zeros); h0, c0 [N..., L*D, H] or None; lens [N...]
    or None (every sequence T steps).  Computes in float64.
    """
    x = np.asarray(x, np.float64)
    lead = x.shape[:-2]
    T, E = x.shape[-2], x.shape[-1]
    n = int(np.prod(lead, dtype=np.int64))
    D, H, G = (2 if bidirectional else 1), hidden, GATES[op]
    xs = x.reshape(n, T, E)
    lens = (np.full(n, T, np.int64) if lens is None
            else np.asarray(lens, np.int64).reshape(n))
    h0 = (np.zeros((n, layers * D, H)) if h0 is None
          else np.asarray(h0, np.float64).reshape(n, layers * D, H))
    c0 = (np.zeros((n, layers * D, H)) if c0 is None
          else np.asarray(c0, np.float64).reshape(n, layers * D, H))
    hy = np.zeros((n, layers * D, H))
    cy = np.zeros((n, layers * D, H))
    seq = xs
    for l in range(layers):
        out = np.zeros((n, T, D * H))
        for d in range(D):
            e = l * D + d
            if skip and l == 0:
                W = np.concatenate([np.eye(H)] * G)      # identity per gate
            else:
                W = np.asarray(w[e - D if skip else e], np.float64)
                W = W.reshape(G * H, -1)
            R = np.asarray(r[e], np.float64).reshape(G * H, H)
            Wb = np.zeros(G * H) if wb is None else np.asarray(wb[e], np.float64)
            Rb = np.zeros(G * H) if rb is None else np.asarray(rb[e], np.float64)
            h, c = h0[:, e].copy(), c0[:, e].copy()
            for s in range(T):
                active = s < lens                        # [n]
                # Forward reads step s; backward reads len-1-s of each.
                t = np.full(n, s) if d == 0 else np.maximum(lens - 1 - s, 0)
                xt = seq[np.arange(n), t]                # [n, in]
                gx = xt @ W.T + Wb
                gh = h @ R.T + Rb
                if op == "relu":
                    hn, cn = np.maximum(gx + gh, 0.0), c
                elif op == "tanh":
                    hn, cn = np.tanh(gx + gh), c
                elif op == "lstm":
                    xi, xo, xf, xc = np.split(gx, 4, axis=1)
                    hi, ho, hf, hc = np.split(gh, 4, axis=1)
                    i, o, f = sigmoid(xi + hi), sigmoid(xo + ho), sigmoid(xf + hf)
                    cn = f * c + i * np.tanh(xc + hc)
                    hn = o * np.tanh(cn)
                else:  # gru, reset gate after the recurrent product
                    xz, xr, xh = np.split(gx, 3, axis=1)
                    hz, hr, hh = np.split(gh, 3, axis=1)
                    z, rr = sigmoid(xz + hz), sigmoid(xr + hr)
                    hn = (1 - z) * np.tanh(xh + rr * hh) + z * h
                    cn = c
                h = np.where(active[:, None], hn, h)
                c = np.where(active[:, None], cn, c)
                rows = np.nonzero(active)[0]
                out[rows, t[rows], d * H:(d + 1) * H] = h[rows]
            hy[:, e], cy[:, e] = h, c
        seq = out
    y = seq.reshape(lead + (T, D * H))
    hy = hy.reshape(lead + (layers * D, H))
    cy = cy.reshape(lead + (layers * D, H))
    return y, hy, (cy if op == "lstm" else None)


def random_weights(rng, op, layers, hidden, input_size, bidirectional=False,
                   skip=False, scale=0.5, dtype=np.float32):
    """Lists w, r, wb, rb of random entries in the manifest's layout."""
    D, H, G = (2 if bidirectional else 1), hidden, GATES[op]
    w, r, wb, rb = [], [], [], []
    for l in range(layers):
        for _ in range(D):
            inp = input_size if l == 0 else D * H
            if not (skip and l == 0):
                w.append(rng.uniform(-scale, scale, (G * H, inp)).astype(dtype))
            r.append(rng.uniform(-scale, scale, (G * H, H)).astype(dtype))
            wb.append(rng.uniform(-scale, scale, G * H).astype(dtype))
            rb.append(rng.uniform(-scale, scale, G * H).astype(dtype))
    return w, r, wb, rb

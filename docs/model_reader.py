#!/usr/bin/env python3
"""Reference reader for solvegp model files (docs/model-format.md, versions 1 to 6).

Usage:

    python3 docs/model_reader.py [--jitter] model.json inputs.csv

prints predictions as CSV on standard output, with the columns of
`solvegp predict`:

    f_mean,f_var,y_mean,y_var                  (one latent function)
    f_mean_0..,f_var_0..,p_0..p_{C-1}          (C classes)
    f_mean_0,f_mean_1,f_var_0,f_var_1,y_mean,y_var,noise_mean,noise_var
                                               (heteroscedastic)
    f_mean_<t>,f_var_<t>,y_mean_<t>,y_var_<t>  (for each output t of a
                                               multi-output model, named by
                                               meta.target_names or its index)

inputs.csv holds one input per row. A first row that is not all numbers is a
header: if the model records its input names (meta.input_names) and the
header names them all, the columns are taken by name; otherwise by position,
a file with d + 1 columns (d inputs) having its last column (the target)
dropped. Numbers are printed with Python's repr, the shortest decimal that
reads back as the same float64. With --jitter, the diagonal jitters added to
K_uu and C_vv are printed to standard error as "jitter <K_uu> <C_vv>".
A version 4 file may record the collapsed bound the model was fitted with
(collapsed_bound: "standard" or "tighter"; Model.collapsed_bound, "" if
absent), a version 5 file also "blockdiag" with its collapsed_block_size
(Model.collapsed_block_size, 0 if absent); they do not affect predictions.
A version 5 file may also record the bound a model trained by mini-batches
maximized (bound: "standard" or "tighter"; Model.bound, "standard" if
absent); it does not affect predictions either.
A version 5 file may also give each latent function its own mean (mean
type "per_latent").
A version 6 file may hold a model of separate outputs (kind "separate"): one
complete single-output model document per output, each with its own kernel,
likelihood and inducing inputs, predicted with the file's input
standardization and its output's y_means/y_scales entry; its columns are
those of a multi-output model. --jitter then reports output 0's jitters.
A version 1 or 2 file, whose checksum covers the parameters only, is read with a
warning on standard error (after the jitter line).

As a module: `load(path)` loads and checks a file (a `Model`, or a
`Separate` of Models); its `predict(x)` takes a row of raw inputs and
returns the output row above.

Written from docs/model-format.md alone and kept to it: it uses the standard
library only (plain lists, O(M^3) Python loops; meant for checking and for
small models, not for speed). Softmax class probabilities are the one
output it cannot reproduce: solvegp estimates them by Monte Carlo with a
generator of its own, and this reader with another (SOFTMAX_SAMPLES draws
per point), so the two agree only within Monte Carlo error.
"""

import csv
import hashlib
import json
import math
import random
import struct
import sys

FORMAT = "solvegp-model"
VERSION = 6
COLLAPSED_BOUND_VERSION = 4  # first version with collapsed_bound
BOUND_VERSION = 5  # first version with bound
BLOCKDIAG_VERSION = 5  # first version with collapsed_bound "blockdiag" and collapsed_block_size
MULTI_OUTPUT_VERSION = 5  # first version with independent_gaussian and lmc
MULTI_OUTPUT_TYPES = ("independent_gaussian", "lmc")
PER_LATENT_MEAN_VERSION = 5  # first version with the per_latent mean
SEPARATE_VERSION = 6  # first version with kind "separate"

# The jitter policy (model-format.md, "Jitter").
JITTER_START = 1e-10
JITTER_GROWTH = 10.0
JITTER_TRIES = 7
MIN_PIVOT = 1e-11

# Default Gauss-Hermite sizes when quadrature_points is absent.
DEFAULT_QUADRATURE = {"bernoulli": 20, "robustmax": 20, "poisson": 100}

SOFTMAX_SAMPLES = 20000


class FormatError(Exception):
    """The file is not a valid model file for this reader."""


# ---------------------------------------------------------------- numbers

def softplus(u):
    """log(1 + e^u), without overflow."""
    if u > 0:
        return u + math.log1p(math.exp(-u))
    return math.log1p(math.exp(u))


def norm_cdf(z):
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _hermite(n, z):
    """The orthonormal Hermite polynomial h_n (h_n = c_n H_n, without the
    weight) at z, and its derivative sqrt(2n) h_{n-1}(z)."""
    p1, p2 = math.pi ** -0.25, 0.0
    for j in range(1, n + 1):
        p1, p2 = z * math.sqrt(2.0 / j) * p1 - math.sqrt((j - 1.0) / j) * p2, p1
    return p1, math.sqrt(2.0 * n) * p2


def gauss_hermite(n):
    """The n-point Gauss-Hermite rule for the weight exp(-t^2), weights
    divided by sqrt(pi) (they sum to 1): E[g(X)] for X ~ N(mu, v) is about
    sum_q w_q g(mu + sqrt(2 v) t_q). The roots of H_n lie below
    sqrt(2n + 1) and are more than pi/sqrt(2n + 1) apart; each positive
    root is bracketed by stepping down from the previous one in quarters of
    that spacing, then refined by Newton's method kept inside the bracket."""
    step = 0.25 * math.pi / math.sqrt(2 * n + 1)
    roots = []
    hi = math.sqrt(2 * n + 1)
    for _ in range(n // 2):
        a = hi - (0.5 * step if roots else 0.0)
        fa = _hermite(n, a)[0]
        b = a - step
        fb = _hermite(n, b)[0]
        while (fa > 0) == (fb > 0):
            a, fa = b, fb
            b -= step
            fb = _hermite(n, b)[0]
        z = 0.5 * (a + b)
        for _ in range(200):
            f, df = _hermite(n, z)
            if f == 0:
                break
            if (f > 0) == (fa > 0):
                a, fa = z, f
            else:
                b = z
            nz = z - f / df
            if not b < nz < a:
                nz = 0.5 * (a + b)
            done = abs(nz - z) <= 4e-16 * abs(z) or nz in (a, b)
            z = nz
            if done:
                break
        roots.append(z)
        hi = z
    if n % 2:
        roots.append(0.0)
    t = roots + [-z for z in reversed(roots[:n // 2])]
    w = [2.0 / _hermite(n, z)[1] ** 2 / math.sqrt(math.pi) for z in t]
    return t, w


# ---------------------------------------------------------- linear algebra
# Matrices are lists of rows.

def mean_diag(a):
    return sum(a[i][i] for i in range(len(a))) / len(a)


def _cholesky(a, jitter, floor):
    """Lower factor of a + jitter*I, or None if a pivot is not positive or
    its square is below floor."""
    n = len(a)
    lo = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] + (jitter if i == j else 0.0)
            s -= sum(lo[i][k] * lo[j][k] for k in range(j))
            if i == j:
                if not s > 0 or s < floor:
                    return None
                lo[i][i] = math.sqrt(s)
            else:
                lo[i][j] = s / lo[j][j]
    return lo


def jittered_cholesky(a, ref_scale=None):
    """Cholesky factor of a under the jitter policy; returns (L, jitter).
    The scale s is mean(diag(a)), or ref_scale (C_vv: mean(diag(K_vv)))
    when that is given, positive and finite."""
    s = mean_diag(a)
    if not (s > 0) or math.isinf(s):
        s = 1.0
    if ref_scale is not None and ref_scale > 0 and not math.isinf(ref_scale):
        s = ref_scale
    floor = MIN_PIVOT * s
    lo = _cholesky(a, 0.0, floor)
    if lo is not None:
        return lo, 0.0
    jit = JITTER_START * s
    for _ in range(JITTER_TRIES):
        lo = _cholesky(a, jit, floor)
        if lo is not None:
            return lo, jit
        jit *= JITTER_GROWTH
    raise ValueError("matrix not positive definite even with jitter")


def solve_lower(lo, b):
    """x with L x = b."""
    x = []
    for i, row in enumerate(lo):
        x.append((b[i] - sum(row[k] * x[k] for k in range(i))) / row[i])
    return x


def solve_lower_t(lo, b):
    """x with L^T x = b."""
    n = len(lo)
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (b[i] - sum(lo[k][i] * x[k] for k in range(i + 1, n))) / lo[i][i]
    return x


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def norm2_lt(lo, v):
    """||L^T v||^2 for lower-triangular L."""
    n = len(lo)
    return sum(sum(lo[i][j] * v[i] for i in range(j, n)) ** 2 for j in range(n))


def packed_tri(p, off, n):
    """The lower-triangular factor packed row by row at p[off:], each
    row's diagonal entry last, through softplus."""
    lo = [[0.0] * n for _ in range(n)]
    for i in range(n):
        base = off + i * (i + 1) // 2
        for j in range(i):
            lo[i][j] = p[base + j]
        lo[i][i] = softplus(p[base + i])
    return lo


# ----------------------------------------------------------------- kernels

class Kernel:
    """A kernel from its JSON description, with its hyperparameters read
    from the parameter vector p starting at offset pos (self.end: just past
    them), on inputs of d columns.

    Calling it as k(x, y, same) gives k(x, y); same is True when x and y are
    one point of one set (the diagonal of K_uu or K_vv, or k(x, x) at a
    prediction input), which only the white-noise kernel needs."""

    STATIONARY = ("rbf", "matern12", "matern32", "matern52")

    def __init__(self, spec, p, pos, d):
        self.type = spec["type"]
        self.cols = spec.get("columns")
        if self.cols is not None:
            d = len(self.cols)
        t = self.type
        if t in ("sum", "product"):
            self.parts = []
            for part in spec["parts"]:
                k = Kernel(part, p, pos, d)
                self.parts.append(k)
                pos = k.end
        elif t in self.STATIONARY + ("periodic", "rq"):
            n = d if spec.get("ard", False) else 1
            ls = [softplus(u) for u in p[pos:pos + n]]
            self.ls = ls if n == d else ls * d
            pos += n
            if t == "periodic":
                self.period = softplus(p[pos])
                pos += 1
            elif t == "rq":
                self.alpha = softplus(p[pos])
                pos += 1
            self.var = softplus(p[pos])
            pos += 1
        elif t in ("linear", "polynomial"):
            self.degree = spec["degree"] if t == "polynomial" else 1
            self.var, self.offset = softplus(p[pos]), softplus(p[pos + 1])
            pos += 2
        elif t in ("constant", "white"):
            self.var = softplus(p[pos])
            pos += 1
        else:
            raise FormatError("unknown kernel type %r" % t)
        self.end = pos

    def __call__(self, x, y, same=False):
        if self.cols is not None:
            x = [x[j] for j in self.cols]
            y = [y[j] for j in self.cols]
        t = self.type
        if t == "sum":
            return sum(k(x, y, same) for k in self.parts)
        if t == "product":
            out = 1.0
            for k in self.parts:
                out *= k(x, y, same)
            return out
        if t == "constant":
            return self.var
        if t == "white":
            return self.var if same else 0.0
        if t in ("linear", "polynomial"):
            return (self.var * dot(x, y) + self.offset) ** self.degree
        if t == "periodic":
            r2 = sum((math.sin(math.pi * (a - b) / self.period) / l) ** 2 for a, b, l in zip(x, y, self.ls))
            return self.var * math.exp(-r2 / 2)
        r2 = sum(((a - b) / l) ** 2 for a, b, l in zip(x, y, self.ls))
        r = math.sqrt(r2)
        if t == "rq":
            return self.var * math.exp(-self.alpha * math.log1p(r2 / (2 * self.alpha)))
        if t == "rbf":
            return self.var * math.exp(-r2 / 2)
        if t == "matern12":
            return self.var * math.exp(-r)
        if t == "matern32":
            s = math.sqrt(3) * r
            return self.var * (1 + s) * math.exp(-s)
        s = math.sqrt(5) * r
        return self.var * (1 + s + 5 * r2 / 3) * math.exp(-s)


# ------------------------------------------------------------------- model

def _parse_int(s):
    # "-0" is negative zero, which the digest distinguishes from 0.
    return -0.0 if s == "-0" else int(s)


def digest(params):
    return hashlib.sha256(struct.pack("<%dd" % len(params), *params)).hexdigest()


# Top-level fields that model_sha256 leaves out.
NOT_DIGESTED = ("model_sha256", "params_sha256", "meta")


def _canonical(v, out):
    # The canonical encoding of model-format.md, "Integrity".
    if v is None:
        out.append(b"n")
    elif v is True:
        out.append(b"t")
    elif v is False:
        out.append(b"f")
    elif isinstance(v, (int, float)):
        out.append(b"d" + struct.pack("<d", float(v)))
    elif isinstance(v, str):
        b = v.encode("utf-8")
        out.append(b"s" + struct.pack("<Q", len(b)) + b)
    elif isinstance(v, list):
        out.append(b"a" + struct.pack("<Q", len(v)))
        for e in v:
            _canonical(e, out)
    elif isinstance(v, dict):
        out.append(b"o" + struct.pack("<Q", len(v)))
        for k in sorted(v, key=lambda k: k.encode("utf-8")):
            _canonical(k, out)
            _canonical(v[k], out)
    else:
        raise FormatError("unexpected JSON value %r" % (v,))


def model_digest(doc):
    out = []
    _canonical({k: v for k, v in doc.items() if k not in NOT_DIGESTED}, out)
    return hashlib.sha256(b"".join(out)).hexdigest()


def _check_collapsed_bound(bound, size, version):
    """Checks collapsed_bound and collapsed_block_size (model-format.md)."""
    if bound not in ("", "standard", "tighter", "blockdiag"):
        raise FormatError("collapsed_bound %r is none of \"standard\", \"tighter\" and \"blockdiag\"" % (bound,))
    if bound and version < COLLAPSED_BOUND_VERSION:
        raise FormatError("collapsed_bound needs format version %d, the file has version %d"
                          % (COLLAPSED_BOUND_VERSION, version))
    if not isinstance(size, int) or isinstance(size, bool):
        raise FormatError("collapsed_block_size %r is not an integer" % (size,))
    if bound == "blockdiag":
        if version < BLOCKDIAG_VERSION:
            raise FormatError("collapsed_bound \"blockdiag\" needs format version %d, the file has version %d"
                              % (BLOCKDIAG_VERSION, version))
        if size < 1:
            raise FormatError("collapsed_bound \"blockdiag\" needs a collapsed_block_size of at least 1, not %d" % size)
    elif size != 0:
        raise FormatError("collapsed_block_size %d goes with collapsed_bound \"blockdiag\" only" % size)


def _check_head(doc):
    """The format version of the document doc, after checking its header."""
    if doc.get("format") != FORMAT:
        raise FormatError("format is %r, want %r" % (doc.get("format"), FORMAT))
    version = doc.get("version")
    if not isinstance(version, int) or version < 1:
        raise FormatError("invalid version %r" % version)
    if version > VERSION:
        raise FormatError("the file has format version %d but this reader reads versions up to %d"
                          % (version, VERSION))
    return version


def load(path):
    """The model of the file at path: a Separate for kind "separate",
    else a Model."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_int=_parse_int)
    if doc.get("kind") == "separate":
        return Separate(doc)
    return Model(doc=doc)


class Separate:
    """A model of separate outputs: one single-output Model per output."""

    def __init__(self, doc):
        self.version = version = _check_head(doc)
        if version < SEPARATE_VERSION:
            raise FormatError("kind \"separate\" needs format version %d, the file has version %d"
                              % (SEPARATE_VERSION, version))
        if model_digest(doc) != doc.get("model_sha256"):
            raise FormatError("model_sha256 does not match the file")
        subs = doc.get("outputs")
        if not isinstance(subs, list) or not subs:
            raise FormatError("a model of separate outputs without outputs")
        self.outputs = []
        for j, sub in enumerate(subs):
            if sub.get("version") != version or sub.get("kind") == "separate":
                raise FormatError("output %d: version %r or kind %r" % (j, sub.get("version"), sub.get("kind")))
            if sub.get("standardizer") is not None or sub.get("meta") is not None:
                raise FormatError("output %d has a standardizer or meta of its own" % j)
            m = Model(doc=sub)
            if m.c != 1:
                raise FormatError("output %d has %d latent functions" % (j, m.c))
            self.outputs.append(m)
        n_out = len(self.outputs)
        self.d = self.outputs[0].d
        if any(m.d != self.d for m in self.outputs):
            raise FormatError("outputs of different input dimensions")
        st = doc.get("standardizer")
        for j, m in enumerate(self.outputs):
            if st:
                ym = (st.get("y_means") or [0.0] * n_out)[j]
                ys = (st.get("y_scales") or [1.0] * n_out)[j]
                m.std = {"x_mean": st["x_mean"], "x_scale": st["x_scale"], "y_mean": ym, "y_scale": ys}
        meta = doc.get("meta") or {}
        self.names = meta.get("input_names")
        names = meta.get("target_names") or []
        self.out_names = names if len(names) == n_out else [str(j) for j in range(n_out)]
        self.unchecked = False
        self.lik_type = "separate"
        self.jitter_u, self.jitter_v = self.outputs[0].jitter_u, self.outputs[0].jitter_v

    def header(self):
        return [c + t for t in self.out_names for c in ("f_mean_", "f_var_", "y_mean_", "y_var_")]

    def predict(self, xraw, rng=None):
        out = []
        for m in self.outputs:
            out += m.predict(xraw, rng)
        return out


class Model:
    def __init__(self, path=None, doc=None):
        if doc is None:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f, parse_int=_parse_int)
        version = _check_head(doc)
        self.version = version
        self.collapsed_bound = doc.get("collapsed_bound", "")
        self.collapsed_block_size = doc.get("collapsed_block_size", 0)
        _check_collapsed_bound(self.collapsed_bound, self.collapsed_block_size, version)
        self.bound = doc.get("bound", "standard")
        if self.bound not in ("standard", "tighter"):
            raise FormatError("bound %r is neither \"standard\" nor \"tighter\"" % (self.bound,))
        if "bound" in doc and version < BOUND_VERSION:
            raise FormatError("bound needs format version %d, the file has version %d"
                              % (BOUND_VERSION, version))
        self.unchecked = version < 3
        if self.unchecked:
            if "model_sha256" in doc:
                raise FormatError("a version %d file has no model_sha256" % version)
        elif model_digest(doc) != doc.get("model_sha256"):
            raise FormatError("model_sha256 does not match the file")
        p = [float(v) for v in doc["params"]]
        if digest(p) != doc["params_sha256"]:
            raise FormatError("params_sha256 does not match the parameters")
        dims, lay = doc["dims"], doc["layout"]
        self.kind = doc["kind"]
        if self.kind not in ("svgp", "odvgp", "solvegp"):
            raise FormatError("unknown model kind %r" % self.kind)
        self.whitened = doc["whitened"]
        self.d, self.m, self.m2, self.c = dims["input"], dims["m"], dims["m2"], dims["latent"]
        if len(p) != lay["total"]:
            raise FormatError("%d parameters, layout.total is %d" % (len(p), lay["total"]))
        self.names = (doc.get("meta") or {}).get("input_names")
        # (type, parameters) of each mean: none, one shared by every latent
        # function, or (per_latent) one per latent function.
        self.means = []
        mean = doc.get("mean")
        if mean is not None:
            if version < 4:
                raise FormatError("a mean function needs format version 4, the file has version %d" % version)
            comps = [mean]
            if mean.get("type") == "per_latent":
                if version < PER_LATENT_MEAN_VERSION:
                    raise FormatError("a per_latent mean needs format version %d, the file has version %d"
                                      % (PER_LATENT_MEAN_VERSION, version))
                comps = mean.get("components")
                if not isinstance(comps, list) or len(comps) not in (1, self.c):
                    raise FormatError("a per_latent mean needs 1 or %d components" % self.c)
            off = lay["mean"]
            for cm in comps:
                n = {"zero": 0, "constant": 1, "linear": self.d + 1}.get(cm.get("type"))
                if n is None:
                    raise FormatError("unknown mean type %r" % cm.get("type"))
                self.means.append((cm["type"], p[off:off + n]))
                off += n
            if off != len(p):
                raise FormatError("the mean parameters are not the last %d parameters" % (off - lay["mean"]))
        self.std = doc.get("standardizer")

        d, m, m2 = self.d, self.m, self.m2
        self.kern = Kernel(doc["kernel"], p, lay["kernel"], d)
        self.lik = doc["likelihood"]
        self.lik_type = self.lik["type"]
        if self.lik_type == "gaussian":
            self.noise = self.lik.get("noise_floor", 0.0) + softplus(p[lay["likelihood"]])
        if self.lik_type == "studentt":
            self.scale = softplus(p[lay["likelihood"]])
            self.dof = self.lik.get("degrees_of_freedom_floor", 0.0) + softplus(p[lay["likelihood"] + 1])
        if self.lik_type in MULTI_OUTPUT_TYPES:
            self.multi_output(doc, p, lay["likelihood"], version)
        elif version >= MULTI_OUTPUT_VERSION and self.std and ("y_means" in self.std or "y_scales" in self.std):
            raise FormatError("per-output target statistics for a %s likelihood" % self.lik_type)
        if self.lik_type == "robustmax":
            self.rule = gauss_hermite(self.lik.get("quadrature_points", DEFAULT_QUADRATURE["robustmax"]))
        self.z = [p[lay["z"] + i * d:lay["z"] + (i + 1) * d] for i in range(m)]
        self.o = [p[lay["o"] + i * d:lay["o"] + (i + 1) * d] for i in range(m2)]
        self.mu = [p[off:off + m] for off in lay["m_u"]]
        self.lu = [packed_tri(p, off, m) for off in lay["l_u"]]
        if self.kind != "svgp":
            self.mv = [p[off:off + m2] for off in lay["m_v"]]
        if self.kind == "solvegp":
            self.lv = [packed_tri(p, off, m2) for off in lay["l_v"]]

        k = self.kern
        kuu = [[k(a, b, i == j) for j, b in enumerate(self.z)] for i, a in enumerate(self.z)]
        self.l0u, self.jitter_u = jittered_cholesky(kuu)
        self.jitter_v = 0.0
        if self.kind != "svgp":
            # A = L0u^-1 K_uv, stored by columns: acol[j] = L0u^-1 k_u(o_j).
            self.acol = [solve_lower(self.l0u, [k(zi, oj) for zi in self.z]) for oj in self.o]
        if self.kind == "solvegp":
            kvv = [[k(a, b, i == j) for j, b in enumerate(self.o)] for i, a in enumerate(self.o)]
            cvv = [[kvv[i][j] - dot(self.acol[i], self.acol[j]) for j in range(m2)] for i in range(m2)]
            self.l0v, self.jitter_v = jittered_cholesky(cvv, mean_diag(kvv))

    def multi_output(self, doc, p, off, version):
        """Reads the noise variances, the mixing matrix W (P x L; the
        identity for independent outputs), the per-output standardization
        and the output names of a multi-output likelihood."""
        if version < MULTI_OUTPUT_VERSION:
            raise FormatError("likelihood type %r needs format version %d, the file has version %d"
                              % (self.lik_type, MULTI_OUTPUT_VERSION, version))
        n_out = self.lik["outputs"]
        floor = self.lik.get("noise_floor", 0.0)
        self.noises = [floor + softplus(p[off + j]) for j in range(n_out)]
        if self.lik_type == "lmc":
            w = p[off + n_out:off + n_out + n_out * self.c]
            self.w = [w[j * self.c:(j + 1) * self.c] for j in range(n_out)]
        else:
            if n_out != self.c:
                raise FormatError("independent_gaussian with %d outputs and %d latent functions" % (n_out, self.c))
            self.w = [[1.0 if l == j else 0.0 for l in range(self.c)] for j in range(n_out)]
        st = self.std or {}
        self.y_means = st.get("y_means") or [st.get("y_mean", 0.0)] * n_out
        self.y_scales = st.get("y_scales") or [st.get("y_scale", 1.0)] * n_out
        if len(self.y_means) != n_out or len(self.y_scales) != n_out:
            raise FormatError("standardizer y_means and y_scales for %d outputs" % n_out)
        names = (doc.get("meta") or {}).get("target_names") or []
        self.out_names = names if len(names) == n_out else [str(j) for j in range(n_out)]

    def latent(self, x):
        """[(mu, var)] per latent function at the standardized input x."""
        k = self.kern
        b = solve_lower(self.l0u, [k(zi, x) for zi in self.z])
        beta = b if self.whitened else solve_lower_t(self.l0u, b)
        base = k(x, x, True) - dot(b, b)
        if self.kind != "svgp":
            c = [k(oj, x) - dot(aj, b) for oj, aj in zip(self.o, self.acol)]
        if self.kind == "solvegp":
            dv = solve_lower(self.l0v, c)
            delta = dv if self.whitened else solve_lower_t(self.l0v, dv)
            dd = dot(dv, dv)
        mvals = [mean_value(t, q, x) for t, q in self.means] or [0.0]
        out = []
        for l in range(self.c):
            mu = dot(beta, self.mu[l])
            var = base + norm2_lt(self.lu[l], beta)
            if self.kind == "solvegp":
                mu += dot(delta, self.mv[l])
                var += -dd + norm2_lt(self.lv[l], delta)
            elif self.kind == "odvgp":
                mu += dot(c, self.mv[l])
            out.append((mu + mvals[l if len(mvals) > 1 else 0], var))
        return out

    def header(self):
        if self.lik_type in MULTI_OUTPUT_TYPES:
            return [c + t for t in self.out_names for c in ("f_mean_", "f_var_", "y_mean_", "y_var_")]
        if self.lik_type == "heteroscedastic":
            return ["f_mean_0", "f_mean_1", "f_var_0", "f_var_1", "y_mean", "y_var", "noise_mean", "noise_var"]
        if self.c == 1:
            return ["f_mean", "f_var", "y_mean", "y_var"]
        return ([("f_mean_%d" % j) for j in range(self.c)] + [("f_var_%d" % j) for j in range(self.c)]
                + [("p_%d" % j) for j in range(self.c)])

    def predict(self, xraw, rng=None):
        """The output row (see header) for a row of raw inputs."""
        st = self.std
        if st:
            x = [(v - m) / s for v, m, s in zip(xraw, st["x_mean"], st["x_scale"])]
            ym, ys = st["y_mean"], st["y_scale"]
        else:
            x, ym, ys = list(xraw), 0.0, 1.0
        f = self.latent(x)
        if self.lik_type in MULTI_OUTPUT_TYPES:
            # f_p = sum_l W_pl g_l: mean sum_l W_pl mu_l, variance
            # sum_l W_pl^2 max(var_l, 0); each in its own target's units.
            out = []
            for w, noise, m, s in zip(self.w, self.noises, self.y_means, self.y_scales):
                fm = sum(wl * mu for wl, (mu, _) in zip(w, f))
                fv = sum(wl * wl * max(var, 0.0) for wl, (_, var) in zip(w, f))
                out += [fm * s + m, fv * s * s, fm * s + m, (fv + noise) * s * s]
            return out
        if self.c == 1:
            mu, var = f[0]
            v = max(var, 0.0)
            fm, fv = mu * ys + ym, var * ys * ys
            t = self.lik_type
            if t == "gaussian":
                return [fm, fv, fm, (v + self.noise) * ys * ys]
            if t == "bernoulli":
                pr = norm_cdf(mu / math.sqrt(1 + v))
                return [fm, fv, pr, pr * (1 - pr)]
            if t == "studentt":
                nu = self.dof
                noise = self.scale * self.scale * nu / (nu - 2) if nu > 2 else math.inf
                return [fm, fv, fm, (v + noise) * ys * ys]
            if t == "poisson":
                lam = math.exp(mu + v / 2)
                return [fm, fv, lam, lam + math.expm1(v) * lam * lam]
            raise FormatError("likelihood %r with one latent function" % t)
        mus = [mu for mu, _ in f]
        vs = [max(var, 0.0) for _, var in f]
        if self.lik_type == "heteroscedastic" and self.c == 2:
            return self.heteroscedastic(f, ym, ys)
        if self.lik_type == "robustmax":
            probs = self.robustmax(mus, vs)
        elif self.lik_type == "softmax":
            probs = softmax_mc(mus, vs, rng or random.Random(0))
        else:
            raise FormatError("likelihood %r with %d latent functions" % (self.lik_type, self.c))
        return mus + [var for _, var in f] + probs

    def heteroscedastic(self, f, ym, ys):
        """The output row of the heteroscedastic likelihood: latent 0 is the
        mean, latent 1 the log noise variance (in standardized units)."""
        (m1, v1), (m2, v2) = f
        s2 = max(v2, 0.0)
        en = math.exp(m2 + s2 / 2)
        sc = ys * ys
        return [m1 * ys + ym, m2 + 2 * math.log(ys), v1 * sc, v2,
                m1 * ys + ym, (max(v1, 0.0) + en) * sc, en * sc, math.expm1(s2) * en * en * sc * sc]

    def robustmax(self, mus, vs):
        t, w = self.rule
        eps, c = self.lik["epsilon"], self.c
        sig = [math.sqrt(v) for v in vs]
        out = []
        for cls in range(c):
            a = math.sqrt(2 * vs[cls])
            pc = 0.0
            for tq, wq in zip(t, w):
                xq = mus[cls] + a * tq
                prod = 1.0
                for kk in range(c):
                    if kk == cls:
                        continue
                    if sig[kk] > 0:
                        prod *= norm_cdf((xq - mus[kk]) / sig[kk])
                    else:
                        prod *= 1.0 if xq > mus[kk] else 0.5 if xq == mus[kk] else 0.0
                pc += wq * prod
            out.append((1 - eps) * pc + eps / (c - 1) * (1 - pc))
        return out


def mean_value(kind, q, x):
    """The value at x of a zero, constant or linear mean with parameters q."""
    if kind == "constant":
        return q[0]
    if kind == "linear":
        m0 = q[len(x)]
        for w, xi in zip(q, x):
            m0 += w * xi
        return m0
    return 0.0


def softmax_mc(mus, vs, rng):
    """Monte Carlo estimate of E[softmax(f)] for independent f_k ~
    N(mu_k, v_k). Not solvegp's stream: agrees within Monte Carlo error."""
    acc = [0.0] * len(mus)
    sds = [math.sqrt(v) for v in vs]
    for _ in range(SOFTMAX_SAMPLES):
        f = [m + s * rng.gauss(0.0, 1.0) for m, s in zip(mus, sds)]
        top = max(f)
        e = [math.exp(v - top) for v in f]
        tot = sum(e)
        for j, v in enumerate(e):
            acc[j] += v / tot
    return [a / SOFTMAX_SAMPLES for a in acc]


# ------------------------------------------------------------------ inputs

def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def read_inputs(path, model):
    """The rows of raw inputs in the model's input order."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f) if r and any(v.strip() for v in r)]
    header = None
    if rows and not all(_is_number(v) for v in rows[0]):
        header, rows = [v.strip() for v in rows[0]], rows[1:]
    d = model.d
    if header and model.names and len(model.names) == d and all(n in header for n in model.names):
        cols = [header.index(n) for n in model.names]
    else:
        width = len(header) if header else (len(rows[0]) if rows else d)
        if width not in (d, d + 1):
            raise ValueError("%s: %d columns, the model takes %d inputs" % (path, width, d))
        cols = list(range(d))
    return [[float(r[j]) for j in cols] for r in rows]


def main(argv):
    show_jitter = len(argv) > 1 and argv[1] == "--jitter"
    if show_jitter:
        argv = argv[:1] + argv[2:]
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    model = load(argv[1])
    if show_jitter:
        sys.stderr.write("jitter %r %r\n" % (model.jitter_u, model.jitter_v))
    if model.unchecked:
        sys.stderr.write("model_reader: warning: format version %d: its checksum covers the parameters only; " % model.version +
                         "the standardization and other settings are unchecked\n")
    if model.lik_type == "softmax":
        sys.stderr.write("model_reader: softmax probabilities are Monte Carlo estimates "
                         "(%d draws); solvegp's differ within Monte Carlo error\n" % SOFTMAX_SAMPLES)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(model.header())
    rng = random.Random(0)
    for x in read_inputs(argv[2], model):
        out.writerow([repr(v) for v in model.predict(x, rng)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

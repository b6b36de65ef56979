"""Verifiers written in Python: a step function that simdec's trial engine
calls for every iteration (sims/engine/sd_callback.h), so that `run` and `check`
(and `lp --compare`) accept it as they accept a verifier written in C."""
import ctypes
import threading

from . import _lib

_KINDS = {"count": 0, "real": 1, "choice": 2}
_SHARED = {"gamma": -1, "k": -2, "M": -2}  # SD_SLOT_GAMMA, SD_SLOT_K
# The token-tree parameters, declared as the built-in tree verifiers declare
# them (sims/engine/sd_callback.h): the shape (SD_SLOT_TREE) and the drafting
# rule (a choice in own slot 0, SD_TREE_SLOT_DRAW).
_TREE_SLOT, _DRAW_SLOT, _DRAWS = -3, 0, ("iid", "wor", "topk")
_SHAPE_KIND = 3  # SD_PARAM_SHAPE

# name -> Verifier: kept alive (the C side holds their callbacks).
_registry = {}
# The first exception a step raised during the current command.
_pending = [None]
# The models seen during the current command: C chain address -> (V, T,
# draft, target) as read-only numpy views (draft [steps][V][V]).
_chains = {}


def clear_pending():
    """Called before every command: no exception pending, no model known."""
    _pending[0] = None
    _chains.clear()


def take_pending():
    e, _pending[0] = _pending[0], None
    _chains.clear()
    return e


def _chain(chain):
    c = _chains.get(chain)
    if c is None:
        np, L = _lib.numpy(), _lib.lib()
        V, T = L.sd_callback_vocab(chain), L.sd_callback_horizon(chain)
        views = []
        for which in (0, 1):
            steps = ctypes.c_size_t()
            a = np.ctypeslib.as_array(L.sd_callback_rows(chain, which, ctypes.byref(steps)),
                                      shape=(steps.value, V, V))
            a.flags.writeable = False
            views.append(a)
        c = _chains[chain] = (V, T, views[0], views[1])
    return c


# Set on the thread running a step (commands refuse to nest in one).
_tls = threading.local()


def in_step():
    return getattr(_tls, "in_step", False)


def is_python(name):
    return name in _registry



class Iteration:
    """What a step function is given: one iteration at position n (1-based:
    x_n is the next token) after prev = x_{n-1}, on a model of vocabulary V
    and horizon T.

      p(t, a), q(t, a)   the rows p_t(.|a), q_t(.|a) (read-only numpy views)
      uniform()          the next uniform in [0, 1) of this trial's stream
                         (every random number must come from it)
      sample(w)          a token drawn from weights w with one uniform
                         (inverse CDF, as simdec's verifiers draw)
      sample_residual(p, q)   a token from the residual [q - p]+
      tv(p, q)           TV(p, q) = sum max(0, q - p)
      params             the verifier's parameters by name (gamma 0: the rest
                         of the horizon)
      draft_len          this iteration's draft length: min(gamma, T - n + 1)
                         (a tree verifier: min(depth of its tree, T - n + 1))
    """

    __slots__ = ("n", "prev", "V", "T", "params", "_P", "_Q", "_rng")

    def p(self, t, a):
        return self._row(self._P, t, a)

    def q(self, t, a):
        return self._row(self._Q, t, a)

    def _row(self, rows, t, a):
        if not (1 <= t <= self.T and 0 <= a < self.V):
            raise IndexError("row (t = %r, a = %r): expected 1 <= t <= %d and 0 <= a < %d" % (t, a, self.T, self.V))
        return rows[t - 1 if len(rows) > 1 else 0, a]

    def uniform(self):
        return _lib.lib().sd_callback_uniform(self._rng)

    # The draws of simdec's C verifiers (src/sd_dist.c), in numpy: the
    # running sums are sequential (np.cumsum), as the C loop's, so the same
    # uniform gives the same token.
    def _draw(self, weights, run, total):
        t = self.uniform() * (run[-1] if total is None else total)
        x = int(run.searchsorted(t, side="right"))  # the first x with t < run[x]
        if x >= self.V:  # t at the total (rounding): the last token of positive weight
            x = int(_lib.numpy().flatnonzero(weights > 0)[-1])
        return x

    def sample(self, w, total=None):
        """A token drawn from the weights w >= 0 with one uniform: the first x
        with u * total < w[0] + ... + w[x] (total: their sum; give 1.0 for a
        row of the model to draw exactly as simdec's C verifiers do)."""
        w = _lib.numpy().asarray(w, dtype=float)
        run = w.cumsum()
        if not run[-1] > 0:
            raise ValueError("sample: the weights sum to %r; expected > 0" % run[-1])
        return self._draw(w, run, total)

    @staticmethod
    def _residual(p, q):
        """[q - p]+ and its running sums (the last: TV(p, q))."""
        d = _lib.numpy().maximum(_lib.numpy().subtract(q, p), 0.0)
        return d, d.cumsum()

    def tv(self, p, q):
        """TV(p, q) = sum max(0, q - p) (summed in token order)."""
        return float(self._residual(p, q)[1][-1])

    def sample_residual(self, p, q):
        """A token from the residual [q - p]+ / TV(p, q), with one uniform."""
        d, run = self._residual(p, q)
        if not run[-1] > 0:
            raise ValueError("sample_residual: TV(p, q) = 0, the residual is empty")
        return self._draw(d, run, None)

    @property
    def draft_len(self):
        rest = self.T - self.n + 1
        if "tree" in self.params:  # a tree's depth is its draft length
            return min(len(self.params["tree"]), rest)
        g = self.params.get("gamma", 0)
        return g if g and g < rest else rest


class Tree:
    """One drafted token tree, what a tree rule is given (the contract of
    sd_tree_view, sims/engine/sd_verifier.h).  Nodes are numbered breadth
    first, the root 0 holding the context token tok[0] = x_{t-1}; a node v
    of depth l >= 1 holds the draft token tok[v] for position t + l - 1, or
    None when it was not drafted (without replacement, its parent's row ran
    out; or its parent is absent).

      V, T, t, D, nodes    vocabulary, horizon, position of the root's
                           children, depth in use (the shape cut at the
                           horizon), number of nodes
      shape                (b_1, .., b_D): children of each node of depth l
      tok, parent, depth   per node (parent[0] = None)
      children(v)          v's children, in drafting order
      p(v), q(v)           the draft and target rows after node v:
                           p_{t+l}(.|tok[v]), q_{t+l}(.|tok[v]) (l = depth[v];
                           None past the horizon, t + l > T)
      draw                 "iid", "wor" or "topk"
      params               the verifier's parameters by name

    The rule returns (pi, law): pi[v] = P(the iteration ends at v), >= 0, 0
    at absent nodes, summing to 1; law[v] (a row of V) the law of the token
    emitted after ending at v (a leaf: the bonus token, q(v); an inner node:
    its residual), summing to 1 wherever pi[v] > 0 and a token follows
    (t + depth[v] <= T), ignored elsewhere.  Sequences or numpy arrays;
    simdec checks them (1e-9) before using them."""

    __slots__ = ("V", "T", "t", "D", "nodes", "shape", "tok", "parent", "depth", "draw", "params", "_off",
                 "_P", "_Q")

    def children(self, v):
        lv = self.depth[v]
        if lv >= self.D:
            return []
        first = self._off[lv + 1] + (v - self._off[lv]) * self.shape[lv]
        return list(range(first, first + self.shape[lv]))

    def _row(self, rows, v):
        pos = self.t + self.depth[v]
        if pos > self.T or self.tok[v] is None:
            return None
        return rows[pos - 1 if len(rows) > 1 else 0, self.tok[v]]

    def p(self, v):
        return self._row(self._P, v)

    def q(self, v):
        return self._row(self._Q, v)


class Node:
    """One inner node of a drafted tree, what a node rule is given (the
    contract of sd_node_view, sims/engine/sd_verifier.h): the rule says only
    what happens here, and simdec composes it from the root down.

      V, T, t, depth       vocabulary, horizon, position of the children's
                           tokens, the node's depth (0: the root)
      path                 the root's context token, then the node's path
                           (depth + 1 tokens)
      q, p                 the target and draft rows at the node (numpy
                           arrays of V)
      children             the children's tokens in drafting order, with
                           multiplicity (absent children left out; at least 1)
      draw                 "iid", "wor" or "topk"
      params               the verifier's parameters by name

    The rule returns (go, residual): go[j] = P(descend into child j | the
    walk reached this node), >= 0, summing to at most 1; residual (a row of
    V) the law of the token emitted when it stops here (probability 1 -
    sum(go)), summing to 1 wherever that probability exceeds 1e-12.  simdec
    checks them (1e-9); a leaf ends with the bonus token from q."""

    __slots__ = ("V", "T", "t", "depth", "path", "q", "p", "children", "draw", "params")


class Verifier:
    """A verifier whose iteration is the Python function step(it) -> (tokens,
    accepted, rejected) or (tokens, accepted, rejected, target_calls):
    tokens are x_n, x_{n+1}, ... (1 to T - n + 1 of them), accepted the draft
    tokens kept, rejected 1 if the iteration ended with a token sampled from a
    residual.  it is an Iteration.

    params lists the parameters it reads: "gamma" and "k" (or "M") are the
    shared ones; "tree" and "draw" make it a token-tree verifier declared as
    the built-in ones are (the shape b1,..,bd, it.params["tree"] a tuple, and
    the drafting rule iid|wor|topk, it.params["draw"] a name; give them as
    dicts {"name": "tree", "default": "3,1"}, {"name": "draw", "default":
    "wor"} to change the defaults "2,2" and "iid"), so that `lp tree-valid
    --compare` hands it the LP's shape and rule; its own are dicts {"name", "kind": "real"|"count"|"choice",
    "default", "min", "max", "choices": "a|b", "help"}, each an option
    --NAME of run and check.  lossless: whether it claims to preserve the
    target law (check then says "lossy by design" otherwise); control: a
    deliberately broken control.

    tree_outcome(tree) -> (pi, law): the verifier as a tree rule (a Tree is
    given: one drafted tree; the rule says where the iteration ends and what
    it emits), given as this argument or as a method of a subclass; it needs
    "tree" and "draw" among params, and step is then not called (it may be
    None): simdec drafts the trees and samples the rule's outcome in run,
    and enumerates every drafted tree for exact values (check --exact, eval
    accept-length, run's exact columns).  node_outcome(node) -> (go,
    residual): the same written at one node (a Node is given), the
    top-down form that simdec composes into a tree rule; one of the two.
    draws: the drafting rules it supports (default all three).  A Python
    rule's exact values call it once per drafted tree (per inner node for
    node_outcome), so the enumerator counts each call as 200 drafted trees
    and refuses beyond, pointing to Monte-Carlo.

    Registered under `name` at once; defining the same name again replaces
    it.  Commands run it with --threads 1 (its step holds Python's GIL);
    results are bit-identical for any thread count anyway, as every trial
    draws from its own stream."""

    def __init__(self, name, step=None, params=(), summary=None, lossless=True, control=False,
                 tree_outcome=None, draws=None, node_outcome=None):
        self.name, self.step = name, step
        if tree_outcome is not None:
            self.tree_outcome = tree_outcome
        if node_outcome is not None:
            self.node_outcome = node_outcome
        node = getattr(self, "node_outcome", None)
        rule = getattr(self, "tree_outcome", None)
        if rule is not None and node is not None:
            raise ValueError("verifier %r: a tree rule (tree_outcome) or a node rule (node_outcome), not both" % name)
        rule = rule if rule is not None else node
        if step is None and rule is None:
            raise ValueError("verifier %r: expected a step function or a tree rule (tree_outcome, node_outcome)"
                             % name)
        self._slots = {}
        decls = []
        names = [p if isinstance(p, str) else p.get("name") for p in params]
        if rule is not None and not ("tree" in names and "draw" in names):
            raise ValueError("verifier %r: a tree rule needs the parameters tree and draw (params=[\"tree\", "
                             "\"draw\", ...])" % name)
        own = 1 if "draw" in names else 0  # draw takes own slot 0
        for p in params:
            pname = p if isinstance(p, str) else p.get("name")
            if pname in ("tree", "draw"):
                default = None if isinstance(p, str) else p.get("default")
                if pname == "tree":
                    text = default if default is not None else "2,2"
                    if not isinstance(text, str):
                        text = ",".join(str(b) for b in text)
                    decls.append(_lib.CallbackParam(b"tree", _SHAPE_KIND, 0, 0, 0, text.encode(), None))
                    self._slots["tree"] = (_TREE_SLOT, "tree", None)
                else:
                    default = default if default is not None else "iid"
                    if default not in _DRAWS:
                        raise ValueError("parameter draw: default %r; expected iid, wor or topk" % (default,))
                    decls.append(_lib.CallbackParam(b"draw", 2, float(_DRAWS.index(default)), 0, 0, None, None))
                    self._slots["draw"] = (_DRAW_SLOT, "choice", list(_DRAWS))
                continue
            if isinstance(p, str):
                if p not in _SHARED:
                    raise ValueError("parameter %r: a shared parameter is gamma, k, M, tree or draw; "
                                     "declare others as dicts" % p)
                decls.append(_lib.CallbackParam(p.encode(), 0, 0, 0, 0, None, None))
                self._slots[p] = (_SHARED[p], "count", None)
                continue
            kind = p.get("kind", "real")
            if kind not in _KINDS:
                raise ValueError("parameter %r: kind %r; expected real, count or choice" % (p.get("name"), kind))
            choices = p.get("choices")
            decls.append(_lib.CallbackParam(
                str(p["name"]).encode(), _KINDS[kind], float(p.get("default", 0.0)),
                float(p.get("min", 0.0)), float(p.get("max", 1e300)),
                choices.encode() if choices else None, str(p.get("help", "")).encode()))
            self._slots[p["name"]] = (own, kind, choices.split("|") if choices else None)
            own += 1
        self._decls = (_lib.CallbackParam * max(1, len(decls)))(*decls)
        self._fn = _lib.STEP_FN(self._call)
        err = _lib.Error()
        st = _lib.lib().sd_callback_add(name.encode(), (summary or "Python verifier %s" % name).encode(),
                                        self._decls, len(decls), 1 if lossless else 0, 1 if control else 0,
                                        self._fn, None, ctypes.byref(err))
        if st != 0:
            raise _lib.SimdecError(err.msg.decode("utf-8", "replace"), _lib.exit_status(st))
        _registry[name] = self
        if rule is not None:
            bits = 0
            for d in (draws or ()):
                if d not in _DRAWS:
                    raise ValueError("draws: %r; expected iid, wor or topk" % (d,))
                bits |= 1 << _DRAWS.index(d)
            if node is not None:
                self._tree_fn = _lib.NODE_FN(self._node_call)
                st = _lib.lib().sd_callback_node_rule(name.encode(), bits, self._tree_fn, None, ctypes.byref(err))
            else:
                self._tree_fn = _lib.TREE_FN(self._tree_call)
                st = _lib.lib().sd_callback_tree_rule(name.encode(), bits, self._tree_fn, None, ctypes.byref(err))
            if st != 0:
                raise _lib.SimdecError(err.msg.decode("utf-8", "replace"), _lib.exit_status(st))

    def __repr__(self):
        return "simdec.Verifier(%r)" % self.name

    def _params(self, par):
        L = _lib.lib()
        out = {}
        for name, (slot, kind, choices) in self._slots.items():
            if kind == "tree":
                shape = (ctypes.c_size_t * 16)()
                d = L.sd_callback_tree(par, shape, 16)
                out[name] = tuple(shape[i] for i in range(min(d, 16)))
                continue
            v = L.sd_callback_param_value(par, slot)
            out[name] = choices[int(v)] if choices else (int(v) if kind == "count" else v)
        return out

    def _tree_call(self, user, chain, par, view, pi_out, law_out):
        try:
            np, tv = _lib.numpy(), view.contents
            n, V, D = tv.nodes, tv.V, tv.D
            tr = Tree()
            tr.V, tr.t, tr.D, tr.nodes = V, tv.t, D, n
            _, tr.T, tr._P, tr._Q = _chain(chain)
            tr.shape = tuple(tv.b[i] for i in range(D))
            tr._off = [tv.off[i] for i in range(D + 2)]
            absent = ctypes.c_size_t(-1).value
            tr.tok = [None if tv.tok[v] == absent else tv.tok[v] for v in range(n)]
            tr.parent = [None] + [tv.parent[v] for v in range(1, n)]
            tr.depth = [tv.depth[v] for v in range(n)]
            tr.draw = _DRAWS[tv.draw]
            tr.params = self._params(par)
            _tls.in_step = True
            try:
                res = self.tree_outcome(tr)
            finally:
                _tls.in_step = False
            if not isinstance(res, tuple) or len(res) != 2:
                raise TypeError("tree_outcome returned %r; expected (pi, law)" % (type(res),))
            pi, law = np.asarray(res[0], dtype=float), np.asarray(res[1], dtype=float)
            if pi.shape != (n,) or law.shape != (n, V):
                raise ValueError("tree_outcome returned pi of shape %s and law of shape %s; expected (%d,) and "
                                 "(%d, %d) (nodes, V)" % (pi.shape, law.shape, n, n, V))
            np.ctypeslib.as_array(pi_out, shape=(n,))[:] = pi
            np.ctypeslib.as_array(law_out, shape=(n, V))[:] = law
            return 0
        except BaseException as e:  # reported by the command that ran it
            if _pending[0] is None:
                _pending[0] = e
            return -1

    def _node_call(self, user, chain, par, view, go_out, res_out):
        try:
            np, nv = _lib.numpy(), view.contents
            V, m = nv.V, nv.m
            nd = Node()
            nd.V, nd.t, nd.depth, nd.draw = V, nv.t, nv.depth, _DRAWS[nv.draw]
            nd.T = _chain(chain)[1]
            nd.path = [nv.path[i] for i in range(nv.depth + 1)]
            nd.q = np.ctypeslib.as_array(nv.q, shape=(V,)).copy()
            nd.p = np.ctypeslib.as_array(nv.p, shape=(V,)).copy()
            nd.children = [nv.kids[j] for j in range(m)]
            nd.params = self._params(par)
            _tls.in_step = True
            try:
                res = self.node_outcome(nd)
            finally:
                _tls.in_step = False
            if not isinstance(res, tuple) or len(res) != 2:
                raise TypeError("node_outcome returned %r; expected (go, residual)" % (type(res),))
            go, resid = np.asarray(res[0], dtype=float), np.asarray(res[1], dtype=float)
            if go.shape != (m,) or resid.shape != (V,):
                raise ValueError("node_outcome returned go of shape %s and residual of shape %s; expected (%d,) "
                                 "and (%d,) (children, V)" % (go.shape, resid.shape, m, V))
            np.ctypeslib.as_array(go_out, shape=(m,))[:] = go
            np.ctypeslib.as_array(res_out, shape=(V,))[:] = resid
            return 0
        except BaseException as e:  # reported by the command that ran it
            if _pending[0] is None:
                _pending[0] = e
            return -1

    def _call(self, user, chain, par, rng, n, prev, out, cap, accepted, rejected, calls):
        try:
            L = _lib.lib()
            it = Iteration()
            it.n, it.prev, it._rng = n, prev, rng
            it.V, it.T, it._P, it._Q = _chain(chain)
            it.params = self._params(par)
            _tls.in_step = True
            try:
                res = self.step(it)
            finally:
                _tls.in_step = False
            if not isinstance(res, tuple) or len(res) not in (3, 4):
                raise TypeError("step returned %r; expected (tokens, accepted, rejected[, target_calls])" % (res,))
            # Whole numbers only: int() would truncate a token 1.5 to 1.
            tokens, nums = [_lib.whole(t) for t in res[0]], [_lib.whole(x) for x in res[1:]]
            if None in tokens or None in nums:
                raise TypeError("step returned %r; expected whole numbers (tokens, accepted, rejected[, "
                                "target_calls])" % (res,))
            if not 1 <= len(tokens) <= cap:
                raise ValueError("step returned %d tokens at position %d; expected 1 to %d (T - n + 1)"
                                 % (len(tokens), n, cap))
            for i, t in enumerate(tokens):
                if not 0 <= t < it.V:
                    raise ValueError("step returned token %d at position %d; expected 0..%d" % (t, n + i, it.V - 1))
                out[i] = t
            acc, rej = nums[0], nums[1]
            if not 0 <= acc <= len(tokens) or rej not in (0, 1):
                raise ValueError("step returned accepted = %d, rejected = %d with %d tokens; expected "
                                 "0 <= accepted <= tokens and rejected 0 or 1" % (acc, rej, len(tokens)))
            accepted[0], rejected[0] = acc, rej
            calls[0] = nums[2] if len(res) == 4 else 1
            return len(tokens)
        except BaseException as e:  # reported by the command that ran it
            if _pending[0] is None:
                _pending[0] = e
            return -1


def verifier(name, step=None, **kw):
    """Verifier(name, step, ...), or a decorator: @simdec.verifier("name")
    (a step function; with tree_outcome or node_outcome given, the verifier
    itself)."""
    if step is not None or kw.get("tree_outcome") is not None or kw.get("node_outcome") is not None:
        return Verifier(name, step, **kw)
    return lambda fn: Verifier(name, fn, **kw)

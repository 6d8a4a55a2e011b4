"""keras.ops.nn's connectionist temporal classification: ctc_loss (the forward algorithm in
log space, unrolled over the static time axis so the tape differentiates it) and greedy
ctc_decode."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

import kilnflow as kf
from kilnflow.keras.ops.convert import to_float, to_tensor

_NEG = -1e30  # log(0) that keeps gradients finite


def _logsumexp(*xs: Any) -> Any:
    m = xs[0]
    for x in xs[1:]:
        m = kf.maximum(m, x)
    total = kf.exp(xs[0] - m)
    for x in xs[1:]:
        total = total + kf.exp(x - m)
    return m + kf.math.log(total)


def ctc_loss(target: Any, output: Any, target_length: Any, output_length: Any,
             mask_index: int = 0) -> Any:
    """Per-sequence CTC negative log-likelihood of integer `target` (batch, max_label_len)
    under `output` logits (batch, max_time, classes); class `mask_index` is the blank."""
    logits = to_float(output)
    if logits.dtype.name == "float64":
        logits = kf.cast(logits, "float32")  # Keras computes CTC in float32 for float64 too
    labels = to_tensor(target, "int32")
    label_len = to_tensor(target_length, "int32")
    time_len = to_tensor(output_length, "int32")
    logp = kf.nn.log_softmax(logits, axis=-1)
    steps = logits.shape.as_list()[1]
    u = labels.shape.as_list()[1]
    s_len = 2 * u + 1
    batch = labels.shape.as_list()[0]
    batch = kf.shape(labels)[0] if batch is None else batch  # static when known: keeps shapes
    blank = kf.fill(kf.stack([batch, 1]) if kf.is_tensor(batch) else [batch, 1], mask_index)
    pairs = kf.concat([kf.tile(blank, [1, u]), labels], 1)          # (B, 2U): blanks, labels
    ext = kf.reshape(kf.transpose(kf.reshape(pairs, [-1, 2, u]), [0, 2, 1]), [-1, 2 * u])
    ext = kf.concat([ext, blank], 1)                                  # (B, 2U + 1)
    prev2 = kf.concat([kf.fill(kf.stack([batch, 2]) if kf.is_tensor(batch) else [batch, 2], -1),
                       ext[:, :-2]], 1)
    skip_ok = kf.logical_and(kf.not_equal(ext, mask_index), kf.not_equal(ext, prev2))
    emits = [_take_classes(logp[:, t], ext) for t in range(steps)]     # each (B, S)
    neg = kf.fill(kf.shape(emits[0]), kf.cast(_NEG, logp.dtype))
    pos = kf.range(s_len)
    alpha = kf.where(kf.less(pos, 2)[None, :] | kf.zeros_like(ext, dtype="bool"), emits[0], neg)
    for t in range(1, steps):
        shift1 = kf.concat([neg[:, :1], alpha[:, :-1]], 1)
        shift2 = kf.concat([neg[:, :2], alpha[:, :-2]], 1)
        shift2 = kf.where(skip_ok, shift2, neg)
        step = _logsumexp(alpha, shift1, shift2) + emits[t]
        alive = kf.less(t, time_len)[:, None]
        alpha = kf.where(alive | kf.zeros_like(ext, dtype="bool"), step, alpha)
        alpha.set_shape(ext.shape)  # SelectV2's graph rule loses a batch of 1
    last = 2 * label_len
    end_a = _take_classes(alpha, last[:, None])[:, 0]
    end_b = _take_classes(alpha, kf.maximum(last - 1, 0)[:, None])[:, 0]
    end_b = kf.where(kf.greater(label_len, 0), end_b, kf.fill(kf.shape(end_b), kf.cast(
        _NEG, end_b.dtype)))
    loss = -_logsumexp(end_a, end_b)
    loss.set_shape(labels.shape[:1])
    return loss


def _take_classes(x: Any, idx: Any) -> Any:
    """out[b, j] = x[b, idx[b, j]] (per-row gather through one-hot weights)."""
    hot = kf.one_hot(idx, x.shape.as_list()[-1], dtype=x.dtype)
    return kf.reduce_sum(hot * x[:, None, :], axis=-1)


def ctc_decode(inputs: Any, sequence_lengths: Any, strategy: str = "greedy",
               beam_width: int = 100, top_paths: int = 1, merge_repeated: bool = True,
               mask_index: int = 0) -> Tuple[Any, Any]:
    """Greedy CTC decoding: (decoded (1, batch, max_time) padded with -1, scores (batch, 1)
    = minus the summed best logits)."""
    if strategy != "greedy":
        raise NotImplementedError(f"ctc_decode: strategy {strategy!r} is not supported "
                                  "(only 'greedy')")
    x = to_float(inputs)
    lengths = to_tensor(sequence_lengths, "int32")

    def decode(values: np.ndarray, lens: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        batch, steps = values.shape[:2]
        out = np.full((1, batch, steps), -1, np.int32)
        scores = np.zeros((batch, 1), values.dtype)
        for b in range(batch):
            best = values[b, :lens[b]].argmax(-1)
            scores[b, 0] = -values[b, :lens[b]].max(-1).sum()
            keep, prev = [], None
            for c in best:
                if c != mask_index and not (merge_repeated and c == prev):
                    keep.append(c)
                prev = c
            out[0, b, :len(keep)] = keep
        return out, scores
    decoded, scores = kf.numpy_function(decode, [x, lengths], [kf.int32, x.dtype])
    batch, steps = x.shape.as_list()[:2]
    decoded.set_shape([1, batch, steps])
    scores.set_shape([batch, 1])
    return decoded, scores


__all__ = ["ctc_decode", "ctc_loss"]

"""The keras.ops names kilnflow leaves out, and why (tests/keras/ops checks this list against
the names recorded from Keras 3)."""

MISSING = {
    "ctc_loss": "needs a CTC forward-backward op; kilnflow has no tf.nn.ctc_loss yet",
    "ctc_decode": "needs CTC greedy/beam decoding; kilnflow has no tf.nn.ctc_*_decoder yet",
    "rearrange": "einops pattern language (parser + composed reshapes); out of this issue's "
                 "scope",
    "unfold": "PyTorch-style im2col on channels-first input; no Keras layer uses it",
    "fold": "the inverse of unfold (col2im); left out with it",
}

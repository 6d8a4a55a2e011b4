"""Cases with weights for ConvLSTM1D/2D/3D, RNN(StackedRNNCells) and SpectralNormalization,
shared by scripts/record_keras_rnn_layers.py (TF 2.21 + Keras 3, side venv) and
tests/keras/test_conv_lstm.py. Each builder gets the `layers` namespace (Keras's or
kilnflow's); the weights are set from WEIGHT_SEED draws in the layer's weight order, and
Keras's outputs (and weights after the call) are recorded in
tests/keras/data/keras_rnn_layers.json."""
import numpy as np

_rng = np.random.RandomState(3)
SEQ2D = _rng.uniform(-1, 1, (2, 4, 5, 4, 3)).astype(np.float32)   # [b, t, h, w, c]
SEQ1D = _rng.uniform(-1, 1, (2, 5, 6, 2)).astype(np.float32)      # [b, t, steps, c]
SEQ3D = _rng.uniform(-1, 1, (1, 3, 3, 4, 3, 2)).astype(np.float32)
SEQ2D_CF = np.transpose(SEQ2D, (0, 1, 4, 2, 3)).copy()
SEQ = _rng.uniform(-1, 1, (2, 6, 3)).astype(np.float32)
MASK = np.array([[1, 1, 0, 1], [1, 0, 0, 0]], bool)
FLAT = _rng.uniform(-1, 1, (3, 4)).astype(np.float32)
IDS = np.array([[1, 2, 3], [4, 0, 2]], np.int32)
HID = _rng.uniform(-1, 1, (2, 4, 3)).astype(np.float32)
QUERY = _rng.uniform(-1, 1, (2, 4, 6)).astype(np.float32)
VALUE = _rng.uniform(-1, 1, (2, 5, 6)).astype(np.float32)
KEY = _rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
ATT_MASK = _rng.uniform(0, 1, (2, 4, 5)) < 0.7
ATT_MASK[:, :, 0] = True  # no fully masked row
AUDIO = (np.sin(np.arange(1200) * 0.07)[None] * np.array([[1.0], [0.3]])
         + _rng.uniform(-0.1, 0.1, (2, 1200))).astype(np.float32)

CASES = [  # (name, builder, input name, call kwargs)
    ("convlstm2d", lambda L: L.ConvLSTM2D(3, 2), "SEQ2D", {}),
    ("convlstm2d_seq_state", lambda L: L.ConvLSTM2D(2, 3, padding="same", return_sequences=True,
                                                   return_state=True), "SEQ2D", {}),
    ("convlstm2d_back", lambda L: L.ConvLSTM2D(2, (2, 3), strides=(2, 1), go_backwards=True,
                                              return_sequences=True), "SEQ2D", {}),
    ("convlstm2d_mask", lambda L: L.ConvLSTM2D(2, 2, return_sequences=True, return_state=True),
     "SEQ2D", {"mask": "MASK"}),
    ("convlstm2d_cf", lambda L: L.ConvLSTM2D(2, 2, data_format="channels_first",
                                            return_state=True), "SEQ2D_CF", {}),
    ("convlstm2d_dilated", lambda L: L.ConvLSTM2D(2, 2, dilation_rate=2, activation="relu",
                                                 recurrent_activation="hard_sigmoid"),
     "SEQ2D", {}),
    ("convlstm1d", lambda L: L.ConvLSTM1D(3, 3, padding="same", return_sequences=True),
     "SEQ1D", {}),
    ("convlstm1d_nobias", lambda L: L.ConvLSTM1D(2, 2, use_bias=False, strides=2), "SEQ1D", {}),
    ("convlstm3d", lambda L: L.ConvLSTM3D(2, 2, return_state=True), "SEQ3D", {}),
    ("stacked", lambda L: L.RNN(L.StackedRNNCells([L.LSTMCell(4), L.GRUCell(3),
                                                   L.SimpleRNNCell(2)]),
                                return_sequences=True, return_state=True), "SEQ", {}),
    ("stacked_back", lambda L: L.RNN(L.StackedRNNCells([L.SimpleRNNCell(3), L.LSTMCell(2)]),
                                     go_backwards=True), "SEQ", {}),
    ("spectral_dense_train", lambda L: L.SpectralNormalization(L.Dense(3)), "FLAT",
     {"training": True}),
    ("spectral_dense_2iter", lambda L: L.SpectralNormalization(L.Dense(5), power_iterations=2),
     "FLAT", {"training": True}),
    ("spectral_dense_infer", lambda L: L.SpectralNormalization(L.Dense(3)), "FLAT",
     {"training": False}),
    ("spectral_conv", lambda L: L.SpectralNormalization(L.Conv2D(2, 2)), "SEQ2D0",
     {"training": True}),
    ("revemb_forward", lambda L: L.ReversibleEmbedding(6, 3), "IDS", {}),
    ("revemb_reverse", lambda L: L.ReversibleEmbedding(6, 3, logit_soft_cap=0.4), "HID",
     {"reverse": True}),
    ("revemb_untied", lambda L: L.ReversibleEmbedding(6, 3, tie_weights=False), "HID",
     {"reverse": True}),
    ("gqa", lambda L: L.GroupQueryAttention(4, 4, 2), ("QUERY", "VALUE"), {}),
    ("gqa_key_scores", lambda L: L.GroupQueryAttention(3, 6, 3, use_bias=False),
     ("QUERY", "VALUE", "KEY"), {"return_attention_scores": True}),
    ("gqa_masks", lambda L: L.GroupQueryAttention(2, 2, 1, use_gate=True),
     ("QUERY", "VALUE"), {"attention_mask": "ATT_MASK"}),
    ("gqa_causal_window", lambda L: L.GroupQueryAttention(2, 4, 1, sliding_window=2),
     ("QUERY", "QUERY"), {"use_causal_mask": True}),
    ("mel", lambda L: L.MelSpectrogram(fft_length=256, sequence_stride=100, num_mel_bins=16),
     "AUDIO", {}),
    ("mel_power_hamming", lambda L: L.MelSpectrogram(
        fft_length=128, sequence_length=100, sequence_stride=64, window="hamming",
        num_mel_bins=10, sampling_rate=8000, min_freq=50.0, max_freq=3000.0,
        power_to_db=False, mag_exp=1.0), "AUDIO", {}),
    ("mel_db_ref", lambda L: L.MelSpectrogram(fft_length=64, sequence_stride=64,
                                              num_mel_bins=8, top_db=20.0, ref_power=2.0),
     "AUDIO0", {}),
    ("stft_log", lambda L: L.STFTSpectrogram(frame_length=64, frame_step=32), "AUDIO3", {}),
    ("stft_stft_same", lambda L: L.STFTSpectrogram(mode="stft", frame_length=50, frame_step=20,
                                                   padding="same", periodic=True,
                                                   scaling="spectrum"), "AUDIO3", {}),
    ("stft_psd_expand", lambda L: L.STFTSpectrogram(mode="psd", frame_length=32,
                                                    window="hamming", expand_dims=True),
     "AUDIO3", {}),
    ("stft_angle_cf", lambda L: L.STFTSpectrogram(mode="angle", frame_length=40,
                                                  frame_step=40, data_format="channels_first",
                                                  scaling=None), "AUDIO3_CF", {}),
    ("stft_magnitude_boxcar", lambda L: L.STFTSpectrogram(mode="magnitude", frame_length=30,
                                                          window=None, fft_length=64),
     "AUDIO3", {}),
    ("spectral_embedding", lambda L: L.SpectralNormalization(L.Embedding(5, 3)), "IDS",
     {"training": True}),
]


def inputs(name):
    if isinstance(name, tuple):
        return [inputs(n) for n in name]
    if name == "AUDIO3":
        return np.stack([AUDIO[:, :400], AUDIO[:, 400:800]], -1)
    if name == "AUDIO3_CF":
        return np.stack([AUDIO[:, :400], AUDIO[:, 400:800]], 1)
    if name == "AUDIO0":
        return AUDIO[0]
    if name == "SEQ2D0":
        return SEQ2D[:, 0]
    return globals()[name]


def call_kwargs(kwargs):
    return {k: inputs(v) if isinstance(v, str) else v for k, v in kwargs.items()}


def weights_for(shapes):
    """Deterministic weights of the given shapes (scaled to keep the gates unsaturated)."""
    rng = np.random.RandomState(11)
    return [rng.uniform(-0.5, 0.5, s).astype(np.float32) for s in shapes]

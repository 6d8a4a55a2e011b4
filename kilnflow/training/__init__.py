"""kf.train's newer names (issue 12): ExponentialMovingAverage, Coordinator, the checkpoint
state file and iterator, CheckpointOptions, and the tf.train.Example protocol buffers.
kilnflow/train.py re-exports them."""

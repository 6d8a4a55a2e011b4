"""TF's framework-level value classes that are neither ops nor namespaces (tf.DeviceSpec)."""

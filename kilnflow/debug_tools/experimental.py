"""The kf.debugging.experimental namespace: TF's two names here (enable/disable_dump_debug_info,
tfdbg2 dumps for TensorBoard's Debugger V2) are out of scope; the module exists so that
`tf.debugging.experimental` resolves."""

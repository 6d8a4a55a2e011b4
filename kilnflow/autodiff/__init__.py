"""Gradients from OpDef gradient rules: GradientTape (eager and traced) and kf.gradients."""

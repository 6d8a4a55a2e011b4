"""TF's composite top-level API built on the layers below, defining no ops: higher-order
functions (map_fn, scan, folds, vectorized_map), gradient utilities (gradients, hessians,
recompute_grad, grad_pass_through, RegisterGradient), TF2 initializers and kf.types."""

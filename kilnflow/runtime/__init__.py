"""Graph -> Python callable: generated straight-line source calling the kernels."""

"""kilnflow benchmarks: named workloads timed as ratios in one process.

Run `python -m benchmarks.run --help`. This package imports nothing heavy at import
time, so `benchmarks.run` can pin BLAS to one thread before NumPy is loaded.
"""

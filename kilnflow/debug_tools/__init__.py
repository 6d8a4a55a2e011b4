"""Debugging switches of kf.debugging that change how kilnflow reports, not what it
computes: traceback filtering and eager device-placement logging."""

"""keras.datasets: small data sets shipped inside the package (no downloads)."""
from kilnflow.keras.datasets import digits as digits

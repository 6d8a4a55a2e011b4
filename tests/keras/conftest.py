import pytest

from kilnflow import keras


@pytest.fixture(autouse=True)
def _fresh_layer_names():
    """Each test starts with dense, dense_1, ... (names do not depend on test order)."""
    keras.backend.clear_session()
    yield

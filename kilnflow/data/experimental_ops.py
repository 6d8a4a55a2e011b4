"""The function forms of tf.data.experimental (cardinality, sampling, assert_cardinality)."""
from __future__ import annotations

from typing import Any, List, Optional

from kilnflow.data.dataset import Dataset
from kilnflow.data.transforms import AssertCardinality


def cardinality(dataset: Dataset) -> Any:
    """tf.data.experimental.cardinality: dataset.cardinality()."""
    return dataset.cardinality()


def sample_from_datasets(datasets: List[Dataset], weights: Any = None,
                         seed: Optional[int] = None,
                         stop_on_empty_dataset: bool = False) -> Dataset:
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets: List[Dataset], choice_dataset: Dataset,
                         stop_on_empty_dataset: bool = True) -> Dataset:
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def assert_cardinality(expected_cardinality: int) -> Any:
    """A transformation for dataset.apply: FailedPreconditionError at iteration when the
    dataset's element count is not expected_cardinality (which cardinality() reports)."""
    return lambda dataset: AssertCardinality(dataset, expected_cardinality)

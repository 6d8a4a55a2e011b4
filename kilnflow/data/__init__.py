"""kf.data (tf.data): input pipelines on NumPy. Re-exports only.

This folder also holds digits.npz (with its license), the data set keras.datasets ships.
"""
from kilnflow.data import experimental as experimental
from kilnflow.data.batching import DatasetSpec as DatasetSpec
from kilnflow.data.dataset import Dataset as Dataset
from kilnflow.data.dataset import INFINITE as INFINITE_CARDINALITY
from kilnflow.data.dataset import UNKNOWN as UNKNOWN_CARDINALITY
from kilnflow.data.iterator import OwnedIterator as Iterator
from kilnflow.data.options import AUTOTUNE as AUTOTUNE
from kilnflow.data.options import Options as Options
from kilnflow.data.options import ThreadingOptions as ThreadingOptions
from kilnflow.data.readers import FixedLengthRecordDataset as FixedLengthRecordDataset
from kilnflow.data.readers import TFRecordDataset as TFRecordDataset
from kilnflow.data.readers import TextLineDataset as TextLineDataset
from kilnflow.data.iterator import IteratorSpec as IteratorSpec
from kilnflow.data.iterator import NumpyIterator as NumpyIterator

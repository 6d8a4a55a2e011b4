"""keras.utils.text_dataset_from_directory and image_dataset_from_directory: a folder of
files (one sub-folder per class) as a kf.data.Dataset of (batches of) samples and labels.

Files are listed as Keras lists them (classes = sorted sub-folders, files sorted, then one
NumPy shuffle with `seed`), so shuffle=False gives Keras's order exactly. With shuffle=True
Keras also shuffles the dataset with TF's own generator: the files are the same, their order
is kilnflow's. Images are decoded by kf.image (PNG and BMP: JPEG and GIF files raise).
"""
from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

from kilnflow import errors
from kilnflow.autodiff.py_function import numpy_function
from kilnflow.ops import image as image_ops
from kilnflow.ops import image_codec

TEXT_FORMATS = (".txt",)
IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
DECODABLE = (".bmp", ".png")


def _read(path: Any, convert: Any) -> Any:
    """A string tensor: `convert(bytes of the file at path)`, read when the dataset runs."""
    def read(name: Any) -> Any:
        name = name.item() if isinstance(name, np.ndarray) else name
        with open(name.decode() if isinstance(name, bytes) else str(name), "rb") as f:
            return convert(f.read())
    value = numpy_function(read, [path], "string", stateful=False)
    value.set_shape([])
    return value


def _valid_files(directory: str, formats: tuple, follow_links: bool) -> list:
    found = []
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links),
                                 key=lambda entry: entry[0]):
        found += [os.path.join(root, f) for f in sorted(files) if f.lower().endswith(formats)]
    return found


def index_directory(directory: str, labels: Any, formats: tuple, class_names: Any = None,
                    shuffle: bool = True, seed: Optional[int] = None,
                    follow_links: bool = False, verbose: bool = True) -> tuple:
    """(file paths, integer labels or None, class names), in Keras's order."""
    if labels == "inferred":
        subdirs = sorted(d for d in os.listdir(directory)
                         if os.path.isdir(os.path.join(directory, d)))
        if class_names is not None:
            if not set(class_names).issubset(subdirs):
                raise ValueError("The `class_names` passed did not match the names of the "
                                 f"subdirectories of the target directory. Expected: "
                                 f"{subdirs} (or a subset of it), but received: "
                                 f"class_names={class_names}")
            subdirs = list(class_names)
        paths, label_list = [], []
        for index, subdir in enumerate(subdirs):
            files = _valid_files(os.path.join(directory, subdir), formats, follow_links)
            paths += files
            label_list += [index] * len(files)
        found_labels: Any = np.asarray(label_list, dtype="int32")
        class_names = subdirs
    else:
        if class_names is not None:
            raise ValueError("When argument `labels` is specified, argument `class_names` "
                             "cannot be specified (the `class_names` will be the sorted "
                             "list of labels)." if labels is not None else
                             "When `labels=None` (no labels), argument `class_names` "
                             "cannot be specified.")
        paths = _valid_files(directory, formats, follow_links)
        if labels is None:
            found_labels, class_names = None, None
        else:
            if len(labels) != len(paths):
                raise ValueError("Expected the lengths of `labels` to match the number of "
                                 f"files in the target directory. len(labels) is "
                                 f"{len(labels)} while we found {len(paths)} files in "
                                 f"directory {directory}.")
            found_labels = np.asarray(labels)
            class_names = [str(label) for label in sorted(set(labels))]
    if verbose:
        print(f"Found {len(paths)} files." if found_labels is None else
              f"Found {len(paths)} files belonging to {len(class_names)} classes.")
    if shuffle:
        seed = np.random.randint(1e6) if seed is None else seed
        np.random.RandomState(seed).shuffle(paths)
        if found_labels is not None:
            np.random.RandomState(seed).shuffle(found_labels)
    return paths, found_labels, class_names


def _split(samples: list, labels: Any, validation_split: Optional[float],
           subset: Optional[str]) -> tuple:
    if not validation_split:
        return samples, labels
    count = int(validation_split * len(samples))
    if subset == "training":
        print(f"Using {len(samples) - count} files for training.")
        return samples[:-count], None if labels is None else labels[:-count]
    print(f"Using {count} files for validation.")
    return samples[-count:], None if labels is None else labels[-count:]


def _check_split(validation_split: Optional[float], subset: Optional[str],
                 shuffle: bool, seed: Optional[int]) -> None:
    if subset not in (None, "training", "validation", "both"):
        raise ValueError('`subset` must be either "training", "validation" or "both", '
                         f"received: {subset}")
    if validation_split and not 0 < validation_split < 1:
        raise ValueError("`validation_split` must be between 0 and 1, received: "
                         f"{validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must "
                         "provide a `seed` argument, to make sure that there is no overlap "
                         "between the training and validation subset.")


def _labels_dataset(labels: Any, label_mode: Optional[str], num_classes: int) -> Any:
    if label_mode == "int":
        return np.asarray(labels, dtype="int32")
    if label_mode == "binary":
        return np.asarray(labels, dtype="float32")[:, None]
    if label_mode == "categorical":
        return np.eye(num_classes, dtype="float32")[np.asarray(labels, dtype="int64")]
    raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", '
                     f"or None. Received: label_mode={label_mode}")


def _dataset(samples: Any, labels: Any, label_mode: Optional[str], num_classes: int,
             batch_size: Optional[int], shuffle: bool, seed: Optional[int],
             load: Any) -> Any:
    from kilnflow.data import Dataset
    paths = Dataset.from_tensor_slices(np.asarray(samples, dtype=object).astype(str))
    dataset = paths.map(load)
    if label_mode is not None and labels is not None:
        dataset = Dataset.zip((dataset, Dataset.from_tensor_slices(
            _labels_dataset(labels, label_mode, num_classes))))
    if shuffle:
        dataset = dataset.shuffle(buffer_size=(batch_size or 1) * 8, seed=seed)
    return dataset.batch(batch_size) if batch_size is not None else dataset


def _from_directory(directory: str, labels: Any, label_mode: Any, class_names: Any,
                    batch_size: Optional[int], shuffle: bool, seed: Optional[int],
                    validation_split: Optional[float], subset: Optional[str],
                    follow_links: bool, verbose: bool, formats: tuple, load: Any) -> Any:
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError("`labels` argument should be a list/tuple of integer labels, of the "
                         "same size as the number of files in the target directory. If you "
                         "wish to infer the labels from the subdirectory names in the target "
                         'directory, pass `labels="inferred"`. If you wish to get a dataset '
                         f"that only contains samples (no labels), pass `labels=None`. "
                         f"Received: labels={labels}")
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    _check_split(validation_split, subset, shuffle, seed)
    paths, found, class_names = index_directory(
        directory, labels if labels is not None else None, formats, class_names,
        shuffle=shuffle, seed=seed, follow_links=follow_links, verbose=verbose)
    num_classes = len(class_names) if class_names else 0
    if label_mode == "binary" and num_classes != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    subsets = ["training", "validation"] if subset == "both" else [subset]
    datasets = []
    for part in subsets:
        samples, part_labels = _split(paths, found, validation_split, part)
        if not samples:
            raise ValueError(f"No files found in directory {directory}. Allowed file "
                             f"formats: {formats}")
        dataset = _dataset(samples, part_labels, label_mode, num_classes, batch_size,
                           shuffle, seed, load)
        dataset.class_names = class_names
        dataset.file_paths = list(samples)
        datasets.append(dataset)
    return datasets if subset == "both" else datasets[0]


def text_dataset_from_directory(directory: str, labels: Any = "inferred",
                                label_mode: Optional[str] = "int",
                                class_names: Any = None, batch_size: Optional[int] = 32,
                                max_length: Optional[int] = None, shuffle: bool = True,
                                seed: Optional[int] = None,
                                validation_split: Optional[float] = None,
                                subset: Optional[str] = None, follow_links: bool = False,
                                verbose: bool = True) -> Any:
    """A dataset of the `.txt` files' contents (string tensors, cut to `max_length`
    characters) and their labels (the index of their class folder; `label_mode`
    'categorical' one-hot, 'binary' a float per file, None no labels)."""
    def load(path: Any) -> Any:
        def cut(data: bytes) -> Any:
            text = data.decode("utf-8", "replace")
            return np.asarray((text[:max_length] if max_length is not None else text)
                              .encode(), dtype=object)
        return _read(path, cut)
    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle,
                           seed, validation_split, subset, follow_links, verbose,
                           TEXT_FORMATS, load)


def image_dataset_from_directory(directory: str, labels: Any = "inferred",
                                 label_mode: Optional[str] = "int", class_names: Any = None,
                                 color_mode: str = "rgb", batch_size: Optional[int] = 32,
                                 image_size: tuple = (256, 256), shuffle: bool = True,
                                 seed: Optional[int] = None,
                                 validation_split: Optional[float] = None,
                                 subset: Optional[str] = None,
                                 interpolation: str = "bilinear", follow_links: bool = False,
                                 crop_to_aspect_ratio: bool = False,
                                 pad_to_aspect_ratio: bool = False,
                                 data_format: Any = None, verbose: bool = True) -> Any:
    """A dataset of the images (float32, resized to `image_size`, `color_mode` 'rgb',
    'grayscale' or 'rgba') and their labels, as text_dataset_from_directory labels them."""
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}.get(color_mode)
    if channels is None:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
                         f"Received: color_mode={color_mode}")
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise NotImplementedError("image_dataset_from_directory: crop_to_aspect_ratio and "
                                  "pad_to_aspect_ratio are not supported")
    undecodable = [p for p in _valid_files(directory, IMAGE_FORMATS, follow_links)
                   if not p.lower().endswith(DECODABLE)]
    if undecodable:
        raise errors.UnimplementedError(
            None, None, f"image_dataset_from_directory: kilnflow decodes PNG and BMP only; "
            f"found {undecodable[0]}")

    def load(path: Any) -> Any:
        data = _read(path, lambda raw: np.asarray(raw, dtype=object))
        decoded = image_codec.decode_image(data, channels=channels, expand_animations=False)
        return image_ops.resize(decoded, image_size, method=interpolation)
    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle,
                           seed, validation_split, subset, follow_links, verbose,
                           IMAGE_FORMATS, load)

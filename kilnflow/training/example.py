"""tf.train.Example and friends as small Python classes whose bytes are protobuf's wire
format, so records written here are read by TF and the other way round.

Messages (from TF's example.proto and feature.proto):
  BytesList{1: repeated bytes}  FloatList{1: packed float}  Int64List{1: packed int64}
  Feature{oneof kind: 1 bytes_list, 2 float_list, 3 int64_list}
  Features{1: map<string, Feature>}  FeatureList{1: repeated Feature}
  FeatureLists{1: map<string, FeatureList>}
  Example{1: Features}  SequenceExample{1: Features context, 2: FeatureLists}
Serialization is deterministic (map entries sorted by key, as protobuf's
`SerializeToString(deterministic=True)`).
"""
from __future__ import annotations

import struct
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from kilnflow.training import wire

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
           "FeatureLists", "Example", "SequenceExample"]


class _Repeated(list):
    """A repeated scalar field: a list that converts (and checks) what goes in."""

    def __init__(self, convert: Any, values: Any = ()):
        self._convert = convert
        super().__init__(convert(v) for v in values)

    def append(self, value: Any) -> None:
        super().append(self._convert(value))

    def extend(self, values: Any) -> None:
        super().extend(self._convert(v) for v in values)

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            super().__setitem__(index, [self._convert(v) for v in value])
        else:
            super().__setitem__(index, self._convert(value))


def _to_bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value)
    raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: bytes")


def _to_float(value: Any) -> float:
    if isinstance(value, (bytes, str)) or not np.isscalar(value) and \
            not isinstance(value, np.ndarray):
        raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: "
                        "int, float")
    return float(np.float32(value))  # a float field holds float32, as protobuf's does


def _to_int64(value: Any) -> int:
    if isinstance(value, (float, np.floating, bytes, str, bool)):
        raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: "
                        "int")
    number = int(value)
    if not -2 ** 63 <= number < 2 ** 63:
        raise ValueError(f"Value out of range: {number}")
    return number


class _Map(dict):
    """A map<string, Message> field: reading a missing key adds an empty message, as
    protobuf's message maps do."""

    def __init__(self, message_type: type, items: Any = None):
        super().__init__()
        self._type = message_type
        for key, value in dict(items or {}).items():
            self[key] = value

    def __missing__(self, key: str) -> Any:
        value = self._type()
        super().__setitem__(key, value)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"map key {key!r} must be a str")
        if not isinstance(value, self._type):
            raise TypeError(f"map value {value!r} must be a {self._type.__name__}")
        super().__setitem__(key, value)


class _Message:
    """Shared behaviour of the messages: construction by keyword, equality, bytes, text."""

    _FIELDS: Tuple[str, ...] = ()

    def __init__(self, **fields: Any):
        for name, value in fields.items():
            if name not in self._FIELDS:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" '
                                 "field.")
            setattr(self, name, value)

    def SerializeToString(self, deterministic: bool = True) -> bytes:
        """The message in protobuf's wire format."""
        return b"".join(self._encode())

    @classmethod
    def FromString(cls, data: bytes) -> Any:
        """A message parsed from protobuf's wire format."""
        message = cls()
        message.ParseFromString(data)
        return message

    def ParseFromString(self, data: bytes) -> int:
        self.Clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data: bytes) -> int:
        for number, value in wire.fields(bytes(data), type(self).__name__):
            self._merge_field(number, value)
        return len(data)

    def CopyFrom(self, other: Any) -> None:
        self.ParseFromString(other.SerializeToString())

    def ByteSize(self) -> int:
        return len(self.SerializeToString())

    def Clear(self) -> None:
        type(self).__init__(self)

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and \
            self.SerializeToString() == other.SerializeToString()

    def __ne__(self, other: Any) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # mutable, as protobuf messages are

    def __str__(self) -> str:
        return "".join(line + "\n" for line in self._text())

    def __repr__(self) -> str:
        return str(self)

    def _encode(self) -> Iterator[bytes]:
        raise NotImplementedError

    def _merge_field(self, number: int, value: Any) -> None:
        raise NotImplementedError

    def _text(self) -> List[str]:
        raise NotImplementedError


def _block(name: str, message: "_Message") -> List[str]:
    return [name + " {"] + ["  " + line for line in message._text()] + ["}"]


def _format_float(value: float) -> str:
    """Protobuf's text form of a float field: the shortest float32 repr, no '.0'."""
    text = str(np.float32(value))
    return text[:-2] if text.endswith(".0") else text


def _quote(value: bytes) -> str:
    return '"' + wire.c_escape(value) + '"'


class _ScalarList(_Message):
    """BytesList, FloatList and Int64List: one repeated field `value`, field number 1."""

    _FIELDS = ("value",)
    _convert: Any = None

    def __init__(self, value: Any = ()):
        self.value = value

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "value":
            if isinstance(value, (str, bytes)):
                raise TypeError(f"{type(self).__name__}.value must be a sequence, got "
                                f"{type(value).__name__}")
            value = _Repeated(type(self)._convert, value)
        object.__setattr__(self, name, value)


class BytesList(_ScalarList):
    """tf.train.BytesList: a list of byte strings."""

    _convert = staticmethod(_to_bytes)

    def _encode(self) -> Iterator[bytes]:
        for item in self.value:
            yield wire.length_delimited(1, item)

    def _merge_field(self, number: int, value: Any) -> None:
        if number == 1:
            self.value.append(wire.as_bytes(value, "BytesList.value"))

    def _text(self) -> List[str]:
        return [f"value: {_quote(v)}" for v in self.value]


class FloatList(_ScalarList):
    """tf.train.FloatList: a list of float32 values (packed on the wire)."""

    _convert = staticmethod(_to_float)

    def _encode(self) -> Iterator[bytes]:
        if self.value:
            yield wire.length_delimited(1, struct.pack(f"<{len(self.value)}f", *self.value))

    def _merge_field(self, number: int, value: Any) -> None:
        if number == 1:
            self.value.extend(wire.floats(value))

    def _text(self) -> List[str]:
        return [f"value: {_format_float(v)}" for v in self.value]


class Int64List(_ScalarList):
    """tf.train.Int64List: a list of int64 values (packed varints on the wire)."""

    _convert = staticmethod(_to_int64)

    def _encode(self) -> Iterator[bytes]:
        if self.value:
            yield wire.length_delimited(1, b"".join(wire.varint(v) for v in self.value))

    def _merge_field(self, number: int, value: Any) -> None:
        if number == 1:
            self.value.extend(wire.int64s(value))

    def _text(self) -> List[str]:
        return [f"value: {v}" for v in self.value]


_KINDS = {"bytes_list": (1, BytesList), "float_list": (2, FloatList),
          "int64_list": (3, Int64List)}


class Feature(_Message):
    """tf.train.Feature: one of bytes_list, float_list or int64_list (the oneof `kind`)."""

    _FIELDS = tuple(_KINDS)

    def __init__(self, bytes_list: Optional[BytesList] = None,
                 float_list: Optional[FloatList] = None,
                 int64_list: Optional[Int64List] = None):
        object.__setattr__(self, "_kind", None)
        object.__setattr__(self, "_lists", {})
        for name, value in (("bytes_list", bytes_list), ("float_list", float_list),
                            ("int64_list", int64_list)):
            if value is not None:
                setattr(self, name, value)

    def __getattr__(self, name: str) -> Any:
        if name not in _KINDS:
            raise AttributeError(name)
        lists = self.__dict__["_lists"]
        if name not in lists:
            lists[name] = _KINDS[name][1]()
        return lists[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _KINDS:
            raise AttributeError(f"Feature has no field {name!r}")
        if not isinstance(value, _KINDS[name][1]):
            raise TypeError(f"Feature.{name} must be a {_KINDS[name][1].__name__}")
        self.__dict__["_lists"] = {name: value}
        self.__dict__["_kind"] = name

    def WhichOneof(self, group: str) -> Optional[str]:
        """The name of the list this feature holds ("kind" is the only oneof), or None."""
        if group != "kind":
            raise ValueError(f'Protocol message has no oneof "{group}" field.')
        if self._kind is not None:
            return self._kind
        filled = [n for n, m in self._lists.items() if m.value]
        return filled[-1] if filled else None

    def HasField(self, name: str) -> bool:
        return self.WhichOneof("kind") == name

    def _encode(self) -> Iterator[bytes]:
        kind = self.WhichOneof("kind")
        if kind is not None:
            yield wire.length_delimited(_KINDS[kind][0],
                                        getattr(self, kind).SerializeToString())

    def _merge_field(self, number: int, value: Any) -> None:
        for name, (field, cls) in _KINDS.items():
            if number == field:
                current = self._lists.get(name) if self._kind == name else None
                merged = current if current is not None else cls()
                merged.MergeFromString(wire.as_bytes(value, f"Feature.{name}"))
                setattr(self, name, merged)

    def _text(self) -> List[str]:
        kind = self.WhichOneof("kind")
        return _block(kind, getattr(self, kind)) if kind else []


class _MapMessage(_Message):
    """Features and FeatureLists: one map<string, message> field, number 1."""

    _FIELDS: Tuple[str, ...] = ()
    _VALUE: type = Feature

    def __init__(self, **fields: Any):
        name = self._FIELDS[0]
        object.__setattr__(self, name, _Map(self._VALUE, fields.get(name)))
        extra = set(fields) - {name}
        if extra:
            raise ValueError(f'Protocol message {type(self).__name__} has no '
                             f'"{extra.pop()}" field.')

    def __setattr__(self, name: str, value: Any) -> None:
        if name != self._FIELDS[0]:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        object.__setattr__(self, name, _Map(self._VALUE, value))

    def _encode(self) -> Iterator[bytes]:
        entries = getattr(self, self._FIELDS[0])
        for key in sorted(entries):
            entry = wire.length_delimited(1, key.encode("utf-8")) + \
                wire.length_delimited(2, entries[key].SerializeToString())
            yield wire.length_delimited(1, entry)

    def _merge_field(self, number: int, value: Any) -> None:
        if number != 1:
            return
        key, data = "", b""
        for field, item in wire.fields(wire.as_bytes(value, "map entry"), "map entry"):
            if field == 1:
                key = wire.as_bytes(item, "map key").decode("utf-8")
            elif field == 2:
                data = wire.as_bytes(item, "map value")
        getattr(self, self._FIELDS[0])[key] = self._VALUE.FromString(data)

    def _text(self) -> List[str]:
        entries = getattr(self, self._FIELDS[0])
        lines: List[str] = []
        for key in sorted(entries):
            lines += [self._FIELDS[0] + " {", f"  key: {_quote(key.encode('utf-8'))}"]
            lines += ["  " + line for line in _block("value", entries[key])] + ["}"]
        return lines


class Features(_MapMessage):
    """tf.train.Features: a map from feature name to Feature (`feature`)."""

    _FIELDS = ("feature",)
    _VALUE = Feature

    def __init__(self, feature: Optional[Dict[str, Feature]] = None, **unknown: Any):
        super().__init__(feature=feature, **unknown)


class FeatureList(_Message):
    """tf.train.FeatureList: a list of Features (`feature`), one per sequence step."""

    _FIELDS = ("feature",)

    def __init__(self, feature: Any = ()):
        self.feature = feature

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "feature":
            raise AttributeError(f"FeatureList has no field {name!r}")
        items = list(value)
        if not all(isinstance(f, Feature) for f in items):
            raise TypeError("FeatureList.feature holds Feature messages")
        object.__setattr__(self, name, items)

    def _encode(self) -> Iterator[bytes]:
        for feature in self.feature:
            yield wire.length_delimited(1, feature.SerializeToString())

    def _merge_field(self, number: int, value: Any) -> None:
        if number == 1:
            self.feature.append(Feature.FromString(wire.as_bytes(value, "FeatureList")))

    def _text(self) -> List[str]:
        return [line for f in self.feature for line in _block("feature", f)]


class FeatureLists(_MapMessage):
    """tf.train.FeatureLists: a map from name to FeatureList (`feature_list`)."""

    _FIELDS = ("feature_list",)
    _VALUE = FeatureList

    def __init__(self, feature_list: Optional[Dict[str, FeatureList]] = None,
                 **unknown: Any):
        super().__init__(feature_list=feature_list, **unknown)


class _Record(_Message):
    """Example and SequenceExample: singular message fields, present once set."""

    _TYPES: Dict[str, Tuple[int, type]] = {}

    def __init__(self, **fields: Any):
        object.__setattr__(self, "_set", {})
        super().__init__(**fields)

    def __getattr__(self, name: str) -> Any:
        if name not in self._TYPES:
            raise AttributeError(name)
        values = self.__dict__["_set"]
        if name not in values:
            values[name] = self._TYPES[name][1]()
        return values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._TYPES:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        if not isinstance(value, self._TYPES[name][1]):
            raise TypeError(f"{type(self).__name__}.{name} must be a "
                            f"{self._TYPES[name][1].__name__}")
        self.__dict__["_set"][name] = value

    def HasField(self, name: str) -> bool:
        return name in self._set and bool(self._set[name].SerializeToString())

    def _encode(self) -> Iterator[bytes]:
        for name, (number, _) in sorted(self._TYPES.items(), key=lambda kv: kv[1][0]):
            if name in self._set:
                data = self._set[name].SerializeToString()
                if data:
                    yield wire.length_delimited(number, data)

    def _merge_field(self, number: int, value: Any) -> None:
        for name, (field, cls) in self._TYPES.items():
            if number == field:
                getattr(self, name).MergeFromString(wire.as_bytes(value, name))

    def _text(self) -> List[str]:
        lines: List[str] = []
        for name, (number, _) in sorted(self._TYPES.items(), key=lambda kv: kv[1][0]):
            if name in self._set and self._set[name].SerializeToString():
                lines += _block(name, self._set[name])
        return lines


class Example(_Record):
    """tf.train.Example: one record of named features.

    >>> import kilnflow as kf
    >>> ex = kf.train.Example(features=kf.train.Features(feature={
    ...     "x": kf.train.Feature(int64_list=kf.train.Int64List(value=[1, 2]))}))
    >>> ex.SerializeToString()
    b'\\n\\r\\n\\x0b\\n\\x01x\\x12\\x06\\x1a\\x04\\n\\x02\\x01\\x02'
    >>> kf.train.Example.FromString(ex.SerializeToString()) == ex
    True
    """

    _FIELDS = ("features",)
    _TYPES = {"features": (1, Features)}

    def __init__(self, features: Optional[Features] = None, **unknown: Any):
        super().__init__(**({} if features is None else {"features": features}), **unknown)


class SequenceExample(_Record):
    """tf.train.SequenceExample: context features plus per-step feature lists."""

    _FIELDS = ("context", "feature_lists")
    _TYPES = {"context": (1, Features), "feature_lists": (2, FeatureLists)}

    def __init__(self, context: Optional[Features] = None,
                 feature_lists: Optional[FeatureLists] = None, **unknown: Any):
        fields = {k: v for k, v in (("context", context), ("feature_lists", feature_lists))
                  if v is not None}
        super().__init__(**fields, **unknown)

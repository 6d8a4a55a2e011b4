"""tf.DeviceSpec: a device name's parts (job, replica, task, device type and index),
parsed from and printed to TF's `/job:worker/replica:0/task:1/device:GPU:2` form."""
from __future__ import annotations

from typing import Any, Optional

__all__ = ["DeviceSpec"]

_FIELDS = ("job", "replica", "task", "device_type", "device_index")


def _index(value: Any, what: str) -> Optional[int]:
    if value is None or value == "*":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"DeviceSpec: {what} must be an int, got {value!r}") from None


def _device_type(value: Optional[str]) -> Optional[str]:
    if value is None or value == "*":
        return None
    return value.upper() if value.lower() in ("cpu", "gpu", "tpu") else value


class DeviceSpec:
    """Represents a (possibly partial) device specification; immutable.

    >>> import kilnflow as kf
    >>> spec = kf.DeviceSpec.from_string("/job:worker/task:1/device:GPU:2")
    >>> spec.job, spec.task, spec.device_type, spec.device_index
    ('worker', 1, 'GPU', 2)
    >>> spec.replace(task=3).to_string()
    '/job:worker/task:3/device:GPU:2'
    """

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index")

    def __init__(self, job: Optional[str] = None, replica: Optional[int] = None,
                 task: Optional[int] = None, device_type: Optional[str] = None,
                 device_index: Optional[int] = None):
        self._job = None if job in (None, "*") else str(job)
        self._replica = _index(replica, "replica")
        self._task = _index(task, "task")
        self._device_type = _device_type(device_type)
        self._device_index = _index(device_index, "device_index")

    job = property(lambda self: self._job)
    replica = property(lambda self: self._replica)
    task = property(lambda self: self._task)
    device_type = property(lambda self: self._device_type)
    device_index = property(lambda self: self._device_index)

    @classmethod
    def from_string(cls, spec: str) -> "DeviceSpec":
        """Parse `/job:<name>/replica:<id>/task:<id>/device:<type>:<id>` (any part may be
        missing; `/cpu:0`, `GPU:1` and `*` wildcards are accepted, as in TF)."""
        if not isinstance(spec, str):
            raise TypeError(f"DeviceSpec.from_string: expected a str, got {spec!r}")
        fields: dict = {}
        for part in (p for p in spec.split("/") if p):
            bits = part.split(":")
            key = bits[0].lower()
            if len(bits) == 2 and key in ("job", "replica", "task"):
                fields[key] = bits[1]
            elif len(bits) == 3 and key == "device":
                fields["device_type"], fields["device_index"] = bits[1], bits[2]
            elif len(bits) == 2 and key == "device":
                fields["device_type"] = bits[1]
            elif len(bits) == 2 and key in ("cpu", "gpu", "tpu"):
                fields["device_type"], fields["device_index"] = bits[0], bits[1]
            elif len(bits) == 2 and bits[0] and bits[0][0].isupper():
                fields["device_type"], fields["device_index"] = bits[0], bits[1]
            else:
                raise ValueError(f"Unknown attribute: '{part}' in '{spec}'")
        return cls(**fields)

    def to_string(self) -> str:
        """The spec in TF's device-name form."""
        out = ""
        for key in ("job", "replica", "task"):
            value = getattr(self, key)
            if value is not None:
                out += f"/{key}:{value}"
        if self._device_type is not None:
            index = "*" if self._device_index is None else self._device_index
            out += f"/device:{self._device_type}:{index}"
        return out

    def replace(self, **kwargs: Any) -> "DeviceSpec":
        """A copy with the given fields replaced."""
        unknown = set(kwargs) - set(_FIELDS)
        if unknown:
            raise TypeError(f"DeviceSpec.replace: unknown fields {sorted(unknown)}")
        fields = {key: getattr(self, key) for key in _FIELDS}
        fields.update(kwargs)
        return DeviceSpec(**fields)

    def make_merged_spec(self, dev: "DeviceSpec") -> "DeviceSpec":
        """A spec with `dev`'s set fields over this one's."""
        return self.replace(**{k: getattr(dev, k) for k in _FIELDS
                               if getattr(dev, k) is not None})

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={getattr(self, k)}" for k in _FIELDS
                          if getattr(self, k) is not None)
        return f"<DeviceSpec({parts})>"

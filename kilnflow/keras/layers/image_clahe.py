"""ContrastLimitedAdaptiveHistogramEqualization (CLAHE) as Keras 3 computes it: the image
is cut into a `tile_grid_size` grid of tiles (padded symmetrically to a whole number of
tiles), each tile's 256-bin histogram is clipped at clip_limit * pixels / 256 with the
excess spread evenly, its CDF becomes a lookup table, and every pixel blends the tables of
the four nearest tile centres bilinearly. Applied in training and inference alike."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.keras.layers.image_base import ImageLayer, rescale
from kilnflow.ops import array, joining, math as kmath, reduction, reshaping, slicing
from kilnflow.ops.convert import convert_to_tensor


class ContrastLimitedAdaptiveHistogramEqualization(ImageLayer):
    """CLAHE of [batch, h, w, c] images in `value_range` (static h, w and c)."""

    def __init__(self, value_range: Any = (0, 255), clip_limit: float = 4.0,
                 tile_grid_size: Any = (8, 8), data_format: Optional[str] = None,
                 **kwargs: Any):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range, self.clip_limit = value_range, float(clip_limit)
        self.tile_grid_size = tuple(int(g) for g in tile_grid_size)

    def transform(self, images: Any, training: Any) -> Any:
        dtype = images.dtype
        x = rescale(kmath.cast(images, "float32"), self.value_range, (0, 255))
        out = rescale(self._clahe(x), (0, 255), self.value_range)
        return kmath.cast(out, dtype)

    def _clahe(self, images: Any) -> Any:
        _, height, width, channels = images.shape.as_list()
        if None in (height, width, channels):
            raise ValueError("ContrastLimitedAdaptiveHistogramEqualization needs known image "
                             f"sizes, got {images.shape}")
        gh, gw = self.tile_grid_size
        th, tw = -(-height // gh), -(-width // gw)
        pad_h, pad_w = th * gh - height, tw * gw - width
        padded = images
        if pad_h or pad_w:
            padded = reshaping.pad(images, [[0, 0], [0, pad_h], [0, pad_w], [0, 0]],
                                   mode="SYMMETRIC")
        tiles = reshaping.reshape(padded, [-1, gh, th, gw, tw, channels])
        tiles = reshaping.reshape(reshaping.transpose(tiles, [0, 1, 3, 5, 2, 4]),
                                  [-1, gh, gw, channels, th * tw])
        levels = kmath.clip_by_value(kmath.cast(tiles, "int32"), 0, 255)
        hists = reduction.reduce_sum(array.one_hot(levels, 256, dtype="float32"), -2)
        if self.clip_limit > 0:
            limit = self.clip_limit * (th * tw) / 256.0
            clipped = kmath.clip_by_value(hists, 0.0, limit)
            excess = reduction.reduce_sum(hists - clipped, -1, keepdims=True)
            hists = clipped + excess / 256.0
        cdf = reduction.cumsum(hists, -1)
        cdf_min = reduction.reduce_min(cdf, -1, keepdims=True)
        span = float(th * tw) - cdf_min
        span = array.where(kmath.equal(span, 0.0), array.ones_like(span), span)
        table = kmath.clip_by_value((cdf - cdf_min) * 255.0 / span, 0.0, 255.0)
        # one ring of edge tiles around the grid, so border pixels blend with themselves
        table = joining.concat([table[:, :1], table, table[:, -1:]], 1)
        table = joining.concat([table[:, :, :1], table, table[:, :, -1:]], 2)
        y0, y1, wy = self._grid(th * gh, th, gh)
        x0, x1, wx = self._grid(tw * gw, tw, gw)
        stride_x = 256 * channels
        stride_y = stride_x * (gw + 2)
        stride_b = stride_y * (gh + 2)
        flat = reshaping.reshape(table, [-1])
        pixels = kmath.cast(kmath.clip_by_value(padded, 0.0, 255.0), "int32")
        batch = array.shape(padded)[0]
        b = reshaping.reshape(kmath.cast(array.range(batch), "int32") * stride_b, [-1, 1, 1, 1])
        c = convert_to_tensor((np.arange(channels) * 256).reshape(1, 1, 1, -1), dtype="int32")
        base = b + c + pixels

        def at(y: np.ndarray, x: np.ndarray) -> Any:
            offset = convert_to_tensor((y[:, None] * stride_y + x[None, :] * stride_x)
                                       [None, :, :, None].astype(np.int32))
            return slicing.gather(flat, base + offset)
        wy_t = convert_to_tensor(wy.reshape(1, -1, 1, 1), dtype="float32")
        wx_t = convert_to_tensor(wx.reshape(1, 1, -1, 1), dtype="float32")
        top = at(y0, x0) * (1.0 - wx_t) + at(y0, x1) * wx_t
        bottom = at(y1, x0) * (1.0 - wx_t) + at(y1, x1) * wx_t
        result = top * (1.0 - wy_t) + bottom * wy_t
        return result[:, :height, :width, :]

    @staticmethod
    def _grid(n: int, tile: int, grid: int) -> tuple:
        """(lower tile row, upper tile row, upper weight) per pixel row, in the padded
        table's coordinates (tile centres at tile / 2 + k tile)."""
        pos = (np.arange(n, dtype=np.float32) - np.float32(tile / 2.0)) / np.float32(tile) + 1
        lower = np.floor(pos)
        weight = pos - lower
        return (np.clip(lower, 0, grid + 1).astype(np.int64),
                np.clip(lower + 1, 0, grid + 1).astype(np.int64), weight)

    def get_config(self) -> dict:
        config = {**super().get_config(), "value_range": self.value_range,
                  "clip_limit": self.clip_limit, "tile_grid_size": self.tile_grid_size}
        config.pop("seed")
        return config

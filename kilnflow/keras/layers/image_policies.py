"""RandAugment and AugMix. RandAugment (Cubuk et al., 2019) as Keras 3 has it: `num_ops` times, one augmentation
drawn uniformly from eleven (shear, translation, rotation, brightness, colour degeneration,
contrast, sharpness, posterization, solarization, auto-contrast, equalization) is applied
to the whole batch, each with strength range (0, factor)."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras.layers.image_base import ImageLayer, factor_pair
from kilnflow.keras.layers.image_color import (AutoContrast, Equalization, RandomBrightness,
                                               RandomColorDegeneration, RandomPosterization,
                                               RandomSharpness, Solarization)
from kilnflow.keras.layers.image_geometric import RandomRotation, RandomShear, RandomTranslation
from kilnflow.ops import array, math as kmath, reduction, reshaping


class _Contrast(ImageLayer):
    """Keras 3's RandomContrast with a value range: (x - mean) f + mean, f in
    [1 - lower, 1 + upper], clipped (RandomContrast with the factor pair given directly)."""

    def __init__(self, factor: tuple, value_range: Any, seed: Optional[int], **kwargs: Any):
        super().__init__(seed=seed, **kwargs)
        self.factor, self.value_range = factor, value_range

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        f = self.uniform(self.batch(images), 1.0 - self.factor[0], 1.0 + self.factor[1],
                         dtype=images.dtype)
        mean = reduction.reduce_mean(images, [1, 2], keepdims=True)
        f = reshaping.reshape(f, [-1, 1, 1, 1])
        return kmath.clip_by_value((images - mean) * f + mean,
                                   float(self.value_range[0]), float(self.value_range[1]))


class RandAugment(ImageLayer):
    """RandAugment: `num_ops` augmentations drawn from eleven, strength up to `factor`."""

    def __init__(self, value_range: Any = (0, 255), num_ops: int = 2, factor: Any = 0.5,
                 interpolation: str = "bilinear", seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range, self.num_ops = value_range, int(num_ops)
        self.factor = factor_pair(factor, "factor", (0.0, 1.0))
        self.interpolation = interpolation
        f, vr = self.factor, value_range
        self._ops = [
            RandomShear(x_factor=f, y_factor=f, interpolation=interpolation, seed=seed),
            RandomTranslation(f, f, interpolation=interpolation, seed=seed),
            RandomRotation(f, interpolation=interpolation, seed=seed),
            RandomBrightness(f, value_range=vr, seed=seed),
            RandomColorDegeneration(f, value_range=vr, seed=seed),
            _Contrast(factor_pair(f, "factor", (0.0, 1.0)), vr, seed),
            RandomSharpness(f, value_range=vr, seed=seed),
            RandomPosterization(max(1, int(8 * f[1])), value_range=vr, seed=seed),
            Solarization(addition_factor=f, threshold_factor=f, value_range=vr, seed=seed),
            AutoContrast(value_range=vr),
            Equalization(value_range=vr),
        ]

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        images = self.as_compute_dtype(images)
        one = reshaping.reshape(self.num_ops, [1])
        choice = kmath.cast(kmath.floor(self.uniform(one, 0.0, float(len(self._ops)))), "int32")
        for i in range(self.num_ops):
            current = images
            for k, op in enumerate(self._ops):
                current = array.where(kmath.equal(choice[i], k), op.transform(images, True),
                                      current)
            images = current
        return images

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range,
                "num_ops": self.num_ops, "factor": self.factor,
                "interpolation": self.interpolation}


class AugMix(ImageLayer):
    """AugMix (Hendrycks et al., 2020): `num_chains` chains of up to `chain_depth` random
    operations, mixed with Dirichlet(alpha) weights, then blended with the original by a
    Beta(alpha, alpha) weight and clipped to `value_range`. `all_ops=False` leaves out the
    colour operations (brightness, degeneration, contrast, sharpness).

    Keras draws each chain's operations with Python's `random` module (so inside a traced
    function they are fixed at trace time); here they are drawn per call from the layer's
    generator, in eager mode and in kf.function alike."""

    def __init__(self, value_range: Any = (0, 255), num_chains: int = 3, chain_depth: int = 3,
                 factor: Any = 0.3, alpha: float = 1.0, all_ops: bool = True,
                 interpolation: str = "bilinear", seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range, self.num_chains = value_range, int(num_chains)
        self.chain_depth, self.alpha, self.all_ops = int(chain_depth), float(alpha), all_ops
        self.factor = factor_pair(factor, "factor", (0.0, 1.0))
        self.interpolation = interpolation
        f, vr = self.factor, value_range
        self._ops = [
            RandomShear(x_factor=f, y_factor=f, interpolation=interpolation, seed=seed),
            RandomTranslation(f, f, interpolation=interpolation, seed=seed),
            RandomRotation(f, interpolation=interpolation, seed=seed),
            RandomPosterization(max(1, int(8 * f[1])), value_range=vr, seed=seed),
            Solarization(addition_factor=f, threshold_factor=f, value_range=vr, seed=seed),
            AutoContrast(value_range=vr), Equalization(value_range=vr)]
        if all_ops:
            self._ops += [RandomBrightness(f, value_range=vr, seed=seed),
                          RandomColorDegeneration(f, value_range=vr, seed=seed),
                          _Contrast(f, vr, seed), RandomSharpness(f, value_range=vr, seed=seed)]

    def _gamma(self, count: int, alpha: Any) -> Any:
        from kilnflow.ops.stateless_random import stateless_gamma
        seed = self._generator.make_seeds(1)[:, 0]
        return stateless_gamma(reshaping.reshape(count, [1]), seed, alpha)

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        images = self.as_compute_dtype(images)
        gammas = kmath.cast(self._gamma(self.num_chains, self.alpha), images.dtype)
        chain_weights = gammas / reduction.reduce_sum(gammas)
        pair = kmath.cast(self._gamma(2, self.alpha), images.dtype)
        weight = pair[0] / (pair[0] + pair[1])  # Beta(alpha, alpha)
        n = len(self._ops)
        steps = reshaping.reshape(self.num_chains * self.chain_depth, [1])
        choices = kmath.cast(kmath.floor(self.uniform(steps, 0.0, float(n + 1))), "int32")
        mixed = array.zeros_like(images)
        for c in range(self.num_chains):
            chain = images
            for d in range(self.chain_depth):
                pick = choices[c * self.chain_depth + d]
                current = chain  # choice n: no operation at this depth
                for k, op in enumerate(self._ops):
                    current = array.where(kmath.equal(pick, k), op.transform(chain, True),
                                          current)
                chain = current
            mixed = mixed + chain * chain_weights[c]
        out = weight * images + (1.0 - weight) * mixed
        return kmath.clip_by_value(out, float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range,
                "num_chains": self.num_chains, "chain_depth": self.chain_depth,
                "factor": self.factor, "alpha": self.alpha, "all_ops": self.all_ops,
                "interpolation": self.interpolation}

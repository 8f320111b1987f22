"""The implicit step cost used when no feedback is given: an item's information gain."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def information_gain(
    similarities: npt.NDArray[np.float32],
    size: int,
    novelty_weight: float = 0.6,
    density_weight: float = 0.4,
    density_k: int = 5,
) -> float:
    """``max(0.6 * novelty - 0.4 * density, 0)`` of a candidate against the stored items.

    ``novelty = clip(1 - max cosine, 0, 1)``, ``density = clip(mean of the top-5 cosines, 0, 1)``;
    an empty memory gives 1.

    >>> import numpy as np
    >>> information_gain(np.array([1.0, 0.2], dtype=np.float32), size=2)
    0.0
    >>> round(information_gain(np.array([0.1, -0.2], dtype=np.float32), size=2), 3)
    0.54
    """
    if size <= 0:
        return 1.0
    k = min(density_k, size)
    n = len(similarities)
    top = (np.partition(similarities, n - k)[n - k :] if k < n else similarities).tolist()
    best = float(max(top))
    top.sort(reverse=True)
    novelty = min(max(1.0 - best, 0.0), 1.0)
    density = min(max(float(sum(top[:k])) / k, 0.0), 1.0)
    return max(novelty_weight * novelty - density_weight * density, 0.0)

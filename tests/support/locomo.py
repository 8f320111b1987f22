"""A tiny LoCoMo-format file (two conversations) for the LoCoMo protocol and CLI tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from solar_core import HashEmbedder


# -- a tiny LoCoMo-format file ------------------------------------------------------------------
def qa_entry(
    question: str, answer: object, evidence: list[str], category: int = 1
) -> dict[str, Any]:
    return {"question": question, "answer": answer, "evidence": evidence, "category": category}


LOCOMO: list[dict[str, Any]] = [
    {
        "sample_id": "conv-a",
        "conversation": {"speaker_a": "Ann", "speaker_b": "Bo"},
        "qa": [
            qa_entry("When did Ann go hiking?", "7 May 2023", ["D1:3"], 2),
            qa_entry("When did Ann paint a sunrise?", 2022, ["D1:12"], 2),
            qa_entry("What might Ann study?", "Psychology, counseling", ["D1:9", "D1:11"], 3),
            {
                "question": "What did Ann realise after the race?",
                "evidence": ["D2:3"],
                "category": 5,
                "adversarial_answer": "self-care is important",
            },
            qa_entry("Where did Ann travel in summer?", "Paris", ["D8:6; D9:17"]),
            qa_entry("Who visited Ann in May?", "Her sister", ["D1:3 D1:4"]),
            qa_entry("What is junk evidence?", "nothing", ["D", "D:11:26"]),  # skipped
            qa_entry("Which book did Ann read?", "The Hobbit", ["D", "D1:12", "D:11:26"], 4),
            qa_entry("What pet does Ann have?", "a cat named Luna", ["D4:1"]),
            qa_entry("What is the name of Ann's cat?", "Luna", ["D4:1", "D4:2"]),
            qa_entry("Where did Ann go hiking with her sister?", "Mount Hood", ["D1:3", "D1:4"]),
            qa_entry("Where did Ann travel after Paris?", "Rome", ["D9:17"]),
        ],
    },
    {
        "sample_id": "conv-b",
        "qa": [
            qa_entry("When did Bo move to Berlin?", "2019", ["D1:1"], 2),
            qa_entry("What sport does Bo like?", "football", ["D1:5"]),
            qa_entry("Who is Bo's best friend?", "Carl", ["D2:2", "D2:8"]),
            qa_entry("Where does Bo work as a nurse?", "a hospital in Berlin", ["D1:1", "D3:1"]),
            qa_entry("Where did Bo grow up?", "Hamburg", ["D3:9; D4:2"]),
            qa_entry("What does Bo collect?", "stamps", []),  # no evidence: skipped
            {"question": "Which car does Bo drive?", "answer": "a Volvo", "category": 1},  # skipped
            qa_entry("What food does Bo dislike?", "olives", ["D5:5"]),
            qa_entry("What sport did Bo play in Hamburg?", "football", ["D1:5; D4:2"]),
            qa_entry("Who plays football with Bo?", "Carl", ["D1:5", "D2:8"]),
            qa_entry("Who taught Bo to swim?", "his father", ["D7:2"]),
            qa_entry("How old is Bo's dog?", 7, ["D8:8"]),
        ],
    },
]


def write_locomo(folder: Path, data: object = None) -> Path:
    path = folder / "locomo-tiny.json"
    path.write_text(json.dumps(LOCOMO if data is None else data), encoding="utf-8")
    return path


def hash_vectors(dim: int = 64) -> Callable[[str], np.ndarray]:
    emb = HashEmbedder(dim=dim)
    return lambda text: emb.embed([text])[0]

"""Generate a realistic test set of N cases (~210 bytes a case, comments, Unicode)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

WORDS = (
    "entrega devolución garantía pago tarjeta oficina días dinero Rückgabe Lieferung zahlen kaufen "
    "reembolso mensajería domingo horario cuánto cuesta tarda puedo"
).split()


def generate(n: int, seed: int = 1, chunks: int = 100_000) -> str:
    r = random.Random(seed)
    out = [
        "# Generated test set for benchmarks. Comments must survive saves.\n",
        "version: 1\n",
        "corpus: bench.chunks.jsonl   # chunks file\n",
        "language: es\n",
        "k: 3\n",
        "cases:\n",
    ]
    for i in range(n):
        q = " ".join(r.choice(WORDS) for _ in range(7))
        if i % 10 == 0:
            out.append(f"  # --- group {i // 10} ---\n")
        out.append(
            f"  - id: caso-{i}\n    topic: tema {i % 50}\n    question: ¿{q}?\n"
            f"    expected: [chunk-{r.randrange(chunks)}]\n    must_contain: [\"{i % 97} €\"]\n"
        )
        if i % 7 == 0:
            out.append("    tags: [generado, prueba]\n")
        out.append("\n")
    return "".join(out)


if __name__ == "__main__":
    n = int(sys.argv[1])
    Path(sys.argv[2]).write_text(generate(n), encoding="utf-8")

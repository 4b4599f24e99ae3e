"""Generate a large test set and corpus for the app benchmark (deterministic, Unicode-heavy)."""

from __future__ import annotations

import random
from pathlib import Path

import orjson

WORDS = (
    "entrega envío oficina domicilio precio coste devolución reembolso garantía tarjeta pago "
    "transferencia factura pedido almacén días laborables cambio talla color batidora cafetera "
    "horno nevera teléfono pantalla batería cargador cuenta contraseña correo dirección tienda "
    "península islas canarias aduana impuestos descuento cupón oferta rebajas stock reserva "
    "montaje instalación técnico avería reparación recambio manual instrucciones seguridad niños"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def write_corpus(path: Path, n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    ids = []
    with open(path, "wb") as f:
        for i in range(n):
            cid = f"chunk-{i}"
            ids.append(cid)
            doc = f"doc-{i // 20}.md"
            text = sentence(rng, rng.randint(12, 30)).capitalize() + "."
            f.write(orjson.dumps({"id": cid, "text": text, "doc": doc}) + b"\n")
    return ids


def write_testset(path: Path, n: int, corpus_name: str, n_chunks: int, seed: int = 2) -> None:
    rng = random.Random(seed)
    out = [
        "# Generated for benchmarks/bench_app.py\n",
        "version: 1\n",
        f"corpus: {corpus_name}\n",
        "language: es\n",
        "k: 3\n",
        "cases:\n",
    ]
    for i in range(n):
        out.append(f"  - id: caso-{i:06d}\n")
        out.append(f"    topic: {rng.choice(WORDS)}\n")
        out.append(f"    question: ¿{sentence(rng, rng.randint(6, 14))}?\n")
        r = rng.random()
        if r < 0.05:
            out.append("    unanswerable: true\n")
        elif r < 0.10:
            pass  # a draft
        else:
            a = rng.randrange(n_chunks)
            out.append(f"    expected: [chunk-{a}]\n")
            out.append(f"    must_contain: [\"{rng.choice(WORDS)}\"]\n")
        if rng.random() < 0.3:
            out.append(f"    tags: [{rng.choice(WORDS)}]\n")
    path.write_text("".join(out), encoding="utf-8")


def write_labels(ts: Path, chunks_path: Path) -> None:
    """Append the labels a labelled set has (what ``record_labels`` writes), as text:
    recording 90,000 labels one by one through the document is slow (see the report)."""
    import re

    from ragtriage.core.corpus import iter_chunks
    from ragtriage.core.text import fingerprint

    text = ts.read_text("utf-8")
    wanted = dict.fromkeys(re.findall(r"expected: \[([^\]]+)\]", text))
    chunks = {c.id: c for c in iter_chunks(chunks_path, problems=[]) if c.id in wanted}
    out = ["labels:\n"]
    for cid in wanted:
        ch = chunks[cid]
        out.append(
            f"  {cid}:\n    sha: \"{fingerprint(ch.text)}\"\n    text: {orjson.dumps(ch.text).decode()}\n"
            f"    doc: {ch.doc}\n    when: \"2026-11-30T00:00:00Z\"\n"
        )
    ts.write_text(text + "".join(out), encoding="utf-8")

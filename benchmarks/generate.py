"""Seeded generator of invoice-like ground-truth / AI-output document pairs.

Each GT document is an invoice of about 1 KB and 38 leaves on average: 14 header fields
(strings, numbers, ISO dates, an e-mail, a boolean; some nulls and blank strings), a nested
``vendor`` object ``{name, vat_id, address {street, city, country}}`` and 0-8 ``line_items``
``{description, quantity, unit_price, amount, sku}``.

The AIO is the GT perturbed the way extraction models err: typos, case and whitespace changes,
missing keys, nulls, invented values where the truth is null, hallucinated keys (top level and
inside ``vendor``), wrong numbers, numbers written as strings (``"105.50"``, ``"$1,200.00"``),
other date spellings, and line items reordered, dropped, added or with typos in descriptions.

Determinism: documents are made in blocks of ``BLOCK`` documents, block ``b`` from its own
``random.Random(f"{seed}:{b}")``. So document ``i`` depends only on ``(seed, i)``: a run with a
larger ``n`` starts with the same documents as a smaller one, and blocks can be made in parallel.

    python benchmarks/generate.py --n 10000 --seed 0 --out DIR   # DIR/gt.ndjson, DIR/aio.ndjson
    python benchmarks/generate.py --sample --out jsoneval_polars/sample  # the bundled sample
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import random
import sys
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

try:
    import orjson

    def _dumps(obj: dict) -> bytes:
        return orjson.dumps(obj)

except ImportError:  # pragma: no cover - orjson is a dependency of the project
    import json

    def _dumps(obj: dict) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


BLOCK = 1000
_MISSING = object()

# --- vocabulary ---------------------------------------------------------------------------------

_COMPANY_STEMS = (
    "Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli", "Vandelay", "Soylent",
    "Cyberdyne", "Tyrell", "Wonka", "Oscorp", "Nordwind", "Bluebird", "Ironclad", "Silverline",
    "Greenfield", "Northstar", "Redwood", "Blackrock Tools", "Evergreen", "Summit", "Pioneer",
    "Atlas", "Helios", "Orion", "Polaris", "Zenith", "Crescent", "Lighthouse", "Maple Leaf",
)
_COMPANY_SUFFIXES = (
    "Corp", "GmbH", "Ltd", "Inc.", "S.A.", "AG", "LLC", "Industries", "Trading Co.", "B.V.",
    "Supplies", "Logistics", "& Sons", "SARL", "Holdings",
)
_FIRST = (
    "John", "Jane", "Maria", "Ahmed", "Li", "Olga", "Pierre", "Sofia", "Kenji", "Amara", "Lucas",
    "Emma", "Noah", "Fatima", "Carlos", "Ingrid", "Raj", "Chloe", "Mateo", "Hannah",
)
_LAST = (
    "Smith", "Garcia", "Müller", "Nguyen", "Rossi", "Kowalski", "Dubois", "Tanaka", "Okafor",
    "Johansson", "Patel", "Martin", "Silva", "Novak", "O'Brien", "Schmidt", "Kim", "Lopez",
)
_MAIL_DOMAINS = ("example.com", "mail.com", "corp.example.org", "shop.example.net", "inbox.io")
_STREET_NAMES = (
    "Main", "Oak", "Maple", "Cedar", "Elm", "Park", "Lake", "Hill", "Station", "Church", "Mill",
    "River", "King", "Queen", "Harbour", "Market", "Victoria", "Bahnhof", "Rue de la Paix",
)
_STREET_TYPES = ("Street", "Avenue", "Road", "Lane", "Boulevard", "Way", "Drive", "Square")
_PLACES = (
    ("Berlin", "Germany", "DE", "EUR"), ("Munich", "Germany", "DE", "EUR"),
    ("Paris", "France", "FR", "EUR"), ("Lyon", "France", "FR", "EUR"),
    ("Madrid", "Spain", "ES", "EUR"), ("Milan", "Italy", "IT", "EUR"),
    ("Amsterdam", "Netherlands", "NL", "EUR"), ("Vienna", "Austria", "AT", "EUR"),
    ("London", "United Kingdom", "GB", "GBP"), ("Manchester", "United Kingdom", "GB", "GBP"),
    ("New York", "United States", "US", "USD"), ("Chicago", "United States", "US", "USD"),
    ("San Francisco", "United States", "US", "USD"), ("Toronto", "Canada", "CA", "CAD"),
    ("Zurich", "Switzerland", "CH", "CHF"), ("Stockholm", "Sweden", "SE", "SEK"),
    ("Tokyo", "Japan", "JP", "JPY"), ("Sydney", "Australia", "AU", "AUD"),
)
_TERMS = (("Net 30", 30), ("Net 60", 60), ("Net 15", 15), ("Due on receipt", 0),
          ("2/10 Net 30", 30), ("Net 45", 45), ("End of month", 30))
_PRODUCTS = (
    "Steel bolts", "Copper wire", "Office chair", "Desk lamp", "Printer paper", "Toner cartridge",
    "Safety gloves", "Hex nuts", "Cable ties", "USB-C cable", "Wireless mouse", "Monitor stand",
    "Hydraulic pump", "Ball bearings", "Paint brushes", "Shipping boxes", "Packing tape",
    "LED panel", "Circuit breaker", "Extension cord", "Drill bits", "Work boots", "Hard hat",
    "Consulting hours", "Software license", "Maintenance service", "Cleaning supplies",
    "Coffee beans", "Water filter", "Laptop sleeve", "Whiteboard markers", "Label printer",
)
_SPECS = (
    "M8", "2mm", "ergonomic", "A4 80gsm", "black", "size L", "stainless", "10 pack", "1m",
    "heavy duty", "premium", "type B", "24V", "blue", "500ml", "standard", "XL", "12 x 3/4 in",
    "per hour", "annual", "grade 5", "set of 6", "",
)
_NOTE_PARTS = (
    "Please include the invoice number with your payment.",
    "Goods remain our property until paid in full.",
    "Thank you for your business.",
    "Delivery to the loading dock at the rear entrance.",
    "Late payments incur 1.5% interest per month.",
    "Partial shipment; remaining items to follow.",
    "Reverse charge: VAT to be accounted for by the recipient.",
    "Contact accounts@example.com for billing questions.",
)
_HALLUCINATED_TOP = (
    ("reference", lambda r: f"REF-{int(r() * 90000) + 10000}"),
    ("order_date", lambda r: _DATES[int(r() * 1800)]),
    ("shipping_method", lambda r: ("Ground", "Express", "Air freight", "Pickup")[int(r() * 4)]),
    ("tax_rate", lambda r: (0.19, 0.2, 0.07, 0.21, 0.08)[int(r() * 5)]),
    ("discount", lambda r: round(r() * 50, 2)),
    ("bank_account", lambda r: f"DE{int(r() * 1e18):018d}"),
    ("customer_phone", lambda r: f"+1 555 {int(r() * 9000) + 1000}"),
    ("status", lambda r: ("paid", "open", "overdue")[int(r() * 3)]),
)
_HALLUCINATED_VENDOR = (
    ("phone", lambda r: f"+49 30 {int(r() * 9000000) + 1000000}"),
    ("website", lambda r: f"www.vendor{int(r() * 1000)}.example.com"),
    ("email", lambda r: f"billing@vendor{int(r() * 1000)}.example.com"),
    ("iban", lambda r: f"GB{int(r() * 1e16):016d}"),
)
_EXTRA_ITEMS = ("Shipping fee", "Handling charge", "Discount", "Environmental levy",
                "Express surcharge", "Packaging")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")

_D0 = date(2020, 1, 1)
_DAY_OBJS = [_D0 + timedelta(days=i) for i in range(2000)]
_DATES = [d.isoformat() for d in _DAY_OBJS]
_DATES_US = [f"{d.month:02d}/{d.day:02d}/{d.year}" for d in _DAY_OBJS]
_DATES_LONG = [f"{d.day} {_MONTHS[d.month - 1]} {d.year}" for d in _DAY_OBJS]
# 0-8 line items, mean 3.9 (so a document has about 38 leaves).
_N_ITEMS = (0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 7, 7, 8)
# Precomputed combinations (the generator's hot loop only indexes into these).
_VENDOR_NAMES = [f"{s} {x}" for s in _COMPANY_STEMS for x in _COMPANY_SUFFIXES]
_STREETS = [f"{n} {t}" for n in _STREET_NAMES for t in _STREET_TYPES]
_PEOPLE = [(f"{f} {la}", f"{f.lower()}.{la.lower().replace(chr(39), '')}")
           for f in _FIRST for la in _LAST]
_DESCRIPTIONS = [(f"{p} {s}" if s else p, f"{p[:3].upper()}-") for p in _PRODUCTS for s in _SPECS]


# --- perturbations ------------------------------------------------------------------------------


def _typo(s: str, r) -> str:
    n = len(s)
    if n < 2:
        return s + _LETTERS[int(r() * 26)]
    i = int(r() * (n - 1))
    op = r()
    if op < 0.3:
        return s[:i] + s[i + 1 :]
    if op < 0.55:
        return s[:i] + s[i + 1] + s[i] + s[i + 2 :]
    if op < 0.85:
        return s[:i] + _LETTERS[int(r() * 26)] + s[i + 1 :]
    return s[:i] + s[i] + s[i:]


def _recase(s: str, r) -> str:
    x = r()
    if x < 0.4:
        return s.upper()
    if x < 0.7:
        return s.lower()
    return s.title()


def _respace(s: str, r) -> str:
    x = r()
    if x < 0.4:
        return f" {s} "
    if x < 0.7:
        return s.replace(" ", "  ", 1) if " " in s else s + " "
    return s + "\n"


def _p_str(v, r, typo_p: float = 0.06):
    """A string field: typo, case, whitespace, missing, null; else unchanged."""
    if v is None or not isinstance(v, str):
        return v
    x = r()
    if x >= typo_p + 0.12:
        return v
    if x < typo_p:
        return _typo(v, r)
    x -= typo_p
    if x < 0.04:
        return _recase(v, r)
    if x < 0.07:
        return _respace(v, r)
    if x < 0.10:
        return _MISSING
    return None


def _p_num(v, r):
    """A number: as a string, with a currency sign, slightly or badly wrong, missing, null."""
    if v is None:
        return v
    x = r()
    if x >= 0.17:
        return v
    if x < 0.05:
        return f"{v:.2f}"
    if x < 0.08:
        return f"${v:,.2f}"
    if x < 0.10:  # within 10 %: still a NUMERIC match
        return round(v * (1 + (r() - 0.5) * 0.08), 2)
    if x < 0.13:  # badly wrong: digit slip or a different number
        return round(v * (0.3 + r() * 2.0), 2) if r() < 0.5 else round(v * 10, 2)
    if x < 0.155:
        return _MISSING
    return None


def _p_date(i: int, r):
    x = r()
    if x >= 0.09:
        return _DATES[i]
    if x < 0.03:
        return _DATES[i + (1 if r() < 0.5 else -1)]
    if x < 0.05:
        return _DATES_US[i]
    if x < 0.06:
        return _DATES_LONG[i]
    if x < 0.08:
        return _MISSING
    return None


def _p_bool(v: bool, r):
    x = r()
    if x >= 0.07:
        return v
    if x < 0.03:
        return not v
    if x < 0.05:
        return "true" if v else "false"
    return _MISSING


def _put(d: dict, key: str, value) -> None:
    if value is not _MISSING:
        d[key] = value


# --- one pair -----------------------------------------------------------------------------------


def _make_pair(i: int, rng: random.Random) -> tuple[dict, dict]:
    r = rng.random
    doc_id = f"doc-{i:07d}"
    city, country, cc, currency = _PLACES[int(r() * len(_PLACES))]
    vendor_name = _VENDOR_NAMES[int(r() * len(_VENDOR_NAMES))]
    vat_id = None if r() < 0.3 else f"{cc}{int(r() * 1e9):09d}"
    street = f"{int(r() * 250) + 1} {_STREETS[int(r() * len(_STREETS))]}"
    person, mail_user = _PEOPLE[int(r() * len(_PEOPLE))]
    customer = person if r() < 0.6 else _VENDOR_NAMES[int(r() * len(_VENDOR_NAMES))]
    email = None if r() < 0.05 else f"{mail_user}@{_MAIL_DOMAINS[int(r() * 5)]}"
    terms, term_days = _TERMS[int(r() * 7)]
    di = int(r() * 1800) + 1
    x = r()
    if x < 0.12:
        notes = None
    elif x < 0.24:
        notes = "" if x < 0.20 else "   "
    else:
        k = int(r() * 8)
        notes = _NOTE_PARTS[k] if r() < 0.6 else f"{_NOTE_PARTS[k]} {_NOTE_PARTS[(k + 3) % 8]}"
    po = None if r() < 0.2 else f"PO-{int(r() * 90000) + 10000}"

    items = []
    subtotal = 0.0
    for _ in range(_N_ITEMS[int(r() * 20)]):
        description, sku_prefix = _DESCRIPTIONS[int(r() * len(_DESCRIPTIONS))]
        qty = int(r() * 24) + 1 if r() < 0.8 else (int(r() * 20) + 1) * 50
        price = round(r() * 180 + 0.5, 2)
        amount = round(qty * price, 2)
        subtotal += amount
        items.append({
            "description": description,
            "quantity": qty,
            "unit_price": price,
            "amount": amount,
            "sku": f"{sku_prefix}{int(r() * 900000) + 100000}",
        })
    if not items:
        subtotal = round(r() * 3000 + 20, 2)
    subtotal = round(subtotal, 2)
    tax = round(subtotal * (0.0, 0.07, 0.19, 0.2, 0.21)[int(r() * 5)], 2)
    shipping = None if r() < 0.15 else (0.0 if r() < 0.4 else round(r() * 60 + 5, 2))
    total = round(subtotal + tax + (shipping or 0.0), 2)

    gt = {
        "doc_id": doc_id,
        "invoice_number": f"INV-{2020 + di // 366}-{int(r() * 900000) + 100000}",
        "po_number": po,
        "issue_date": _DATES[di],
        "due_date": _DATES[di + term_days],
        "currency": currency,
        "payment_terms": terms,
        "customer_name": customer,
        "customer_email": email,
        "notes": notes,
        "subtotal": subtotal,
        "tax": tax,
        "shipping": shipping,
        "total": total,
        "paid": r() < 0.35,
        "vendor": {
            "name": vendor_name,
            "vat_id": vat_id,
            "address": {"street": street, "city": city, "country": country},
        },
        "line_items": items,
    }
    return gt, _perturb(gt, di, term_days, r)


def _perturb(gt: dict, di: int, term_days: int, r) -> dict:
    a: dict = {"doc_id": gt["doc_id"]}
    # invoice numbers: rarely typos, sometimes lower-cased or spaced
    _put(a, "invoice_number", _p_str(gt["invoice_number"], r, 0.03))
    po = gt["po_number"]
    if po is None:
        _put(a, "po_number", f"PO-{int(r() * 90000) + 10000}" if r() < 0.1 else None)
    else:
        _put(a, "po_number", _p_str(po, r, 0.03))
    _put(a, "issue_date", _p_date(di, r))
    _put(a, "due_date", _p_date(di + term_days, r))
    x = r()
    if x < 0.03:
        a["currency"] = {"EUR": "€", "USD": "$", "GBP": "£"}.get(gt["currency"], gt["currency"])
    elif x < 0.05:
        a["currency"] = gt["currency"].lower()
    elif x >= 0.07:
        a["currency"] = gt["currency"]
    _put(a, "payment_terms", _p_str(gt["payment_terms"], r, 0.03))
    _put(a, "customer_name", _p_str(gt["customer_name"], r))
    _put(a, "customer_email", _p_str(gt["customer_email"], r, 0.03))
    notes = gt["notes"]
    if notes is None or not notes.strip():
        x = r()
        if x < 0.08:
            a["notes"] = "N/A"
        elif x < 0.16:
            a["notes"] = _NOTE_PARTS[int(r() * 8)]
        elif x < 0.6:
            a["notes"] = notes
    else:
        x = r()
        if x < 0.15:  # paraphrase-ish: first sentence only, or words reordered
            words = notes.split()
            a["notes"] = notes.split(". ")[0] if ". " in notes else " ".join(words[1:] + words[:1])
        else:
            _put(a, "notes", _p_str(notes, r, 0.08))
    for key in ("subtotal", "tax"):
        _put(a, key, _p_num(gt[key], r))
    if gt["shipping"] is None:
        if r() < 0.1:
            a["shipping"] = 0.0
    else:
        _put(a, "shipping", _p_num(gt["shipping"], r))
    _put(a, "total", _p_num(gt["total"], r))
    _put(a, "paid", _p_bool(gt["paid"], r))

    # vendor: typos, a hallucinated vat_id where the truth has none, invented members
    gv = gt["vendor"]
    if r() < 0.03:
        a["vendor"] = gv["name"]  # flattened to a string by the model: a kind mismatch
    elif r() >= 0.02:
        v: dict = {}
        _put(v, "name", _p_str(gv["name"], r))
        if gv["vat_id"] is None:
            x = r()
            if x < 0.15:
                v["vat_id"] = f"DE{int(r() * 1e9):09d}"
            elif x < 0.6:
                v["vat_id"] = None
        else:
            _put(v, "vat_id", _p_str(gv["vat_id"], r, 0.04))
        ga = gv["address"]
        if r() >= 0.04:
            ad: dict = {}
            _put(ad, "street", _p_str(ga["street"], r, 0.08))
            _put(ad, "city", _p_str(ga["city"], r, 0.03))
            _put(ad, "country", _p_str(ga["country"], r, 0.03))
            if r() < 0.05:
                ad["postal_code"] = f"{int(r() * 90000) + 10000}"
            v["address"] = ad
        if r() < 0.08:
            k, make = _HALLUCINATED_VENDOR[int(r() * 4)]
            v[k] = make(r)
        a["vendor"] = v

    a["line_items"] = _perturb_items(gt["line_items"], r)
    if r() < 0.02:
        del a["line_items"]
    # hallucinated top-level keys
    x = r()
    if x < 0.12:
        for _ in range(1 if x < 0.09 else 2):
            k, make = _HALLUCINATED_TOP[int(r() * 8)]
            a[k] = make(r)
    return a


def _perturb_items(items: list[dict], r) -> list[dict]:
    out = []
    for it in items:
        if r() < 0.05:  # dropped
            continue
        o: dict = {}
        d = it["description"]
        x = r()
        if x < 0.12:
            d = _typo(d, r)
        elif x < 0.16:
            d = _recase(d, r)
        elif x < 0.18:
            d = d.replace(" ", "", 1)
        o["description"] = d
        x = r()
        if x < 0.03:
            o["quantity"] = it["quantity"] + 1
        elif x < 0.05:
            o["quantity"] = str(it["quantity"])
        elif x >= 0.06:
            o["quantity"] = it["quantity"]
        _put(o, "unit_price", _p_num(it["unit_price"], r))
        _put(o, "amount", _p_num(it["amount"], r))
        x = r()
        if x < 0.04:
            o["sku"] = _typo(it["sku"], r)
        elif x >= 0.08:
            o["sku"] = it["sku"]
        out.append(o)
    if out and r() < 0.25:  # reordered
        r_shuffle(out, r)
    if r() < 0.1:  # an invented line
        price = round(r() * 40 + 1, 2)
        out.insert(int(r() * (len(out) + 1)), {
            "description": _EXTRA_ITEMS[int(r() * 6)],
            "quantity": 1,
            "unit_price": price,
            "amount": price,
            "sku": None,
        })
    return out


def r_shuffle(xs: list, r) -> None:
    """Fisher-Yates with the block's ``random``: deterministic across Python versions."""
    for i in range(len(xs) - 1, 0, -1):
        j = int(r() * (i + 1))
        xs[i], xs[j] = xs[j], xs[i]


# --- public API ---------------------------------------------------------------------------------


def _block(seed: int, b: int, start: int, stop: int) -> Iterator[tuple[dict, dict]]:
    rng = random.Random(f"{seed}:{b}")
    for i in range(start, stop):
        yield _make_pair(i, rng)


def generate_pairs(n: int, seed: int = 0) -> Iterator[tuple[dict, dict]]:
    """Yield ``n`` (gt, aio) invoice pairs; both carry the same ``doc_id`` (``doc-0000000``...).

    Document ``i`` depends only on ``(seed, i)``, so the first ``k`` pairs of any run are the
    pairs of ``generate_pairs(k, seed)``.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0; got {n}")
    for b in range((n + BLOCK - 1) // BLOCK):
        yield from _block(seed, b, b * BLOCK, min(n, (b + 1) * BLOCK))


def _block_bytes(args: tuple[int, int, int, int]) -> tuple[bytes, bytes]:
    seed, b, start, stop = args
    gts, aios = [], []
    enabled = gc.isenabled()
    gc.disable()  # the documents hold no cycles; collection passes only cost time here
    try:
        for gt, aio in _block(seed, b, start, stop):
            gts.append(_dumps(gt))
            aios.append(_dumps(aio))
    finally:
        if enabled:
            gc.enable()
    return b"\n".join(gts) + b"\n", b"\n".join(aios) + b"\n"


def write_ndjson(
    n: int, seed: int, out: str | Path, *, workers: int = 1, shuffle: bool = False
) -> tuple[Path, Path]:
    """Write ``out/gt.ndjson`` and ``out/aio.ndjson`` block by block (constant memory).

    ``shuffle`` writes each file in its own random order (the same documents): every line goes
    to one of :data:`PILES` pile files at random (a different draw per side), then each pile is
    shuffled in memory and appended, so memory stays at one pile (n / PILES lines).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = [(seed, b, b * BLOCK, min(n, (b + 1) * BLOCK)) for b in range((n + BLOCK - 1) // BLOCK)]
    gt_path, aio_path = out / "gt.ndjson", out / "aio.ndjson"
    piles = _Piles(out, seed) if shuffle else None
    with open(gt_path, "wb") as fg, open(aio_path, "wb") as fa:

        def put(g: bytes, a: bytes) -> None:
            if piles:
                piles.add(g, a)
            else:
                fg.write(g)
                fa.write(a)

        if workers > 1:
            from multiprocessing import Pool

            with Pool(workers) as pool:
                for g, a in pool.imap(_block_bytes, tasks, chunksize=1):
                    put(g, a)
        else:
            for task in tasks:
                put(*_block_bytes(task))
        if piles:
            piles.drain(fg, fa)
    return gt_path, aio_path


PILES = 64


class _Piles:
    """The two-pass shuffle of :func:`write_ndjson` (a random pile per line, then each pile
    shuffled): GT and AIO draw from different generators, so their orders differ."""

    def __init__(self, out: Path, seed: int) -> None:
        self.dir = out / "piles"
        self.dir.mkdir(exist_ok=True)
        self.rngs = [random.Random(f"shuffle:{seed}:{side}") for side in ("gt", "aio")]
        # open until drain(): 2 x PILES files written line by line
        self.files = [[open(self.dir / f"{side}-{k}", "wb") for k in range(PILES)]  # noqa: SIM115
                      for side in ("gt", "aio")]

    def add(self, *sides: bytes) -> None:
        for rng, files, data in zip(self.rngs, self.files, sides, strict=True):
            lines = data.splitlines(keepends=True)
            for line, k in zip(lines, rng.choices(range(PILES), k=len(lines)), strict=True):
                files[k].write(line)

    def drain(self, *targets) -> None:
        for rng, files, target in zip(self.rngs, self.files, targets, strict=True):
            for f in files:
                f.close()
                lines = Path(f.name).read_bytes().splitlines(keepends=True)
                rng.shuffle(lines)
                target.writelines(lines)
                os.unlink(f.name)
        self.dir.rmdir()


SAMPLE_SEED = 20240301
SAMPLE_N = 300


def _awkward_pairs() -> tuple[list[tuple[dict, dict]], dict, dict]:
    """Hand-made documents for the bundled sample: (pairs, gt_only, aio_only)."""
    base = next(  # a generated invoice with a few line items, outside the generated range
        g for g, _ in _block(SAMPLE_SEED, 10_000, 10_000_000, 10_001_000)
        if len(g["line_items"]) >= 3
    )
    base.pop("doc_id")

    def doc(doc_id: str, **changes) -> dict:
        d = copy.deepcopy(base)
        d.update(changes)
        return {"doc_id": doc_id, **d}

    empty_aio = (doc("awk-empty-aio"), {"doc_id": "awk-empty-aio"})  # the model returned {}
    no_items_gt = doc("awk-invented-items", line_items=[])
    invented = doc("awk-invented-items", line_items=[
        {"description": "Consulting hours", "quantity": 3, "unit_price": 120.0, "amount": 360.0,
         "sku": "CON-000001"},
    ])
    null_list = doc("awk-null-items", line_items=None, total="€1.234,56", notes="  ")
    odd_keys_gt = doc("awk-odd-keys", **{"unit price": 10.5, "meta.source": "scan"})
    odd_keys_aio = doc("awk-odd-keys", **{"unit price": "10.50", "meta.source": "SCAN ",
                                          "vendor": "Acme Corp, Berlin"})
    pairs = [empty_aio, (no_items_gt, invented), (doc("awk-null-items"), null_list),
             (odd_keys_gt, odd_keys_aio)]
    return pairs, doc("awk-gt-only"), doc("awk-aio-only", invoice_number="INV-0000-000000")


def write_sample(out: str | Path) -> tuple[Path, Path]:
    """The bundled sample: SAMPLE_N generated pairs, a few hand-made awkward pairs, one GT-only
    and one AIO-only document (``jsoneval_polars/sample/{gt,aio}.ndjson``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    awkward, gt_only, aio_only = _awkward_pairs()
    gts = [_dumps(g) for g, _ in generate_pairs(SAMPLE_N, SAMPLE_SEED)]
    aios = [_dumps(a) for _, a in generate_pairs(SAMPLE_N, SAMPLE_SEED)]
    gts += [_dumps(g) for g, _ in awkward] + [_dumps(gt_only)]
    aios += [_dumps(a) for _, a in awkward] + [_dumps(aio_only)]
    (out / "gt.ndjson").write_bytes(b"\n".join(gts) + b"\n")
    (out / "aio.ndjson").write_bytes(b"\n".join(aios) + b"\n")
    return out / "gt.ndjson", out / "aio.ndjson"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10_000, help="number of document pairs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--workers", type=int, default=1, help="processes (output is identical)")
    p.add_argument("--shuffle", action="store_true",
                   help="write each file in its own random order (same documents)")
    p.add_argument("--sample", action="store_true",
                   help=f"write the bundled sample ({SAMPLE_N} pairs, seed {SAMPLE_SEED}, plus "
                   "hand-made awkward documents) instead; --n and --seed are ignored")
    args = p.parse_args(argv)
    if args.sample:
        gt_path, aio_path = write_sample(args.out)
        print(f"wrote the sample to {gt_path} and {aio_path}", file=sys.stderr)
        return 0
    t0 = time.perf_counter()
    gt_path, aio_path = write_ndjson(args.n, args.seed, args.out, workers=args.workers,
                                     shuffle=args.shuffle)
    dt = time.perf_counter() - t0
    mb = (os.path.getsize(gt_path) + os.path.getsize(aio_path)) / 1e6
    print(
        f"wrote {args.n} pairs to {gt_path} and {aio_path} ({mb:.1f} MB) in {dt:.2f} s: "
        f"{args.n / dt:,.0f} pairs/s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
